// /model's sliding windows, attention sinks and hybrid layer patterns: what the config
// reads, what it refuses, and a hybrid model simulated end to end.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config_error.hpp"
#include "perflow/core/error.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/study/config.hpp"

namespace perflow::study {
namespace {

nlohmann::json small_model() {
  return nlohmann::json::parse(R"({
    "model": {"preset": "gpt3-175b", "layers": 8, "hidden": 1024, "ffn_hidden": 4096,
              "heads": 16, "vocab": 1000, "sequence": 512},
    "training": {"micro_batch_size": 2, "global_batch_size": 64},
    "device": "h100-sxm",
    "pipeline": {"schedule": "1f1b", "stages": 4},
    "parallelism": {"tensor_parallel": 2, "data_parallel": 4}
  })");
}

using testing::error_of;

std::int64_t step_of(const nlohmann::json& doc) {
  const Config c = parse_config(doc, "cfg.json");
  return simulate(c, build_graph(c)).metrics.makespan;
}

TEST(LayerKindsConfig, SlidingWindowsShortenTheStep) {
  auto doc = small_model();
  doc["model"]["sequence"] = 4096;
  const std::int64_t full = step_of(doc);
  doc["model"]["sliding_window"] = 128;
  model::Transformer m = parse_config(doc, "cfg.json").model->transformer;
  EXPECT_EQ(m.sliding_window, 128u);
  EXPECT_TRUE(m.window_pattern.empty());
  EXPECT_EQ(m.layer_kind(1).mixer, model::Mixer::WindowedAttention);
  const std::int64_t windowed = step_of(doc);
  EXPECT_LT(windowed, full);
  // Every other layer windowed: between the two.
  doc["model"]["window_pattern"] = "WF";
  const std::int64_t half = step_of(doc);
  EXPECT_LT(windowed, half);
  EXPECT_LT(half, full);
  // gpt-oss's preset: 128-token windows from layer 0 on every other layer, with sinks; a
  // window of 0 turns them off.
  auto oss = small_model();
  oss["model"] = {{"preset", "gpt-oss-20b"}, {"layers", 4}};
  oss["training"]["sequence_parallel"] = true;  // MoE with tensor parallelism needs it
  m = parse_config(oss, "cfg.json").model->transformer;
  EXPECT_EQ(m.window_pattern, "WF");
  EXPECT_TRUE(m.attention_sinks);
  oss["model"]["sliding_window"] = 0;
  m = parse_config(oss, "cfg.json").model->transformer;
  EXPECT_TRUE(m.window_pattern.empty());
  EXPECT_EQ(m.layer_kind(0).mixer, model::Mixer::Attention);
}

TEST(LayerKindsConfig, AHybridPatternGivesTheLayersAndMegatronsMambaDefaults) {
  auto doc = small_model();
  doc["model"]["layer_pattern"] = "M*-M*-M-";
  const model::Transformer m = parse_config(doc, "cfg.json").model->transformer;
  EXPECT_EQ(m.layers, 8u);
  // HybridConfig's state 128, heads of 64, 8 groups; expand 2: 2 x 1024 / 64 heads.
  EXPECT_EQ(m.mamba, (model::Mamba{.state_dim = 128,
                                   .head_dim = 64,
                                   .heads = 32,
                                   .groups = 8,
                                   .conv_kernel = 4,
                                   .chunk_size = 128}));
  EXPECT_EQ(error_of(doc), "(no error)");
  doc["model"]["mamba"] = {{"state_dim", 64}, {"heads", 16}};
  const model::Transformer given = parse_config(doc, "cfg.json").model->transformer;
  EXPECT_EQ(given.mamba.state_dim, 64u);
  EXPECT_EQ(given.mamba.heads, 16u);
  EXPECT_EQ(given.mamba.head_dim, 64u);
  // The Nemotron presets simulate over 4 stages as they are.
  auto nemotron = small_model();
  nemotron["model"] = {{"preset", "nemotron-h-8b"}, {"sequence", 1024}};
  EXPECT_EQ(error_of(nemotron), "(no error)");
  nemotron["model"] = {{"preset", "nemotron-3-nano"}, {"sequence", 1024}};
  nemotron["training"]["sequence_parallel"] = true;
  EXPECT_EQ(error_of(nemotron), "(no error)");
}

// A multi-token prediction module rides on the last stage: its time and its weights there.
TEST(LayerKindsConfig, MultiTokenPredictionLoadsTheLastStage) {
  auto doc = small_model();
  const Config plain = parse_config(doc, "cfg.json");
  doc["model"]["mtp_layers"] = 1;
  const Config mtp = parse_config(doc, "cfg.json");
  EXPECT_EQ(mtp.model->transformer.mtp_layers, 1u);
  EXPECT_GT(step_of(doc), simulate(plain, build_graph(plain)).metrics.makespan);
  // The deepseek-v3 preset has one; 0 takes it off.
  auto deepseek = small_model();
  deepseek["model"] = {{"preset", "deepseek-v3"}, {"layers", 8}, {"mtp_layers", 0}};
  deepseek["training"]["sequence_parallel"] = true;
  EXPECT_EQ(parse_config(deepseek, "cfg.json").model->transformer.mtp_layers, 0u);
  deepseek["model"].erase("mtp_layers");
  EXPECT_EQ(parse_config(deepseek, "cfg.json").model->transformer.mtp_layers, 1u);
}

// Megatron-Core's unified hybrid pattern: the decoder's layers, then one multi-token
// prediction module's after each '/'; or the same with mtp_pattern and mtp_layers.
TEST(LayerKindsConfig, AHybridPatternCarriesItsMultiTokenPredictionModules) {
  auto doc = small_model();
  doc["model"].erase("layers");
  doc["model"]["layer_pattern"] = "M*-M*-M-/*-/*-";
  const model::Transformer m = parse_config(doc, "cfg.json").model->transformer;
  EXPECT_EQ(m.layers, 8u);
  EXPECT_EQ(m.layer_pattern, "M*-M*-M-");
  EXPECT_EQ(m.mtp_pattern, "*-");
  EXPECT_EQ(m.mtp_layers, 2u);
  const std::int64_t with = step_of(doc);
  auto separate = small_model();
  separate["model"].erase("layers");
  separate["model"]["layer_pattern"] = "M*-M*-M-";
  const std::int64_t without = step_of(separate);
  separate["model"]["mtp_pattern"] = "*-";
  separate["model"]["mtp_layers"] = 2;
  EXPECT_EQ(parse_config(separate, "cfg.json").model->transformer.mtp_pattern, "*-");
  EXPECT_EQ(step_of(separate), with);
  EXPECT_GT(with, without);
  // The same count given both ways agrees.
  doc["model"]["mtp_layers"] = 2;
  EXPECT_EQ(step_of(doc), with);
}

// Megatron-LM's --first-last-layers-bf16: the first and last layers' GEMMs at bf16's rate
// without casts, so the step lies between the all-fp8 and the all-bf16 ones.
TEST(LayerKindsConfig, LayersKeptInBf16CostBetweenTheTwoPrecisions) {
  // GEMMs large enough for MXFP8 to pay for its casts.
  auto doc = small_model();
  doc["model"] = {{"preset", "gpt3-175b"}, {"layers", 8}, {"hidden", 8192},
                  {"ffn_hidden", 32768},   {"heads", 64}, {"vocab", 1000},
                  {"sequence", 4096}};
  doc["device"] = "b200";
  const std::int64_t bf16 = step_of(doc);
  doc["training"]["precision"] = "mxfp8";
  const std::int64_t mxfp8 = step_of(doc);
  doc["training"]["bf16_layers_at_start"] = 1;
  doc["training"]["bf16_layers_at_end"] = 1;
  const Config kept = parse_config(doc, "cfg.json");
  EXPECT_EQ(kept.model->training.bf16_layers_at_start, 1u);
  EXPECT_TRUE(kept.model->training.keeps_bf16(0, 8));
  EXPECT_FALSE(kept.model->training.keeps_bf16(1, 8));
  EXPECT_TRUE(kept.model->training.keeps_bf16(7, 8));
  const std::int64_t mixed = step_of(doc);
  EXPECT_LT(mxfp8, mixed);
  EXPECT_LT(mixed, bf16);
}

TEST(LayerKindsConfig, ErrorsNameThePointer) {
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](auto& d) {
         d["model"]["sliding_window"] = 128;
         d["model"]["window_pattern"] = "WX";
       },
       "cfg.json:/model/window_pattern: expected W (windowed) or F (full attention) per layer, "
       "got \"WX\" (character 1 is 'X')"},
      {[](auto& d) { d["model"]["window_pattern"] = "WF"; },
       "cfg.json:/model/window_pattern: says which layers are windowed, but there is no "
       "/model/sliding_window"},
      {[](auto& d) { d["model"]["layer_pattern"] = "M*|M"; },
       "cfg.json:/model/layer_pattern: expected M (Mamba-2), * (attention), - (MLP) or E (MoE) "
       "per layer, got \"M*|M\" (character 2 is Megatron-LM's stage boundary: set "
       "/pipeline/layers)"},
      {[](auto& d) { d["model"]["layer_pattern"] = "M*-M"; },
       "cfg.json:/model/layers: layers 8 but the layer_pattern has 4: give one of them"},
      {[](auto& d) {
         d["model"]["mamba"] = {{"heads", 8}};
       },
       "cfg.json:/model/mamba: the Mamba mixer of M layers, but there is no /model/layer_pattern"},
      {[](auto& d) {
         d["model"].erase("layers");
         d["model"]["layer_pattern"] = "*-*-";
         d["model"]["mamba"] = {{"heads", 8}};
       },
       "cfg.json:/model/mamba: the layer_pattern has no M (Mamba) layer"},
      {[](auto& d) {
         d["model"].erase("layers");
         d["model"]["layer_pattern"] = "M*E-";
       },
       "cfg.json:/model/layer_pattern: the layer_pattern has MoE layers (E), but no "
       "/model/experts above 0"},
      {[](auto& d) {
         d["model"].erase("layers");
         d["model"]["layer_pattern"] = "M*--";
         d["model"]["experts"] = 8;
         d["model"]["top_k"] = 2;
       },
       "cfg.json:/model/experts: 8 experts, but the layer_pattern has no MoE layer (E)"},
      {[](auto& d) {
         d["model"].erase("layers");
         d["model"]["layer_pattern"] = "M*E-";
         d["model"]["experts"] = 8;
         d["model"]["top_k"] = 2;
         d["model"]["first_dense_layers"] = 1;
       },
       "cfg.json:/model/first_dense_layers: the layer_pattern says which layers are MoE (E): "
       "drop first_dense_layers"},
      {[](auto& d) {
         d["model"].erase("layers");
         d["model"]["layer_pattern"] = "M*M*";
         d["model"]["mamba"] = {{"heads", 12}, {"groups", 8}};
       },
       "cfg.json:/model/mamba: the Mamba groups (8) do not split its 12 heads"},
      {[](auto& d) {
         d["model"].erase("layers");
         d["model"]["layer_pattern"] = "M*M*";
         d["model"]["mamba"] = {{"heads", 8}, {"groups", 1}};
       },
       "cfg.json:/parallelism/tensor_parallel: the Mamba mixer's 8 heads in 1 group(s) do not "
       "split over 2 tensor-parallel ranks"},
      {[](auto& d) {
         d["model"].erase("layers");
         d["model"]["layer_pattern"] = "M*M*";
         d["model"]["mtp_layers"] = 1;
       },
       "cfg.json:/model/mtp_layers: a hybrid model's multi-token prediction module needs its "
       "layers: give /model/mtp_pattern, or write them after '/' in the layer_pattern "
       "(\"M-M*-/*-\")"},
      {[](auto& d) {
         d["model"].erase("layers");
         d["model"]["layer_pattern"] = "M*M*/*-/*E";
       },
       "cfg.json:/model/layer_pattern: every multi-token prediction module has the same layers, "
       "got \"*-\" after '/' 1 and \"*E\" after '/' 2"},
      {[](auto& d) {
         d["model"].erase("layers");
         d["model"]["layer_pattern"] = "M*M*//";
       },
       "cfg.json:/model/layer_pattern: multi-token prediction module 1 (after '/' 1): expected "
       "M (Mamba-2), * (attention), - (MLP) or E (MoE) per layer, got \"\""},
      {[](auto& d) {
         d["model"].erase("layers");
         d["model"]["layer_pattern"] = "M*X*/*-";
       },
       "cfg.json:/model/layer_pattern: the layers before the first '/': expected M (Mamba-2), "
       "* (attention), - (MLP) or E (MoE) per layer, got \"M*X*\" (character 2 is 'X')"},
      {[](auto& d) {
         d["model"].erase("layers");
         d["model"]["layer_pattern"] = "M*M*/*-/*-";
         d["model"]["mtp_layers"] = 1;
       },
       "cfg.json:/model/mtp_layers: mtp_layers 1 but the layer_pattern has 2 module(s) after "
       "'/': give one of them"},
      {[](auto& d) {
         d["model"].erase("layers");
         d["model"]["layer_pattern"] = "M*M*/*-";
         d["model"]["mtp_pattern"] = "*-";
       },
       "cfg.json:/model/mtp_pattern: the layer_pattern gives the multi-token prediction module "
       "after '/': drop mtp_pattern"},
      {[](auto& d) {
         d["model"]["mtp_layers"] = 1;
         d["model"]["mtp_pattern"] = "*-";
       },
       "cfg.json:/model/mtp_pattern: mtp_pattern is a hybrid model's (with "
       "/model/layer_pattern); a transformer's multi-token prediction module is one layer of "
       "its last layer's kind"},
      {[](auto& d) {
         d["model"].erase("layers");
         d["model"]["layer_pattern"] = "M*M*";
         d["model"]["mtp_pattern"] = "*-";
       },
       "cfg.json:/model/mtp_pattern: an mtp_pattern but mtp_layers is 0: give "
       "/model/mtp_layers"},
      {[](auto& d) {
         d["model"].erase("layers");
         d["model"]["layer_pattern"] = "M*M*/*E";
       },
       "cfg.json:/model/layer_pattern: the layer_pattern has MoE layers (E), but no "
       "/model/experts above 0"},
      {[](auto& d) { d["training"]["bf16_layers_at_start"] = 1; },
       "cfg.json:/training/bf16_layers_at_start: bf16_layers_at_start keeps layers in bf16 in a "
       "quantised run, but /training/precision is bf16"},
      {[](auto& d) {
         d["training"]["precision"] = "fp8";
         d["training"]["bf16_layers_at_end"] = 1;
       },
       "cfg.json:/training/bf16_layers_at_end: bf16_layers_at_end: Megatron-LM keeps no layer in "
       "bf16 with delayed scaling; set /training/fp8_recipe to \"current\" or \"blockwise\""},
      {[](auto& d) {
         d["training"]["precision"] = "mxfp8";
         d["device"] = "b200";
         d["training"]["bf16_layers_at_start"] = 5;
         d["training"]["bf16_layers_at_end"] = 4;
       },
       "cfg.json:/training/bf16_layers_at_start: 9 layers kept in bf16 at the start and end, but "
       "the model has 8"},
  };
  for (const auto& [edit, message] : cases) {
    auto bad = small_model();
    edit(bad);
    const std::string error = error_of(bad);
    EXPECT_EQ(error.substr(0, message.size()), message) << error;
  }
}

}  // namespace
}  // namespace perflow::study
