#include "perflow/study/config.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "detail/config_fields.hpp"
#include "detail/cost_config.hpp"
#include "detail/model_config.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/json_cursor.hpp"
#include "perflow/core/memory_budget.hpp"
#include "perflow/core/task.hpp"
#include "perflow/parallel/expert_parallel.hpp"
#include "perflow/parallel/recompute.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/passes/recipe.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/trace_op/operators.hpp"

namespace perflow::study {
namespace {

// An integer of /pipeline, bounded as the table says (stages: per-stage tables are built
// while reading, so they are bounded too).
std::uint32_t read_pipeline_integer(const JsonCursor& c, std::string_view name) {
  return static_cast<std::uint32_t>(detail::read_integer(c, detail::kPipelineSection.field(name)));
}

// One task label, e.g. "BW3.1".
parallel::Step parse_step(const JsonCursor& at, std::string_view label) {
  const auto parsed = parse_task_label(label);
  if (!parsed || !is_compute(parsed->kind)) {
    at.fail(fmt::format("expected task labels such as F3.0, B3.0, W3.0 or BW3.0, got '{}'", label));
  }
  return {parsed->kind, parsed->microbatch, parsed->chunk};
}

// `order`: per device, a string of space-separated labels or an array of labels.
std::vector<std::vector<parallel::Step>> parse_order(const JsonCursor& c) {
  std::vector<std::vector<parallel::Step>> order(c.array_size());
  for (std::size_t d = 0; d < order.size(); ++d) {
    const JsonCursor device = c.at(d);
    if (device.value().is_string()) {
      const std::string text = device.as_string();
      std::size_t begin = 0;
      while ((begin = text.find_first_not_of(' ', begin)) != std::string::npos) {
        const std::size_t end = std::min(text.find(' ', begin), text.size());
        order[d].push_back(parse_step(device, std::string_view(text).substr(begin, end - begin)));
        begin = end;
      }
    } else {
      const std::size_t n = device.array_size();
      for (std::size_t i = 0; i < n; ++i) {
        const JsonCursor label = device.at(i);
        order[d].push_back(parse_step(label, label.as_string()));
      }
    }
  }
  return order;
}

void parse_pipeline(const JsonCursor& c, parallel::PipelineSpec& spec) {
  c.expect_object(detail::kPipelineSection.keys());
  spec.schedule = detail::read_schedule_name(c.at("schedule"));
  spec.stages = read_pipeline_integer(c.at("stages"), "stages");
  // Optional here: /training/global_batch_size may give it (checked once both are read).
  spec.microbatches = 0;
  if (auto m = c.find("microbatches"))
    spec.microbatches = read_pipeline_integer(*m, "microbatches");
  if (auto chunks = c.find("chunks")) spec.chunks = read_pipeline_integer(*chunks, "chunks");
  if (auto split = c.find("split_backward")) spec.split_backward = split->as_bool();
  if (auto group = c.find("microbatch_group_size")) {
    spec.microbatch_group_size = read_pipeline_integer(*group, "microbatch_group_size");
  }
  if (auto limit = c.find("memory_limit")) {
    spec.memory_limit = limit->as_number();
    const detail::Field& field = detail::kPipelineSection.field("memory_limit");
    if (!(spec.memory_limit > field.min) || spec.memory_limit > field.max) {
      limit->fail_expected("a memory limit > 0 (in F activations)");
    }
  }
  if (auto order = c.find("order")) spec.order = parse_order(*order);
  if (auto shape = c.find("shape")) {
    spec.shape = parallel::parse_pipeline_shape(shape->as_string());
    if (!spec.shape) shape->fail_expected("\"linear\", \"interleaved\", \"v\" or \"dualpipe\"");
  }
}

void parse_simulation(const JsonCursor& c, Config& config) {
  c.expect_object(detail::kSimulationSection.keys());
  if (auto mode = c.find("mode")) {
    const auto parsed = simulator::parse_simulation_mode(mode->as_string());
    if (!parsed) mode->fail_expected("\"ordered\" or \"greedy\"");
    config.simulation.mode = *parsed;
  }
  if (auto lower = c.find("lower_communication")) config.lower_communication = lower->as_bool();
  if (auto n = c.find("iterations")) {
    config.iterations.count = static_cast<std::uint32_t>(
        detail::read_integer(*n, detail::kSimulationSection.field("iterations")));
  }
  if (auto sync = c.find("optimizer_sync")) config.iterations.optimizer_sync = sync->as_bool();
}

// /parallelism/fsdp and fsdp_shard_size: which ranks shard the parameters (torchtitan's
// dp_shard x cp mesh, Megatron-FSDP's data-parallel group with context parallelism).
void read_fsdp(const JsonCursor& c, Config& config) {
  if (auto x = c.find("fsdp")) {
    const auto parsed = model::parse_fsdp(x->as_string());
    if (!parsed) x->fail_expected("\"none\", \"zero3\" or \"hsdp\"");
    config.fsdp_mode = *parsed;
  }
  const std::optional<JsonCursor> size = c.find("fsdp_shard_size");
  if (size) {
    if (config.fsdp_mode != model::Fsdp::Hsdp) {
      size->fail("fsdp_shard_size is HSDP's shard group: set /parallelism/fsdp to \"hsdp\"");
    }
    config.fsdp_shard_size = static_cast<std::uint32_t>(
        detail::read_integer(*size, detail::kParallelismSection.field("fsdp_shard_size")));
  }
  if (config.fsdp_mode == model::Fsdp::None) return;
  const std::uint32_t ranks = config.data_parallel.ranks();
  const JsonCursor at = c.at("fsdp");
  if (ranks < 2) {
    at.fail(
        "FSDP shards over the data x context ranks, and there is 1: raise "
        "/parallelism/data_parallel (or context_parallel)");
  }
  if (config.fsdp_mode == model::Fsdp::Zero3) {
    config.fsdp_shard_size = ranks;
    return;
  }
  if (!size) {
    at.fail("hsdp shards within groups of /parallelism/fsdp_shard_size ranks: give it");
  }
  const std::uint32_t shard = config.fsdp_shard_size;
  if (shard < 2 || ranks % shard != 0 || shard % config.context_parallel != 0) {
    size->fail(fmt::format(
        "a shard group of {} ranks: it must be at least 2, divide the {} data x context ranks "
        "and hold whole context-parallel groups of {}",
        shard, ranks, config.context_parallel));
  }
}

// /parallelism: degrees beyond the pipeline. Read before the costs (TP changes F and B).
void parse_parallelism(const JsonCursor& c, Config& config) {
  c.expect_object(detail::kParallelismSection.keys());
  const auto degree = [&c](std::string_view name, std::uint32_t& out) {
    if (auto x = c.find(name)) {
      out = static_cast<std::uint32_t>(
          detail::read_integer(*x, detail::kParallelismSection.field(name)));
    }
  };
  degree("data_parallel", config.data_parallel.degree);
  degree("tensor_parallel", config.tensor_parallel);
  degree("expert_parallel", config.expert_parallel);
  degree("context_parallel", config.context_parallel);
  config.data_parallel.context = config.context_parallel;
  // The expert-parallel ranks are data-parallel replicas of a stage (Megatron-LM, DeepSeek-V3).
  if (config.data_parallel.degree % config.expert_parallel != 0) {
    c.at("expert_parallel")
        .fail(fmt::format(
            "expert-parallel ranks come from the data-parallel replicas: data_parallel {} is not "
            "a multiple of expert_parallel {}",
            config.data_parallel.degree, config.expert_parallel));
  }
  if (auto overlap = c.find("overlap_grad_reduce")) {
    config.data_parallel.overlap = overlap->as_bool();
  }
  if (auto size = c.find("grad_bucket_size")) {
    config.grad_bucket_size =
        detail::read_integer(*size, detail::kParallelismSection.field("grad_bucket_size"));
  }
  if (auto dispatcher = c.find("moe_dispatcher")) {
    const auto parsed = parse_moe_dispatcher(dispatcher->as_string());
    if (!parsed) dispatcher->fail_expected("\"alltoall\" or \"deepep\"");
    config.moe_dispatcher = *parsed;
  }
  if (auto overlap = c.find("moe_a2a_overlap")) config.moe_a2a_overlap = overlap->as_bool();
  read_fsdp(c, config);
  if (auto gather = c.find("overlap_param_gather")) {
    config.data_parallel.overlap_param_gather = gather->as_bool();
    // Megatron-LM asserts the same: the gather is the distributed optimizer's, issued by the
    // overlapped reduction's machinery.
    if (config.data_parallel.overlap_param_gather && !config.data_parallel.overlap) {
      gather->fail("overlapping the parameter gather needs overlap_grad_reduce: true");
    }
    if (config.data_parallel.overlap_param_gather && config.fsdp_mode != model::Fsdp::None) {
      gather->fail(
          "overlap_param_gather is the distributed optimizer's gather; FSDP gathers each unit "
          "before it runs: leave it out");
    }
  }
}

// What Megatron-Core asserts of --overlap-moe-expert-parallel-comm (transformer_config.py):
// a virtual pipeline when PP > 1, expert parallelism, no full recomputation.
void check_moe_a2a_overlap(const JsonCursor& root, const Config& config) {
  const JsonCursor where = root.at("parallelism").at("moe_a2a_overlap");
  const parallel::PipelineSpec& spec = config.pipeline;
  const auto refuse_schedule = [&](const std::string& pointer, const std::string& schedule) {
    if (schedule == "interleaved-1f1b" || (schedule == "1f1b" && spec.stages == 1)) return;
    where.fail(fmt::format(
        "Megatron-Core overlaps the expert-parallel all-to-alls with one pipeline stage or the "
        "interleaved schedule (it asserts a virtual pipeline when PP > 1); {} is {} with {} "
        "stages: use \"1f1b\" with 1 stage or \"interleaved-1f1b\"",
        pointer, schedule, spec.stages));
  };
  refuse_schedule("/pipeline/schedule", spec.schedule);
  for (std::size_t i = 0; i < config.parts.size(); ++i) {
    if (!config.parts[i].schedule.empty()) {
      refuse_schedule(fmt::format("/parts/{}/schedule", i), config.parts[i].schedule);
    }
  }
  if (spec.split_backward) {
    where.fail(
        "the overlap pairs each forward with a whole backward: it cannot run with "
        "/pipeline/split_backward");
  }
  if (!parallel::any_all_to_all(config.costs, spec.stages, spec.chunks)) {
    where.fail(
        "there are no expert-parallel all-to-alls to overlap: set /parallelism/expert_parallel "
        "with a MoE /model (or give /costs/a2a_per_pass)");
  }
  if (config.model && config.model->training.recompute == model::Recompute::Full) {
    where.fail(
        "Megatron-Core refuses full recomputation with the expert-parallel overlap: set "
        "/training/recompute to \"selective\" or \"none\"");
  }
}

}  // namespace

Config parse_config(const nlohmann::json& document, const std::string& file) {
  const JsonCursor root(document, file);
  root.expect_object(detail::kConfigSection.keys());
  if (auto schema = root.find("$schema")) (void)schema->as_string();
  Config config;
  config.file = file;
  if (auto description = root.find("description")) config.description = description->as_string();
  parse_pipeline(root.at("pipeline"), config.pipeline);
  if (auto parallelism = root.find("parallelism")) parse_parallelism(*parallelism, config);
  detail::parse_model_sections(root, config);
  if (config.pipeline.microbatches == 0) {
    root.at("pipeline")
        .fail("missing required key 'microbatches' (or give /training/global_batch_size)");
  }
  try {
    parallel::check_task_limit(config.pipeline);  // before anything is allocated per stage
  } catch (const ScheduleError& e) {
    throw ConfigError(file, "/pipeline/" + e.field(), e.what());
  }
  detail::parse_cost_sections(root, config);
  if (config.moe_a2a_overlap) check_moe_a2a_overlap(root, config);
  if (config.fsdp_mode != model::Fsdp::None &&
      (config.moe_a2a_overlap ||
       parallel::schedule_shape(config.pipeline) == parallel::PipelineShape::DualPipe)) {
    root.at("parallelism")
        .at("fsdp")
        .fail(
            "FSDP's gathers are not modelled around overlapped forward-backward pairs "
            "(DualPipe, /parallelism/moe_a2a_overlap)");
  }
  if (auto simulation = root.find("simulation")) parse_simulation(*simulation, config);
  if (config.blocking_p2p && config.lower_communication) {
    root.at("simulation")
        .at("lower_communication")
        .fail(
            "lower_communication puts transfers on link lanes beside the compute; "
            "/network/p2p_mode \"blocking\" puts them on the compute lanes: choose one");
  }
  return config;
}

DeviceMemory device_memory(const Config& config, const simulator::DeviceMetrics& device,
                           std::span<const double> peaks_without_saving) {
  DeviceMemory memory;
  if (device.device.value < config.devices.size())
    memory.info = config.devices[device.device.value];
  memory.total = memory.info.static_memory + device.peak_memory;
  memory.peak_without_saving = device.device.value < peaks_without_saving.size()
                                   ? peaks_without_saving[device.device.value]
                                   : device.peak_memory;
  memory.total_without_saving =
      memory.info.static_memory + memory.info.host_optimizer_state + memory.peak_without_saving;
  memory.out_of_memory =
      memory.info.memory_capacity > 0 && memory.total > memory.info.memory_capacity;
  return memory;
}

std::vector<double> peaks_without_saving(const Config& config, const EventGraph& graph,
                                         const Trace& trace) {
  const bool recomputes =
      parallel::any_recompute(config.costs, config.pipeline.stages, config.pipeline.chunks);
  if (!recomputes && !config.offloads) return {};
  std::vector<double> peaks(graph.device_count(), 0.0);
  for (std::uint32_t d = 0; d < graph.device_count() && d < trace.lane_count(); ++d) {
    double memory = 0;
    for (const TaskId t : trace.events(DeviceId{d})) {
      const TaskKind kind = graph.kind(t);
      if (!is_compute(kind)) continue;
      memory += config.costs.at(graph.stage(t), graph.chunk(t)).memory_delta(kind);
      peaks[d] = std::max(peaks[d], memory);
    }
  }
  return peaks;
}

std::optional<Throughput> throughput(const Config& config, TimeNs makespan) {
  if (!config.model || makespan <= 0) return std::nullopt;
  const ModelPlan& plan = *config.model;
  Throughput t;
  t.gpus =
      std::uint64_t{config.pipeline.stages} * config.tensor_parallel * config.data_parallel.ranks();
  const double samples = double(config.pipeline.microbatches) * plan.training.micro_batch_size *
                         config.data_parallel.degree;
  const double seconds = double(makespan) / 1e9;
  t.tokens_per_s = samples * plan.transformer.sequence / seconds;
  const double flops = 3 * plan.transformer.forward_flops_per_sample() * samples;
  t.flops_per_token = 3 * plan.transformer.forward_flops_per_sample() / plan.transformer.sequence;
  t.model_tflops_per_gpu = flops / seconds / double(t.gpus) / 1e12;
  double peak = 0;
  for (const double p : plan.peak_flops) peak += p;
  const bool all =
      !plan.peak_flops.empty() &&
      std::all_of(plan.peak_flops.begin(), plan.peak_flops.end(), [](double p) { return p > 0; });
  t.peak_tflops = all ? peak / double(plan.peak_flops.size()) / 1e12 : std::nan("");
  t.mfu = all ? t.model_tflops_per_gpu / t.peak_tflops : std::nan("");
  return t;
}

Config parse_config(nlohmann::json document, const std::string& file,
                    std::span<const ConfigOverride> overrides) {
  if (overrides.empty()) return parse_config(document, file);
  std::vector<ConfigOverride> applied(overrides.begin(), overrides.end());
  const std::vector<std::string> created = apply_overrides(document, overrides, file);
  for (std::size_t i = 0; i < applied.size(); ++i) applied[i].created = created[i];
  try {
    Config config = parse_config(document, file);
    config.overrides = std::move(applied);
    return config;
  } catch (const ConfigError& e) {
    throw name_override(e, applied);
  }
}

Config load_config(const std::filesystem::path& path, std::span<const ConfigOverride> overrides) {
  return parse_config(read_json_file(path), path.string(), overrides);
}

namespace {

// A plan's graph, its overlapped pairs run as units when there is something to overlap
// (an all-to-all or a measured forward_backward), which the rest of the model must allow.
EventGraph pipeline_graph(const Config& config, const parallel::PipelinePlan& plan,
                          const parallel::CostTable& costs) {
  EventGraph graph = parallel::build_pipeline_graph(plan, costs);
  if (!parallel::overlaps_pairs(plan, costs)) return graph;
  const auto refuse = [&](const std::string& pointer, std::string_view what) {
    throw ConfigError(config.file, pointer,
                      fmt::format("{} runs overlapped forward-backward pairs here (there are "
                                  "all-to-alls or a costs.forward_backward to overlap), and {}",
                                  config.moe_a2a_overlap ? "/parallelism/moe_a2a_overlap"
                                                         : config.pipeline.schedule,
                                  what));
  };
  const parallel::OffloadSpec& offload = config.offload;
  const bool offloads_activations =
      std::any_of(offload.ratio.begin(), offload.ratio.end(), [](double r) { return r > 0; }) ||
      std::any_of(offload.budget.begin(), offload.budget.end(),
                  [](const std::optional<double>& b) { return b.has_value(); });
  if (offloads_activations) {
    refuse("/costs/offload",
           "activation offloading is not supported with them yet: a pair would start before its "
           "backward's activation is back");
  }
  if (config.blocking_p2p) {
    refuse("/network/p2p_mode", "blocking transfers are not supported with them yet");
  }
  if (config.simulation.mode == simulator::SimulationMode::Greedy) {
    refuse("/simulation/mode", "greedy mode cannot run them: a pair needs its program order");
  }
  if (config.fsdp_mode != model::Fsdp::None) {
    refuse("/parallelism/fsdp", "FSDP's gathers are not modelled around them");
  }
  return passes::apply(std::move(graph), passes::Recipe().then(passes::OverlapPairs{&plan, costs}));
}

// The schedule's plan, with the expert-parallel overlap's pairs when the config asks.
parallel::PipelinePlan plan_of(const Config& config, const parallel::PipelineSpec& spec,
                               const parallel::CostTable& costs) {
  parallel::PipelinePlan plan = parallel::plan_schedule(spec, costs);
  if (config.moe_a2a_overlap) plan = parallel::overlap_expert_all_to_all(std::move(plan));
  return plan;
}

// /parts: every part builds its schedule on its device type, keeps its stages; merge.
EventGraph build_from_parts(const Config& config) {
  std::vector<trace_op::GraphPart> parts;
  for (std::size_t i = 0; i < config.parts.size(); ++i) {
    const PartSpec& part = config.parts[i];
    parallel::PipelineSpec spec = config.pipeline;
    spec.schedule = part.schedule;
    parallel::CostTable costs = config.costs;
    for (std::uint32_t s = 0; s < spec.stages; ++s) {
      if (s >= part.first_stage && s <= part.last_stage) continue;
      for (std::uint32_t c = 0; c < spec.chunks; ++c) {
        costs.set(StageId{s}, c, config.costs.at(StageId{part.first_stage}, c));
      }
    }
    std::vector<StageId> kept;
    for (std::uint32_t s = part.first_stage; s <= part.last_stage; ++s) kept.push_back(StageId{s});
    try {
      const parallel::PipelinePlan plan = plan_of(config, spec, costs);
      parts.push_back(trace_op::filter(pipeline_graph(config, plan, costs), kept));
    } catch (const ScheduleError& e) {
      const std::string at = fmt::format("/parts/{}", i);
      throw ConfigError(config.file, e.field().empty() ? at : "/pipeline/" + e.field(), e.what());
    }
  }
  try {
    return trace_op::merge(parts);
  } catch (const ScheduleError& e) {
    throw ConfigError(config.file, "/parts", e.what());
  }
}

// Peak memory per task of planning (the plan and the planners' working state), and of
// building and simulating the graph: the graph's columns and adjacency, the trace and the
// per-task state of the simulation. Measured at about 1M tasks (2026-11-26): 61-84 bytes at
// the peak (1F1B 66, DualPipeV 84), plan included; the estimate keeps a margin, and the
// passes that extend a graph write out every column the pipeline graph keeps compact.
constexpr double kPlanBytesPerTask = 48;
constexpr double kRunBytesPerTask = 128;

// Tasks a pipeline can have at most: F, B and W at each (microbatch, position).
std::uint64_t max_tasks(const Config& config) {
  const parallel::PipelineSpec& spec = config.pipeline;
  return std::uint64_t{spec.microbatches} *
         parallel::position_count(parallel::schedule_shape(spec), spec.stages, spec.chunks) * 3;
}

// check_memory, with the config's file named in the refusal.
void check_config_memory(const Config& config, double bytes, const std::string& what) {
  try {
    check_memory(bytes, what);
  } catch (const ResourceError& e) {
    throw ResourceError(fmt::format("{}: {}", config.file, e.what()));
  }
}

// Refuses a run too large for this process before its graph is allocated (exit code 5).
void check_run_memory(const Config& config, std::uint64_t tasks) {
  // Data parallelism and lowered communication copy the graph and add about a task per
  // task: about three times the memory.
  const bool extended =
      config.data_parallel.ranks() > 1 || config.lower_communication || config.blocking_p2p ||
      config.iterations.count > 1 || config.offloads ||
      parallel::any_recompute(config.costs, config.pipeline.stages, config.pipeline.chunks) ||
      parallel::any_all_to_all(config.costs, config.pipeline.stages, config.pipeline.chunks);
  const double run_per_task = kRunBytesPerTask * (extended ? 3 : 1);
  double per_task = run_per_task;
  std::string outputs;  // ", 340 for --chrome-trace", ...
  for (const OutputEstimate& output : config.outputs) {
    per_task += output.bytes_per_task;
    outputs += fmt::format(", {:.0f} for {}", output.bytes_per_task, output.name);
  }
  tasks *= config.iterations.count;
  check_config_memory(config, static_cast<double>(tasks) * per_task,
                      outputs.empty()
                          ? fmt::format("{} tasks at about {:.0f} bytes each", tasks, per_task)
                          : fmt::format("{} tasks at about {:.0f} bytes each: {:.0f} for the run{}",
                                        tasks, per_task, run_per_task, outputs));
}

EventGraph build_pipeline(const Config& config) {
  if (!config.parts.empty()) {
    check_run_memory(config, max_tasks(config));
    return build_from_parts(config);
  }
  // A user-given order is what a plan error or a deadlock is about.
  const bool custom = !config.pipeline.order.empty();
  try {
    // The plan first (small), then the graph and its simulation once their size is known.
    check_config_memory(config, static_cast<double>(max_tasks(config)) * kPlanBytesPerTask,
                        fmt::format("planning up to {} tasks", max_tasks(config)));
    const parallel::PipelinePlan plan = plan_of(config, config.pipeline, config.costs);
    std::size_t tasks = 0;
    for (const auto& program : plan.programs) tasks += program.size();
    check_run_memory(config, tasks);
    return pipeline_graph(config, plan, config.costs);
  } catch (const ScheduleError& e) {
    if (!e.field().empty()) throw ConfigError(config.file, "/pipeline/" + e.field(), e.what());
    if (custom) throw ConfigError(config.file, "/pipeline/order", e.what());
    throw;
  } catch (const CycleError& e) {
    if (!custom) throw;
    throw CycleError(fmt::format("{}:/pipeline/order: {}", config.file, e.what()), e.cycle());
  }
}

}  // namespace

namespace {

// The passes the config asks for after the pipeline is built (its overlapped pairs are run
// with the build: see pipeline_graph), in the recipe's canonical order.
passes::Recipe recipe_of(const Config& config) {
  const parallel::DataParallelSpec& dp = config.data_parallel;
  const auto positive = [](const auto& values) {
    return std::any_of(values.begin(), values.end(), [](auto x) { return x > 0; });
  };
  passes::Recipe recipe;
  if (parallel::any_all_to_all(config.costs, config.pipeline.stages, config.pipeline.chunks)) {
    if (config.blocking_p2p) {
      throw ConfigError(config.file, "/network/p2p_mode",
                        "blocking transfers are not supported with expert-parallel "
                        "all-to-alls yet (a transfer would wait on the all-to-all's lane)");
    }
    recipe.then(passes::AllToAll{config.costs});
  }
  if (parallel::any_recompute(config.costs, config.pipeline.stages, config.pipeline.chunks)) {
    recipe.then(passes::Recompute{config.costs});
  }
  const bool fsdp = config.fsdp_mode != model::Fsdp::None;
  if ((dp.ranks() > 1 && !fsdp) || positive(dp.optimizer) || positive(dp.step_overhead)) {
    // With FSDP the gradients are reduced by its own pass: the data-parallel pass adds the
    // optimizer step only.
    parallel::DataParallelSpec spec = dp;
    if (fsdp) spec.degree = spec.context = 1;
    recipe.then(passes::DataParallel{std::move(spec)});
  }
  if (fsdp) recipe.then(passes::Fsdp{config.fsdp});
  if (config.offloads) recipe.then(passes::Offload{config.offload});
  if (config.iterations.count > 1) recipe.then(passes::Iterations{config.iterations});
  if (config.lower_communication) recipe.then(passes::LowerCommunication{config.simulation});
  if (config.blocking_p2p) recipe.then(passes::BlockingTransfers{config.simulation});
  return recipe;
}

EventGraph build_graph_of(const Config& config) {
  EventGraph graph = build_pipeline(config);
  const passes::Recipe recipe = recipe_of(config);
  try {
    return passes::apply(std::move(graph), recipe);
  } catch (const ScheduleError& e) {
    throw ConfigError(config.file, "", e.what());  // e.g. a transfer beyond the time range
  }
}

}  // namespace

EventGraph build_graph(const Config& config) {
  try {
    return build_graph_of(config);
  } catch (const ConfigError& e) {
    if (config.overrides.empty()) throw;
    throw name_override(e, config.overrides);
  }
}

simulator::SimulationResult simulate(const Config& config, const EventGraph& graph) {
  try {
    return simulator::simulate(graph, config.simulation);
  } catch (const ScheduleError& e) {
    // A step beyond the simulator's range comes from the costs and network as a whole.
    throw ConfigError(config.file, "", e.what());
  }
}

}  // namespace perflow::study
