// The clusters of 2026 as a config says them: NVL72 racks' NVLink domains, the presets' host
// links, and the low precisions with their refusals.
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config_error.hpp"
#include "perflow/core/error.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/study/config.hpp"

namespace perflow::study {
namespace {

nlohmann::json llama_on(const std::string& gpu) {
  auto doc = nlohmann::json::parse(R"({
    "model": {"preset": "llama3-8b", "layers": 8},
    "training": {"micro_batch_size": 1, "global_batch_size": 256},
    "pipeline": {"schedule": "1f1b", "stages": 2},
    "parallelism": {"tensor_parallel": 4, "data_parallel": 16}
  })");
  doc["device"] = gpu;
  return doc;
}

using testing::error_of;

// TP 4 x DP 16 x PP 2 = 128 GPUs, ranks tensor first. A data-parallel group is 16 ranks 4
// apart: groups tile the ranks in blocks of 64. On HGX boards of 8 a block spans 8 boards: the
// group runs over the NICs, 8 / 4 = 2 of its ranks a board. An NVL72 rack's domain of 72 is
// not a multiple of 64 either (stage 1's blocks straddle two racks): over the NICs too, but
// with 72 / 4 = 18 ranks a domain, all 16 of a group's there. TP 8 x DP 9 (blocks of 72)
// puts each group in one rack, on NVLink; on HGX boards it leaves the board.
TEST(Clusters, Nvl72RacksKeepGroupsOnNvlink) {
  const Config hgx = parse_config(llama_on("b200"), "cfg.json");
  EXPECT_EQ(hgx.nvlink_domain, 8u);
  EXPECT_EQ(hgx.data_parallel_link, "inter_node");
  EXPECT_EQ(hgx.tensor_parallel_link, "intra_node");
  EXPECT_EQ(hgx.data_parallel.nccl->ranks_per_node, 2u);

  const Config rack = parse_config(llama_on("gb200"), "cfg.json");
  EXPECT_EQ(rack.nvlink_domain, 72u);
  EXPECT_EQ(rack.gpus_per_node, 8u);
  EXPECT_EQ(rack.data_parallel_link, "inter_node");
  EXPECT_EQ(rack.data_parallel.nccl->ranks_per_node, 16u);

  auto doc = llama_on("gb200");
  doc["parallelism"] = {{"tensor_parallel", 8}, {"data_parallel", 9}};
  doc["training"]["global_batch_size"] = 288;
  const Config in_rack = parse_config(doc, "cfg.json");
  EXPECT_EQ(in_rack.data_parallel_link, "intra_node");
  EXPECT_EQ(in_rack.data_parallel.nccl->ranks_per_node, 9u);
  // The same on HGX boards: DP's block of 72 leaves the board.
  doc["device"] = "b200";
  EXPECT_EQ(parse_config(doc, "cfg.json").data_parallel_link, "inter_node");
  // A job that fits in the rack: every group in it.
  doc = llama_on("gb300");
  doc["parallelism"]["data_parallel"] = 8;
  const Config small = parse_config(doc, "cfg.json");
  EXPECT_EQ(small.data_parallel_link, "intra_node");
  // /network/nvlink_domain says otherwise (racks cabled as 18 trays of 4 without switches).
  doc["network"] = {{"nvlink_domain", 4}};
  const Config trays = parse_config(doc, "cfg.json");
  EXPECT_EQ(trays.nvlink_domain, 4u);
  EXPECT_EQ(trays.data_parallel_link, "inter_node");
  EXPECT_EQ(trays.tensor_parallel_link, "intra_node");
  // Faster on NVLink: the rack's step is shorter than the trays'.
  EXPECT_LT(simulate(small, build_graph(small)).metrics.makespan,
            simulate(trays, build_graph(trays)).metrics.makespan);
}

// Without /network/host_link, offloading runs over the GPU's own link to its host: PCIe Gen5
// on a B200 (64 GB/s), NVLink-C2C on a GB200 (225 GB/s a GPU each way).
TEST(Clusters, OffloadingUsesThePresetsHostLink) {
  auto doc = llama_on("b200");
  doc["costs"] = {{"offload", {{"ratio", 0.5}}}};
  const Config pcie = parse_config(doc, "cfg.json");
  ASSERT_EQ(pcie.offload.host_link.size(), 2u);
  EXPECT_DOUBLE_EQ(pcie.offload.host_link[0].bandwidth, 64e9);
  doc["device"] = "gb200";
  const Config c2c = parse_config(doc, "cfg.json");
  EXPECT_DOUBLE_EQ(c2c.offload.host_link[1].bandwidth, 225e9);
  // /network/host_link still wins.
  doc["network"] = {{"host_link", {{"bandwidth", "10GB/s"}}}};
  EXPECT_DOUBLE_EQ(parse_config(doc, "cfg.json").offload.host_link[0].bandwidth, 10e9);
}

TEST(Clusters, LowPrecisionsAndTheirRefusals) {
  auto doc = llama_on("h100-sxm");
  doc["training"]["precision"] = "nvfp4";
  EXPECT_EQ(error_of(doc),
            "cfg.json:/training/precision: stage 0 runs on its GPU 'h100-sxm' (/device), which "
            "has no nvfp4 arithmetic (it has bf16, fp16, fp8)");
  doc["training"]["precision"] = "mxfp8";
  doc["device"] = "mi300x";
  EXPECT_EQ(error_of(doc),
            "cfg.json:/training/precision: stage 0 runs on its GPU 'mi300x' (/device), which "
            "has no mxfp8 arithmetic (it has bf16, fp16, fp8)");
  doc["device"] = "mi355x";
  EXPECT_EQ(error_of(doc), "(no error)");
  doc["training"]["fp8_recipe"] = "current";
  EXPECT_EQ(error_of(doc),
            "cfg.json:/training/fp8_recipe: fp8_recipe scales fp8 tensors, but "
            "/training/precision is mxfp8 (its blocks carry their own scales)");
  doc["training"]["precision"] = "fp8";
  doc["training"]["fp8_recipe"] = "blockwise";
  EXPECT_EQ(error_of(doc),
            "cfg.json:/training/fp8_recipe: stage 0 runs on mi355x, which Transformer Engine's "
            "blockwise fp8 does not support (it needs an NVIDIA Hopper or newer GPU): use "
            "\"delayed\" or \"current\"");
  doc["training"]["fp8_recipe"] = "weekly";
  EXPECT_EQ(error_of(doc),
            "cfg.json:/training/fp8_recipe: expected one of delayed, current, blockwise, got "
            "\"weekly\"");

  // On a GB200 each block-scaled precision runs faster than the one before it and keeps less.
  doc = llama_on("gb200");
  const auto run = [&](const char* precision) {
    doc["training"]["precision"] = precision;
    const Config c = parse_config(doc, "cfg.json");
    return std::pair{simulate(c, build_graph(c)).metrics.makespan,
                     c.model->positions[0].activation};
  };
  const auto [bf16, bf16_memory] = run("bf16");
  const auto [mxfp8, mxfp8_memory] = run("mxfp8");
  const auto [nvfp4, nvfp4_memory] = run("nvfp4");
  EXPECT_LT(mxfp8, bf16);
  EXPECT_LT(nvfp4, mxfp8);
  EXPECT_LT(mxfp8_memory, bf16_memory);
  EXPECT_LT(nvfp4_memory, mxfp8_memory);
  // Per-tensor fp8 at the same peak casts less than MXFP8 on Blackwell (one copy serves both
  // products, the norms write it): faster, as Transformer Engine's B300 GEMM measurements
  // have it (delayed 1.61x bf16, MXFP8 1.44x).
  const auto [fp8, fp8_memory] = run("fp8");
  EXPECT_LT(fp8, mxfp8);
  EXPECT_LT(fp8_memory, mxfp8_memory);
}

}  // namespace
}  // namespace perflow::study
