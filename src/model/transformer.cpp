#include "perflow/model/transformer.hpp"

#include <algorithm>
#include <array>

namespace perflow::model {
namespace {

constexpr std::string_view kLlama3 =
    "Llama Team, \"The Llama 3 Herd of Models\", arXiv 2407.21783, Table 3";
constexpr std::string_view kLlama2 =
    "Touvron et al., \"Llama 2\", arXiv 2307.09288, Table 1; the released config.json files";
constexpr std::string_view kMegatron =
    "Narayanan et al., \"Efficient Large-Scale Language Model Training on GPU Clusters Using "
    "Megatron-LM\", SC'21, Table 1 (vocabulary 51200, sequence 2048)";

constexpr Transformer gpt(std::uint32_t layers, std::uint32_t hidden, std::uint32_t heads) {
  return {.layers = layers,
          .hidden = hidden,
          .ffn_hidden = 4 * hidden,
          .heads = heads,
          .kv_heads = heads,
          .vocab = 51200,
          .sequence = 2048,
          .mlp = Mlp::Gelu,
          .tied_embeddings = true};
}

constexpr Transformer llama(std::uint32_t layers, std::uint32_t hidden, std::uint32_t ffn,
                            std::uint32_t heads, std::uint32_t kv_heads, std::uint32_t vocab,
                            std::uint32_t sequence) {
  return {.layers = layers,
          .hidden = hidden,
          .ffn_hidden = ffn,
          .heads = heads,
          .kv_heads = kv_heads,
          .vocab = vocab,
          .sequence = sequence,
          .mlp = Mlp::SwiGlu,
          .tied_embeddings = false};
}

constexpr std::array kPresets = {
    ModelPreset{"gpt3-175b", "GPT-3 175B (96 layers, h 12288)",
                "Brown et al., \"Language Models are Few-Shot Learners\", NeurIPS 2020, Table "
                "2.1; vocabulary padded to 51200 as Megatron-LM does",
                gpt(96, 12288, 96)},
    ModelPreset{"gpt-1.7b", "GPT 1.7B of the Megatron-LM weak-scaling study", kMegatron,
                gpt(24, 2304, 24)},
    ModelPreset{"gpt-3.6b", "GPT 3.6B of the Megatron-LM weak-scaling study", kMegatron,
                gpt(30, 3072, 32)},
    ModelPreset{"gpt-7.5b", "GPT 7.5B of the Megatron-LM weak-scaling study", kMegatron,
                gpt(36, 4096, 32)},
    ModelPreset{"gpt-18b", "GPT 18B of the Megatron-LM weak-scaling study", kMegatron,
                gpt(40, 6144, 48)},
    ModelPreset{"gpt-39b", "GPT 39B of the Megatron-LM weak-scaling study", kMegatron,
                gpt(48, 8192, 64)},
    ModelPreset{"gpt-76b", "GPT 76B of the Megatron-LM weak-scaling study", kMegatron,
                gpt(60, 10240, 80)},
    ModelPreset{"gpt-145b", "GPT 145B of the Megatron-LM weak-scaling study", kMegatron,
                gpt(80, 12288, 96)},
    ModelPreset{"gpt-310b", "GPT 310B of the Megatron-LM weak-scaling study", kMegatron,
                gpt(96, 16384, 128)},
    ModelPreset{"gpt-530b", "GPT 530B of the Megatron-LM weak-scaling study", kMegatron,
                gpt(105, 20480, 128)},
    ModelPreset{"gpt-1t", "GPT 1T of the Megatron-LM weak-scaling study", kMegatron,
                gpt(128, 25600, 160)},
    ModelPreset{"llama3-8b", "Llama 3 8B (GQA, 8 KV heads)", kLlama3,
                llama(32, 4096, 14336, 32, 8, 128256, 8192)},
    ModelPreset{"llama3-70b", "Llama 3 70B (GQA, 8 KV heads)", kLlama3,
                llama(80, 8192, 28672, 64, 8, 128256, 8192)},
    ModelPreset{"llama3-405b", "Llama 3.1 405B (GQA, 8 KV heads)", kLlama3,
                llama(126, 16384, 53248, 128, 8, 128256, 8192)},
    ModelPreset{"llama2-7b", "Llama 2 7B", kLlama2, llama(32, 4096, 11008, 32, 32, 32000, 4096)},
    ModelPreset{"llama2-13b", "Llama 2 13B", kLlama2, llama(40, 5120, 13824, 40, 40, 32000, 4096)},
    ModelPreset{"llama2-70b", "Llama 2 70B (GQA, 8 KV heads)", kLlama2,
                llama(80, 8192, 28672, 64, 8, 32000, 4096)},
};

}  // namespace

std::string_view to_string(Mlp mlp) { return mlp == Mlp::SwiGlu ? "swiglu" : "gelu"; }

std::optional<Mlp> parse_mlp(std::string_view text) {
  if (text == "gelu") return Mlp::Gelu;
  if (text == "swiglu") return Mlp::SwiGlu;
  return std::nullopt;
}

double Transformer::layer_parameters() const {
  const double h = hidden;
  const double kv = double(kv_heads) * head_dim();
  const double attention = h * (h + 2 * kv) + h * h;
  const double matrices = mlp == Mlp::SwiGlu ? 3 : 2;
  return attention + matrices * h * ffn_hidden + 2 * h;
}

double Transformer::parameters() const {
  const double embeddings = tied_embeddings ? 1 : 2;
  return layers * layer_parameters() + embeddings * embedding_parameters() + hidden;
}

double Transformer::forward_flops_per_sample() const {
  const double s = sequence;
  const double h = hidden;
  const double kv = double(kv_heads) * head_dim();
  const double matrices = mlp == Mlp::SwiGlu ? 3 : 2;
  const double gemm = 2 * s * (h * (h + 2 * kv) + h * h + matrices * h * ffn_hidden);
  const double attention = 4 * s * s * h;
  return layers * (gemm + attention) + 2 * s * h * vocab;
}

std::span<const ModelPreset> model_presets() { return kPresets; }

const ModelPreset* find_model_preset(std::string_view name) {
  const auto it = std::find_if(kPresets.begin(), kPresets.end(),
                               [name](const ModelPreset& p) { return p.name == name; });
  return it == kPresets.end() ? nullptr : &*it;
}

}  // namespace perflow::model
