// Low-precision GEMMs: each recipe's casts, what it keeps, and a GEMM in NVFP4 on its peak.
#include <gtest/gtest.h>

#include "perflow/model/derive.hpp"
#include "perflow/model/device_spec.hpp"
#include "perflow/model/gemm.hpp"
#include "perflow/model/quantisation.hpp"
#include "perflow/model/transformer.hpp"

namespace perflow::model {
namespace {

// Kernels and bytes per element of quantising one 2-byte tensor, by hand from Transformer
// Engine's kernels (docs/model.md, "Low precision"):
// - delayed: one cast(-transpose), reading 2 bytes, writing 1 per copy (Hopper: the data and
//   its transpose; Blackwell: one); after a norm, the norm's kernel writes it: nothing more.
// - current: an amax pass (2 more bytes) unless a norm wrote the tensor, the scale's kernel,
//   the cast: 3 kernels, or 2 after a norm.
// - blockwise: one kernel writing two copies of 1 + 4/128 bytes (an fp32 scale per 128).
// - MXFP8: one kernel writing two copies of 1 + 1/32 (an E8M0 scale per 32).
// - NVFP4: the amax (with the Hadamard transform's) in a read of its own, then one kernel
//   writing two copies of 1/2 + 1/16.
TEST(Quantisation, EachRecipesCastsByHand) {
  const Quantisation delayed{.precision = Precision::Fp8, .recipe = Fp8Recipe::Delayed};
  EXPECT_DOUBLE_EQ(delayed.input(false).kernels, 1);
  EXPECT_DOUBLE_EQ(delayed.input(false).bytes_per_element, 2 + 2 * 1);
  EXPECT_DOUBLE_EQ(delayed.input(true).kernels, 0);
  EXPECT_DOUBLE_EQ(delayed.input(true).bytes_per_element, 0);
  EXPECT_DOUBLE_EQ(delayed.gradient().bytes_per_element, 4);
  Quantisation blackwell = delayed;
  blackwell.generation = GpuGeneration::Blackwell;
  EXPECT_DOUBLE_EQ(blackwell.input(false).bytes_per_element, 2 + 1);
  EXPECT_DOUBLE_EQ(blackwell.weight_cache_bytes(), 1);
  EXPECT_DOUBLE_EQ(delayed.weight_cache_bytes(), 2);

  const Quantisation current{.precision = Precision::Fp8, .recipe = Fp8Recipe::Current};
  EXPECT_DOUBLE_EQ(current.input(false).kernels, 3);
  EXPECT_DOUBLE_EQ(current.input(false).bytes_per_element, 2 + 2 + 2);
  EXPECT_DOUBLE_EQ(current.input(true).kernels, 2);
  EXPECT_DOUBLE_EQ(current.input(true).bytes_per_element, 2 + 2);
  EXPECT_DOUBLE_EQ(current.kept_input_bytes(), 1);

  const Quantisation blockwise{.precision = Precision::Fp8, .recipe = Fp8Recipe::Blockwise};
  EXPECT_DOUBLE_EQ(blockwise.input(true).kernels, 1);
  EXPECT_DOUBLE_EQ(blockwise.input(true).bytes_per_element, 2 + 2 * 1.03125);
  EXPECT_DOUBLE_EQ(blockwise.kept_input_bytes(), 1.03125);

  const Quantisation mxfp8{.precision = Precision::Mxfp8};
  EXPECT_DOUBLE_EQ(mxfp8.gradient().kernels, 1);
  EXPECT_DOUBLE_EQ(mxfp8.gradient().bytes_per_element, 2 + 2 * 1.03125);
  EXPECT_DOUBLE_EQ(mxfp8.weight_cache_bytes(), 2.0625);

  const Quantisation nvfp4{.precision = Precision::Nvfp4};
  EXPECT_DOUBLE_EQ(nvfp4.input(true).kernels, 2);
  EXPECT_DOUBLE_EQ(nvfp4.input(true).bytes_per_element, 2 + 2 + 2 * 0.5625);
  EXPECT_DOUBLE_EQ(nvfp4.kept_input_bytes(), 0.5625);
  EXPECT_DOUBLE_EQ(nvfp4.weight_cache_bytes(), 1.125);

  const Quantisation bf16{};
  EXPECT_DOUBLE_EQ(bf16.input(false).kernels, 0);
  EXPECT_DOUBLE_EQ(bf16.kept_input_bytes(), 2);
  EXPECT_DOUBLE_EQ(bf16.weight_cache_bytes(), 0);
}

TEST(Quantisation, NamesRoundTrip) {
  for (const Precision p : kPrecisions) EXPECT_EQ(parse_precision(to_string(p)), p);
  for (const Fp8Recipe r : {Fp8Recipe::Delayed, Fp8Recipe::Current, Fp8Recipe::Blockwise}) {
    EXPECT_EQ(parse_fp8_recipe(to_string(r)), r);
  }
  EXPECT_FALSE(parse_precision("fp4"));
  EXPECT_FALSE(parse_fp8_recipe("tensorwise"));
}

// A compute-bound NVFP4 GEMM on a B200 runs as a bf16 one would on a GPU whose bf16 peak is
// the B200's NVFP4 peak (9 PFLOPS, 4x) and whose tile reaches half of it at 64 x 4 x 0.5625 /
// 2 = 72 multiply-adds an element loaded: four times the work per clock on 2 / 0.5625 times
// the elements a load brings.
TEST(Quantisation, Nvfp4GemmsRunAtTheirPeakWithTheirTileReuse) {
  const DeviceSpec& b200 = find_device_preset("b200")->spec;
  DeviceSpec as_bf16 = b200;
  as_bf16.peak_bf16 = b200.peak_nvfp4;
  as_bf16.efficiency.tile_half = 72;
  as_bf16.memory_bandwidth = 1e18;  // no traffic bound on either
  DeviceSpec b200_fast_memory = b200;
  b200_fast_memory.memory_bandwidth = 1e18;
  for (const GemmShape shape :
       {GemmShape{.m = 8192, .n = 8192, .k = 8192}, GemmShape{.m = 200, .n = 3000, .k = 4096},
        GemmShape{.m = 1000, .n = 100, .k = 512}}) {
    const GemmPlan fp4 = plan_gemm(shape, b200_fast_memory, Precision::Nvfp4);
    const GemmPlan reference = plan_gemm(shape, as_bf16, Precision::Bf16);
    EXPECT_DOUBLE_EQ(fp4.ns, reference.ns) << shape.m << "x" << shape.n << "x" << shape.k;
    EXPECT_EQ(fp4.tile.m, reference.tile.m);
  }
  // Faster than fp8, which is faster than bf16, on a large GEMM.
  const GemmShape large{.m = 16384, .n = 8192, .k = 8192};
  EXPECT_LT(plan_gemm(large, b200, Precision::Nvfp4).ns,
            plan_gemm(large, b200, Precision::Mxfp8).ns);
  EXPECT_LT(plan_gemm(large, b200, Precision::Fp8).ns, plan_gemm(large, b200, Precision::Bf16).ns);
  // Hopper has no block-scaled tensor cores.
  EXPECT_EQ(plan_gemm(large, find_device_preset("h100-sxm")->spec, Precision::Nvfp4).ns, 0);
}

// The casts in a layer's time: Llama 3 8B at micro batch 1 (T = 8192 tokens, h = 4096,
// f = 14336, 8 KV heads of 128), TP 1. The projection (input T x 4096) and the MLP's down
// GEMM (T x 14336) cast their inputs before F; QKV and the gate/up GEMM take their norm's fp8
// output (delayed) or cast it (MXFP8). Before B each casts its output gradient: QKV's
// T x 6144, the projection's T x 4096, gate/up's T x 28672, down's T x 4096. On an H100 at
// 80% of 3.35 TB/s.
TEST(Quantisation, CastsAddTheirTrafficToTheLayer) {
  const Transformer& llama = find_model_preset("llama3-8b")->model;
  const DeviceSpec& h100 = find_device_preset("h100-sxm")->spec;
  const double T = 8192, bandwidth = 3350e9 * 0.8;
  Training training{.micro_batch_size = 1, .precision = Precision::Fp8};
  const LayerRange one{.first = 3, .count = 1};
  const auto delayed = derive_position(llama, training, {.tensor = 1}, h100, one);
  double forward = 0, backward = 0;
  for (const OperatorTime& op : delayed.operators) {
    forward += op.quantise_seconds[kForward];
    backward += op.quantise_seconds[kBackward];
    EXPECT_EQ(op.quantise_seconds[kWeight], 0) << op.name;
  }
  EXPECT_NEAR(forward, T * (4096 + 14336) * 4 / bandwidth, 1e-15);
  EXPECT_NEAR(backward, T * (6144 + 4096 + 28672 + 4096) * 4 / bandwidth, 1e-15);
  // The bf16 layer plus the casts, the GEMMs at the fp8 peak.
  training.precision = Precision::Bf16;
  const auto bf16 = derive_position(llama, training, {.tensor = 1}, h100, one);
  EXPECT_LT(delayed.forward_ns, bf16.forward_ns);
  // Current scaling reads each tensor once more (not the norms' outputs, whose kernel finds
  // the amax) and launches the amax's and the scale's kernels: QKV and gate/up 2 kernels and
  // 4 bytes an element, the projection and down 3 and 6.
  training.precision = Precision::Fp8;
  training.fp8_recipe = Fp8Recipe::Current;
  const auto current = derive_position(llama, training, {.tensor = 1}, h100, one);
  double current_forward = 0;
  for (const OperatorTime& op : current.operators) current_forward += op.quantise_seconds[kForward];
  EXPECT_NEAR(current_forward, T * (4096 * 4 + 4096 * 6 + 4096 * 4 + 14336 * 6) / bandwidth, 1e-15);
  EXPECT_EQ(current.forward_host.kernels, delayed.forward_host.kernels + 8);
}

// Megatron-LM's --first-last-layers-bf16 (fp8_utils.py's is_first_last_bf16_layer): the
// first layer of Llama 3 8B in an fp8 run costs what it costs in a bf16 run (its GEMMs at
// bf16's peak, no casts, its inputs kept in 2 bytes, no fp8 copy of its weights); the next
// layer costs what it does in fp8, and a position of both is their sum.
TEST(Quantisation, LayersKeptInBf16CostWhatTheyCostInBf16) {
  const Transformer& llama = find_model_preset("llama3-8b")->model;
  const DeviceSpec& h100 = find_device_preset("h100-sxm")->spec;
  const Training bf16{.micro_batch_size = 1};
  const Training fp8{
      .micro_batch_size = 1, .precision = Precision::Fp8, .fp8_recipe = Fp8Recipe::Current};
  Training kept = fp8;
  kept.bf16_layers_at_start = 1;
  kept.bf16_layers_at_end = 2;
  EXPECT_TRUE(kept.keeps_bf16(0, 32));
  EXPECT_FALSE(kept.keeps_bf16(1, 32));
  EXPECT_FALSE(kept.keeps_bf16(29, 32));
  EXPECT_TRUE(kept.keeps_bf16(30, 32));
  EXPECT_FALSE(bf16.keeps_bf16(0, 32) || Training{.bf16_layers_at_start = 1}.keeps_bf16(0, 32));
  const Degrees degrees{.tensor = 1};
  const LayerRange first{.first = 0, .count = 1};
  const LayerRange second{.first = 1, .count = 1};
  const auto kept_first = derive_position(llama, kept, degrees, h100, first);
  const auto bf16_first = derive_position(llama, bf16, degrees, h100, first);
  EXPECT_EQ(kept_first.forward_ns, bf16_first.forward_ns);
  EXPECT_EQ(kept_first.backward_ns, bf16_first.backward_ns);
  EXPECT_EQ(kept_first.weight_ns, bf16_first.weight_ns);
  EXPECT_EQ(kept_first.activation, bf16_first.activation);
  EXPECT_EQ(kept_first.forward_host.kernels, bf16_first.forward_host.kernels);
  EXPECT_EQ(kept_first.fp8_weight_bytes, 0);
  for (const OperatorTime& op : kept_first.operators) {
    EXPECT_EQ(op.sixteen_bit, op.gemm) << op.name;
    EXPECT_EQ(op.quantise_seconds[kForward], 0) << op.name;
  }
  const auto kept_second = derive_position(llama, kept, degrees, h100, second);
  const auto fp8_second = derive_position(llama, fp8, degrees, h100, second);
  EXPECT_EQ(kept_second.forward_ns, fp8_second.forward_ns);
  EXPECT_EQ(kept_second.activation, fp8_second.activation);
  EXPECT_GT(kept_second.fp8_weight_bytes, 0);
  EXPECT_LT(kept_second.forward_ns, kept_first.forward_ns);
  const auto both = derive_position(llama, kept, degrees, h100, {.first = 0, .count = 2});
  EXPECT_NEAR(both.forward_ns, kept_first.forward_ns + kept_second.forward_ns, 1e-6);
  EXPECT_NEAR(both.backward_ns, kept_first.backward_ns + kept_second.backward_ns, 1e-6);
  EXPECT_DOUBLE_EQ(both.activation, kept_first.activation + kept_second.activation);
  EXPECT_DOUBLE_EQ(both.fp8_weight_bytes, kept_second.fp8_weight_bytes);
  EXPECT_EQ(both.forward_host.kernels,
            kept_first.forward_host.kernels + kept_second.forward_host.kernels);
  // The layer split prices them too: layer 0 and layers 30-31 at bf16's time.
  const UnitSeconds units = unit_seconds(llama, kept, degrees, h100, 0);
  EXPECT_EQ(units.layers[0], units.layers[31]);
  EXPECT_GT(units.layers[0], units.layers[1]);
  EXPECT_EQ(units.layers[1], units.layers[29]);
}

}  // namespace
}  // namespace perflow::model
