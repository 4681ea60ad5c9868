#pragma once

#include <cstdint>

#include "perflow/model/training.hpp"
#include "perflow/model/transformer.hpp"

namespace perflow::model::detail {

/// The sizes the cost formulas use, in docs/model.md's notation, as doubles.
struct Dimensions {
  double t;       ///< tensor-parallel ranks
  double b;       ///< micro batch
  double s;       ///< sequence
  double tokens;  ///< T = b s
  double h;       ///< hidden
  double f;       ///< MLP inner size
  double kv;      ///< g d: the width of K (and of V)
  double qw;      ///< a d: the width of Q and of the attention's output (h unless d is set)
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
          .tokens = b * s,
          .h = double(model.hidden),
          .f = double(model.ffn_hidden),
          .kv = model.kv_heads * model.head_dim(),
          .qw = model.query_width(),
          .r = training.sequence_parallel ? 1 / t : 1};
}

}  // namespace perflow::model::detail
