#include "perflow/parallel/offload.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <queue>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "perflow/core/detail/graph_extension.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/detail/recompute_offload.hpp"

namespace perflow::parallel {
namespace {

/// One activation on a device: its F and the task that first needs it back, by position in
/// the device's compute program.
struct Activation {
  std::uint32_t f = 0;
  std::uint32_t consumer = 0;
  double bytes = 0;
  bool chosen = false;

  [[nodiscard]] bool eligible() const { return consumer >= f + 3; }
  [[nodiscard]] std::uint32_t lifetime() const { return consumer - f; }
};

template <class T>
T entry_or(const std::vector<T>& values, std::size_t i, T fallback) {
  return i < values.size() ? values[i] : fallback;
}

/// The device's activations, each F paired with the first R, B or BW of its microbatch and
/// chunk (and iteration) after it.
template <class Graph>
std::vector<Activation> activations_of(const Graph& graph, std::span<const TaskId> program) {
  // The open F of each (stage, chunk, iteration) group, by microbatch: an index into
  // `found` plus one (0: none). A device has few groups; a linear search finds them.
  struct Group {
    std::uint32_t stage, chunk, iteration;
    std::vector<std::uint32_t> open;
  };
  std::vector<Group> groups;
  const auto open_of = [&](TaskId t) -> std::uint32_t& {
    const std::uint32_t stage = graph.stage(t).value;
    const std::uint32_t chunk = graph.chunk(t);
    const std::uint32_t iteration = graph.iteration(t);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.stage == stage && g.chunk == chunk && g.iteration == iteration;
    });
    if (it == groups.end()) it = groups.insert(groups.end(), Group{stage, chunk, iteration, {}});
    const std::uint32_t mb = graph.microbatch(t);
    if (mb >= it->open.size()) it->open.resize(std::size_t{mb} + 1, 0);
    return it->open[mb];
  };
  std::vector<Activation> found;
  for (std::uint32_t i = 0; i < program.size(); ++i) {
    const TaskId t = program[i];
    const TaskKind kind = graph.kind(t);
    if (kind == TaskKind::F) {
      if (graph.memory_delta(t) > 0) {
        open_of(t) = static_cast<std::uint32_t>(found.size()) + 1;
        found.push_back({i, 0, graph.memory_delta(t), false});
      }
    } else if (kind == TaskKind::R || kind == TaskKind::B || kind == TaskKind::BW) {
      if (std::uint32_t& open = open_of(t); open != 0) {
        found[open - 1].consumer = i;
        open = 0;
      }
    }
  }
  // An F whose consumer is elsewhere (a forward-only part) stays on the device.
  std::erase_if(found, [](const Activation& a) { return a.consumer == 0; });
  return found;
}

/// Per (stage, chunk): round(ratio x microbatches) of the eligible, longest-lived first.
template <class Graph>
void choose_by_ratio(const Graph& graph, std::span<const TaskId> program,
                     std::vector<Activation>& found, const OffloadSpec& spec) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<Activation*>> groups;
  for (Activation& a : found) {
    const TaskId f = program[a.f];
    groups[{graph.stage(f).value, graph.chunk(f)}].push_back(&a);
  }
  const std::uint32_t chunks = std::max<std::uint32_t>(spec.chunks, 1);
  for (auto& [key, group] : groups) {
    const double ratio = std::clamp(
        entry_or(spec.ratio, std::size_t{key.first} * chunks + key.second, 0.0), 0.0, 1.0);
    auto wanted = static_cast<std::size_t>(std::llround(ratio * static_cast<double>(group.size())));
    std::stable_sort(group.begin(), group.end(), [](const Activation* a, const Activation* b) {
      return a->lifetime() > b->lifetime();
    });
    for (Activation* a : group) {
      if (wanted == 0) break;
      if (!a->eligible()) continue;
      a->chosen = true;
      --wanted;
    }
  }
}

/// Belady's rule against a budget, in program order.
template <class Graph>
void choose_by_budget(const Graph& graph, std::span<const TaskId> program,
                      std::vector<Activation>& found, double budget) {
  std::vector<std::vector<Activation*>> available_at(program.size() + 1);
  // Its copy out runs while the task after its F does: it leaves from the task after that.
  for (Activation& a : found) {
    if (a.eligible() && a.f + 2 < program.size()) available_at[a.f + 2].push_back(&a);
  }
  std::vector<double> reload(program.size() + 1, 0.0);
  // Needed latest first; then the earlier F.
  const auto later = [](const Activation* a, const Activation* b) {
    return a->consumer != b->consumer ? a->consumer < b->consumer : a->f > b->f;
  };
  std::priority_queue<Activation*, std::vector<Activation*>, decltype(later)> live(later);
  double memory = 0;
  for (std::uint32_t i = 0; i < program.size(); ++i) {
    memory += reload[i] + graph.memory_delta(program[i]);
    for (Activation* a : available_at[i]) live.push(a);
    while (memory > budget && !live.empty()) {
      Activation* a = live.top();
      live.pop();
      if (a->consumer - 2 < i) continue;  // back on the device already
      a->chosen = true;
      memory -= a->bytes;
      reload[a->consumer - 1] += a->bytes;
    }
  }
}

}  // namespace

TimeNs host_copy_time(const HostLink& link, double bytes) {
  double ns = static_cast<double>(link.latency);
  if (bytes > 0 && link.bandwidth > 0) ns += std::ceil(bytes / link.bandwidth * 1e9);
  if (!(ns <= 1e18)) {
    throw ScheduleError(fmt::format(
        "a host copy of {} bytes over a link of {} bytes/s and {} ns latency would take longer "
        "than 1e18 ns",
        bytes, link.bandwidth, link.latency));
  }
  return static_cast<TimeNs>(ns);
}

EventGraph add_offload(const EventGraph& graph, const OffloadSpec& spec) {
  return add_offload(EventGraph(graph), spec);
}

namespace {

/// A copy and the compute tasks around it, by position in its device's program.
struct Copy {
  TaskKind kind;
  DeviceId device;
  TaskId like;               // the F or OPT whose stage, microbatch, chunk and iteration it takes
  TaskId after;              // it waits for this task (and, for a copy back, its copy out)
  TaskId before;             // the task waiting for it (invalid: none)
  std::uint32_t issued = 0;  // the position of `after`: the order on the link
  double bytes = 0;
  std::size_t pair = SIZE_MAX;  // a copy back: the index of its copy out
};

/// The copies to make, device by device. `graph` answers program(DeviceId) and the task
/// getters: the frozen graph, or one being extended by recomputation (RecomputedView).
template <class Graph>
std::vector<Copy> plan_copies(const Graph& graph, const OffloadSpec& spec) {
  std::vector<Copy> copies;
  for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
    const std::span<const TaskId> program = graph.program(DeviceId{d});
    std::vector<Activation> found = activations_of(graph, program);
    const std::optional<double> budget = entry_or(spec.budget, d, std::optional<double>{});
    if (budget) {
      choose_by_budget(graph, program, found, *budget);
    } else {
      choose_by_ratio(graph, program, found, spec);
    }
    for (const Activation& a : found) {
      if (!a.chosen) continue;
      copies.push_back({TaskKind::D2H, DeviceId{d}, program[a.f], program[a.f], {}, a.f, a.bytes});
      copies.push_back({TaskKind::H2D, DeviceId{d}, program[a.f], program[a.consumer - 2],
                        program[a.consumer], a.consumer - 2, a.bytes, copies.size() - 1});
    }
    const double optimizer = entry_or(spec.optimizer_bytes, d, 0.0);
    if (optimizer > 0) {
      for (std::uint32_t i = 0; i < program.size(); ++i) {
        if (graph.kind(program[i]) != TaskKind::Optimizer) continue;
        const std::uint32_t issued = i >= 2 ? i - 2 : 0;
        copies.push_back({TaskKind::H2D, DeviceId{d}, program[i],
                          i >= 2 ? program[i - 2] : TaskId{}, program[i], issued, optimizer});
        copies.push_back({TaskKind::D2H, DeviceId{d}, program[i], program[i], {}, i, optimizer});
      }
    }
  }
  return copies;
}

/// The copies' lanes, tasks, dependences and places in `builder`.
template <class Graph>
void add_copies(perflow::detail::GraphExtension& builder, const Graph& extended,
                const std::vector<Copy>& copies, const OffloadSpec& spec) {
  builder.reserve(copies.size(), copies.size() * 3);
  // Per device, one lane per direction: the links are full duplex and a GPU copies each way
  // on its own copy engine. Created in (device, to host, from host) order.
  std::vector<std::array<LaneId, 2>> lanes(extended.device_count());
  for (const Copy& c : copies) {
    auto& [to_host, from_host] = lanes[c.device.value];
    if (!to_host.valid()) {
      to_host = builder.add_lane(c.device, "to host");
      from_host = builder.add_lane(c.device, "from host");
    }
  }
  std::vector<TaskId> id(copies.size());
  for (std::size_t k = 0; k < copies.size(); ++k) {
    const Copy& c = copies[k];
    TaskSpec s = extended.spec(c.like);
    s.kind = c.kind;
    s.lane = lanes[c.device.value][c.kind == TaskKind::D2H ? 0 : 1];
    s.duration = host_copy_time(entry_or(spec.host_link, c.device.value, HostLink{}), c.bytes);
    s.memory_delta = c.kind == TaskKind::D2H ? -c.bytes : c.bytes;
    s.paired = false;
    s.release_share = 1.0;
    id[k] = builder.add_task(s);
    if (c.after.valid()) builder.add_dependence(c.after, id[k]);
    if (c.pair != SIZE_MAX) builder.add_dependence(id[c.pair], id[k]);
    if (c.before.valid()) builder.add_dependence(id[k], c.before);
  }
  // Each lane runs its copies in the order they are issued; among equals, in the order they
  // were found. A device's copies are contiguous in `copies`: a counting sort each.
  std::vector<std::size_t> order(copies.size());
  std::vector<std::uint32_t> count;
  for (std::size_t begin = 0; begin < copies.size();) {
    std::size_t end = begin;
    std::uint32_t last = 0;
    for (; end < copies.size() && copies[end].device == copies[begin].device; ++end) {
      last = std::max(last, copies[end].issued);
    }
    count.assign(std::size_t{last} + 2, 0);
    for (std::size_t k = begin; k < end; ++k) ++count[copies[k].issued + 1];
    for (std::size_t i = 1; i < count.size(); ++i) count[i] += count[i - 1];
    for (std::size_t k = begin; k < end; ++k) order[begin + count[copies[k].issued]++] = k;
    begin = end;
  }
  for (const std::size_t k : order) builder.append_to_program(id[k]);
}

void check_offloadable(const EventGraph& graph) {
  const auto n = static_cast<std::uint32_t>(graph.task_count());
  if (n > 0 && !graph.has_program_order()) {
    throw ScheduleError("offloading needs a graph with program order");
  }
  for (std::uint32_t t = 0; t < n; ++t) {
    if (is_host_copy(graph.kind(TaskId{t}))) throw ScheduleError("offloading: already added");
  }
}

/// A graph being extended by recomputation, as offloading reads it: the tasks as they
/// will be, and each device's compute program with its R tasks in place.
class RecomputedView {
 public:
  RecomputedView(const perflow::detail::GraphExtension& x, const std::vector<TaskId>& recompute_of)
      : x_(x), programs_(x.graph().device_count()) {
    const EventGraph& graph = x.graph();
    for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
      const auto program = graph.program(DeviceId{d});
      std::vector<TaskId>& out = programs_[d];
      out.reserve(program.size() + program.size() / 2);
      detail::with_recomputes(graph, recompute_of, program,
                              [&](TaskId task, TaskId) { out.push_back(task); });
    }
  }

  [[nodiscard]] std::uint32_t device_count() const { return x_.graph().device_count(); }
  [[nodiscard]] std::span<const TaskId> program(DeviceId d) const { return programs_[d.value]; }
  [[nodiscard]] TaskKind kind(TaskId t) const { return x_.kind(t); }
  [[nodiscard]] StageId stage(TaskId t) const { return x_.stage(t); }
  [[nodiscard]] std::uint32_t chunk(TaskId t) const { return x_.chunk(t); }
  [[nodiscard]] std::uint32_t microbatch(TaskId t) const { return x_.microbatch(t); }
  [[nodiscard]] std::uint32_t iteration(TaskId t) const { return x_.iteration(t); }
  [[nodiscard]] double memory_delta(TaskId t) const { return x_.memory_delta(t); }
  [[nodiscard]] TaskSpec spec(TaskId t) const { return x_.spec(t); }

 private:
  const perflow::detail::GraphExtension& x_;
  std::vector<std::vector<TaskId>> programs_;
};

}  // namespace

EventGraph add_offload(EventGraph&& base, const OffloadSpec& spec) {
  check_offloadable(base);
  const std::vector<Copy> copies = plan_copies(base, spec);
  if (copies.empty()) return std::move(base);
  perflow::detail::GraphExtension builder(std::move(base));
  add_copies(builder, builder.graph(), copies, spec);
  return std::move(builder).freeze();
}

EventGraph detail::add_recompute_and_offload(EventGraph&& base, const CostTable& costs,
                                             const OffloadSpec& spec) {
  perflow::detail::GraphExtension x(std::move(base));
  const std::vector<TaskId> recompute_of = recompute_into(x, costs);
  if (recompute_of.empty()) return add_offload(std::move(x).release(), spec);
  check_offloadable(x.graph());  // the R tasks are no copies
  const RecomputedView view(x, recompute_of);
  const std::vector<Copy> copies = plan_copies(view, spec);
  add_copies(x, view, copies, spec);
  return std::move(x).freeze(MoveToRecompute{&recompute_of});
}

}  // namespace perflow::parallel
