#include "perflow/study/summary.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "perflow/core/units.hpp"
#include "perflow/parallel/data_parallel.hpp"
#include "perflow/parallel/expert_parallel.hpp"

namespace perflow::study {
namespace {

// 174.6B, 352.1M, 9000: parameters at a readable scale.
std::string parameters(double n) {
  if (n >= 1e9) return fmt::format("{:.1f}B", n / 1e9);
  if (n >= 1e6) return fmt::format("{:.1f}M", n / 1e6);
  return fmt::format("{:.0f}", n);
}

std::string count(std::uint32_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// What one task costs, so "per chunk" cannot be misread: F, B and W of one chunk of stage
// 0 (the config's numbers once resolved), and whether other stages or chunks differ.
std::string describe_costs(const Config& config) {
  const parallel::PipelineSpec& p = config.pipeline;
  const parallel::TaskCosts& first = config.costs.at(StageId{0}, 0);
  bool differ = false;
  for (std::uint32_t s = 0; s < p.stages && !differ; ++s) {
    for (std::uint32_t c = 0; c < p.chunks && !differ; ++c) {
      const parallel::TaskCosts& t = config.costs.at(StageId{s}, c);
      differ =
          t.forward != first.forward || t.backward != first.backward || t.weight != first.weight;
    }
  }
  std::string out = fmt::format("per chunk: F {}, B {}, W {} x {} per device",
                                format_duration(first.forward), format_duration(first.backward),
                                format_duration(first.weight), count(p.chunks, "chunk", "chunks"));
  if (config.costs_per == "stage") out += " (given per stage, split across its chunks)";
  if (differ) out += "; stage 0 shown, others differ";
  // The runtime's overheads, which the boxes include.
  if (first.launch_overhead > 0) {
    out += fmt::format("; launch overhead {} per task (in its box)",
                       format_duration(first.launch_overhead));
  }
  const std::vector<TimeNs>& step = config.data_parallel.step_overhead;
  if (!step.empty() && step.front() > 0) {
    out += fmt::format("; step overhead {} (in OPT)", format_duration(step.front()));
  }
  return out;
}

// Recomputation and offloading, as configured: what the R tasks and copies on the timeline
// are. Empty when neither is on.
std::string describe_memory_saving(const Config& config) {
  const parallel::PipelineSpec& p = config.pipeline;
  std::string out;
  std::uint32_t recomputing = 0;
  const parallel::TaskCosts* example = nullptr;
  std::uint32_t example_stage = 0;
  bool differ = false;
  for (std::uint32_t s = 0; s < p.stages; ++s) {
    bool any = false;
    for (std::uint32_t c = 0; c < p.chunks; ++c) {
      const parallel::TaskCosts& t = config.costs.at(StageId{s}, c);
      if (!t.recompute) continue;
      any = true;
      if (example == nullptr) {
        example = &t;
        example_stage = s;
      }
      differ = differ || t.duration(TaskKind::R) != example->duration(TaskKind::R) ||
               t.kept_activation() != example->kept_activation();
    }
    recomputing += any ? 1 : 0;
  }
  if (example != nullptr) {
    out = fmt::format(
        "recompute on {} of {} stages: R {} before each backward, F keeps {} of {}{}", recomputing,
        p.stages, format_duration(example->duration(TaskKind::R)),
        format_memory(example->kept_activation()), format_memory(example->activation),
        differ ? fmt::format(" (stage {} shown, others differ)", example_stage) : std::string());
  }
  if (config.offloads) {
    const parallel::OffloadSpec& o = config.offload;
    std::uint32_t offloading = 0;
    std::string policy;
    std::size_t link = 0;
    for (std::uint32_t s = 0; s < p.stages; ++s) {
      double ratio = 0;
      for (std::uint32_t c = 0; c < p.chunks; ++c) {
        ratio = std::max(ratio, o.ratio[std::size_t{s} * p.chunks + c]);
      }
      if (ratio == 0 && !o.budget[s] && o.optimizer_bytes[s] == 0) continue;
      if (offloading++ == 0) {
        link = s;
        policy = o.budget[s] ? fmt::format("activations over {}", format_memory(*o.budget[s]))
                 : ratio > 0 ? fmt::format("{:.0f}% of activations", ratio * 100)
                             : std::string("no activations");
        if (o.optimizer_bytes[s] > 0) {
          policy += fmt::format(" and {} of optimizer state", format_memory(o.optimizer_bytes[s]));
        }
      }
    }
    const parallel::HostLink& l = o.host_link[link];
    out += fmt::format("{}offload on {} of {} stages: {} to the host over a {} link ({} latency)",
                       out.empty() ? "" : "; ", offloading, p.stages, policy,
                       l.bandwidth > 0 ? format_memory(l.bandwidth) + "/s" : "unlimited",
                       format_duration(l.latency));
  }
  return out;
}

}  // namespace

std::string describe_run(const Config& config, const EventGraph& graph) {
  const parallel::PipelineSpec& p = config.pipeline;
  return fmt::format(
      "{}{}, {} x {} x {} ({} tasks)", p.schedule, p.split_backward ? " (split backward)" : "",
      count(p.stages, "stage", "stages"), count(p.microbatches, "microbatch", "microbatches"),
      count(p.chunks, "chunk", "chunks"), graph.task_count());
}

// How the gradients cross the data-parallel replicas: "reduce-scatter (fp32) in 6 buckets of
// 40M parameters on stage 0 chunk 0, one a chunk elsewhere; parameters all-gathered after the
// step".
std::string describe_gradient_sync(const Config& config) {
  const parallel::DataParallelSpec& dp = config.data_parallel;
  const std::string dtype =
      config.model ? std::string(model::to_string(config.model->training.reduce_dtype())) : "";
  if (config.fsdp_mode != model::Fsdp::None) {
    // FSDP: what each unit's collectives do, and when.
    const std::uint32_t shard = config.fsdp_shard_size;
    const std::uint32_t replicas = dp.ranks() / std::max(shard, 1u);
    return fmt::format(
        "fsdp {} over {} ranks: each layer's parameters all-gathered {}, its gradients "
        "reduce-scattered ({}) {}{}",
        model::to_string(config.fsdp_mode), shard,
        config.fsdp.reshard_after_forward ? "before its F and its backward" : "once a step", dtype,
        config.fsdp.reshard_after_forward ? "after each backward" : "after the last backward",
        replicas > 1 ? fmt::format(", all-reduced over {} replicas in the last backward", replicas)
                     : "");
  }
  std::string out = fmt::format("{}{}", dp.sharded ? "reduce-scatter" : "all-reduce",
                                dtype.empty() ? "" : " (" + dtype + ")");
  const std::uint64_t buckets = parallel::gradient_bucket_count(
      dp, 0, dp.gradient_bytes.empty() ? 0.0 : dp.gradient_bytes[0]);
  if (!dp.overlap) {
    out += ", one a chunk after the backward";
  } else if (buckets > 1) {
    const double width = config.model ? config.model->training.gradient_width() : 4.0;
    out += fmt::format(
        " as the backward goes: {} buckets of {} parameters on stage 0 chunk 0, "
        "one a chunk elsewhere",
        buckets, parameters(dp.bucket_bytes[0] / width));
  } else {
    out += " as the backward goes, one bucket a chunk";
  }
  if (dp.sharded) {
    out += dp.overlap_param_gather ? "; parameters all-gathered under the next forward"
                                   : "; parameters all-gathered after the step";
  }
  return out;
}

std::string format_summary(const Config& config, const EventGraph& graph,
                           const simulator::SimulationResult& result) {
  const simulator::Metrics& metrics = result.metrics;
  const std::vector<double> without_saving = peaks_without_saving(config, graph, result.trace);
  std::string out;
  auto line = [&out](std::string_view key, const std::string& value) {
    out += fmt::format("{:<15}{}\n", key, value);
  };
  line("run", describe_run(config, graph));
  if (config.blocking_p2p) {
    line("transfers", "blocking: each occupies the compute lanes of both devices (SEND, RECV)");
  }
  line("costs", describe_costs(config));
  if (const std::string saving = describe_memory_saving(config); !saving.empty()) {
    line("memory saving", saving);
  }
  if (config.data_parallel.ranks() > 1 || config.tensor_parallel > 1) {
    const std::uint64_t gpus = std::uint64_t{config.data_parallel.ranks()} *
                               config.tensor_parallel * config.pipeline.stages;
    // Which link each all-reduce crosses (the ranks' placement decides it; cost_config.cpp).
    std::string links;
    if (config.data_parallel.ranks() > 1) {
      links += config.fsdp_mode != model::Fsdp::None
                   ? fmt::format("; fsdp all-gather/reduce-scatter over {}", config.fsdp_link)
                   : fmt::format(
                         "; dp {} over {}",
                         config.data_parallel.sharded ? "reduce-scatter/all-gather" : "all-reduce",
                         config.data_parallel_link);
    }
    if (config.context_parallel > 1) {
      links += fmt::format("; cp {} over {}", model::to_string(config.model->training.cp_comm),
                           config.context_parallel_link);
    }
    if (config.tensor_parallel > 1) {
      links += fmt::format("; tp all-reduce over {}", config.tensor_parallel_link);
    }
    if (config.collectives == "nccl") links += "; collectives as NCCL picks them";
    line("parallelism",
         fmt::format("dp {} x {}tp {} x pp {} ({} GPUs){}{}", config.data_parallel.degree,
                     config.context_parallel > 1 ? fmt::format("cp {} x ", config.context_parallel)
                                                 : std::string(),
                     config.tensor_parallel, config.pipeline.stages, gpus,
                     config.expert_parallel > 1
                         ? fmt::format("; ep {} (within dp)", config.expert_parallel)
                         : std::string(),
                     links));
  }
  // Expert all-to-alls and overlapped pairs: how much of the all-to-all the compute hid.
  const std::vector<parallel::AllToAllTime> all_to_all =
      parallel::all_to_all_time(graph, config.costs);
  parallel::AllToAllTime a2a_sum;
  for (const parallel::AllToAllTime& d : all_to_all) {
    a2a_sum.total += d.total;
    a2a_sum.exposed += d.exposed;
  }
  const std::size_t pairs = parallel::overlapped_pair_count(graph);
  if (a2a_sum.total == 0 && pairs > 0) {
    line("pairs", fmt::format("{} overlapped forward-backward pairs, each run as one unit", pairs));
  } else if (a2a_sum.total > 0 || config.expert_parallel > 1) {
    // With /model's MoE layers: their dispatcher, and the expert-parallel overlap.
    const bool dispatched = std::any_of(config.expert_traffic.begin(), config.expert_traffic.end(),
                                        [](const ExpertTraffic& t) { return t.by_dispatcher; });
    std::string how;
    if (dispatched) {
      how = fmt::format(" ({} dispatcher", to_string(config.model->training.moe_dispatcher));
    } else if (config.model && config.model->transformer.experts > 0) {
      how = " (all-to-alls of a2a_bytes";
    }
    if (config.moe_a2a_overlap) {
      how += fmt::format("{}overlapped with the other microbatch", how.empty() ? " (" : ", ");
    }
    if (!how.empty()) how += ")";
    line("all-to-all",
         fmt::format("{} over ep {}{}, {} exposed ({:.1f}%), {} hidden; {} overlapped pairs",
                     format_duration(a2a_sum.total), config.expert_parallel, how,
                     format_duration(a2a_sum.exposed),
                     a2a_sum.total > 0 ? 100.0 * static_cast<double>(a2a_sum.exposed) /
                                             static_cast<double>(a2a_sum.total)
                                       : 0.0,
                     format_duration(a2a_sum.hidden()), pairs));
  }
  const std::vector<parallel::DataParallelTime> data_parallel =
      parallel::data_parallel_time(graph, result.trace);
  if (config.data_parallel.ranks() > 1) {
    parallel::DataParallelTime sum;
    for (const parallel::DataParallelTime& d : data_parallel) {
      sum.total += d.total;
      sum.exposed += d.exposed;
    }
    line("gradients",
         fmt::format("{}; {}, {} exposed ({:.1f}%), {} hidden", describe_gradient_sync(config),
                     format_duration(sum.total), format_duration(sum.exposed),
                     sum.total > 0
                         ? 100.0 * static_cast<double>(sum.exposed) / static_cast<double>(sum.total)
                         : 0.0,
                     format_duration(sum.hidden())));
  }
  if (config.model) {
    const ModelPlan& plan = *config.model;
    line("model",
         fmt::format("{}{} layers, {} parameters, {} sequence; {} x {} samples per step, "
                     "{}, recompute {}; {} split",
                     plan.preset.empty() ? "" : plan.preset + ": ", plan.transformer.layers,
                     parameters(plan.transformer.parameters()), plan.transformer.sequence,
                     config.pipeline.microbatches * std::uint64_t{config.data_parallel.degree},
                     plan.training.micro_batch_size, model::to_string(plan.training.precision),
                     model::to_string(plan.training.recompute), plan.split));
  }
  line("makespan", fmt::format("{} ({} ns)", format_duration(metrics.makespan), metrics.makespan));
  if (config.iterations.count > 1) {
    line("iteration time",
         fmt::format("{} ({} ns): the steady-state step over {} iterations, {} optimizer step",
                     format_duration(metrics.iteration_time), metrics.iteration_time,
                     config.iterations.count,
                     config.iterations.optimizer_sync ? "synchronous" : "asynchronous"));
  }
  if (const std::optional<Throughput> t = throughput(config, metrics.iteration_time)) {
    line("throughput",
         fmt::format(
             "{:.0f} tokens/s, {:.1f} TFLOP/s per GPU (model FLOPs){}", t->tokens_per_s,
             t->model_tflops_per_gpu,
             std::isfinite(t->mfu)
                 ? fmt::format(", MFU {:.1f}% of {:.1f} TFLOP/s {} dense", t->mfu * 100,
                               t->peak_tflops, model::to_string(config.model->training.precision))
                 : ""));
  }
  line("bubble ratio", fmt::format("{:.2f}%", metrics.bubble_ratio * 100));
  line("critical path", fmt::format("{} tasks", metrics.critical_path.size()));
  // Memory columns appear when the config says something about memory or device types.
  bool cluster = false;
  for (const DeviceInfo& d : config.devices) {
    cluster = cluster || !d.type.empty() || d.memory_capacity > 0 || d.static_memory > 0;
  }
  // Lowered transfers and all-reduces: time on each device's communication lanes.
  const bool communication = std::any_of(metrics.devices.begin(), metrics.devices.end(),
                                         [](const auto& d) { return d.communication > 0; });
  // Blocking transfers: time each compute lane waits in SEND and RECV.
  const bool blocked = std::any_of(metrics.devices.begin(), metrics.devices.end(),
                                   [](const auto& d) { return d.blocked > 0; });
  // Recomputation and offloading: R time, copy time, and the peak without them.
  const bool recomputed = std::any_of(metrics.devices.begin(), metrics.devices.end(),
                                      [](const auto& d) { return d.recompute > 0; });
  const bool copied = std::any_of(metrics.devices.begin(), metrics.devices.end(),
                                  [](const auto& d) { return d.host_copy > 0; });
  const bool saving = recomputed || copied || config.offloads;
  const bool a2a = a2a_sum.total > 0;
  const auto comm = [&](const simulator::DeviceMetrics& d) {
    const parallel::AllToAllTime& x = all_to_all[d.device.value];
    return (a2a ? fmt::format("  {:>12}  {:>12}", format_duration(x.total),
                              format_duration(x.exposed))
                : std::string()) +
           (blocked ? fmt::format("  {:>12}", format_duration(d.blocked)) : std::string()) +
           (communication ? fmt::format("  {:>12}", format_duration(d.communication))
                          : std::string()) +
           (recomputed ? fmt::format("  {:>12}", format_duration(d.recompute)) : std::string()) +
           (copied ? fmt::format("  {:>12}", format_duration(d.host_copy)) : std::string());
  };
  const std::string comm_header =
      (a2a ? fmt::format("  {:>12}  {:>12}", "all-to-all", "a2a exposed") : std::string()) +
      (blocked ? fmt::format("  {:>12}", "blocked") : std::string()) +
      (communication ? fmt::format("  {:>12}", "communication") : std::string()) +
      (recomputed ? fmt::format("  {:>12}", "recompute") : std::string()) +
      (copied ? fmt::format("  {:>12}", "host copy") : std::string());
  out += '\n';
  if (!cluster) {
    out += fmt::format("{:>6}  {:>12}  {:>12}  {:>8}  {:>12}{}{}\n", "device", "busy", "bubble",
                       "bubble%", "peak memory",
                       saving ? fmt::format("  {:>14}", "without saving") : "", comm_header);
    for (const simulator::DeviceMetrics& d : metrics.devices) {
      out += fmt::format(
          "{:>6}  {:>12}  {:>12}  {:>7.2f}%  {:>12}{}{}\n", d.device.value, format_duration(d.busy),
          format_duration(metrics.makespan - d.busy), d.bubble_ratio * 100,
          format_memory(d.peak_memory),
          saving ? fmt::format(
                       "  {:>14}",
                       format_memory(device_memory(config, d, without_saving).peak_without_saving))
                 : "",
          comm(d));
    }
    return out;
  }
  out +=
      fmt::format("{:>6}  {:<8}  {:>12}  {:>12}  {:>8}  {:>11}  {:>11}{}  {:>11}{}\n", "device",
                  "type", "busy", "bubble", "bubble%", "activations", "total peak",
                  saving ? fmt::format("  {:>14}", "without saving") : "", "capacity", comm_header);
  std::size_t oom = 0;
  for (const simulator::DeviceMetrics& d : metrics.devices) {
    const DeviceMemory memory = device_memory(config, d, without_saving);
    const DeviceInfo& info = memory.info;
    oom += memory.out_of_memory ? 1 : 0;
    out += fmt::format(
        "{:>6}  {:<8}  {:>12}  {:>12}  {:>7.2f}%  {:>11}  {:>11}{}  {:>11}{}{}\n", d.device.value,
        info.type.empty() ? "-" : info.type, format_duration(d.busy),
        format_duration(metrics.makespan - d.busy), d.bubble_ratio * 100,
        format_memory(d.peak_memory), format_memory(memory.total),
        saving ? fmt::format("  {:>14}", format_memory(memory.total_without_saving)) : "",
        info.memory_capacity > 0 ? format_memory(info.memory_capacity) : "-", comm(d),
        memory.out_of_memory ? "  OUT OF MEMORY" : "");
  }
  if (oom > 0) {
    out +=
        fmt::format("predicted out of memory on {} of {} devices\n", oom, metrics.devices.size());
  }
  return out;
}

}  // namespace perflow::study
