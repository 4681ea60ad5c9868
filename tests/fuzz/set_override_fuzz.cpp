// Fuzz target for `--set POINTER=VALUE`: the first line of the input is the argument, the rest
// a base config's JSON text. parse_override reads the argument, parse_config applies it to
// the document (apply_overrides) and checks the result, and a small enough config is built and
// simulated. Bad input must end in a perflow::Error, never a crash, a hang, an allocation the
// size of an index (an index beyond an array's end is refused) or another exception. Built
// with clang's -fsanitize=fuzzer when PERFLOW_FUZZ=ON; every build replays
// tests/fuzz/corpus/set_override under ctest.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "explore_fuzz.hpp"
#include "perflow/core/json_cursor.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/study/config.hpp"
#include "perflow/study/config_overrides.hpp"

extern "C" std::uint64_t perflow_fuzz_errors() { return perflow::fuzz::error_count(); }

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t newline = input.find('\n');
  const std::string_view argument = input.substr(0, newline);
  const std::string_view text =
      newline == std::string_view::npos ? std::string_view() : input.substr(newline + 1);
  return perflow::fuzz::guarded([&] {
    const std::vector<perflow::study::ConfigOverride> overrides{
        perflow::study::parse_override(argument)};
    const auto document = perflow::parse_json_text(text, "fuzz.json");
    // The document as the override leaves it, on its own: no more values than the document's,
    // the value's and one object or array per step of the pointer (an index beyond an array's
    // end must not pad it). Counted without recursion: a pointer of 10,000 steps nests as deep.
    const auto values = [](const nlohmann::json& root) {
      std::uint64_t count = 0;
      std::vector<const nlohmann::json*> pending{&root};
      while (!pending.empty()) {
        const nlohmann::json* value = pending.back();
        pending.pop_back();
        ++count;
        if (value->is_structured()) {
          for (const nlohmann::json& child : *value) pending.push_back(&child);
        }
      }
      return count;
    };
    nlohmann::json applied = document;
    perflow::study::apply_overrides(applied, overrides, "fuzz.json");
    const std::string& pointer = overrides.front().pointer;
    if (values(applied) >
        values(document) + values(overrides.front().value) +
            static_cast<std::uint64_t>(std::count(pointer.begin(), pointer.end(), '/'))) {
      perflow::fuzz::fail("--set added more values than the pointer and the value it sets");
    }
    const perflow::study::Config config =
        perflow::study::parse_config(document, "fuzz.json", overrides);
    if (!perflow::fuzz::small_enough(config)) return;
    const perflow::EventGraph graph = perflow::study::build_graph(config);
    (void)perflow::study::simulate(config, graph);
  });
}
