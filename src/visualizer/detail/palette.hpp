#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include <cairo.h>

#include "perflow/core/task.hpp"

namespace perflow::visualizer::detail {

struct Rgb {
  double r = 0;
  double g = 0;
  double b = 0;

  friend bool operator==(const Rgb&, const Rgb&) = default;
};

constexpr Rgb from_hex(std::uint32_t hex) {
  return Rgb{static_cast<double>((hex >> 16) & 0xFFu) / 255.0,
             static_cast<double>((hex >> 8) & 0xFFu) / 255.0,
             static_cast<double>(hex & 0xFFu) / 255.0};
}

inline constexpr Rgb kInk = from_hex(0x1A1A1A);
inline constexpr Rgb kMutedInk = from_hex(0x555555);
inline constexpr Rgb kWhite = from_hex(0xFFFFFF);
inline constexpr Rgb kRowBackground = from_hex(0xF3F3F3);
inline constexpr Rgb kGrid = from_hex(0xDDDDDD);
inline constexpr Rgb kAxis = from_hex(0x444444);
/// Highlights that must stand out from every kind colour: critical path, capacity lines.
inline constexpr Rgb kHighlight = from_hex(0xC00000);

/// What each kind's legend entry says, indexed by TaskKind.
std::string_view kind_meaning(TaskKind kind);

/// The kind's colour (Okabe-Ito, safe for the common colour-vision deficiencies); chunk 0 is
/// the kind's colour and each further chunk moves further from it: lighter for dark kinds
/// (never lighter than a 1.5:1 contrast with the lane's grey), darker for light ones.

Rgb task_colour(TaskKind kind, std::uint32_t chunk);

/// A colour's relative luminance (WCAG 2.x), 0 for black to 1 for white.
double relative_luminance(Rgb c);

/// White or dark ink, whichever has the higher WCAG contrast ratio on `background`.
Rgb label_ink(Rgb background);
/// For a label across two colours (an overlapped pair's halves): the ink whose lower
/// contrast ratio of the two is the higher.
Rgb label_ink(Rgb top, Rgb bottom);

void set_colour(cairo_t* cr, Rgb c);

}  // namespace perflow::visualizer::detail
