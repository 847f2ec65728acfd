// SPDX-License-Identifier: MIT
#pragma once
// Cell and edge orderings for memory locality (seed 001 §3, seed 004 §4):
// reverse Cuthill-McKee and Z-order (Morton) cell renumbering, edges sorted
// by their cells, and the measures of locality the seeds report.
#include <cstdint>
#include <vector>

#include "shallows/mesh/unstructured/mesh.hpp"

namespace shallows {

enum class CellOrdering { file, random, rcm, morton };

// New order of the cells: order[new] = old.
// rcm_order: reverse Cuthill-McKee over the cells joined by interior edges,
//   each piece from a pseudo-peripheral cell (George-Liu), neighbours by
//   increasing degree.
// morton_order: Z-order of the centroids quantised to 21 bits per axis, one
//   scale for both axes (the larger extent of the mesh), x on the even bits
//   (x varies fastest); ties keep their order.
// random_order: a Fisher-Yates shuffle driven by std::mt19937_64(seed), the
//   same on every standard library.
std::vector<mesh_index> rcm_order(const UnstructuredMesh& mesh);
std::vector<mesh_index> morton_order(const UnstructuredMesh& mesh);
std::vector<mesh_index> random_order(const UnstructuredMesh& mesh, std::uint64_t seed);

// The mesh with its cells renumbered (order[new] = old) and its edges sorted:
// interior edges by (smaller cell index, larger cell index), then all boundary
// edges by (cell, slot), so that an edge loop reads its cells nearly in order
// and the boundary edges form one block at the end. Each edge keeps its left
// and right cells, nodes and normal; every cell keeps its slot order and its
// slots follow the edges. Nodes keep their numbers. Throws
// std::invalid_argument if order is not a permutation of the cells.
UnstructuredMesh renumber_cells(const UnstructuredMesh& mesh, const std::vector<mesh_index>& order);

// renumber_cells with the given ordering (file: edges sorted only).
UnstructuredMesh apply_ordering(const UnstructuredMesh& mesh, CellOrdering ordering, std::uint64_t seed = 1);

// Values per cell from the mesh file's element order into the run's cell
// order (cell_file_index), and back; without an index, the orders are one.
std::vector<double> from_file_order(const UnstructuredMesh& mesh, const std::vector<double>& values);
std::vector<double> to_file_order(const UnstructuredMesh& mesh, const std::vector<double>& values);

struct OrderingMetrics {
  // Bandwidth of the cell connectivity matrix (seed 001 eq. 19): max |i - j| over interior edges.
  index_t bandwidth = 0;
  // Mean |i - j| over interior edges (seed 004 eq. 6).
  double mean_neighbour_distance = 0;
};
OrderingMetrics ordering_metrics(const UnstructuredMesh& mesh);

} // namespace shallows
