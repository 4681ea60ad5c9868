#include "perflow/model/training.hpp"

namespace perflow::model {

std::string_view to_string(Recompute recompute) {
  switch (recompute) {
    case Recompute::Selective:
      return "selective";
    case Recompute::Full:
      return "full";
    case Recompute::None:
      break;
  }
  return "none";
}

std::optional<Recompute> parse_recompute(std::string_view text) {
  if (text == "none") return Recompute::None;
  if (text == "selective") return Recompute::Selective;
  if (text == "full") return Recompute::Full;
  return std::nullopt;
}

}  // namespace perflow::model
