// SPDX-License-Identifier: MIT
#pragma once
// Private: layout of the PNG quick-looks (documented in docs/outputs.md).
#include "shallows/mesh/structured/grid.hpp"

namespace shallows::io::detail {

constexpr int png_long_side = 800;    // map pixels along the longer side of the domain (or mesh bounding box)
constexpr int png_min_side = 16;      // shortest map side (very elongated domains)
constexpr int png_margin = 12;        // outer margin
constexpr int png_title_band = 40;    // title line above the map
constexpr int png_gap = 20;           // map to colour bar
constexpr int png_panel = 140;        // colour bar, ticks and labels
constexpr int png_min_content = 220;  // the colour bar needs this much height
constexpr int text_scale = 2;         // 5x7 glyphs drawn 2x
constexpr int bar_width = 20;

// Image width = map_w + 184, height = max(map_h, 220) + 52.
struct PngLayout {
  int width = 0, height = 0;
  int map_x = 0, map_y = 0, map_w = 0, map_h = 0;
  int title_y = 0;
  int bar_x = 0, bar_top = 0, bar_bottom = 0;
};

PngLayout png_layout(const Grid& grid);
// A map of width x height metres (a mesh's bounding box).
PngLayout png_layout(double width, double height);

}  // namespace shallows::io::detail
