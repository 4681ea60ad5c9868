#include "perflow/passes/recipe.hpp"

#include <array>
#include <string>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "perflow/core/error.hpp"
#include "perflow/parallel/detail/recompute_offload.hpp"
#include "perflow/parallel/expert_parallel.hpp"
#include "perflow/parallel/recompute.hpp"
#include "perflow/simulator/lowering.hpp"

namespace perflow::passes {
namespace {

constexpr std::array<std::string_view, std::variant_size_v<Pass>> kNames = {
    "overlap-pairs", "all-to-all", "recompute",           "data-parallel",     "fsdp",
    "offload",       "iterations", "lower-communication", "blocking-transfers"};

std::string canonical_order() {
  std::string out;
  for (const std::string_view name : kNames) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};

}  // namespace

std::string_view pass_name(const Pass& pass) { return kNames[pass.index()]; }

Recipe::Recipe(std::vector<Pass> passes) {
  passes_.reserve(passes.size());
  for (Pass& pass : passes) then(std::move(pass));
}

Recipe& Recipe::then(Pass pass) {
  if (!passes_.empty()) {
    const Pass& last = passes_.back();
    if (last.index() == pass.index()) {
      throw ScheduleError(fmt::format("pass recipe: {} is asked for twice", pass_name(pass)));
    }
    const auto lowering = [](const Pass& p) {
      return std::holds_alternative<LowerCommunication>(p) ||
             std::holds_alternative<BlockingTransfers>(p);
    };
    if (lowering(pass) && lowering(last)) {
      throw ScheduleError(
          "pass recipe: lower-communication and blocking-transfers cannot both run (each lowers "
          "every transfer)");
    }
    if (last.index() > pass.index()) {
      throw ScheduleError(fmt::format("pass recipe: {} cannot come after {} (the order is {})",
                                      pass_name(pass), pass_name(last), canonical_order()));
    }
  }
  if (const auto* pairs = std::get_if<OverlapPairs>(&pass); pairs && pairs->plan == nullptr) {
    throw ScheduleError("pass recipe: overlap-pairs needs the plan the graph was built from");
  }
  passes_.push_back(std::move(pass));
  return *this;
}

EventGraph apply(EventGraph graph, const Recipe& recipe) {
  const std::span<const Pass> passes = recipe.passes();
  for (std::size_t i = 0; i < passes.size(); ++i) {
    const Pass& pass = passes[i];
    // Recomputation then offloading: one extension of the graph, frozen once (the same
    // graph as the two passes give one after the other).
    const auto* recompute = std::get_if<Recompute>(&pass);
    const auto* offload = i + 1 < passes.size() ? std::get_if<Offload>(&passes[i + 1]) : nullptr;
    if (recompute != nullptr && offload != nullptr) {
      graph = parallel::detail::add_recompute_and_offload(std::move(graph), recompute->costs,
                                                          offload->spec);
      ++i;
      continue;
    }
    graph = std::visit(
        Overloaded{
            [&](const OverlapPairs& p) {
              return parallel::overlap_pairs(std::move(graph), *p.plan, p.costs);
            },
            [&](const AllToAll& p) { return parallel::add_all_to_all(std::move(graph), p.costs); },
            [&](const Recompute& p) { return parallel::add_recompute(std::move(graph), p.costs); },
            [&](const DataParallel& p) {
              return parallel::add_data_parallel(std::move(graph), p.spec);
            },
            [&](const Fsdp& p) { return parallel::add_fsdp(std::move(graph), p.spec); },
            [&](const Offload& p) { return parallel::add_offload(std::move(graph), p.spec); },
            [&](const Iterations& p) { return parallel::repeat_iterations(graph, p.spec); },
            [&](const LowerCommunication& p) {
              return simulator::lower_communication(std::move(graph), p.options);
            },
            [&](const BlockingTransfers& p) {
              return simulator::lower_blocking_transfers(graph, p.options);
            }},
        pass);
  }
  return graph;
}

}  // namespace perflow::passes
