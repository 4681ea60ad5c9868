// Fuzz target for search files: bytes -> a scratch search.json -> load_search. A small search
// that loads is enumerated (enumerate_plans: every plan is kept or counted as pruned) and its
// first plans read as configs and go through the memory pruning (cannot_fit); nothing is
// simulated. Bad input must end in a perflow::Error, never a crash, a hang or another
// exception. Built with clang's -fsanitize=fuzzer when PERFLOW_FUZZ=ON; every build replays
// tests/fuzz/corpus/search_file under ctest.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

#include "explore_fuzz.hpp"
#include "perflow/explore/search.hpp"
#include "perflow/study/config.hpp"

namespace {

namespace explore = perflow::explore;
namespace fuzz = perflow::fuzz;

// The plans a search may have, before divisibility: its axes' product times the GPUs (the
// data-parallel degrees).
std::uint64_t plan_bound(const explore::Search& search) {
  const explore::SearchSpace& s = search.space;
  std::uint64_t gpus = 0;
  for (const explore::GpuType& g : search.gpus) gpus += g.count;
  const std::uint64_t sizes[] = {s.schedules.size(),
                                 s.chunks.size(),
                                 s.tensor_parallel.size(),
                                 s.pipeline.size(),
                                 s.micro_batch_size.size(),
                                 s.recompute.size(),
                                 std::max<std::uint64_t>(s.offload.size(), 1),
                                 s.layers.size(),
                                 s.expert_parallel.size(),
                                 search.gpus.size(),
                                 gpus};
  std::uint64_t product = 1;
  for (const std::uint64_t n : sizes) {
    product *= std::max<std::uint64_t>(n, 1);
    if (product > 1'000'000) return product;
  }
  return product;
}

}  // namespace

extern "C" std::uint64_t perflow_fuzz_errors() { return fuzz::error_count(); }

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::filesystem::path file = fuzz::scratch_dir("search_file") / "search.json";
  fuzz::write_file(file, std::string_view(reinterpret_cast<const char*>(data), size));
  return fuzz::guarded([&] {
    const explore::Search search = explore::load_search(file);
    if (search.gpus.empty() || search.space.schedules.empty()) {
      fuzz::fail("a search without GPUs or schedules");
    }
    if (plan_bound(search) > 20'000) return;
    explore::SearchCounts counts;
    const std::vector<explore::Plan> plans = explore::enumerate_plans(search, counts);
    if (plans.size() + counts.pruned_divisibility != counts.considered) {
      fuzz::fail("enumerate_plans: plans kept and pruned do not add up to the plans considered");
    }
    for (std::size_t i = 0; i < std::min<std::size_t>(plans.size(), 3); ++i) {
      try {
        // A plan a schedule or the config reader refuses is pruned, as run_search does.
        const perflow::study::Config config =
            perflow::study::parse_config(plans[i].config, search.file);
        (void)explore::cannot_fit(config);
      } catch (const perflow::ConfigError&) {
      }
    }
  });
}
