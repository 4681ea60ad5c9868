#pragma once

#include <cstdint>
#include <vector>

#include "perflow/model/operators.hpp"
#include "perflow/model/training.hpp"
#include "perflow/model/transformer.hpp"

namespace perflow::model::detail {

// The parts of a layer, in the order layer_operators lists them, so a position holding dense
// and MoE layers lists the attention once and each kind of MLP with its own count.

/// QKV projection, the attention core (and the softmax without flash attention), the output
/// projection; `mixer` Mixer::WindowedAttention for a sliding-window layer's.
std::vector<Operator> attention_operators(const Transformer& model, const Training& training,
                                          std::uint32_t tp, Mixer mixer = Mixer::Attention);
/// A Mamba-2 mixer: the input projection, the convolution, the chunked scan, the gated norm,
/// the output projection.
std::vector<Operator> mamba_operators(const Transformer& model, const Training& training,
                                      std::uint32_t tp);
/// The dense MLP: up (or gate and up), the activation function, down.
std::vector<Operator> dense_mlp_operators(const Transformer& model, const Training& training,
                                          std::uint32_t tp);
/// What a MoE layer has instead of the dense MLP: the router, the routed experts on the
/// slowest rank (`ep` expert-parallel ranks), the shared experts.
std::vector<Operator> moe_mlp_operators(const Transformer& model, const Training& training,
                                        std::uint32_t tp, std::uint32_t ep);
/// A norm and a residual addition with dropout per sublayer (LayerKind::sublayers).
std::vector<Operator> residual_operators(const Transformer& model, const Training& training,
                                         std::uint32_t tp, std::uint32_t sublayers);

}  // namespace perflow::model::detail
