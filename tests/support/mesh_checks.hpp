// SPDX-License-Identifier: MIT
#pragma once
// Invariants every UnstructuredMesh must keep, checked cell by cell and edge by
// edge (shared by the mesh build and ordering tests).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "shallows/mesh/unstructured/mesh.hpp"

namespace shallows::test {

// Twice the signed area of cell c from its stored nodes.
inline double signed_area2(const UnstructuredMesh& m, std::size_t c) {
  const int s = m.cell_sides(static_cast<index_t>(c));
  // Relative to node 0: no cancellation far from the origin.
  const auto o = static_cast<std::size_t>(m.cell_nodes[4 * c]);
  double a = 0;
  for (int k = 0; k < s; ++k) {
    const auto p = static_cast<std::size_t>(m.cell_nodes[4 * c + static_cast<std::size_t>(k)]);
    const auto q = static_cast<std::size_t>(m.cell_nodes[4 * c + static_cast<std::size_t>((k + 1) % s)]);
    a += (m.node_x[p] - m.node_x[o]) * (m.node_y[q] - m.node_y[o]) -
         (m.node_x[q] - m.node_x[o]) * (m.node_y[p] - m.node_y[o]);
  }
  return a;
}

// A cell is active when it has at least one edge (deactivate_cells empties the others).
inline bool has_edges(const UnstructuredMesh& m, std::size_t c) {
  for (std::size_t k = 0; k < 4; ++k)
    if (m.cell_edges[4 * c + k] >= 0) return true;
  return false;
}

// Sizes, counter-clockwise cells, slot k = nodes k..k+1, left/right consistent with the
// slots, unit normals out of the left cell, closed cells (sum of length * normal = 0),
// boundary codes within the group names. Stops after a few failures.
inline void expect_consistent(const UnstructuredMesh& m) {
  const auto cells = static_cast<std::size_t>(m.cells()), edges = static_cast<std::size_t>(m.edges());
  ASSERT_EQ(m.cell_nodes.size(), 4 * cells);
  ASSERT_EQ(m.cell_edges.size(), 4 * cells);
  ASSERT_EQ(m.cell_x.size(), cells);
  ASSERT_EQ(m.cell_y.size(), cells);
  ASSERT_EQ(m.cell_tag.size(), cells);
  for (const auto* v : {&m.edge_right, &m.edge_node0, &m.edge_node1}) ASSERT_EQ(v->size(), edges);
  for (const auto* v : {&m.edge_nx, &m.edge_ny, &m.edge_length}) ASSERT_EQ(v->size(), edges);
  ASSERT_FALSE(m.boundary_names.empty());
  EXPECT_EQ(m.boundary_names[0], "");
  int failures = 0;
  const auto fail = [&failures](const std::string& what) {
    if (++failures <= 5) ADD_FAILURE() << what;
  };
  std::vector<int> uses(edges, 0);
  for (std::size_t c = 0; c < cells && failures < 5; ++c) {
    const int s = m.cell_sides(static_cast<index_t>(c));
    const std::string cell = "cell " + std::to_string(c) + ": ";
    if (!(m.cell_area[c] > 0)) fail(cell + "area not positive");
    if (std::abs(0.5 * signed_area2(m, c) - m.cell_area[c]) > 1e-12 * m.cell_area[c])
      fail(cell + "not counter-clockwise, or area wrong");
    if (s == 3 && m.cell_edges[4 * c + 3] != -1) fail(cell + "slot 3 of a triangle not -1");
    if (!has_edges(m, c)) continue;
    double sx = 0, sy = 0, scale = 0;
    for (int k = 0; k < s; ++k) {
      const mesh_index e = m.cell_edges[4 * c + static_cast<std::size_t>(k)];
      if (e < 0 || static_cast<std::size_t>(e) >= edges) {
        fail(cell + "slot " + std::to_string(k) + " has no edge");
        continue;
      }
      const auto ee = static_cast<std::size_t>(e);
      ++uses[ee];
      const mesh_index a = m.cell_nodes[4 * c + static_cast<std::size_t>(k)];
      const mesh_index b = m.cell_nodes[4 * c + static_cast<std::size_t>((k + 1) % s)];
      const auto self = static_cast<mesh_index>(c);
      if (m.edge_left[ee] == self) {
        if (m.edge_node0[ee] != a || m.edge_node1[ee] != b) fail(cell + "left edge not along the cell");
        sx += m.edge_length[ee] * m.edge_nx[ee];
        sy += m.edge_length[ee] * m.edge_ny[ee];
      } else if (m.edge_right[ee] == self) {
        if (m.edge_node0[ee] != b || m.edge_node1[ee] != a) fail(cell + "right edge not against the cell");
        sx -= m.edge_length[ee] * m.edge_nx[ee];
        sy -= m.edge_length[ee] * m.edge_ny[ee];
      } else {
        fail(cell + "slot " + std::to_string(k) + " names an edge of other cells");
      }
      scale = std::max(scale, m.edge_length[ee]);
    }
    if (std::abs(sx) > 1e-14 * std::max(scale, 1.0) || std::abs(sy) > 1e-14 * std::max(scale, 1.0))
      fail(cell + "not closed: sum of length * normal = (" + std::to_string(sx) + ", " + std::to_string(sy) + ")");
  }
  for (std::size_t e = 0; e < edges && failures < 5; ++e) {
    const std::string edge = "edge " + std::to_string(e) + ": ";
    const mesh_index l = m.edge_left[e], r = m.edge_right[e];
    if (l < 0 || static_cast<std::size_t>(l) >= cells) fail(edge + "bad left cell");
    if (r >= 0 ? static_cast<std::size_t>(r) >= cells || r == l
               : static_cast<std::size_t>(boundary_group(r)) >= m.boundary_names.size())
      fail(edge + "bad right cell or group");
    if (uses[e] != (r >= 0 ? 2 : 1)) fail(edge + "in " + std::to_string(uses[e]) + " cell slots");
    const auto a = static_cast<std::size_t>(m.edge_node0[e]), b = static_cast<std::size_t>(m.edge_node1[e]);
    const double dx = m.node_x[b] - m.node_x[a], dy = m.node_y[b] - m.node_y[a];
    const double length = std::sqrt(dx * dx + dy * dy);
    if (std::abs(m.edge_length[e] - length) > 1e-14 * length) fail(edge + "length");
    if (std::abs(std::hypot(m.edge_nx[e], m.edge_ny[e]) - 1) > 1e-14) fail(edge + "normal not unit");
    if (std::abs(m.edge_nx[e] - dy / length) > 1e-14 || std::abs(m.edge_ny[e] + dx / length) > 1e-14)
      fail(edge + "normal not (dy, -dx) / length");
    // Out of the left cell: points from its centroid past the edge midpoint.
    if (l >= 0 && static_cast<std::size_t>(l) < cells) {
      const double mx = 0.5 * (m.node_x[a] + m.node_x[b]) - m.cell_x[static_cast<std::size_t>(l)];
      const double my = 0.5 * (m.node_y[a] + m.node_y[b]) - m.cell_y[static_cast<std::size_t>(l)];
      if (!(mx * m.edge_nx[e] + my * m.edge_ny[e] > 0)) fail(edge + "normal not out of the left cell");
    }
  }
}

} // namespace shallows::test
