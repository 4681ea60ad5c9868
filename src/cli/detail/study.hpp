#pragma once

// The perflow command is a face over the study library (configs, reports, summaries): its
// commands name what study offers without the prefix.
namespace perflow::study {}

namespace perflow::cli {
using namespace perflow::study;  // NOLINT(google-build-using-namespace)
}  // namespace perflow::cli
