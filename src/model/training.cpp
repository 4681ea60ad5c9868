#include "perflow/model/training.hpp"

#include <iterator>

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

std::string_view to_string(ReduceDtype dtype) {
  switch (dtype) {
    case ReduceDtype::Bf16:
      return "bf16";
    case ReduceDtype::Fp16:
      return "fp16";
    case ReduceDtype::Fp32:
      break;
  }
  return "fp32";
}

std::optional<ReduceDtype> parse_reduce_dtype(std::string_view text) {
  if (text == "fp32") return ReduceDtype::Fp32;
  if (text == "bf16") return ReduceDtype::Bf16;
  if (text == "fp16") return ReduceDtype::Fp16;
  return std::nullopt;
}

std::optional<Recompute> parse_recompute(std::string_view text) {
  if (text == "none") return Recompute::None;
  if (text == "selective") return Recompute::Selective;
  if (text == "full") return Recompute::Full;
  return std::nullopt;
}

std::string_view to_string(CpComm comm) { return kCpCommNames[static_cast<std::size_t>(comm)]; }

std::optional<CpComm> parse_cp_comm(std::string_view text) {
  for (std::size_t i = 0; i < std::size(kCpCommNames); ++i) {
    if (kCpCommNames[i] == text) return static_cast<CpComm>(i);
  }
  return std::nullopt;
}

std::string_view to_string(Fsdp fsdp) { return kFsdpNames[static_cast<std::size_t>(fsdp)]; }

std::optional<Fsdp> parse_fsdp(std::string_view text) {
  for (std::size_t i = 0; i < std::size(kFsdpNames); ++i) {
    if (kFsdpNames[i] == text) return static_cast<Fsdp>(i);
  }
  return std::nullopt;
}

}  // namespace perflow::model
