// SPDX-License-Identifier: MIT
#pragma once
// Where an executor's cells are, for the services written once over a cell
// layout (the volume sum, the maxima, the forcing, the sides' account):
// a grid's rows, or a mesh's blocks of 4096 cells. A service visits the
// cells group by group, each group in cell order, and sums the groups in
// order: the same bits for any thread count and on every executor.
#include <algorithm>
#include <vector>

#include "shallows/core/config.hpp"
#include "shallows/core/math.hpp"
#include "shallows/mesh/structured/grid.hpp"

namespace shallows {

// One cell of a layout as a service visits it: its index in the state
// arrays, its problem cell (the index of per-cell inputs and outputs) and
// whether the accounts count it (a rank's owned cells).
struct LayoutCell {
  index_t state;
  index_t cell;
  bool counted;
};

// A grid's cells: problem cell k = j nx + i at padded index g.index(i, j);
// accounted by grid row, in depths (times the cells' common area at the
// end); on a rank of a distributed run only the owned cells count.
struct GridCells {
  Grid g;
  CellBox owned;

  SHALLOWS_HD index_t cells() const { return g.cells(); }
  SHALLOWS_HD index_t groups() const { return g.ny; }
  SHALLOWS_HD index_t group_size(index_t) const { return g.nx; }
  // Cell i of group (row) j.
  SHALLOWS_HD LayoutCell at(index_t j, index_t i) const {
    return {g.index(i, j), j * g.nx + i, owned.contains(i, j)};
  }
  SHALLOWS_HD index_t state_index(index_t k) const { return g.index(k % g.nx, k / g.nx); }
  SHALLOWS_HD bool owns(index_t k) const { return k >= 0 && owned.contains(k % g.nx, k / g.nx); }
  SHALLOWS_HD double area(index_t) const { return g.dx * g.dy; }
  SHALLOWS_HD double account_weight(index_t) const { return 1.0; }  // depths
  SHALLOWS_HD double account_scale() const { return g.dx * g.dy; }
  SHALLOWS_HD double to_volume(double depths) const { return depths * g.dx * g.dy; }
};

// A mesh's cells: state index = problem cell, each with its own area (host
// or device memory, as the service runs); accounted in volumes per block of
// 4096 cells.
struct MeshCells {
  const double* areas;
  index_t n;
  static constexpr index_t block = 4096;

  SHALLOWS_HD index_t cells() const { return n; }
  SHALLOWS_HD index_t groups() const { return (n + block - 1) / block; }
  SHALLOWS_HD index_t group_size(index_t b) const { return (b + 1) * block <= n ? block : n - b * block; }
  SHALLOWS_HD LayoutCell at(index_t b, index_t i) const { return {b * block + i, b * block + i, true}; }
  SHALLOWS_HD index_t state_index(index_t k) const { return k; }
  SHALLOWS_HD bool owns(index_t k) const { return k >= 0; }
  SHALLOWS_HD double area(index_t k) const { return areas[k]; }
  SHALLOWS_HD double account_weight(index_t k) const { return area(k); }  // volumes
  SHALLOWS_HD double account_scale() const { return 1.0; }
  SHALLOWS_HD double to_volume(double volume) const { return volume; }
};

// Calls f(state index, problem cell, counted) for the cells of group g of a
// layout, in order.
template <class Cells, class F>
void for_group(const Cells& cells, index_t g, F&& f) {
  for (index_t i = 0; i < cells.group_size(g); ++i) {
    const LayoutCell c = cells.at(g, i);
    f(c.state, c.cell, c.counted);
  }
}

// The water of group g of a layout with depths h (by state index), in the
// layout's account units, summed in cell order; without the cells whose bed
// z is NaN (inactive), where z is given (a grid's inactive cells hold none:
// nothing writes them).
template <class Cells, class Real>
double group_water(const Cells& cells, index_t g, const Real* h, const Real* z) {
  double sum = 0;
  for_group(cells, g, [&](index_t c, index_t cell, bool) {
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
