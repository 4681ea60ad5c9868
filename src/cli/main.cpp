// The perflow command. Library code throws perflow::Error subclasses; this is the one
// place that catches them, prints `perflow: error: ...` and maps them to exit codes.
#include <cstdio>
#include <exception>
#include <new>
#include <system_error>

#include <fmt/format.h>

#include "detail/commands.hpp"
#include "perflow/core/error.hpp"

namespace {

int fail(perflow::cli::detail::ExitCode code, const char* message) {
  std::fflush(stdout);
  fmt::print(stderr, "perflow: error: {}\n", message);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace perflow::cli::detail;
  CLI::App app{"PerFlow: predict the performance of pipeline-parallel LLM training.", "perflow"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "perflow 0.1.0");
  add_simulate_command(app);
  add_schedules_command(app);
  add_validate_command(app);
  add_costs_command(app);
  add_measured_command(app);
  add_compare_measured_command(app);
  add_compare_command(app);
  add_schema_command(app);
  try {
    app.parse(argc, argv);
    // Buffered output that cannot be written (a full disk, a closed pipe) is a failure.
    if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
      return fail(kOutputError, "cannot write to standard output");
    }
    return kSuccess;
  } catch (const CLI::CallForHelp&) {
    return app.exit(CLI::CallForHelp());
  } catch (const CLI::CallForAllHelp&) {
    return app.exit(CLI::CallForAllHelp());
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(kUsageError, fmt::format("{} (run 'perflow --help')", e.what()).c_str());
  } catch (const perflow::CycleError& e) {
    return fail(kDeadlock, e.what());
  } catch (const perflow::IoError& e) {
    return fail(kOutputError, e.what());
  } catch (const perflow::Error& e) {
    return fail(kUsageError, e.what());
  } catch (const std::system_error& e) {  // fmt::print on a stream that fails
    return fail(kOutputError, fmt::format("cannot write output: {}", e.what()).c_str());
  } catch (const std::bad_alloc&) {
    return fail(kOutOfMemory, "out of memory: the task graph is too large for this machine");
  } catch (const std::exception& e) {
    return fail(kInternalError, fmt::format("internal error: {}", e.what()).c_str());
  }
}
