#pragma once

#include <string>

#include "perflow/study/config.hpp"

namespace perflow::study {

/// How /model's costs, memory and traffic were derived, per stage and chunk: what
/// `perflow explain CONFIG` prints (the model, training and layout, then per stage its
/// operators' F / B / W times, memory and traffic). Throws ConfigError naming the config's
/// file when it has no /model.
std::string explain(const Config& config);

}  // namespace perflow::study
