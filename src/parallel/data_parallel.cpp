#include "perflow/parallel/data_parallel.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "perflow/core/detail/graph_extension.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/collectives.hpp"
#include "perflow/parallel/nccl_collectives.hpp"

namespace perflow::parallel {
namespace {

template <class T>
T entry(const std::vector<T>& values, std::size_t index) {
  return index < values.size() ? values[index] : T{};
}

// A data-parallel collective's time: NCCL's choice over spec.nccl, else the ring.
TimeNs data_parallel_collective_time(const DataParallelSpec& spec, TaskKind kind, double bytes) {
  const Collective collective = kind == TaskKind::AllReduce       ? Collective::AllReduce
                                : kind == TaskKind::ReduceScatter ? Collective::ReduceScatter
                                                                  : Collective::AllGather;
  return collective_time(collective, bytes, spec.ranks(), {spec.latency, spec.bandwidth},
                         spec.nccl);
}

// ceil(total / size) buckets, one when there is no size or the bytes fit in one.
std::uint64_t bucket_count(double total, double size) {
  if (size <= 0 || total <= size) return 1;
  return static_cast<std::uint64_t>(std::min(std::ceil(total / size), 1e18));
}

// A (stage, chunk)'s gradient bytes in buckets of at most `size` (0: one bucket), filled in
// the order the backward produces them: every bucket full but the last.
struct Buckets {
  double total;
  double size;

  [[nodiscard]] std::uint64_t count() const { return bucket_count(total, size); }
  [[nodiscard]] double bytes(std::uint32_t j) const {
    return j + 1 < count() ? size : total - size * static_cast<double>(count() - 1);
  }
  // The share of the gradient task that has run when bucket j's last gradient is produced.
  [[nodiscard]] double produced_after(std::uint32_t j) const {
    return j + 1 < count() ? size * (j + 1) / total : 1.0;
  }
};

// A (stage, chunk)'s buckets under `spec` (one without overlap).
Buckets buckets_of(const DataParallelSpec& spec, std::size_t index) {
  return {entry(spec.gradient_bytes, index), spec.overlap ? entry(spec.bucket_bytes, index) : 0.0};
}

}  // namespace

std::uint64_t gradient_bucket_count(const DataParallelSpec& spec, std::size_t index, double bytes) {
  return bucket_count(bytes, spec.overlap ? entry(spec.bucket_bytes, index) : 0.0);
}

EventGraph add_data_parallel(const EventGraph& graph, const DataParallelSpec& spec) {
  return add_data_parallel(EventGraph(graph), spec);
}

EventGraph add_data_parallel(EventGraph&& base, const DataParallelSpec& spec) {
  if (base.task_count() > 0 && !base.has_program_order()) {
    throw ScheduleError("data parallelism needs a graph with program order");
  }
  if (spec.degree == 0) throw ScheduleError("the data-parallel degree must be at least 1");
  const std::uint32_t chunks = std::max<std::uint32_t>(spec.chunks, 1);
  detail::GraphExtension builder(std::move(base));
  const EventGraph& graph = builder.graph();

  for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
    const auto program = graph.program(DeviceId{d});
    if (program.empty()) continue;
    // Per (stage, chunk) on this device: its last gradient task (W or BW) in program order
    // (a (stage, chunk) with no gradient task, a forward-only part, reduces after its last
    // task) and its first forward.
    constexpr std::size_t kNone = ~std::size_t{0};
    struct Place {
      std::size_t last = kNone;
      std::size_t last_gradient = kNone;
      std::size_t first_forward = kNone;
    };
    std::map<std::pair<std::uint32_t, std::uint32_t>, Place> places;
    for (std::size_t i = 0; i < program.size(); ++i) {
      const TaskId t = program[i];
      const TaskKind kind = graph.kind(t);
      if (!is_compute(kind)) continue;
      Place& place = places[{graph.stage(t).value, graph.chunk(t)}];
      place.last = i;
      if (kind == TaskKind::W || kind == TaskKind::BW) place.last_gradient = i;
      if (kind == TaskKind::F && place.first_forward == kNone) place.first_forward = i;
    }
    const auto index = [chunks](std::pair<std::uint32_t, std::uint32_t> key) {
      return std::size_t{key.first} * chunks + key.second;
    };
    // Each (stage, chunk) with where its gradients are complete and its buckets, in the
    // order of those positions.
    struct Part {
      std::size_t position;
      std::pair<std::uint32_t, std::uint32_t> key;
      Buckets buckets;
    };
    std::vector<Part> by_position;
    TimeNs optimizer = 0;
    std::uint32_t previous_stage = ~0u;
    for (const auto& [key, place] : places) {
      by_position.push_back({place.last_gradient != kNone ? place.last_gradient : place.last, key,
                             buckets_of(spec, index(key))});
      optimizer += entry(spec.optimizer, index(key));
      if (key.first != previous_stage) optimizer += entry(spec.step_overhead, key.first);
      previous_stage = key.first;  // keys are sorted: a stage's chunks are together
    }
    std::sort(by_position.begin(), by_position.end(),
              [](const Part& x, const Part& y) { return x.position < y.position; });
    const auto collective = [&](TaskKind kind, std::pair<std::uint32_t, std::uint32_t> key,
                                double bytes, LaneId lane, double release_share) {
      const TimeNs time = data_parallel_collective_time(spec, kind, bytes);
      TaskSpec task{kind, DeviceId{d}, StageId{key.first}, 0, key.second, time, 0.0, lane};
      task.release_share = release_share;
      const TaskId id = builder.add_task(task);
      builder.append_to_program(id);
      return id;
    };
    // The parameters gathered with gradient bucket j of `key` (its share of the bytes).
    const auto gathered = [&](std::pair<std::uint32_t, std::uint32_t> key, const Buckets& b,
                              std::uint32_t j) {
      const double parameters = entry(spec.parameter_bytes, index(key));
      return b.total > 0 ? parameters * b.bytes(j) / b.total : parameters;
    };

    std::vector<TaskId> reductions;
    std::vector<std::pair<std::pair<std::uint32_t, std::uint32_t>, Buckets>> gathers;
    LaneId lane;
    if (spec.ranks() > 1) {
      lane = builder.add_lane(DeviceId{d}, spec.sharded ? "dp collectives" : "dp all-reduce");
      for (const auto& [position, key, b] : by_position) {
        if (b.count() > kMaxGradientBuckets) {
          throw ScheduleError(fmt::format(
              "stage {} chunk {}: {} gradient bytes in buckets of {} make {} buckets, more than "
              "{}",
              key.first, key.second, b.total, b.size, b.count(), kMaxGradientBuckets));
        }
        if (spec.sharded) gathers.emplace_back(key, b);
      }
      if (spec.sharded && spec.overlap_param_gather) {
        // The step before's parameters, gathered under this iteration's forward: chunk by
        // chunk in the order their forwards start, a chunk's first layers (its last bucket)
        // first; its first forward waits for that bucket.
        std::sort(gathers.begin(), gathers.end(), [&](const auto& x, const auto& y) {
          return places[x.first].first_forward < places[y.first].first_forward;
        });
        for (const auto& [key, b] : gathers) {
          for (auto j = static_cast<std::uint32_t>(b.count()); j-- > 0;) {
            const TaskId gather =
                collective(TaskKind::AllGather, key, gathered(key, b, j), lane, 1.0);
            const std::size_t first = places[key].first_forward;
            if (j + 1 == b.count() && first != kNone)
              builder.add_dependence(gather, program[first]);
          }
        }
      }
      const TaskKind reduce = spec.sharded ? TaskKind::ReduceScatter : TaskKind::AllReduce;
      for (const auto& [position, key, b] : by_position) {
        for (std::uint32_t j = 0; j < b.count(); ++j) {
          const TaskId r =
              collective(reduce, key, b.bytes(j), lane, spec.overlap ? b.produced_after(j) : 1.0);
          builder.add_dependence(program[spec.overlap ? position : program.size() - 1], r);
          reductions.push_back(r);
        }
      }
    }
    TaskId step;
    if (optimizer > 0) {
      step = builder.add_task(
          TaskSpec{TaskKind::Optimizer, DeviceId{d}, graph.stage(program.back()), 0, 0, optimizer});
      for (const TaskId r : reductions) builder.add_dependence(r, step);
      builder.append_to_program(step);
    }
    if (spec.sharded && !spec.overlap_param_gather) {
      // The updated shards gathered back right after the step, in bucket order.
      for (const auto& [key, b] : gathers) {
        for (std::uint32_t j = 0; j < b.count(); ++j) {
          const TaskId gather =
              collective(TaskKind::AllGather, key, gathered(key, b, j), lane, 1.0);
          if (step.valid()) builder.add_dependence(step, gather);
        }
      }
    }
  }
  return std::move(builder).freeze();
}

namespace {

bool is_data_parallel_collective(TaskKind kind) {
  return kind == TaskKind::AllReduce || kind == TaskKind::ReduceScatter ||
         kind == TaskKind::AllGather;
}

}  // namespace

std::vector<DataParallelTime> data_parallel_time(const EventGraph& graph, const Trace& trace) {
  std::vector<DataParallelTime> out(graph.device_count());
  // Most graphs have none (the summary asks for every run).
  if (!graph.has_kind(TaskKind::AllReduce) && !graph.has_kind(TaskKind::ReduceScatter) &&
      !graph.has_kind(TaskKind::AllGather)) {
    return out;
  }
  for (std::uint32_t l = graph.device_count(); l < graph.lane_count() && l < trace.lane_count();
       ++l) {
    const DeviceId device = graph.lane_info(LaneId{l}).device;
    const std::span<const TaskId> compute = trace.events(device);
    DataParallelTime& time = out[device.value];
    // Both lanes run one task at a time in time order: one walk along the compute lane.
    std::size_t next = 0;
    for (const TaskId t : trace.events(LaneId{l})) {
      if (!is_data_parallel_collective(graph.kind(t))) continue;
      const TimeNs from = trace.start_of(t);
      const TimeNs to = trace.finish_of(t);
      while (next < compute.size() && trace.finish_of(compute[next]) <= from) ++next;
      TimeNs covered = 0;
      for (std::size_t i = next; i < compute.size() && trace.start_of(compute[i]) < to; ++i) {
        covered +=
            std::min(to, trace.finish_of(compute[i])) - std::max(from, trace.start_of(compute[i]));
      }
      time.total += to - from;
      time.exposed += to - from - covered;
    }
  }
  return out;
}

}  // namespace perflow::parallel
