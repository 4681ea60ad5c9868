#pragma once

#include <algorithm>
#include <cstdint>

#include "perflow/model/training.hpp"
#include "perflow/model/transformer.hpp"

namespace perflow::model::detail {

/// The sizes the cost formulas use, in docs/model.md's notation, as doubles.
struct Dimensions {
  double t;       ///< tensor-parallel ranks
  double b;       ///< micro batch
  double s;       ///< sequence
  double tokens;  ///< T = b s / cp, a rank's share of the micro batch's tokens
  double h;       ///< hidden
  double f;       ///< MLP inner size
  /// The attention's widths over all heads (Transformer::query_width and the others): Q and K
  /// (a d and g d; MLA: a (nope + rope) each), V (g d; MLA: a v), its output (a d; MLA: a v).
  double qw;
  double kw;
  double vw;
  double ow;
  double latent;  ///< MLA's latents (q_lora + kv_lora + rope), 0 without MLA
  /// 1/t with sequence parallelism (norms, residuals and dropout split over the ranks,
  /// Korthikanti et al. 2022), else 1.
  double r;
};

inline Dimensions dimensions(const Transformer& model, const Training& training, std::uint32_t tp) {
  const double t = tp;
  const double b = training.micro_batch_size;
  const double s = model.sequence;
  return {.t = t,
          .b = b,
          .s = s,
          .tokens = b * s / std::max(training.context_parallel, 1u),
          .h = double(model.hidden),
          .f = double(model.ffn_hidden),
          .qw = model.query_width(),
          .kw = model.key_width(),
          .vw = model.value_width(),
          .ow = model.output_width(),
          .latent = model.latent_width(),
          .r = training.sequence_parallel ? 1 / t : 1};
}

}  // namespace perflow::model::detail
