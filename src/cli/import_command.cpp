// `perflow import megatron|torchtitan`: a config from the launch flags or job file a run
// already has (study/launch_import.hpp). The config goes to standard output or -o; flags not
// recognised and features PerFlow does not model go to standard error.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "detail/commands.hpp"
#include "detail/output_paths.hpp"
#include "perflow/core/atomic_file.hpp"
#include "perflow/study/launch_import.hpp"

namespace perflow::cli::detail {
namespace {

struct ImportCommandOptions {
  std::string gpu;
  std::optional<std::uint32_t> nodes;
  std::optional<std::uint32_t> gpus_per_node;
  std::optional<std::uint32_t> vocab;
  std::string output;
  OutputRules rules;

  [[nodiscard]] study::ImportOptions import_options() const {
    return {.gpu = gpu, .nodes = nodes, .gpus_per_node = gpus_per_node, .vocab = vocab};
  }
};

void add_common_options(CLI::App& cmd, ImportCommandOptions& options) {
  cmd.add_option("--gpu", options.gpu, "GPU preset on every rank (perflow devices)");
  cmd.add_option("--nodes", options.nodes, "Nodes the job runs on");
  cmd.add_option("--gpus-per-node", options.gpus_per_node, "GPUs per node (default 8)");
  output_option(cmd.add_option("-o,--output", options.output,
                               "Write the config to this file (default: standard output)"));
  options.rules.add_options(cmd);
}

/// The config as the examples write it: indented, an array of numbers (/pipeline/layers) on
/// one line. Only whitespace between numbers changes, so the JSON is nlohmann's.
std::string config_text(const nlohmann::ordered_json& config) {
  const std::string text = config.dump(2);
  std::string out;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (in_string) {
      if (text[i] == '\\') {
        out += text[i++];
      } else if (text[i] == '"') {
        in_string = false;
      }
      out += text[i];
      continue;
    }
    if (text[i] == '"') in_string = true;
    if (text[i] == '[') {
      std::size_t end = i + 1;
      std::string inside;
      bool numbers = true;
      while (end < text.size() && text[end] != ']') {
        const char c = text[end];
        if (c == ',') {
          inside += ", ";
        } else if ((c >= '0' && c <= '9') || c == '-' || c == '.') {
          inside += c;
        } else if (c != ' ' && c != '\n') {
          numbers = false;
          break;
        }
        ++end;
      }
      if (numbers && end < text.size()) {
        out += "[" + inside + "]";
        i = end;
        continue;
      }
    }
    out += text[i];
  }
  return out + "\n";
}

/// Writes the config and tells what was not imported.
void finish(const study::ImportResult& result, const ImportCommandOptions& options,
            std::span<const InputFile> inputs) {
  const std::string text = config_text(result.config);
  if (!options.output.empty()) {
    const std::array outputs{OutputFile{"--output", options.output}};
    check_output_paths(inputs, outputs, options.rules);
  }
  for (const std::string& warning : result.warnings) {
    fmt::print(stderr, "perflow: warning: {}\n", warning);
  }
  for (const std::string& unknown : result.unknown) {
    fmt::print(stderr, "perflow: warning: not imported (unknown): {}\n", unknown);
  }
  if (options.output.empty()) {
    fmt::print("{}", text);
  } else {
    write_file_atomically(options.output, text);
  }
}

}  // namespace

void add_import_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "import", "Write a config from Megatron-LM launch flags or a torchtitan job file");
  cmd->require_subcommand(1);

  struct MegatronOptions : ImportCommandOptions {
    std::string args_file;
    std::vector<std::string> args;
  };
  auto megatron = std::make_shared<MegatronOptions>();
  CLI::App* m = cmd->add_subcommand(
      "megatron", "A config from Megatron-LM's command-line flags (given after --)");
  add_common_options(*m, *megatron);
  m->add_option("--vocab", megatron->vocab,
                "The tokenizer's vocabulary, when the flags give no --vocab-size");
  m->add_option("--args-file", megatron->args_file,
                "A file of Megatron-LM flags (a launch script's argument lines); flags after "
                "-- follow it and win");
  m->add_option("args", megatron->args, "Megatron-LM's flags, after --");
  m->callback([megatron] {
    std::vector<std::string> args;
    if (!megatron->args_file.empty()) args = study::read_args_file(megatron->args_file);
    args.insert(args.end(), megatron->args.begin(), megatron->args.end());
    const study::ImportResult result =
        study::import_megatron(args, megatron->import_options(),
                               megatron->args.empty() ? megatron->args_file : std::string());
    const std::vector<InputFile> inputs =
        megatron->args_file.empty()
            ? std::vector<InputFile>{}
            : std::vector<InputFile>{{"the arguments file", megatron->args_file}};
    finish(result, *megatron, inputs);
  });

  struct TorchtitanOptions : ImportCommandOptions {
    std::string job;
  };
  auto torchtitan = std::make_shared<TorchtitanOptions>();
  CLI::App* t = cmd->add_subcommand("torchtitan", "A config from a torchtitan job file (TOML)");
  t->add_option("job", torchtitan->job, "torchtitan job file (.toml)")->required();
  add_common_options(*t, *torchtitan);
  t->callback([torchtitan] {
    const study::ImportResult result =
        study::import_torchtitan(torchtitan->job, torchtitan->import_options());
    const std::array inputs{InputFile{"the job file", torchtitan->job}};
    finish(result, *torchtitan, inputs);
  });
}

}  // namespace perflow::cli::detail
