// Fuzz target for sweep files: bytes -> a scratch sweep.json (beside a valid base.json, so a
// "base": "base.json" resolves) -> load_sweep. A sweep that loads keeps its promises: every
// run sets every pointer, and a few runs (the first, the middle, the last) read as configs;
// the first, when small, is simulated by run_point and its CSV and JSON Lines rows are
// resumed from as written (find_resume_point counts the row). Bad input must end in a
// perflow::Error, never a crash, a hang or another exception. Built with clang's
// -fsanitize=fuzzer when PERFLOW_FUZZ=ON; every build replays tests/fuzz/corpus/sweep_file
// under ctest.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "explore_fuzz.hpp"
#include "perflow/explore/sweep.hpp"
#include "perflow/explore/sweep_run.hpp"
#include "perflow/explore/sweep_table.hpp"
#include "perflow/study/config.hpp"

namespace {

namespace explore = perflow::explore;
namespace fuzz = perflow::fuzz;

constexpr std::string_view kBase = R"({
  "pipeline": {"schedule": "1f1b", "stages": 2, "microbatches": 4, "chunks": 1},
  "costs": {"forward": 10, "backward": 20, "weight": 15, "activation": 1}
})";

const std::filesystem::path& directory() {
  const std::filesystem::path& dir = fuzz::scratch_dir("sweep_file");
  static const bool written = (fuzz::write_file(dir / "base.json", kBase), true);
  (void)written;
  return dir;
}

// Writes the header and run's row in `format` and checks that a resume counts the row.
void check_resumes(const explore::Sweep& sweep, const explore::RunOutcome& outcome,
                   explore::TableFormat format) {
  const std::filesystem::path results =
      directory() / (format == explore::TableFormat::Csv ? "r.csv" : "r.jsonl");
  const explore::TableIdentity identity = explore::identity_of(sweep, 0, 1, format);
  const std::string text =
      explore::table_header(sweep, format) + explore::table_row(sweep, outcome, format);
  fuzz::write_file(results, text);
  fuzz::write_file(explore::identity_path(results), explore::identity_text(identity));
  explore::ResumePoint point;
  try {
    point = explore::find_resume_point(results, sweep, identity, 1);
  } catch (const perflow::Error& e) {
    fuzz::fail(std::string("a resume refuses the row a sweep wrote: ") + e.what() +
               "\n--- the results file:\n" + text);
  }
  if (point.rows != 1 || point.bytes != text.size()) {
    fuzz::fail("a resume does not count the row a sweep wrote: " + point.rerun_reason +
               "\n--- the results file:\n" + text);
  }
}

}  // namespace

extern "C" std::uint64_t perflow_fuzz_errors() { return fuzz::error_count(); }

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::filesystem::path file = directory() / "sweep.json";
  fuzz::write_file(file, std::string_view(reinterpret_cast<const char*>(data), size));
  return fuzz::guarded([&] {
    const explore::Sweep sweep = explore::load_sweep(file);
    const std::uint64_t runs = sweep.run_count();
    if (runs == 0 || runs > explore::kMaxSweepRuns) fuzz::fail("a sweep without a run count");
    if (!sweep.digest.starts_with("sha256:")) fuzz::fail("a sweep without a digest");
    const std::vector<std::string> pointers = sweep.pointers();
    for (const std::uint64_t run : {std::uint64_t{0}, runs / 2, runs - 1}) {
      if (sweep.overrides(run).size() != pointers.size()) {
        fuzz::fail("a run that does not set every pointer of the sweep");
      }
    }
    // The runs as configs; a refused one is a row with its error, not an exception.
    for (const std::uint64_t run : {runs - 1, runs / 2, std::uint64_t{0}}) {
      try {
        const perflow::study::Config config =
            perflow::study::parse_config(sweep.base, sweep.base_file, sweep.overrides(run));
        if (run != 0 || !fuzz::small_enough(config, 2'000)) continue;
      } catch (const perflow::Error&) {
        if (run != 0) continue;
      }
      const explore::RunOutcome outcome = explore::run_point(sweep, run);
      check_resumes(sweep, outcome, explore::TableFormat::Csv);
      check_resumes(sweep, outcome, explore::TableFormat::Jsonl);
    }
  });
}
