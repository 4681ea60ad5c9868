#pragma once
// What a config document is refused with: the message of the Error that reading, building or
// simulating it throws, or "(no error)". Shared by the config tests.
#include <string>

#include <nlohmann/json.hpp>

#include "perflow/core/error.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/study/config.hpp"

namespace perflow::study::testing {

inline std::string error_of(const nlohmann::json& doc) {
  try {
    const Config c = parse_config(doc, "cfg.json");
    (void)simulate(c, build_graph(c));
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace perflow::study::testing
