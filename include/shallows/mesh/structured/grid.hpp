// SPDX-License-Identifier: MIT
#pragma once
// Uniform Cartesian grid with two ghost layers (enough for the third-order
// stencil). Fields are stored padded, row-major, x fastest:
//     index(i, j) = (j + ghost) * pitch + (i + ghost),  -ghost <= i < nx + ghost.
#include "shallows/core/config.hpp"

namespace shallows {

struct Grid {
  static constexpr int ghost = 2;

  index_t nx = 0;
  index_t ny = 0;
  double x0 = 0;  // west edge of the domain (m)
  double y0 = 0;  // south edge of the domain (m)
  double dx = 1;
  double dy = 1;

  SHALLOWS_HD index_t pitch() const { return nx + 2 * ghost; }
  SHALLOWS_HD index_t rows() const { return ny + 2 * ghost; }
  SHALLOWS_HD index_t padded_size() const { return pitch() * rows(); }
  SHALLOWS_HD index_t cells() const { return nx * ny; }
  SHALLOWS_HD index_t index(index_t i, index_t j) const { return (j + ghost) * pitch() + (i + ghost); }

  double x_center(index_t i) const { return x0 + (double(i) + 0.5) * dx; }
  double y_center(index_t j) const { return y0 + (double(j) + 0.5) * dy; }
  double x1() const { return x0 + double(nx) * dx; }
  double y1() const { return y0 + double(ny) * dy; }
};

// A rectangle of interior cells, columns i0..i1-1 and rows j0..j1-1.
struct CellBox {
  index_t i0 = 0, j0 = 0, i1 = 0, j1 = 0;

  SHALLOWS_HD index_t nx() const { return i1 - i0; }
  SHALLOWS_HD index_t ny() const { return j1 - j0; }
  SHALLOWS_HD index_t cells() const { return nx() * ny(); }
  SHALLOWS_HD bool contains(index_t i, index_t j) const { return i >= i0 && i < i1 && j >= j0 && j < j1; }
};

// The cells along a side (0-3: west, east, south, north) of an nx x ny grid
// that a process owning `owned` accounts the water through: begin..end-1
// along the side (rows on west and east, columns on south and north), the
// whole side on one process. Empty on a side that is not a side of the
// domain: a rank's block side that faces another rank, which its owned
// cells do not reach (the cells beyond are halo).
struct SideCells {
  index_t begin = 0, end = 0;
};
SHALLOWS_HD SideCells owned_side_cells(const CellBox& owned, index_t nx, index_t ny, int side) {
  switch (side) {
    case 0: return owned.i0 == 0 ? SideCells{owned.j0, owned.j1} : SideCells{};
    case 1: return owned.i1 == nx ? SideCells{owned.j0, owned.j1} : SideCells{};
    case 2: return owned.j0 == 0 ? SideCells{owned.i0, owned.i1} : SideCells{};
    default: return owned.j1 == ny ? SideCells{owned.i0, owned.i1} : SideCells{};
  }
}

} // namespace shallows
