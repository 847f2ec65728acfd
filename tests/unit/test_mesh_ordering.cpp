// SPDX-License-Identifier: MIT
// Cell orderings (RCM, Morton, random), renumbering with sorted edges, and the
// locality measures of seed 001 eq. 19 and seed 004 eq. 6.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <vector>

#include "shallows/mesh/unstructured/build.hpp"
#include "shallows/mesh/unstructured/generator.hpp"
#include "shallows/mesh/unstructured/ordering.hpp"
#include "support/mesh_checks.hpp"

using shallows::apply_ordering;
using shallows::build_mesh;
using shallows::CellOrdering;
using shallows::connected_components;
using shallows::deactivate_cells;
using shallows::index_t;
using shallows::mesh_index;
using shallows::morton_order;
using shallows::ordering_metrics;
using shallows::random_order;
using shallows::rcm_order;
using shallows::rectangle_mesh;
using shallows::RectangleCells;
using shallows::RectangleMeshSpec;
using shallows::renumber_cells;
using shallows::UnstructuredMesh;
using shallows::test::expect_consistent;

namespace {

UnstructuredMesh generated(index_t nx, index_t ny, RectangleCells cells, bool shuffle = true,
                           double perturbation = 0.2) {
  RectangleMeshSpec s;
  s.x1 = static_cast<double>(nx);
  s.y1 = static_cast<double>(ny);
  s.nx = nx;
  s.ny = ny;
  s.cells = cells;
  s.perturbation = perturbation;
  s.shuffle = shuffle;
  s.seed = 3;
  return build_mesh(rectangle_mesh(s), "generated");
}

bool is_permutation(const std::vector<mesh_index>& order, index_t n) {
  if (order.size() != static_cast<std::size_t>(n)) return false;
  std::vector<mesh_index> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<mesh_index>(i)) return false;
  return true;
}

std::vector<mesh_index> inverse(const std::vector<mesh_index>& order) {
  std::vector<mesh_index> inv(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) inv[static_cast<std::size_t>(order[i])] = static_cast<mesh_index>(i);
  return inv;
}

// Edges sorted as renumber_cells promises: interior by (min, max) cell, then boundary by (cell, slot).
void expect_sorted_edges(const UnstructuredMesh& m) {
  std::size_t e = 0;
  const auto key = [&m](std::size_t i) {
    const auto l = static_cast<std::int64_t>(m.edge_left[i]), r = static_cast<std::int64_t>(m.edge_right[i]);
    return std::pair{std::min(l, r), std::max(l, r)};
  };
  for (; e < m.edge_left.size() && m.edge_right[e] >= 0; ++e) {
    if (e > 0) {
      EXPECT_LT(key(e - 1), key(e)) << "edge " << e;
    }
  }
  const std::size_t first_boundary = e;
  const auto slot = [&m](std::size_t i) {
    const auto c = static_cast<std::size_t>(m.edge_left[i]);
    int k = 0;
    while (k < 4 && m.cell_edges[4 * c + static_cast<std::size_t>(k)] != static_cast<mesh_index>(i)) ++k;
    return std::pair{m.edge_left[i], k};
  };
  for (; e < m.edge_left.size(); ++e) {
    EXPECT_LT(m.edge_right[e], 0) << "interior edge " << e << " after the boundary edges";
    if (e > first_boundary) {
      EXPECT_LT(slot(e - 1), slot(e)) << "edge " << e;
    }
  }
}

// Cells matched by tag: same area, centroid, nodes and edge geometry slot by slot.
void expect_same_cells(const UnstructuredMesh& a, const UnstructuredMesh& b) {
  ASSERT_EQ(a.cells(), b.cells());
  ASSERT_EQ(a.edges(), b.edges());
  std::map<std::int64_t, std::size_t> in_b;
  for (std::size_t c = 0; c < b.cell_tag.size(); ++c) in_b[b.cell_tag[c]] = c;
  ASSERT_EQ(in_b.size(), b.cell_tag.size());
  for (std::size_t c = 0; c < a.cell_tag.size(); ++c) {
    const std::size_t d = in_b.at(a.cell_tag[c]);
    ASSERT_EQ(a.cell_area[c], b.cell_area[d]);
    ASSERT_EQ(a.cell_x[c], b.cell_x[d]);
    ASSERT_EQ(a.cell_y[c], b.cell_y[d]);
    for (std::size_t k = 0; k < 4; ++k) {
      ASSERT_EQ(a.cell_nodes[4 * c + k], b.cell_nodes[4 * d + k]);
      const mesh_index ea = a.cell_edges[4 * c + k], eb = b.cell_edges[4 * d + k];
      ASSERT_EQ(ea < 0, eb < 0);
      if (ea < 0) continue;
      const auto i = static_cast<std::size_t>(ea), j = static_cast<std::size_t>(eb);
      ASSERT_EQ(a.edge_nx[i], b.edge_nx[j]);
      ASSERT_EQ(a.edge_ny[i], b.edge_ny[j]);
      ASSERT_EQ(a.edge_length[i], b.edge_length[j]);
      ASSERT_EQ(a.edge_node0[i], b.edge_node0[j]);
      // The same cell on the same side.
      const bool left_a = a.edge_left[i] == static_cast<mesh_index>(c);
      const bool left_b = b.edge_left[j] == static_cast<mesh_index>(d);
      ASSERT_EQ(left_a, left_b);
      const mesh_index other_a = left_a ? a.edge_right[i] : a.edge_left[i];
      const mesh_index other_b = left_b ? b.edge_right[j] : b.edge_left[j];
      ASSERT_EQ(other_a < 0, other_b < 0);
      if (other_a < 0)
        ASSERT_EQ(other_a, other_b);
      else
        ASSERT_EQ(a.cell_tag[static_cast<std::size_t>(other_a)], b.cell_tag[static_cast<std::size_t>(other_b)]);
    }
  }
}

} // namespace

TEST(MeshOrdering, OrdersArePermutations) {
  for (RectangleCells kind : {RectangleCells::triangles, RectangleCells::quadrilaterals, RectangleCells::mixed}) {
    const UnstructuredMesh m = generated(23, 17, kind);
    EXPECT_TRUE(is_permutation(rcm_order(m), m.cells()));
    EXPECT_TRUE(is_permutation(morton_order(m), m.cells()));
    EXPECT_TRUE(is_permutation(random_order(m, 5), m.cells()));
  }
}

TEST(MeshOrdering, RandomOrderIsDeterministic) {
  const UnstructuredMesh m = generated(10, 10, RectangleCells::triangles, false);
  EXPECT_EQ(random_order(m, 9), random_order(m, 9));
  EXPECT_NE(random_order(m, 9), random_order(m, 10));
  // The same on every standard library (std::mt19937_64 is specified, the shuffle is ours).
  const std::vector<mesh_index> order = random_order(m, 1);
  EXPECT_EQ(std::vector<mesh_index>(order.begin(), order.begin() + 8),
            (std::vector<mesh_index>{89, 39, 13, 63, 5, 22, 191, 129}));
}

TEST(MeshOrdering, RenumberedMeshIsTheSameMesh) {
  const UnstructuredMesh m = generated(21, 13, RectangleCells::mixed);
  for (CellOrdering o : {CellOrdering::file, CellOrdering::random, CellOrdering::rcm, CellOrdering::morton}) {
    const UnstructuredMesh r = apply_ordering(m, o, 11);
    expect_consistent(r);
    expect_sorted_edges(r);
    expect_same_cells(m, r);
    EXPECT_EQ(r.node_x, m.node_x);
    EXPECT_EQ(r.boundary_names, m.boundary_names);
    EXPECT_EQ(r.source, m.source);
    EXPECT_EQ(connected_components(r), 1);
  }
  // file: cells untouched, edges sorted.
  const UnstructuredMesh f = apply_ordering(m, CellOrdering::file);
  EXPECT_EQ(f.cell_tag, m.cell_tag);
  EXPECT_EQ(f.cell_nodes, m.cell_nodes);
}

TEST(MeshOrdering, EveryCellKeepsItsPlaceInTheFileThroughRenumberings) {
  const UnstructuredMesh m = generated(21, 13, RectangleCells::mixed);
  ASSERT_EQ(m.cell_file_index.size(), m.cell_tag.size());
  for (std::size_t c = 0; c < m.cell_file_index.size(); ++c)
    ASSERT_EQ(m.cell_file_index[c], static_cast<mesh_index>(c));
  for (CellOrdering o : {CellOrdering::file, CellOrdering::random, CellOrdering::rcm, CellOrdering::morton}) {
    // Renumbered twice (random, then o): each cell still names the file's cell it is.
    const UnstructuredMesh r = apply_ordering(renumber_cells(m, random_order(m, 5)), o, 11);
    ASSERT_EQ(r.cell_file_index.size(), m.cell_tag.size());
    for (std::size_t c = 0; c < r.cell_tag.size(); ++c) {
      const auto f = static_cast<std::size_t>(r.cell_file_index[c]);
      ASSERT_EQ(r.cell_tag[c], m.cell_tag[f]);
      ASSERT_EQ(r.cell_x[c], m.cell_x[f]);
      ASSERT_EQ(r.cell_y[c], m.cell_y[f]);
    }
  }
}

TEST(MeshOrdering, RenumberAndBackIsTheIdentity) {
  const UnstructuredMesh m = apply_ordering(generated(17, 11, RectangleCells::triangles), CellOrdering::file);
  const std::vector<mesh_index> order = random_order(m, 77);
  const UnstructuredMesh there = renumber_cells(m, order);
  const UnstructuredMesh back = renumber_cells(there, inverse(order));
  EXPECT_EQ(back.cell_nodes, m.cell_nodes);
  EXPECT_EQ(back.cell_area, m.cell_area);
  EXPECT_EQ(back.cell_x, m.cell_x);
  EXPECT_EQ(back.cell_y, m.cell_y);
  EXPECT_EQ(back.cell_tag, m.cell_tag);
  EXPECT_EQ(back.cell_edges, m.cell_edges);
  EXPECT_EQ(back.edge_left, m.edge_left);
  EXPECT_EQ(back.edge_right, m.edge_right);
  EXPECT_EQ(back.edge_node0, m.edge_node0);
  EXPECT_EQ(back.edge_node1, m.edge_node1);
  EXPECT_EQ(back.edge_nx, m.edge_nx);
  EXPECT_EQ(back.edge_ny, m.edge_ny);
  EXPECT_EQ(back.edge_length, m.edge_length);
  // Left and right are kept, not swapped into index order.
  bool some_left_above_right = false;
  for (std::size_t e = 0; e < there.edge_left.size(); ++e)
    some_left_above_right |= there.edge_right[e] >= 0 && there.edge_left[e] > there.edge_right[e];
  EXPECT_TRUE(some_left_above_right);
}

TEST(MeshOrdering, RcmShrinksTheBandwidth) {
  const UnstructuredMesh m = generated(100, 100, RectangleCells::triangles);
  const auto shuffled = ordering_metrics(m);
  const auto rcm = ordering_metrics(renumber_cells(m, rcm_order(m)));
  // A band of about two rows of the square: 2 x 100 cells wide or so, against ~20000 shuffled.
  EXPECT_GT(shuffled.bandwidth, 15000);
  EXPECT_LT(rcm.bandwidth, 600);
  EXPECT_GT(shuffled.bandwidth, 30 * rcm.bandwidth);
  EXPECT_LT(rcm.mean_neighbour_distance * 20, shuffled.mean_neighbour_distance);
}

TEST(MeshOrdering, MortonBringsNeighboursClose) {
  const UnstructuredMesh m = generated(100, 100, RectangleCells::mixed);
  const auto random = ordering_metrics(renumber_cells(m, random_order(m, 2)));
  const auto morton = ordering_metrics(renumber_cells(m, morton_order(m)));
  EXPECT_LT(morton.mean_neighbour_distance * 20, random.mean_neighbour_distance);
  // On an elongated domain too (one scale for both axes).
  const UnstructuredMesh long_mesh = generated(400, 10, RectangleCells::triangles);
  const auto long_random = ordering_metrics(long_mesh);
  const auto long_morton = ordering_metrics(renumber_cells(long_mesh, morton_order(long_mesh)));
  EXPECT_LT(long_morton.mean_neighbour_distance * 20, long_random.mean_neighbour_distance);
}

TEST(MeshOrdering, MortonFollowsTheZCurve) {
  // 2 x 2 unit squares, unshuffled: file order SW, SE, NW, NE is already the Z order (y on the even bits).
  const UnstructuredMesh m = generated(2, 2, RectangleCells::quadrilaterals, false, 0);
  EXPECT_EQ(morton_order(m), (std::vector<mesh_index>{0, 1, 2, 3}));
  // 4 x 4: the Z visits the 2 x 2 blocks one after the other.
  const UnstructuredMesh z = generated(4, 4, RectangleCells::quadrilaterals, false, 0);
  EXPECT_EQ(morton_order(z), (std::vector<mesh_index>{0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15}));
}

TEST(MeshOrdering, MetricsOfAStrip) {
  // One row of 5 squares in file order: neighbours 1 apart.
  const UnstructuredMesh m = generated(5, 1, RectangleCells::quadrilaterals, false, 0);
  const auto metrics = ordering_metrics(m);
  EXPECT_EQ(metrics.bandwidth, 1);
  EXPECT_EQ(metrics.mean_neighbour_distance, 1.0);
  // Reversed by hand: still 1.
  EXPECT_EQ(ordering_metrics(renumber_cells(m, {4, 3, 2, 1, 0})).bandwidth, 1);
  // Every other: 0 2 4 1 3 -> new positions 0 3 1 4 2, neighbours 3, 2, 3, 2 apart.
  const auto spread = ordering_metrics(renumber_cells(m, {0, 2, 4, 1, 3}));
  EXPECT_EQ(spread.bandwidth, 3);
  EXPECT_EQ(spread.mean_neighbour_distance, 2.5);
  // RCM of a strip: a strip again.
  EXPECT_EQ(ordering_metrics(renumber_cells(m, rcm_order(m))).bandwidth, 1);
}

TEST(MeshOrdering, RcmKeepsPiecesTogether) {
  // Two 6 x 6 pieces, interleaved by a shuffle: RCM numbers each piece in one block.
  RectangleMeshSpec s;
  s.nx = s.ny = 6;
  s.cells = RectangleCells::triangles;
  auto a = rectangle_mesh(s);
  s.x0 = 5;
  s.x1 = 6;
  auto b = rectangle_mesh(s);
  const auto offset = static_cast<std::int64_t>(a.node_x.size());
  a.node_x.insert(a.node_x.end(), b.node_x.begin(), b.node_x.end());
  a.node_y.insert(a.node_y.end(), b.node_y.begin(), b.node_y.end());
  a.node_z.insert(a.node_z.end(), b.node_z.begin(), b.node_z.end());
  for (std::int64_t t : b.node_tag) a.node_tag.push_back(t + offset);
  for (auto c : b.cell_nodes) {
    for (auto& n : c)
      if (n >= 0) n += offset;
    a.cell_nodes.push_back(c);
  }
  for (std::int64_t t : b.cell_tag) a.cell_tag.push_back(t + 1000);
  const UnstructuredMesh two = build_mesh(a, "two");
  ASSERT_EQ(connected_components(two), 2);
  const UnstructuredMesh shuffled = renumber_cells(two, random_order(two, 4));
  const UnstructuredMesh r = renumber_cells(shuffled, rcm_order(shuffled));
  expect_consistent(r);
  int switches = 0;
  for (std::size_t c = 1; c < r.cell_tag.size(); ++c) switches += (r.cell_tag[c] > 1000) != (r.cell_tag[c - 1] > 1000);
  EXPECT_EQ(switches, 1);
}

TEST(MeshOrdering, InactiveCellsSurviveRenumbering) {
  const UnstructuredMesh m = generated(8, 8, RectangleCells::quadrilaterals);
  std::vector<double> z(static_cast<std::size_t>(m.cells()), 0.0);
  for (std::size_t c = 0; c < z.size(); ++c)
    if (m.cell_x[c] > 3 && m.cell_x[c] < 5 && m.cell_y[c] > 2 && m.cell_y[c] < 6) z[c] = std::nan("");
  const UnstructuredMesh d = deactivate_cells(m, z);
  expect_consistent(d);
  for (CellOrdering o : {CellOrdering::file, CellOrdering::rcm, CellOrdering::morton}) {
    const UnstructuredMesh r = apply_ordering(d, o);
    expect_consistent(r);
    expect_sorted_edges(r);
    expect_same_cells(d, r);
  }
}

TEST(MeshOrdering, SameOrderWhateverTheThreadCount) {
  const UnstructuredMesh m = generated(37, 29, RectangleCells::mixed);
  const int threads = omp_get_max_threads();
  std::vector<UnstructuredMesh> out;
  for (int t : {1, 5}) {
    omp_set_num_threads(t);
    for (CellOrdering o : {CellOrdering::rcm, CellOrdering::morton}) out.push_back(apply_ordering(m, o));
  }
  omp_set_num_threads(threads);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(out[k].cell_tag, out[k + 2].cell_tag);
    EXPECT_EQ(out[k].cell_edges, out[k + 2].cell_edges);
    EXPECT_EQ(out[k].edge_left, out[k + 2].edge_left);
    EXPECT_EQ(out[k].edge_right, out[k + 2].edge_right);
    EXPECT_EQ(out[k].edge_nx, out[k + 2].edge_nx);
  }
}

TEST(MeshOrdering, BadOrdersAreRefused) {
  const UnstructuredMesh m = generated(3, 3, RectangleCells::quadrilaterals);
  EXPECT_THROW(renumber_cells(m, {0, 1, 2}), std::invalid_argument);
  EXPECT_THROW(renumber_cells(m, {0, 1, 2, 3, 4, 5, 6, 7, 7}), std::invalid_argument);
  EXPECT_THROW(renumber_cells(m, {0, 1, 2, 3, 4, 5, 6, 7, 9}), std::invalid_argument);
}
