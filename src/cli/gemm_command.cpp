// `perflow gemm`: how the model prices one GEMM on a device preset (docs/model.md, "GEMM
// efficiency"): the tile and data-parallel or stream-K it picks, the waves, the time and the
// TFLOP/s.
#include <charconv>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "detail/commands.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/time.hpp"
#include "perflow/model/device_spec.hpp"
#include "perflow/model/gemm.hpp"

namespace perflow::cli::detail {
namespace {

struct GemmOptions {
  std::string device = "h100-sxm";
  std::string precision = "bf16";
  std::vector<std::string> shapes;
  bool weight_gradient = false;
  std::optional<double> gemm_efficiency;
  std::string format = "text";
};

// "MxNxK" or "MxNxKxBATCH", each a positive integer.
model::GemmShape parse_shape(const std::string& text) {
  std::vector<double> sizes;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find('x', begin);
    if (end == std::string::npos) end = text.size();
    std::uint64_t value = 0;
    const char* first = text.data() + begin;
    const char* last = text.data() + end;
    const auto [ptr, ec] = std::from_chars(first, last, value);
    if (first == last || ec != std::errc{} || ptr != last || value == 0 || value > (1ULL << 40)) {
      throw Error(fmt::format(
          "gemm: expected a shape MxNxK or MxNxKxBATCH of positive integers, got '{}'", text));
    }
    sizes.push_back(static_cast<double>(value));
    begin = end + 1;
  }
  // A product beyond 2^60 multiply-adds (days on any GPU) is no shape a model has; its time
  // would not fit in nanoseconds.
  const double product =
      sizes.size() >= 3 ? sizes[0] * sizes[1] * sizes[2] * (sizes.size() == 4 ? sizes[3] : 1) : 0;
  if ((sizes.size() != 3 && sizes.size() != 4) || product > 0x1p60) {
    throw Error(fmt::format(
        "gemm: expected a shape MxNxK or MxNxKxBATCH of positive integers whose product is "
        "at most 2^60, got '{}'",
        text));
  }
  return {.m = sizes[0], .n = sizes[1], .k = sizes[2], .batch = sizes.size() == 4 ? sizes[3] : 1};
}

std::string shape_text(const model::GemmShape& s) {
  std::string text = fmt::format("{}x{}x{}", s.m, s.n, s.k);
  if (s.batch != 1) text += fmt::format("x{}", s.batch);
  return text;
}

void run(const GemmOptions& options) {
  const model::DevicePreset* preset = model::find_device_preset(options.device);
  if (!preset) {
    throw UnknownNameError(
        fmt::format("gemm: unknown device '{}' (perflow devices lists them)", options.device));
  }
  const model::Precision precision = *model::parse_precision(options.precision);
  model::DeviceSpec device = preset->spec;
  if (options.gemm_efficiency) device.efficiency.gemm_max = *options.gemm_efficiency;
  if (device.peak(precision) <= 0) {
    throw Error(fmt::format("gemm: {} has no {} tensor cores", options.device, options.precision));
  }
  const model::GemmOutput output = options.weight_gradient ? model::GemmOutput::AccumulatedGradient
                                                           : model::GemmOutput::Activation;
  std::vector<std::pair<model::GemmShape, model::GemmPlan>> rows;
  for (const std::string& text : options.shapes) {
    const model::GemmShape shape = parse_shape(text);
    rows.emplace_back(shape, model::plan_gemm(shape, device, precision, output));
  }
  if (options.format == "json") {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& [shape, plan] : rows) {
      const auto integer = [](double x) { return static_cast<std::uint64_t>(x); };
      list.push_back({{"m", integer(shape.m)},
                      {"n", integer(shape.n)},
                      {"k", integer(shape.k)},
                      {"batch", integer(shape.batch)},
                      {"tile", fmt::format("{}x{}", plan.tile.m, plan.tile.n)},
                      {"stream_k", plan.stream_k},
                      {"waves", plan.waves},
                      {"memory_bound", plan.memory_bound},
                      {"ns", plan.ns},
                      {"tflops", 2 * shape.m * shape.n * shape.k * shape.batch / plan.ns / 1e3},
                      {"fraction_of_peak", plan.fraction_of_peak}});
    }
    fmt::print("{}\n", nlohmann::ordered_json{{"device", options.device},
                                              {"precision", options.precision},
                                              {"sms", device.sms},
                                              {"gemm_efficiency", device.efficiency.gemm_max},
                                              {"weight_gradient", options.weight_gradient},
                                              {"gemms", list}}
                           .dump(1));
    return;
  }
  fmt::print("{} in {}: {} SMs, {:.1f} TFLOP/s peak, gemm_efficiency {}\n", options.device,
             options.precision, device.sms, device.peak(precision) / 1e12,
             device.efficiency.gemm_max);
  fmt::print("{:<24}  {:>8}  {:>8}  {:>6}  {:>12}  {:>9}  {:>7}  {}\n", "m x n x k (x batch)",
             "tile", "stream-k", "waves", "time", "TFLOP/s", "% peak", "bound by");
  for (const auto& [shape, plan] : rows) {
    fmt::print("{:<24}  {:>8}  {:>8}  {:>6}  {:>12}  {:>9.1f}  {:>6.1f}%  {}\n", shape_text(shape),
               fmt::format("{}x{}", plan.tile.m, plan.tile.n), plan.stream_k ? "yes" : "no",
               fmt::format("{:.2f}", plan.waves),
               format_duration(static_cast<TimeNs>(plan.ns + 0.5)),
               2 * shape.m * shape.n * shape.k * shape.batch / plan.ns / 1e3,
               plan.fraction_of_peak * 100, plan.memory_bound ? "memory" : "compute");
  }
}

}  // namespace

void add_gemm_command(CLI::App& app) {
  auto options = std::make_shared<GemmOptions>();
  CLI::App* cmd = app.add_subcommand(
      "gemm", "Show how /model prices GEMMs: the tile, waves, time and TFLOP/s per shape");
  cmd->add_option("shapes", options->shapes, "GEMM shapes MxNxK or MxNxKxBATCH (output m x n)")
      ->required();
  cmd->add_option("--device", options->device, "a preset from `perflow devices` (h100-sxm)");
  cmd->add_option("--precision", options->precision, "bf16 (default), fp16, fp8, mxfp8 or nvfp4")
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(model::kPrecisionNames),
                                                     std::end(model::kPrecisionNames))));
  cmd->add_option("--gemm-efficiency", options->gemm_efficiency,
                  "gemm_max instead of the preset's: the fraction of peak the largest tile "
                  "reaches")
      ->check(CLI::Range(0.01, 1.0));
  cmd->add_flag("--weight-gradient", options->weight_gradient,
                "price it as a weight gradient accumulated into fp32 main_grad");
  cmd->add_option("--format", options->format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([options] { run(*options); });
}

}  // namespace perflow::cli::detail
