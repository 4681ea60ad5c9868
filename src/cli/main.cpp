// The perflow command. Library code throws perflow::Error subclasses; this is the one
// place that catches them, prints `perflow: error: ...` and maps them to exit codes.
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "detail/commands.hpp"
#include "perflow/core/atomic_file.hpp"
#include "perflow/core/did_you_mean.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/option_error.hpp"

namespace {

using perflow::cli::detail::ExitCode;

int fail(ExitCode code, const std::string& message) {
  std::fflush(stdout);
  fmt::print(stderr, "perflow: error: {}\n", message);
  return code;
}

/// A request's field as the command line names it: `--rank-stage '0-1'`.
std::string option_name(const perflow::OptionError::Piece& field) {
  std::string name = "--" + field.text;
  for (char& c : name) c = c == '_' ? '-' : c;
  return field.value.empty() ? name : name + " " + field.value;
}

/// A first argument that is not an option must name a command: CLI11 would take a mistyped
/// one for a stray argument and say only that a subcommand is required.
void check_command_name(const CLI::App& app, std::string_view name) {
  std::vector<std::string> names;
  for (const CLI::App* command : std::as_const(app).get_subcommands(
           [](const CLI::App* c) { return !c->get_disabled() && !c->get_name().empty(); })) {
    if (command->check_name(std::string(name))) return;
    names.push_back(command->get_name());
  }
  throw perflow::Error(fmt::format("unknown command '{}'{} (commands: {})", name,
                                   perflow::did_you_mean_suffix(name, names),
                                   fmt::join(names, ", ")));
}

/// For arguments CLI11 did not expect: the first `--option` the command does not have, with
/// the option it may be a typo of ("unknown option '--timline' for 'perflow simulate'; did
/// you mean '--timeline'?"); nullopt when no such option is among them.
std::optional<std::string> unknown_option(const CLI::App& app, int argc, char** argv) {
  if (argc < 2) return std::nullopt;
  const CLI::App* command = nullptr;
  for (const CLI::App* c : app.get_subcommands({})) {
    if (c->check_name(argv[1])) command = c;
  }
  if (command == nullptr) return std::nullopt;
  // A command of a command (`perflow import megatron`).
  int first = 2;
  std::string path = command->get_name();
  if (argc > 2) {
    for (const CLI::App* c : command->get_subcommands({})) {
      if (c->check_name(argv[2])) {
        command = c;
        first = 3;
        path += " " + c->get_name();
      }
    }
  }
  std::vector<std::string> names;
  for (const CLI::App* owner : {command, &app}) {
    for (const CLI::Option* option : owner->get_options()) {
      for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    }
  }
  for (int i = first; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (!arg.starts_with("--")) continue;
    const std::string name(arg.substr(0, arg.find('=')));
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    if (path == "import megatron") {
      return fmt::format(
          "unknown option '{}' for 'perflow import megatron'{}; Megatron-LM's flags go after "
          "'--' (perflow import megatron --gpu GPU --nodes N -- {} ...)",
          name, perflow::did_you_mean_suffix(name, names), name);
    }
    return fmt::format("unknown option '{}' for 'perflow {}'{} (run 'perflow {} --help')", name,
                       path, perflow::did_you_mean_suffix(name, names), path);
  }
  return std::nullopt;
}

int run(int argc, char** argv) {
  using namespace perflow::cli::detail;
  CLI::App app{"PerFlow: predict the performance of pipeline-parallel LLM training.", "perflow"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "perflow 0.1.0");
  add_simulate_command(app);
  add_compare_command(app);
  add_sweep_command(app);
  add_search_command(app);
  add_plot_command(app);
  add_validate_command(app);
  add_schedules_command(app);
  add_costs_command(app);
  add_measured_command(app);
  add_compare_measured_command(app);
  add_explain_command(app);
  add_import_command(app);
  add_calibrate_command(app);
  add_devices_command(app);
  add_models_command(app);
  add_gemm_command(app);
  add_schema_command(app);
  try {
    if (argc > 1 && argv[1][0] != '-') check_command_name(app, argv[1]);
    app.parse(argc, argv);
    return kSuccess;
  } catch (const CLI::CallForHelp&) {
    return app.exit(CLI::CallForHelp());
  } catch (const CLI::CallForAllHelp&) {
    return app.exit(CLI::CallForAllHelp());
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    const std::optional<std::string> option = unknown_option(app, argc, argv);
    return fail(kUsageError, option ? *option : fmt::format("{} (run 'perflow --help')", e.what()));
  } catch (const CLI::ParseError& e) {
    return fail(kUsageError, fmt::format("{} (run 'perflow --help')", e.what()));
  } catch (const perflow::CycleError& e) {
    return fail(kDeadlock, e.what());
  } catch (const perflow::IoError& e) {
    return fail(kOutputError, e.what());
  } catch (const perflow::ResourceError& e) {
    return fail(kOutOfMemory, e.what());
  } catch (const perflow::NoAnswerError& e) {
    return fail(kNoAnswer, e.what());
  } catch (const perflow::OptionError& e) {
    return fail(kUsageError, e.worded(option_name));
  } catch (const perflow::Error& e) {
    return fail(kUsageError, e.what());
  } catch (const std::system_error& e) {  // fmt::print to standard output failed
    return fail(kOutputError,
                fmt::format("cannot write to standard output: {}", e.code().message()));
  } catch (const std::bad_alloc&) {
    return fail(kOutOfMemory, perflow::kAllocationFailedMessage);
  } catch (const std::exception& e) {
    return fail(kInternalError, fmt::format("internal error: {}", e.what()));
  }
}

/// Standard output is written for sure only once flushed and closed: buffered output that
/// cannot be written (a full disk, a closed pipe) turns a success into exit code 4. After
/// another error it is closed quietly: the first error is the one reported.
int close_stdout(int code) {
  errno = 0;
  bool written = std::fflush(stdout) == 0 && std::ferror(stdout) == 0;
  int error = errno;
  if (std::fclose(stdout) != 0 && written) {
    written = false;
    error = errno;
  }
  if (written || code != perflow::cli::detail::kSuccess) return code;
  fmt::print(stderr, "perflow: error: cannot write to standard output{}\n",
             error != 0 ? ": " + std::generic_category().message(error) : std::string());
  return perflow::cli::detail::kOutputError;
}

/// One line on standard error for the temporaries of killed runs that a write removed.
void tell_stale_temporaries(const std::filesystem::path& directory,
                            std::span<const std::string> removed) {
  fmt::print(stderr,
             "perflow: removed {} temporary file{} that an interrupted run left in '{}': {}\n",
             removed.size(), removed.size() == 1 ? "" : "s",
             directory.empty() ? std::string(".") : directory.string(), fmt::join(removed, ", "));
}

}  // namespace

int main(int argc, char** argv) {
  // A closed pipe (`perflow ... | head`) makes writes fail with EPIPE, exit code 4, instead of
  // killing the process with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  // Interrupted (Ctrl-C, kill, a closed terminal) while writing outputs: no temporary stays.
  perflow::remove_temporaries_on_signals();
  perflow::set_stale_temporaries_notice(tell_stale_temporaries);
  return close_stdout(run(argc, argv));
}
