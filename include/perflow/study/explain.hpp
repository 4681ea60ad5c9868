#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "perflow/study/config.hpp"

namespace perflow::study {

/// How /model's costs, memory and traffic were derived, per stage and chunk: what
/// `perflow explain CONFIG` prints (the model, training and layout, then per stage its
/// operators' F / B / W times, memory and traffic). Throws ConfigError naming the config's
/// file when it has no /model.
std::string explain(const Config& config);

/// The same as data (`perflow explain --format json`): "model", "training", "layout" and
/// "positions", per stage and chunk its layers, F / B / W / R times in ns (null where the
/// stage's GPU is unknown and /costs gives them), operators, memory and traffic in bytes.
nlohmann::ordered_json explain_json(const Config& config);

}  // namespace perflow::study
