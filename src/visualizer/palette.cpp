#include "detail/palette.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace perflow::visualizer::detail {
namespace {

// Okabe-Ito, then lighter and darker variants and one of Paul Tol's, indexed by TaskKind.
constexpr std::array<Rgb, kTaskKindCount> kKindColour = {
    from_hex(0x0072B2),  // F: blue
    from_hex(0xE69F00),  // B: orange
    from_hex(0x009E73),  // W: bluish green
    from_hex(0xCC79A7),  // BW: reddish purple
    from_hex(0x56B4E9),  // SEND: sky blue
    from_hex(0xD55E00),  // ALLREDUCE: vermillion
    from_hex(0x999999),  // OPT: grey
    from_hex(0x8FCFF2),  // RECV: lighter sky blue (the other side of a SEND)
    from_hex(0x000000),  // SYNC: black (zero-length: drawn as a mark)
    from_hex(0xF0E442),  // R: yellow (recomputation: a forward again, before its backward)
    from_hex(0x6A3D9A),  // D2H: dark purple (to the host)
    from_hex(0xB39BD1),  // H2D: light purple (back from the host)
    // A2A: Tol's wine. Teals (0x44AA99, 0x117733) sit too near W's bluish green, and under
    // deuteranopia 0x44AA99 turns into OPT's grey; wine stays >= 23 CIELAB units from every
    // colour above for normal, protan, deutan and tritan vision, and takes white labels.
    from_hex(0x882255),
    from_hex(0x9A3A00),  // REDUCESCATTER: dark vermillion (half of an all-reduce)
    from_hex(0xF2A66E),  // ALLGATHER: light vermillion (the other half)
};
constexpr std::array<std::string_view, kTaskKindCount> kKindMeaning = {
    "forward",           "backward (input)",          "backward (weight)",   "backward (fused B+W)",
    "transfer",          "data-parallel all-reduce",  "optimizer step",      "receive (blocking)",
    "iteration barrier", "recompute (forward again)", "copy to host",        "copy from host",
    "expert all-to-all", "gradient reduce-scatter",   "parameter all-gather"};

}  // namespace

double relative_luminance(Rgb c) {
  const auto linear = [](double v) {
    return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * linear(c.r) + 0.7152 * linear(c.g) + 0.0722 * linear(c.b);
}

std::string_view kind_meaning(TaskKind kind) {
  return kKindMeaning[static_cast<std::size_t>(kind)];
}

// Later chunks move away from the kind's colour monotonically (a fraction 1 - 0.55^chunk of
// the way: 0.45, 0.70, 0.83, ...), in the direction with more room: towards white, at most
// until a relative luminance of 0.55 so that a shade keeps a contrast of 1.5:1 with the
// lane's grey, or half-way towards black. Mixing in white all the way made chunks 3 and 4 of
// the light kinds (yellow R, orange B) vanish on the grey lane.
Rgb task_colour(TaskKind kind, std::uint32_t chunk) {
  const Rgb base = kKindColour[static_cast<std::size_t>(kind)];
  if (chunk == 0) return base;
  const auto mix = [&](Rgb to, double share) {
    return Rgb{base.r + (to.r - base.r) * share, base.g + (to.g - base.g) * share,
               base.b + (to.b - base.b) * share};
  };
  const auto distance = [&](Rgb to) {
    return std::hypot(to.r - base.r, to.g - base.g, to.b - base.b);
  };
  constexpr double kLightest = 0.55;
  constexpr double kDarkest = 0.5;  // of the way to black
  // The most white that stays at or below kLightest (luminance grows with the share).
  double low = 0, high = 0.7;
  if (relative_luminance(mix(kWhite, high)) > kLightest) {
    for (int i = 0; i < 30; ++i) {
      const double mid = (low + high) / 2;
      (relative_luminance(mix(kWhite, mid)) > kLightest ? high : low) = mid;
    }
    high = low;
  }
  const double far = 1.0 - std::pow(0.55, static_cast<double>(chunk));
  if (high * distance(kWhite) >= kDarkest * distance(kInk)) return mix(kWhite, high * far);
  return mix(kInk, kDarkest * far);
}

Rgb label_ink(Rgb background) { return label_ink(background, background); }

Rgb label_ink(Rgb top, Rgb bottom) {
  const double ink = relative_luminance(kInk) + 0.05;
  const double lighter = std::max(relative_luminance(top), relative_luminance(bottom)) + 0.05;
  const double darker = std::min(relative_luminance(top), relative_luminance(bottom)) + 0.05;
  // White's worst contrast is on the lighter colour, dark ink's on the darker one.
  return 1.05 / lighter >= darker / ink ? kWhite : kInk;
}

void set_colour(cairo_t* cr, Rgb c) { cairo_set_source_rgb(cr, c.r, c.g, c.b); }

}  // namespace perflow::visualizer::detail
