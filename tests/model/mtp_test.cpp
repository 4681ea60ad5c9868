// Multi-token prediction (DeepSeek-V3 report, section 2.2; Megatron-Core's
// MultiTokenPredictionBlock): a module after the last layer, on the last position.
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "perflow/model/derive.hpp"
#include "perflow/model/device_spec.hpp"
#include "perflow/model/transformer.hpp"

namespace perflow::model {
namespace {

const Transformer& deepseek_v3() { return find_model_preset("deepseek-v3")->model; }

// DeepSeek-V3's module: its two norms and final norm (3 h), eh_proj (2h x h) and a MoE layer
// as the last one (11,507,286,016): 11,610,067,968. With copies of the embedding and the head
// (2 x 129280 x 7168) and the 671,026,404,352 of the main model: 684.49B, the model card's
// "685B total: 671B of the main model and 14B of the MTP module".
TEST(MultiTokenPrediction, DeepSeekV3Parameters) {
  const Transformer& m = deepseek_v3();
  EXPECT_EQ(m.mtp_layers, 1u);
  EXPECT_EQ(m.mtp_kinds(), (std::vector<LayerKind>{{Mixer::Attention, Feedforward::Moe}}));
  EXPECT_EQ(m.mtp_module_parameters(), 11'610'067'968.0);
  EXPECT_EQ(m.parameters(), 671'026'404'352.0);  // the main model's, as the report counts
  const double total = m.parameters() + m.mtp_module_parameters() + 2 * m.embedding_parameters();
  EXPECT_NEAR(total / 1e9, 685, 685 * 0.005);
}

// Megatron-LM's num_floating_point_operations: a layer of the last layer's kind, eh_proj
// (2 s 2h h) and the logits again (2 s h V) per module.
TEST(MultiTokenPrediction, ForwardFlopsAddALayerEhProjAndTheLogits) {
  const Transformer& m = deepseek_v3();
  Transformer plain = m;
  plain.mtp_layers = 0;
  const double s = 4096, h = 7168, a = 128;
  const double moe_layer = 2 * s * (187'107'328.0 + 9 * 3 * h * 2048) + s * s * (a * 192 + a * 128);
  EXPECT_DOUBLE_EQ(m.forward_flops_per_sample() - plain.forward_flops_per_sample(),
                   moe_layer + 2 * s * 2 * h * h + 2 * s * h * 129280);
}

// On the last position the module adds its layer (a MoE one: another dispatch and combine),
// its own operators, its weights and, away from the first position, the embedding's copy.
TEST(MultiTokenPrediction, TheLastPositionCarriesTheModule) {
  const Transformer& m = deepseek_v3();
  Transformer plain = m;
  plain.mtp_layers = 0;
  const DeviceSpec& h100 = find_device_preset("h100-sxm")->spec;
  const Training training{.micro_batch_size = 1};
  const Degrees degrees{.tensor = 1, .data = 8, .expert = 8};
  const LayerRange last{.first = 60, .count = 1, .head = true};
  const PositionCosts with = derive_position(m, training, degrees, h100, last);
  const PositionCosts without = derive_position(plain, training, degrees, h100, last);
  const double h = 7168;
  // The MoE layer's weights with a rank's 32 of the 256 routed experts.
  const double moe_on_rank = m.moe_layer_parameters() - 224 * 3 * h * 2048;
  EXPECT_EQ(with.parameters - without.parameters,
            moe_on_rank + 3 * h + 2 * h * h + m.embedding_parameters());
  EXPECT_EQ(with.a2a_per_pass, 2 * without.a2a_per_pass);
  EXPECT_GT(with.forward_ns, without.forward_ns);
  bool eh_proj = false;
  for (const OperatorTime& op : with.operators) eh_proj = eh_proj || op.name == "mtp_eh_proj";
  EXPECT_TRUE(eh_proj);
  // A position without the head holds none of it.
  const LayerRange middle{.first = 30, .count = 1};
  EXPECT_EQ(derive_position(m, training, degrees, h100, middle).parameters,
            derive_position(plain, training, degrees, h100, middle).parameters);
}

// With CUDA graphs each layer's pass is one graph launch: the module's layer is one more on
// the last position; its own operators (embedding, norms, eh_proj, head) stay eager.
TEST(MultiTokenPrediction, CudaGraphsLaunchTheModulesLayerAsAGraph) {
  const Transformer& m = deepseek_v3();
  Transformer plain = m;
  plain.mtp_layers = 0;
  const DeviceSpec& h100 = find_device_preset("h100-sxm")->spec;
  const Training training{.micro_batch_size = 1, .cuda_graphs = true};
  const LayerRange last{.first = 59, .count = 2, .head = true};
  const PositionCosts with = derive_position(m, training, {}, h100, last);
  const PositionCosts without = derive_position(plain, training, {}, h100, last);
  double eager = 0;  // the module's own operators' forward kernels
  for (const OperatorTime& op : with.operators) {
    if (op.name.starts_with("mtp_")) eager += op.kernels[kForward];
  }
  EXPECT_GT(eager, 0);
  // Two layers' graphs and the head's kernels, against three graphs, the head's and the
  // module's.
  EXPECT_EQ(with.forward_host.kernels, without.forward_host.kernels + 1 + eager);
}

}  // namespace
}  // namespace perflow::model
