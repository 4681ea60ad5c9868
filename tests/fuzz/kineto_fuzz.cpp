// Fuzz target for the Kineto reader: JSON text -> read_kineto, streamed once in 64 KiB
// chunks and once in 7-byte chunks. Bad input must end in a perflow::Error naming the
// file, never a crash or a hang; and chunk boundaries must not change the outcome. Every
// range name also goes through two user patterns that std::regex could not run on long
// names (issue 35: a stack overflow, exponential backtracking). Built with clang's
// -fsanitize=fuzzer when PERFLOW_FUZZ=ON; every build replays tests/fuzz/corpus/kineto
// under ctest.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "detail/byte_source.hpp"
#include "detail/kineto.hpp"
#include "perflow/core/error.hpp"
#include "perflow/reader/markers.hpp"

namespace {

// A summary that any difference between the two reads would change.
std::string outcome(std::string_view text, std::size_t chunk) {
  try {
    perflow::reader::detail::MemorySource source(text, "fuzz.json");
    const perflow::reader::KernelTrace trace = perflow::reader::detail::read_kineto(source, chunk);
    std::string summary = std::to_string(trace.ops.size()) + "/" +
                          std::to_string(trace.launches.size()) + "/" +
                          std::to_string(trace.ranges.size()) + "/" + std::to_string(trace.rank);
    // Appended in two steps: `"," + std::to_string(x)` trips GCC 12's -Wrestrict (PR105329).
    for (const auto& op : trace.ops) (summary += ',') += std::to_string(op.start);
    for (const auto& range : trace.ranges) (summary += ',') += std::to_string(range.depth);
    static const perflow::reader::MarkerClassifier kPatterns[] = {
        perflow::reader::MarkerClassifier::pattern("(?<kind>F)(a|b)*"),
        perflow::reader::MarkerClassifier::pattern(R"((?<kind>F)(a*)*b(?<mb>\d+)?)")};
    for (const auto& range : trace.ranges) {
      for (const auto& pattern : kPatterns) {
        const auto match = pattern.classify(trace.names[range.name]);
        summary += match ? (match->microbatch ? 'm' : 'k') : '-';
      }
    }
    return summary;
  } catch (const perflow::Error& e) {
    return e.what();  // the expected outcome for bad input
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (outcome(text, 1U << 16) != outcome(text, 7)) std::abort();
  return 0;
}
