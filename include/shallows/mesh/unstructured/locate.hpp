// SPDX-License-Identifier: MIT
#pragma once
// Points on a mesh: bounding boxes, point-in-cell, and the cells holding a
// few points (gauges, sources, map pixels).
#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include "shallows/mesh/unstructured/mesh.hpp"

namespace shallows {

struct Box {
  double x0, y0, x1, y1;
};

// Bounding box of the nodes the cells use.
inline Box mesh_box(const UnstructuredMesh& m) {
  const double inf = std::numeric_limits<double>::infinity();
  Box b{inf, inf, -inf, -inf};
  for (mesh_index node : m.cell_nodes) {
    if (node < 0) continue;
    const auto n = static_cast<std::size_t>(node);
    b.x0 = std::min(b.x0, m.node_x[n]);
    b.y0 = std::min(b.y0, m.node_y[n]);
    b.x1 = std::max(b.x1, m.node_x[n]);
    b.y1 = std::max(b.y1, m.node_y[n]);
  }
  return b;
}

// Bounding box of cell c's nodes.
inline Box cell_box(const UnstructuredMesh& m, std::size_t c) {
  Box b{m.node_x[static_cast<std::size_t>(m.cell_nodes[4 * c])], m.node_y[static_cast<std::size_t>(m.cell_nodes[4 * c])],
        0, 0};
  b.x1 = b.x0;
  b.y1 = b.y0;
  for (std::size_t s = 1; s < 4; ++s) {
    const mesh_index node = m.cell_nodes[4 * c + s];
    if (node < 0) continue;
    const auto n = static_cast<std::size_t>(node);
    b.x0 = std::min(b.x0, m.node_x[n]);
    b.x1 = std::max(b.x1, m.node_x[n]);
    b.y0 = std::min(b.y0, m.node_y[n]);
    b.y1 = std::max(b.y1, m.node_y[n]);
  }
  return b;
}

// Whether cell c (convex, counter-clockwise) holds (x, y), its edges included
// up to rounding: a point on a shared edge is in both cells.
inline bool cell_contains(const UnstructuredMesh& m, std::size_t c, double x, double y) {
  const mesh_index* nodes = &m.cell_nodes[4 * c];
  const int sides = nodes[3] < 0 ? 3 : 4;
  // Relative to the first node: large map coordinates would cancel digits.
  const double ox = m.node_x[static_cast<std::size_t>(nodes[0])], oy = m.node_y[static_cast<std::size_t>(nodes[0])];
  const double px = x - ox, py = y - oy;
  for (int s = 0; s < sides; ++s) {
    const auto a = static_cast<std::size_t>(nodes[s]), b = static_cast<std::size_t>(nodes[(s + 1) % sides]);
    const double ax = m.node_x[a] - ox, ay = m.node_y[a] - oy;
    const double ex = m.node_x[b] - ox - ax, ey = m.node_y[b] - oy - ay;
    const double cross = ex * (py - ay) - ey * (px - ax);  // |e| times the distance to the left of the edge
    if (cross < -1e-9 * (ex * ex + ey * ey)) return false;
  }
  return true;
}

// The cell holding each point (x[k], y[k]), -1 where none does. One pass
// over the cells for all points (a few points against up to ~10^7 cells:
// cheaper than building a search structure); points sorted by x, each cell
// tests those within its x range. A point on a shared edge or node goes to
// the lowest cell index holding it, for any thread count.
inline std::vector<index_t> cells_holding(const UnstructuredMesh& m, const std::vector<double>& x,
                                          const std::vector<double>& y) {
  const std::size_t n = x.size();
  constexpr index_t none = std::numeric_limits<index_t>::max();
  std::vector<std::size_t> order(n);
  for (std::size_t g = 0; g < n; ++g) order[g] = g;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  std::vector<double> xs(n);
  for (std::size_t g = 0; g < n; ++g) xs[g] = x[order[g]];

  std::vector<index_t> cells(n, none);
  const auto n_cells = static_cast<std::ptrdiff_t>(m.cells());
#pragma omp parallel
  {
    std::vector<index_t> mine(n, none);  // lowest cell this thread found
#pragma omp for schedule(static)
    for (std::ptrdiff_t ci = 0; ci < n_cells; ++ci) {
      const auto c = static_cast<std::size_t>(ci);
      const auto [x0, y0, x1, y1] = cell_box(m, c);
      // Margin for the edge tolerance of cell_contains.
      const double pad = 1e-9 * std::max(x1 - x0, y1 - y0);
      for (auto it = std::lower_bound(xs.begin(), xs.end(), x0 - pad); it != xs.end() && *it <= x1 + pad; ++it) {
        const std::size_t g = order[static_cast<std::size_t>(it - xs.begin())];
        if (mine[g] != none || y[g] < y0 - pad || y[g] > y1 + pad) continue;
        if (cell_contains(m, c, x[g], y[g])) mine[g] = static_cast<index_t>(c);  // cells rise within a thread
      }
    }
#pragma omp critical(shallows_cells_holding)
    for (std::size_t g = 0; g < n; ++g) cells[g] = std::min(cells[g], mine[g]);
  }
  for (index_t& c : cells)
    if (c == none) c = -1;
  return cells;
}

}  // namespace shallows
