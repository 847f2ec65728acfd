// SPDX-License-Identifier: MIT
#pragma once
// Where an executor's cells are, for the services written once over a cell
// layout (the volume sum, the maxima, the forcing, the sides' account):
// a grid's rows, or a mesh's blocks of 4096 cells. A service visits the
// cells group by group, each group in cell order, and sums the groups in
// order: the same bits for any thread count and on every executor.
#include <algorithm>
#include <vector>

#include "shallows/core/math.hpp"
#include "shallows/mesh/structured/grid.hpp"

namespace shallows {

// A grid's cells: problem cell k = j nx + i at padded index g.index(i, j);
// accounted by grid row, in depths (times the cells' common area at the
// end); on a rank of a distributed run only the owned cells count.
struct GridCells {
  Grid g;
  CellBox owned;

  index_t cells() const { return g.cells(); }
  index_t groups() const { return g.ny; }
  // Calls f(state index, problem cell, counted) for the cells of group (row) j, in order.
  template <class F>
  void for_group(index_t j, F&& f) const {
    const bool owned_row = j >= owned.j0 && j < owned.j1;
    for (index_t i = 0; i < g.nx; ++i) f(g.index(i, j), j * g.nx + i, owned_row && i >= owned.i0 && i < owned.i1);
  }
  index_t state_index(index_t k) const { return g.index(k % g.nx, k / g.nx); }
  bool owns(index_t k) const {
    const index_t i = k % g.nx, j = k / g.nx;
    return k >= 0 && i >= owned.i0 && i < owned.i1 && j >= owned.j0 && j < owned.j1;
  }
  double area(index_t) const { return g.dx * g.dy; }
  double account_weight(index_t) const { return 1.0; }  // depths
  double account_scale() const { return g.dx * g.dy; }
  double to_volume(double depths) const { return depths * g.dx * g.dy; }
};

// A mesh's cells: state index = problem cell, each with its own area;
// accounted in volumes per block of 4096 cells.
struct MeshCells {
  const std::vector<double>* areas;
  static constexpr index_t block = 4096;

  index_t cells() const { return static_cast<index_t>(areas->size()); }
  index_t groups() const { return (cells() + block - 1) / block; }
  template <class F>
  void for_group(index_t b, F&& f) const {
    for (index_t k = b * block; k < std::min(cells(), (b + 1) * block); ++k) f(k, k, true);
  }
  index_t state_index(index_t k) const { return k; }
  bool owns(index_t k) const { return k >= 0; }
  double area(index_t k) const { return (*areas)[static_cast<std::size_t>(k)]; }
  double account_weight(index_t k) const { return area(k); }  // volumes
  double account_scale() const { return 1.0; }
  double to_volume(double volume) const { return volume; }
};

// The water of group g of a layout with depths h (by state index), in the
// layout's account units, summed in cell order; without the cells whose bed
// z is NaN (inactive), where z is given (a grid's inactive cells hold none:
// nothing writes them).
template <class Cells, class Real>
double group_water(const Cells& cells, index_t g, const Real* h, const Real* z) {
  double sum = 0;
  cells.for_group(g, [&](index_t c, index_t cell, bool) {
    if (!z || !math::is_nan(z[c])) sum += static_cast<double>(h[c]) * cells.account_weight(cell);
  });
  return sum;
}

// The volume (m^3) of a layout's cells from its groups' water, summed in order.
template <class Cells>
double layout_volume(const Cells& cells, const std::vector<double>& group_sums) {
  double total = 0;
  for (double s : group_sums) total += s;
  return cells.to_volume(total);
}

// The same on the host, one group after another.
template <class Cells, class Real>
double layout_volume(const Cells& cells, const Real* h, const Real* z) {
  double total = 0;
  for (index_t g = 0; g < cells.groups(); ++g) total += group_water(cells, g, h, z);
  return cells.to_volume(total);
}

}  // namespace shallows
