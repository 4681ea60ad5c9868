// Fuzz target for `perflow import`: an input starting with '[' or '#' is a torchtitan job file
// (TOML), any other a Megatron-LM argument list (whitespace-separated words). Whatever the
// importer writes must be a config parse_config accepts or refuses with a perflow::Error; bad
// input must end in a perflow::Error, never a crash, a hang or another exception. Built with
// clang's -fsanitize=fuzzer when PERFLOW_FUZZ=ON; every build replays
// tests/fuzz/corpus/launch_import under ctest.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "explore_fuzz.hpp"
#include "perflow/study/config.hpp"
#include "perflow/study/launch_import.hpp"

extern "C" std::uint64_t perflow_fuzz_errors() { return perflow::fuzz::error_count(); }

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  return perflow::fuzz::guarded([&] {
    perflow::study::ImportOptions options;
    options.gpu = "h100-sxm";
    options.nodes = 2;
    perflow::study::ImportResult result;
    if (!input.empty() && (input.front() == '[' || input.front() == '#')) {
      result = perflow::study::import_torchtitan_text(input, "fuzz.toml", options);
    } else {
      std::vector<std::string> args;
      std::string word;
      for (const char c : input) {
        if (c == ' ' || c == '\n' || c == '\t') {
          if (!word.empty()) args.push_back(std::move(word));
          word.clear();
        } else {
          word += c;
        }
      }
      if (!word.empty()) args.push_back(std::move(word));
      result = perflow::study::import_megatron(args, options);
    }
    // The written config reads back (or is refused as a config is).
    (void)perflow::study::parse_config(nlohmann::json::parse(result.config.dump()), "fuzz.json");
  });
}
