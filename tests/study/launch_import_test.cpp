#include "perflow/study/launch_import.hpp"

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "perflow/core/error.hpp"
#include "perflow/core/option_error.hpp"
#include "perflow/study/config.hpp"

namespace perflow::study {
namespace {

const std::string kGolden = std::string(PERFLOW_SOURCE_DIR) + "/tests/golden/";

ImportOptions on(std::string gpu, std::uint32_t nodes) {
  ImportOptions options;
  options.gpu = std::move(gpu);
  options.nodes = nodes;
  return options;
}

/// The smallest flags Megatron-LM accepts, plus `more`.
std::vector<std::string> tiny(std::vector<std::string> more = {}) {
  std::vector<std::string> args = {
      "--num-layers", "4",    "--hidden-size",      "256", "--num-attention-heads", "8",
      "--seq-length", "1024", "--micro-batch-size", "1",   "--vocab-size",          "1000",
      "--bf16"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

nlohmann::json plain(const nlohmann::ordered_json& j) { return nlohmann::json::parse(j.dump()); }

TimeNs makespan_of(const nlohmann::json& document) {
  const Config config = parse_config(document, "imported.json");
  return simulate(config, build_graph(config)).metrics.makespan;
}

std::string error_of(const std::vector<std::string>& args, const ImportOptions& options) {
  try {
    (void)import_megatron(args, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// The flags of Megatron-LM's published GPT-3 175B script with the SC'21 layout of
// examples/gpt3_175b_a100.json (tp 8 x pp 8 x dp 16, 2 chunks, full recomputation, no
// fused attention, overlapped gradient reduction) import as the example's config: Megatron-LM
// puts 96 / 16 = 6 layers in every chunk, the embedding and LM head on top of the first and
// last, as PerFlow's default split does, so the config names no split.
TEST(MegatronImport, Gpt3LayoutIsTheExample) {
  std::vector<std::string> args =
      read_args_file(kGolden + "import_megatron_gpt3_175b/gpt3_175b.args");
  for (const char* flag :
       {"--pipeline-model-parallel-size", "8", "--num-layers-per-virtual-pipeline-stage", "6",
        "--recompute-granularity", "full", "--recompute-method", "uniform", "--attention-backend",
        "unfused", "--overlap-grad-reduce"}) {
    args.emplace_back(flag);
  }
  const ImportResult result = import_megatron(args, on("a100-80gb", 128));
  EXPECT_EQ(result.config.dump(),
            R"j({"description":"Megatron-LM flags on 128 x 8 a100-80gb (tp 8 x pp 8 x dp 16)",)j"
            R"("model":{"preset":"gpt3-175b"},)"
            R"("training":{"micro_batch_size":1,"global_batch_size":1536,"precision":"fp16",)"
            R"("recompute":"full","flash_attention":false},"device":"a100-80gb",)"
            R"("pipeline":{"schedule":"interleaved-1f1b","stages":8,"chunks":2},)"
            R"("parallelism":{"tensor_parallel":8,"data_parallel":16},)"
            R"("network":{"devices_per_node":1}})");
  EXPECT_TRUE(result.unknown.empty());
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_EQ(result.warnings[0].substr(0, 26), "--step-batch-size-schedule");

  nlohmann::json imported = plain(result.config);
  nlohmann::json example;
  std::ifstream(std::string(PERFLOW_SOURCE_DIR) + "/examples/gpt3_175b_a100.json") >> example;
  for (nlohmann::json* j : {&imported, &example}) {
    j->erase("description");
    j->erase("comment");
  }
  EXPECT_EQ(imported, example);
  EXPECT_EQ(makespan_of(imported), makespan_of(example));
  EXPECT_GT(makespan_of(imported), 0);
}

// The published script as it is: tp 8 x pp 16 on 16 nodes leaves one data-parallel rank.
TEST(MegatronImport, PublishedGpt3Script) {
  const std::vector<std::string> args =
      read_args_file(kGolden + "import_megatron_gpt3_175b/gpt3_175b.args");
  const ImportResult result = import_megatron(args, on("a100-80gb", 16));
  EXPECT_EQ(result.config["pipeline"].dump(), R"({"schedule":"1f1b","stages":16})");
  EXPECT_EQ(result.config["parallelism"].dump(),
            R"({"tensor_parallel":8,"data_parallel":1,"overlap_grad_reduce":false})");
  EXPECT_EQ(result.config["training"].dump(),
            R"({"micro_batch_size":1,"global_batch_size":1536,"precision":"fp16",)"
            R"("recompute":"none"})");
}

TEST(MegatronImport, ShapeFlagsAndDefaults) {
  const ImportResult result = import_megatron(
      tiny({"--swiglu", "--untie-embeddings-and-output-weights", "--group-query-attention",
            "--num-query-groups=2", "--tensor-model-parallel-size=2", "--sequence-parallel"}),
      on("h100-sxm", 1));
  // SwiGLU's default inner size: 2/3 of 4h, a multiple of 64 (arguments.py); the vocabulary
  // padded to a multiple of 128 x tp.
  EXPECT_EQ(result.config["model"].dump(),
            R"({"layers":4,"hidden":256,"ffn_hidden":640,"heads":8,"kv_heads":2,"vocab":1024,)"
            R"("sequence":1024,"mlp":"swiglu","tied_embeddings":false})");
  EXPECT_EQ(result.config["training"]["sequence_parallel"], true);
  EXPECT_EQ(result.config["parallelism"]["data_parallel"], 4);
  EXPECT_EQ(result.config["training"]["global_batch_size"], 4);  // micro x dp
  EXPECT_EQ(result.config["network"]["devices_per_node"], 1);
  EXPECT_TRUE(result.unknown.empty());
  EXPECT_TRUE(result.warnings.empty());
  // What `perflow simulate` accepts.
  EXPECT_GT(makespan_of(plain(result.config)), 0);
  // --kv-channels: a head width other than hidden / heads (Qwen3's) is the config's head_dim;
  // one equal to it says nothing more.
  const ImportResult wide = import_megatron(tiny({"--kv-channels", "64"}), on("h100-sxm", 1));
  EXPECT_EQ(wide.config["model"]["head_dim"], 64);
  EXPECT_TRUE(wide.warnings.empty());
  EXPECT_GT(makespan_of(plain(wide.config)),
            makespan_of(plain(import_megatron(tiny(), on("h100-sxm", 1)).config)));
  EXPECT_FALSE(import_megatron(tiny({"--kv-channels", "32"}), on("h100-sxm", 1))
                   .config["model"]
                   .contains("head_dim"));
  // --multi-latent-attention with its ranks and widths (arguments.py's defaults for the rest).
  const ImportResult mla =
      import_megatron(tiny({"--multi-latent-attention", "--q-lora-rank", "96", "--kv-lora-rank",
                            "64", "--qk-head-dim", "32", "--qk-pos-emb-head-dim", "16"}),
                      on("h100-sxm", 1));
  EXPECT_EQ(mla.config["model"]["attention"], "mla");
  EXPECT_EQ(mla.config["model"]["mla"].dump(),
            R"({"q_lora_rank":96,"kv_lora_rank":64,"qk_nope_head_dim":32,"qk_rope_head_dim":16,)"
            R"("v_head_dim":128})");
  EXPECT_TRUE(mla.warnings.empty());
  EXPECT_GT(makespan_of(plain(mla.config)), 0);
  // --recompute-modules: mla_up_proj is its own switch; core_attn is PerFlow's selective.
  const ImportResult up =
      import_megatron(tiny({"--multi-latent-attention", "--recompute-granularity", "selective",
                            "--recompute-modules", "core_attn", "mla_up_proj", "moe_act"}),
                      on("h100-sxm", 1));
  EXPECT_EQ(up.config["training"]["recompute_mla_up_proj"], true);
  EXPECT_EQ(up.config["training"]["recompute"], "selective");
  ASSERT_EQ(up.warnings.size(), 1u);
  EXPECT_EQ(up.warnings[0].substr(0, 27), "--recompute-modules moe_act");
  // Without core_attn Megatron-LM leaves the attention core alone: no selective recomputation.
  const ImportResult only_up =
      import_megatron(tiny({"--multi-latent-attention", "--recompute-granularity", "selective",
                            "--recompute-modules", "mla_up_proj"}),
                      on("h100-sxm", 1));
  EXPECT_EQ(only_up.config["training"]["recompute_mla_up_proj"], true);
  EXPECT_EQ(only_up.config["training"]["recompute"], "none");
  EXPECT_TRUE(only_up.warnings.empty());
  EXPECT_GT(makespan_of(plain(only_up.config)), 0);
  // --hidden-dropout other than Megatron-LM's 0.1 is written (it decides the masks kept).
  const ImportResult no_dropout =
      import_megatron(tiny({"--hidden-dropout", "0.0"}), on("h100-sxm", 1));
  EXPECT_EQ(no_dropout.config["model"]["hidden_dropout"], 0.0);
  EXPECT_FALSE(result.config["model"].contains("hidden_dropout"));
  // CUDA graphs, as Megatron-LM's flags ask for them; "none" asks for none.
  for (const auto& flags : {std::vector<std::string>{"--enable-cuda-graph"},
                            std::vector<std::string>{"--cuda-graph-impl", "transformer_engine"}}) {
    EXPECT_EQ(import_megatron(tiny(flags), on("h100-sxm", 1)).config["training"]["cuda_graphs"],
              true);
  }
  EXPECT_FALSE(import_megatron(tiny({"--cuda-graph-impl", "none"}), on("h100-sxm", 1))
                   .config["training"]
                   .contains("cuda_graphs"));
}

// The data-parallel flags of megatron/training/arguments.py: buckets, the overlapped gather,
// the gradients' type (--bf16 reduces in fp32 unless --grad-reduce-in-bf16).
TEST(MegatronImport, GradientReductionFlags) {
  ImportResult result = import_megatron(
      tiny({"--use-distributed-optimizer", "--overlap-grad-reduce", "--overlap-param-gather",
            "--ddp-bucket-size", "20000000", "--grad-reduce-in-bf16"}),
      on("h100-sxm", 1));
  EXPECT_EQ(result.config["parallelism"].dump(),
            R"({"tensor_parallel":1,"data_parallel":8,"grad_bucket_size":20000000,)"
            R"("overlap_param_gather":true})");
  EXPECT_EQ(result.config["training"]["grad_reduce_dtype"], "bf16");
  EXPECT_TRUE(result.warnings.empty());
  EXPECT_GT(makespan_of(plain(result.config)), 0);
  result = import_megatron(tiny({"--accumulate-allreduce-grads-in-fp32"}), on("h100-sxm", 1));
  EXPECT_FALSE(result.config["training"].contains("grad_reduce_dtype"));  // fp32 already
  std::vector<std::string> fp16 = tiny({"--fp16", "--accumulate-allreduce-grads-in-fp32"});
  std::erase(fp16, "--bf16");
  result = import_megatron(fp16, on("h100-sxm", 1));
  EXPECT_EQ(result.config["training"]["grad_reduce_dtype"], "fp32");
  EXPECT_EQ(error_of(tiny({"--overlap-param-gather"}), on("h100-sxm", 1)),
            "Megatron-LM flag --overlap-param-gather: Megatron-LM needs "
            "--use-distributed-optimizer and --overlap-grad-reduce with it");
}

// Megatron-LM's low-precision flags: --fp8-format with --fp8-recipe (delayed by default;
// tensorwise is current scaling; mxfp8 a precision of its own) and --fp4-format (NVFP4).
TEST(MegatronImport, LowPrecisionFlags) {
  const auto training = [](std::vector<std::string> more, const std::string& gpu) {
    return import_megatron(tiny(std::move(more)), on(gpu, 1)).config["training"];
  };
  auto t = training({"--fp8-format", "hybrid"}, "h100-sxm");
  EXPECT_EQ(t["precision"], "fp8");
  EXPECT_FALSE(t.contains("fp8_recipe"));
  t = training({"--fp8-format", "e4m3", "--fp8-recipe", "tensorwise"}, "h100-sxm");
  EXPECT_EQ(t["fp8_recipe"], "current");
  t = training({"--fp8-format", "e4m3", "--fp8-recipe", "blockwise"}, "h100-sxm");
  EXPECT_EQ(t["fp8_recipe"], "blockwise");
  t = training({"--fp8-format", "e4m3", "--fp8-recipe", "mxfp8"}, "b200");
  EXPECT_EQ(t["precision"], "mxfp8");
  EXPECT_FALSE(t.contains("fp8_recipe"));
  ImportResult fp4 =
      import_megatron(tiny({"--fp4-format", "e2m1", "--fp4-recipe", "nvfp4"}), on("gb200", 1));
  EXPECT_EQ(fp4.config["training"]["precision"], "nvfp4");
  EXPECT_GT(makespan_of(plain(fp4.config)), 0);
  // --first-last-layers-bf16: one layer at each end unless the counts are given; refused
  // with delayed scaling as Megatron-LM refuses it; nothing in a bf16 run.
  t = training({"--fp8-format", "e4m3", "--fp8-recipe", "tensorwise", "--first-last-layers-bf16"},
               "h100-sxm");
  EXPECT_EQ(t["bf16_layers_at_start"], 1);
  EXPECT_EQ(t["bf16_layers_at_end"], 1);
  t = training({"--fp8-format", "e4m3", "--fp8-recipe", "mxfp8", "--first-last-layers-bf16",
                "--num-layers-at-start-in-bf16", "2", "--num-layers-at-end-in-bf16", "0"},
               "b200");
  EXPECT_EQ(t["bf16_layers_at_start"], 2);
  EXPECT_FALSE(t.contains("bf16_layers_at_end"));
  t = training({"--first-last-layers-bf16"}, "h100-sxm");
  EXPECT_FALSE(t.contains("bf16_layers_at_start"));
  EXPECT_EQ(error_of(tiny({"--fp8-format", "e4m3", "--first-last-layers-bf16"}), on("b200", 1)),
            "Megatron-LM flag --first-last-layers-bf16: Megatron-LM keeps no layer in bf16 with "
            "the delayed fp8 recipe");
  EXPECT_EQ(error_of(tiny({"--fp8-format", "e4m3", "--fp8-recipe", "hourly"}), on("b200", 1)),
            "Megatron-LM flag --fp8-recipe: expected one of delayed, tensorwise, blockwise, "
            "mxfp8, custom, got 'hourly'");
  // Refused where the GPU has no such tensor cores, as any config.
  const ImportResult hopper = import_megatron(tiny({"--fp4-format", "e2m1"}), on("h100-sxm", 1));
  try {
    (void)parse_config(plain(hopper.config), "imported.json");
    ADD_FAILURE() << "nvfp4 on an H100 was not refused";
  } catch (const Error& e) {
    EXPECT_TRUE(std::string(e.what()).find("has no nvfp4 arithmetic") != std::string::npos)
        << e.what();
  }
}

// --context-parallel-size splits the sequence (the GPUs left are data parallel), with
// --cp-comm-type's exchange; torchtitan's context_parallel_degree likewise, its rotate method
// "allgather" (the default) gathering K and V, "alltoall" rotating them around the ring.
TEST(MegatronImport, ContextParallelFlags) {
  ImportResult result = import_megatron(
      tiny({"--context-parallel-size", "2", "--cp-comm-type", "a2a"}), on("h100-sxm", 2));
  EXPECT_EQ(result.config["parallelism"].dump(),
            R"({"tensor_parallel":1,"data_parallel":8,"context_parallel":2,"cp_comm":"a2a",)"
            R"("overlap_grad_reduce":false})");
  EXPECT_EQ(result.config["description"],
            "Megatron-LM flags on 2 x 8 h100-sxm (tp 1 x cp 2 x pp 1 x dp 8)");
  EXPECT_TRUE(result.warnings.empty());
  EXPECT_GT(makespan_of(plain(result.config)), 0);
  result = import_megatron(tiny({"--context-parallel-size", "2", "--cp-comm-type", "a2a+p2p"}),
                           on("h100-sxm", 2));
  EXPECT_FALSE(result.config["parallelism"].contains("cp_comm"));
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_EQ(result.warnings[0], "--cp-comm-type a2a+p2p: simulated as p2p over the whole group");
  EXPECT_EQ(
      error_of(tiny({"--context-parallel-size", "2", "--cp-comm-type", "ring"}), on("h100-sxm", 2)),
      "Megatron-LM flag --cp-comm-type: expected p2p, all_gather, a2a or a2a+p2p, got "
      "'ring'");
}

// Torch FSDP2 and Megatron-FSDP's ZeRO-3 are /parallelism/fsdp zero3; its optim strategy
// is the distributed optimizer, optim_grads the same with a warning.
TEST(MegatronImport, FsdpFlags) {
  ImportResult result =
      import_megatron(tiny({"--use-megatron-fsdp", "--data-parallel-sharding-strategy",
                            "optim_grads_params", "--use-distributed-optimizer"}),
                      on("h100-sxm", 2));
  EXPECT_EQ(result.config["parallelism"]["fsdp"], "zero3");
  EXPECT_TRUE(result.warnings.empty());
  EXPECT_GT(makespan_of(plain(result.config)), 0);
  result = import_megatron(
      tiny({"--use-megatron-fsdp", "--data-parallel-sharding-strategy", "optim_grads_params",
            "--use-distributed-optimizer", "--overlap-grad-reduce", "--overlap-param-gather"}),
      on("h100-sxm", 2));
  EXPECT_FALSE(result.config["parallelism"].contains("overlap_param_gather"));
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_EQ(result.warnings[0].substr(0, 36), "--overlap-param-gather with FSDP: ea");
  EXPECT_GT(makespan_of(plain(result.config)), 0);
  result = import_megatron(tiny({"--use-torch-fsdp2"}), on("h100-sxm", 2));
  EXPECT_EQ(result.config["parallelism"]["fsdp"], "zero3");
  result = import_megatron(
      tiny({"--use-megatron-fsdp", "--data-parallel-sharding-strategy", "optim_grads"}),
      on("h100-sxm", 2));
  EXPECT_FALSE(result.config["parallelism"].contains("fsdp"));
  EXPECT_EQ(result.config["training"]["distributed_optimizer"], true);
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_EQ(result.warnings[0].substr(0, 46), "--data-parallel-sharding-strategy optim_grads:");
  result = import_megatron(tiny({"--data-parallel-sharding-strategy", "optim_grads_params"}),
                           on("h100-sxm", 2));
  EXPECT_FALSE(result.config["parallelism"].contains("fsdp"));
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_EQ(error_of(tiny({"--use-megatron-fsdp", "--data-parallel-sharding-strategy", "zero3"}),
                     on("h100-sxm", 2))
                .substr(0, 50),
            "Megatron-LM flag --data-parallel-sharding-strategy");
}

TEST(MegatronImport, VocabularyPadding) {
  const auto vocab = [](std::vector<std::string> more, std::optional<std::uint32_t> given = {}) {
    std::vector<std::string> args = tiny(std::move(more));
    args.erase(args.begin() + 10, args.begin() + 12);  // no --vocab-size
    ImportOptions options = on("h100-sxm", 1);
    options.vocab = given;
    return import_megatron(args, options).config["model"]["vocab"].get<int>();
  };
  EXPECT_EQ(vocab({"--vocab-size", "50000", "--tensor-model-parallel-size", "4"}), 50176);
  EXPECT_EQ(vocab({"--padded-vocab-size", "50000", "--tensor-model-parallel-size", "4"}), 50000);
  EXPECT_EQ(vocab({"--vocab-file", "v.json", "--merge-file", "m.txt"}), 50304);  // GPT-2 BPE
  EXPECT_EQ(vocab({"--vocab-size", "100", "--make-vocab-size-divisible-by", "64"}), 128);
  EXPECT_EQ(vocab({"--tokenizer-type", "HuggingFaceTokenizer"}, 32000), 32000);
  std::vector<std::string> args = tiny({"--tokenizer-type", "HuggingFaceTokenizer"});
  args.erase(args.begin() + 10, args.begin() + 12);
  try {
    (void)import_megatron(args, on("h100-sxm", 1));
    FAIL() << "no error";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.field(), "vocab");
  }
}

TEST(MegatronImport, UnknownFlagsAreListedAndLastValueWins) {
  const ImportResult result = import_megatron(
      tiny({"--frobnicate", "3", "--turbo", "--warp=9", "stray", "--num-layers", "8"}),
      on("h100-sxm", 1));
  EXPECT_EQ(result.unknown,
            (std::vector<std::string>{"--frobnicate 3", "--turbo", "--warp=9", "stray"}));
  EXPECT_EQ(result.config["model"]["layers"], 8);
}

TEST(MegatronImport, LackingFeaturesAreWarnings) {
  const ImportResult result = import_megatron(
      tiny({"--context-parallel-size", "2", "--tp-comm-overlap", "--num-query-groups", "2"}),
      on("h100-sxm", 1));
  ASSERT_EQ(result.warnings.size(), 2u);
  EXPECT_EQ(result.warnings[0],
            "--tp-comm-overlap: PerFlow does not overlap tensor-parallel communication with the "
            "GEMMs");
  EXPECT_EQ(result.warnings[1].substr(0, 21), "--num-query-groups 2:");
  EXPECT_EQ(result.config["parallelism"]["data_parallel"], 4);  // 8 GPUs / cp 2
  EXPECT_EQ(result.config["parallelism"]["context_parallel"], 2);
}

TEST(MegatronImport, MixtureOfExperts) {
  const ImportResult result = import_megatron(
      tiny({"--num-experts", "8", "--moe-router-topk", "2", "--moe-ffn-hidden-size", "128",
            "--moe-shared-expert-intermediate-size", "128", "--moe-layer-freq", "([0]*1+[1]*3)",
            "--expert-model-parallel-size", "4"}),
      on("h100-sxm", 1));
  EXPECT_EQ(result.config["model"].dump(),
            R"({"layers":4,"hidden":256,"ffn_hidden":1024,"heads":8,"vocab":1024,)"
            R"("sequence":1024,"mlp":"gelu","tied_embeddings":true,"experts":8,"top_k":2,)"
            R"("expert_ffn_hidden":128,"shared_experts":1,"first_dense_layers":1})");
  EXPECT_EQ(result.config["parallelism"]["expert_parallel"], 4);
  EXPECT_GT(makespan_of(plain(result.config)), 0);
}

// Sliding windows (Transformer Engine's (left, right): left keys before the query and its
// own), the layers they skip (--window-attn-skip-freq N: every Nth layer full, from layer
// number 1; or a list of 1 windowed and 0 full), learnable softmax offsets (gpt-oss's
// sinks), and a hybrid pattern with HybridConfig's Mamba defaults.
TEST(MegatronImport, WindowsSinksAndHybridPatterns) {
  ImportResult result =
      import_megatron(tiny({"--window-size", "(127, 0)", "--window-attn-skip-freq", "2",
                            "--softmax-type", "learnable"}),
                      on("h100-sxm", 1));
  EXPECT_EQ(result.config["model"]["sliding_window"], 128);
  EXPECT_EQ(result.config["model"]["window_pattern"], "WF");
  EXPECT_EQ(result.config["model"]["attention_sinks"], true);
  EXPECT_GT(makespan_of(plain(result.config)), 0);
  result =
      import_megatron(tiny({"--window-size", "127,0", "--window-attn-skip-freq", "([1,1,0]+[1])"}),
                      on("h100-sxm", 1));
  EXPECT_EQ(result.config["model"]["window_pattern"], "WWFW");
  // Every layer windowed: no pattern.
  result = import_megatron(tiny({"--window-size", "(127,0)"}), on("h100-sxm", 1));
  EXPECT_FALSE(result.config["model"].contains("window_pattern"));

  result = import_megatron(tiny({"--hybrid-override-pattern", "M*-M"}), on("h100-sxm", 1));
  EXPECT_EQ(result.config["model"].dump(),
            R"({"layers":4,"hidden":256,"ffn_hidden":1024,"heads":8,"layer_pattern":"M*-M",)"
            R"("mamba":{"state_dim":128,"head_dim":64,"heads":8,"groups":8,"conv_kernel":4,)"
            R"("chunk_size":128},"vocab":1024,"sequence":1024,"mlp":"gelu",)"
            R"("tied_embeddings":true})");
  EXPECT_GT(makespan_of(plain(result.config)), 0);
  // The newer flag, without --num-layers; stage boundaries are left to /pipeline/layers.
  std::vector<std::string> args = tiny(
      {"--hybrid-layer-pattern", "M*|-M", "--mamba-num-heads", "16", "--mamba-num-groups", "4"});
  args.erase(args.begin(), args.begin() + 2);
  result = import_megatron(args, on("h100-sxm", 1));
  EXPECT_EQ(result.config["model"]["layer_pattern"], "M*-M");
  EXPECT_EQ(result.config["model"]["mamba"]["heads"], 16);
  EXPECT_EQ(result.config["model"]["mamba"]["groups"], 4);
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_EQ(result.warnings[0],
            "--hybrid-layer-pattern: the stage boundaries (|) are left out; set /pipeline/layers "
            "to place them");

  result = import_megatron(tiny({"--mtp-num-layers", "1"}), on("h100-sxm", 1));
  EXPECT_EQ(result.config["model"]["mtp_layers"], 1);
  EXPECT_TRUE(result.warnings.empty());
  EXPECT_GT(makespan_of(plain(result.config)), 0);
  // Multi-token prediction after a hybrid pattern: the unified pattern's modules after '/',
  // or the deprecated --mtp-hybrid-override-pattern with --mtp-num-layers.
  result = import_megatron(tiny({"--hybrid-override-pattern", "M*-M/*-/*-"}), on("h100-sxm", 1));
  EXPECT_EQ(result.config["model"]["layer_pattern"], "M*-M");
  EXPECT_EQ(result.config["model"]["mtp_layers"], 2);
  EXPECT_EQ(result.config["model"]["mtp_pattern"], "*-");
  EXPECT_TRUE(result.warnings.empty());
  EXPECT_GT(makespan_of(plain(result.config)), 0);
  result = import_megatron(tiny({"--hybrid-override-pattern", "M*-M", "--mtp-num-layers", "1",
                                 "--mtp-hybrid-override-pattern", "*E"}),
                           on("h100-sxm", 1));
  EXPECT_EQ(result.config["model"]["mtp_pattern"], "*E");
  EXPECT_EQ(result.config["model"]["mtp_layers"], 1);
  result = import_megatron(tiny({"--hybrid-override-pattern", "M*-M/*-", "--mtp-num-layers", "3"}),
                           on("h100-sxm", 1));
  EXPECT_EQ(result.config["model"]["mtp_layers"], 1);
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_EQ(result.warnings[0],
            "--mtp-num-layers 3 conflicts with the 1 module(s) in the hybrid pattern: 1 used, as "
            "Megatron-LM does");
  result = import_megatron(tiny({"--hybrid-override-pattern", "M*-M", "--mtp-num-layers", "1"}),
                           on("h100-sxm", 1));
  EXPECT_FALSE(result.config["model"].contains("mtp_layers"));
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_EQ(result.warnings[0],
            "--mtp-num-layers 1: the hybrid pattern gives no module layers (after '/'), so "
            "multi-token prediction is left out");
  EXPECT_EQ(error_of(tiny({"--hybrid-override-pattern", "M*-M/*-/*E"}), on("h100-sxm", 1)),
            "Megatron-LM flag --hybrid-override-pattern: every multi-token prediction module "
            "after '/' has the same, non-empty layers, got 'M*-M/*-/*E'");
  EXPECT_EQ(error_of(tiny({"--hybrid-override-pattern", "M*X-"}), on("h100-sxm", 1)),
            "Megatron-LM flag --hybrid-override-pattern: expected M, *, - or E per layer, got "
            "'X' in 'M*X-'");
  EXPECT_EQ(error_of(tiny({"--hybrid-override-pattern", "M*-"}), on("h100-sxm", 1)),
            "Megatron-LM flag --num-layers: 4 layers, but --hybrid-override-pattern gives 3");
  EXPECT_EQ(error_of(tiny({"--window-size", "(128,4)"}), on("h100-sxm", 1)),
            "Megatron-LM flag --window-size: a decoder's window looks at no later token; right "
            "is 4");
  EXPECT_EQ(error_of(tiny({"--window-size", "wide"}), on("h100-sxm", 1)),
            "Megatron-LM flag --window-size: expected (left, right) such as (128, 0), got "
            "'wide'");
  EXPECT_EQ(error_of(tiny({"--window-attn-skip-freq", "2"}), on("h100-sxm", 1)),
            "Megatron-LM flag --window-attn-skip-freq: says which layers are windowed, but there "
            "is no --window-size");
}

// The dispatcher, group-limited routing and the expert-parallel overlap (no pipeline, so
// Megatron-Core allows it): each flag lands in its field, and the run simulates.
TEST(MegatronImport, MoeDispatcherGroupsAndOverlap) {
  const std::vector<std::string> moe = {"--num-experts",
                                        "8",
                                        "--moe-router-topk",
                                        "2",
                                        "--expert-model-parallel-size",
                                        "8",
                                        "--moe-router-num-groups",
                                        "4",
                                        "--moe-router-group-topk",
                                        "2"};
  std::vector<std::string> flags = moe;
  for (const char* f : {"--moe-token-dispatcher-type", "flex", "--moe-flex-dispatcher-backend",
                        "deepep", "--overlap-moe-expert-parallel-comm"}) {
    flags.emplace_back(f);
  }
  ImportResult result = import_megatron(tiny(flags), on("h100-sxm", 1));
  EXPECT_EQ(result.config["model"]["expert_groups"], 4);
  EXPECT_EQ(result.config["model"]["group_top_k"], 2);
  EXPECT_EQ(result.config["parallelism"]["moe_dispatcher"], "deepep");
  EXPECT_EQ(result.config["parallelism"]["moe_a2a_overlap"], true);
  EXPECT_TRUE(result.warnings.empty());
  EXPECT_GT(makespan_of(plain(result.config)), 0);
  // HybridEP is priced as DeepEP, with a warning; the NCCL EP backend as the all-to-all.
  flags = moe;
  for (const char* f :
       {"--moe-token-dispatcher-type", "flex", "--moe-flex-dispatcher-backend", "hybridep"}) {
    flags.emplace_back(f);
  }
  result = import_megatron(tiny(flags), on("h100-sxm", 1));
  EXPECT_EQ(result.config["parallelism"]["moe_dispatcher"], "deepep");
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_EQ(result.warnings[0].substr(0, 41), "--moe-flex-dispatcher-backend hybridep: p");
  flags.back() = "ncclep";
  result = import_megatron(tiny(flags), on("h100-sxm", 1));
  EXPECT_FALSE(result.config["parallelism"].contains("moe_dispatcher"));
  // Groups without a top-k that can hold the routed experts: an error at the flag.
  flags = moe;
  flags.back() = "5";
  EXPECT_EQ(error_of(tiny(flags), on("h100-sxm", 1)),
            "Megatron-LM flag --moe-router-num-groups: 4 groups of --num-experts 8 need a "
            "--moe-router-group-topk that picks 1 to 4 groups holding at least "
            "--moe-router-topk 2 experts");
}

TEST(MegatronImport, InterleavedAndUnevenSplits) {
  ImportResult result =
      import_megatron(tiny({"--num-layers", "16", "--pipeline-model-parallel-size", "2",
                            "--num-layers-per-virtual-pipeline-stage", "2",
                            "--microbatch-group-size-per-virtual-pipeline-stage", "4"}),
                      on("h100-sxm", 1));
  EXPECT_EQ(result.config["pipeline"].dump(),
            R"({"schedule":"interleaved-1f1b","stages":2,"chunks":4,"microbatch_group_size":4})");
  result = import_megatron(
      tiny({"--num-layers", "10", "--pipeline-model-parallel-size", "4",
            "--decoder-first-pipeline-num-layers", "1", "--decoder-last-pipeline-num-layers", "1"}),
      on("h100-sxm", 1));
  EXPECT_EQ(result.config["pipeline"]["layers"].dump(), "[1,4,4,1]");
  result = import_megatron(
      tiny({"--num-layers", "6", "--pipeline-model-parallel-size", "2",
            "--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split"}),
      on("h100-sxm", 1));
  EXPECT_FALSE(result.config["pipeline"].contains("layers"));  // PerFlow's default
  result = import_megatron(
      tiny({"--num-layers", "14", "--pipeline-model-parallel-size", "4",
            "--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split"}),
      on("h100-sxm", 1));
  EXPECT_FALSE(result.config["pipeline"].contains("layers"));  // 16 units: 3 4 4 3, the same
  result = import_megatron(tiny({"--num-layers", "7", "--pipeline-model-parallel-size", "4",
                                 "--account-for-embedding-in-pipeline-split"}),
                           on("h100-sxm", 1));
  EXPECT_EQ(result.config["pipeline"]["layers"].dump(), "[1,2,2,2]");  // PerFlow's: 2 2 2 1
}

TEST(MegatronImport, TorchrunFlagsGiveTheWorld) {
  // A pasted launch line: torchrun's --nproc_per_node and --nnodes stand in for
  // gpus_per_node and nodes, which are not given.
  ImportOptions options;
  options.gpu = "h100-sxm";
  const ImportResult result = import_megatron(
      tiny({"torchrun", "--nproc_per_node", "4", "--nnodes", "2", "pretrain_gpt.py"}), options);
  EXPECT_EQ(result.config["parallelism"]["data_parallel"], 8);
  EXPECT_EQ(result.config["network"]["gpus_per_node"], 4);
  EXPECT_TRUE(result.unknown.empty());
}

TEST(MegatronImport, Errors) {
  EXPECT_EQ(error_of(tiny({"--tensor-model-parallel-size", "eight"}), on("h100-sxm", 1)),
            "Megatron-LM flag --tensor-model-parallel-size: expected an integer >= 1, got "
            "'eight'");
  EXPECT_EQ(error_of(tiny({"--swiglu=yes"}), on("h100-sxm", 1)),
            "Megatron-LM flag --swiglu: takes no value, got '--swiglu=yes'");
  EXPECT_EQ(error_of(tiny({"--hidden-dropout", "1.5"}), on("h100-sxm", 1)),
            "Megatron-LM flag --hidden-dropout: expected a number in [0, 1], got '1.5'");
  EXPECT_EQ(error_of(tiny({"--recompute-granularity", "most"}), on("h100-sxm", 1)),
            "Megatron-LM flag --recompute-granularity: expected one of full, selective, got "
            "'most'");
  EXPECT_EQ(error_of(tiny({"--tensor-model-parallel-size", "3"}), on("h100-sxm", 1)),
            "1 nodes x 8 GPUs = 8 GPUs is not a multiple of tensor x pipeline x context "
            "parallel = 3 x 1 x 1 = 3 (--tensor-model-parallel-size, "
            "--pipeline-model-parallel-size, --context-parallel-size)");
  EXPECT_EQ(error_of(tiny({"--global-batch-size", "12"}), on("h100-sxm", 1)),
            "global batch 12 is not a multiple of micro batch x data parallel = 1 x 8 = 8: "
            "microbatches per step would not be whole (--global-batch-size, "
            "--micro-batch-size)");
  std::vector<std::string> no_layers = tiny();
  no_layers.erase(no_layers.begin(), no_layers.begin() + 2);
  EXPECT_EQ(error_of(no_layers, on("h100-sxm", 1)),
            "the Megatron-LM flags do not give --num-layers, which Megatron-LM requires");
  try {
    (void)import_megatron(tiny(), ImportOptions{});
    FAIL() << "no error";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.field(), "gpu");
  }
  try {
    ImportOptions options;
    options.gpu = "h100-sxm";
    (void)import_megatron(tiny(), options);
    FAIL() << "no error";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.field(), "nodes");
  }
  EXPECT_EQ(error_of(tiny(), on("h100", 1)),
            "gpu 'h100': not a GPU preset; did you mean 'h200'? (presets: a100-40gb, a100-80gb, "
            "h100-sxm, h100-pcie, h200, b200, b300, gb200, gb300, mi250x, mi300x, mi325x, mi355x)");
}

TEST(ArgsFile, SplitsAsAShell) {
  const std::string path = ::testing::TempDir() + "/perflow_args_file_test.args";
  std::ofstream(path) << "torchrun --nproc_per_node 8 \\\n  pretrain_gpt.py # the script\n"
                         "--split '99,1,0' --data-path \"a b\"  # comment\n--fp16\n";
  EXPECT_EQ(read_args_file(path),
            (std::vector<std::string>{"torchrun", "--nproc_per_node", "8", "pretrain_gpt.py",
                                      "--split", "99,1,0", "--data-path", "a b", "--fp16"}));
  std::ofstream(path) << "--split '99,1\n";
  EXPECT_THROW((void)read_args_file(path), Error);
}

constexpr const char* kLlama8b = R"(
[model]
name = "llama3"
flavor = "8B"

[training]
local_batch_size = 2
seq_len = 4096

[parallelism]
tensor_parallel_degree = 2
pipeline_parallel_degree = 2
pipeline_parallel_schedule = "Interleaved1F1B"
pipeline_parallel_microbatch_size = 1

[activation_checkpoint]
mode = "full"

[frobnicate]
x = 1
)";

// torchtitan's own split: 32 layers and the embedding and head as a layer each over 4
// virtual stages, 34 units: 9 9 8 8, the earlier taking the spare ones; less one on the first
// and the last for the embedding and head.
TEST(TorchtitanImport, JobFile) {
  const ImportResult result = import_torchtitan_text(kLlama8b, "job.toml", on("h100-sxm", 2));
  EXPECT_EQ(
      result.config.dump(),
      R"j({"description":"torchtitan job job.toml on 2 x 8 h100-sxm (tp 2 x pp 2 x dp 4)",)j"
      R"("model":{"preset":"llama3-8b","sequence":4096},)"
      R"("training":{"micro_batch_size":1,"global_batch_size":8,"precision":"bf16",)"
      R"("recompute":"full","sequence_parallel":true},)"
      R"("device":"h100-sxm","pipeline":{"schedule":"interleaved-1f1b","stages":2,)"
      R"("chunks":2,"layers":[8,9,8,7]},"parallelism":{"tensor_parallel":2,"data_parallel":4,)"
      R"("fsdp":"zero3"},"network":{"devices_per_node":1}})");
  EXPECT_EQ(result.unknown, (std::vector<std::string>{"[frobnicate]"}));
  EXPECT_TRUE(result.warnings.empty());
  EXPECT_GT(makespan_of(plain(result.config)), 0);
}

// dp_replicate x dp_shard: HSDP, each shard group dp_shard x cp ranks (torchtitan's
// dp_shard_cp mesh).
TEST(TorchtitanImport, ReplicatedShardsAreHsdp) {
  const std::string job =
      "[model]\nflavor = \"8B\"\n[training]\nlocal_batch_size = 1\nseq_len = 8192\n"
      "[parallelism]\ndata_parallel_replicate_degree = 2\ndata_parallel_shard_degree = 2\n"
      "context_parallel_degree = 2\n";
  const ImportResult result = import_torchtitan_text(job, "job.toml", on("h100-sxm", 1));
  EXPECT_EQ(result.config["parallelism"]["fsdp"], "hsdp");
  EXPECT_EQ(result.config["parallelism"]["fsdp_shard_size"], 4);
  EXPECT_EQ(result.config["parallelism"]["data_parallel"], 4);
  EXPECT_GT(makespan_of(plain(result.config)), 0);
}

TEST(TorchtitanImport, ContextParallelDegree) {
  const std::string job =
      "[model]\nflavor = \"8B\"\n[training]\nlocal_batch_size = 1\nseq_len = 8192\n"
      "[parallelism]\ncontext_parallel_degree = 2\n";
  ImportResult result = import_torchtitan_text(job, "job.toml", on("h100-sxm", 1));
  EXPECT_EQ(result.config["parallelism"]["context_parallel"], 2);
  EXPECT_EQ(result.config["parallelism"]["cp_comm"], "all_gather");
  EXPECT_EQ(result.config["parallelism"]["data_parallel"], 4);
  EXPECT_GT(makespan_of(plain(result.config)), 0);
  result = import_torchtitan_text(job + "context_parallel_rotate_method = \"alltoall\"\n",
                                  "job.toml", on("h100-sxm", 1));
  EXPECT_FALSE(result.config["parallelism"].contains("cp_comm"));
  try {
    (void)import_torchtitan_text(job + "context_parallel_rotate_method = \"ring\"\n", "job.toml",
                                 on("h100-sxm", 1));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "job.toml:line 8: [parallelism] context_parallel_rotate_method: expected "
              "\"allgather\" or \"alltoall\", got 'ring'");
  }
}

TEST(TorchtitanImport, Errors) {
  const auto error = [](const std::string& toml) {
    try {
      (void)import_torchtitan_text(toml, "job.toml", on("h100-sxm", 1));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("[model]\nname = \"llama3\"\nflavor = \"debugmodel\"\n"),
            "job.toml: [model] name 'llama3' flavor 'debugmodel' has no PerFlow model preset "
            "(those with one: llama3 8B, llama3 70B, llama3 405B, deepseek_v3 671B); write "
            "/model by hand");
  EXPECT_EQ(error("[model]\nflavor = \"8B\"\n[parallelism]\ntensor_parallel_degree = \"8\"\n"),
            "job.toml:line 4: [parallelism] tensor_parallel_degree: expected an integer >= 1, "
            "got '8'");
  // toml++ 3.3.0 would assert on these headers (tomlplusplus pull request 301).
  EXPECT_EQ(error("[job]\n[ = \"tb\"\n"), "job.toml:line 2: a table header needs a key after '['");
  EXPECT_EQ(error("[[[1]]]\n"), "job.toml:line 1: a table header needs a key after '['");
  EXPECT_EQ(error("[training]\nseq_len = 1\xc3\xa9\n"),
            "job.toml:line 2: a character outside ASCII outside a string or comment (TOML 1.0 "
            "keys and values are ASCII)");
  // Lines of a value that start with '[' are not headers; strings and comments may hold any
  // character.
  const ImportResult nested = import_torchtitan_text(
      "\xEF\xBB\xBFx = [\n  [1, 2],\n  [{a = 1}], # [ = \xc3\xa9\n]\ns = \"\"\"\n[ = "
      "\xc3\xa9\"\"\"\n"
      "[model]\nflavor = \"8B\"\n",
      "job.toml", on("h100-sxm", 1));
  EXPECT_EQ(nested.unknown,
            (std::vector<std::string>{"[s]", "[x]"}));  // sorted, as toml++ keeps keys
  EXPECT_NE(error("[model\n").find("job.toml:line 1: "), std::string::npos);
  // torchtitan's split refuses a weight above the units a stage holds (32 + 40 + 1 = 73 over
  // 2 stages: 36).
  EXPECT_EQ(error("[model]\nflavor = \"8B\"\n[parallelism]\npipeline_parallel_degree = 2\n"
                  "pipeline_parallel_first_stage_less_layers = 40\n"),
            "job.toml: [parallelism] 32 layers with pipeline_parallel_first_stage_less_layers 40 "
            "and pipeline_parallel_last_stage_less_layers 1 do not split over 2 stages: "
            "torchtitan needs each stage to hold at least as many units as each weight");
}

}  // namespace
}  // namespace perflow::study
