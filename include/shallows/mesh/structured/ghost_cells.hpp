// SPDX-License-Identifier: MIT
#pragma once
// Ghost-cell filling on the padded Cartesian arrays, one ghost cell per call,
// so that the CPU loops and the CUDA kernel share it.
#include "shallows/bc/boundary.hpp"
#include "shallows/mesh/structured/grid.hpp"

namespace shallows {

// Raw views of the padded state arrays (device or host pointers).
template <class Real>
struct StateArrays {
  Real* h;
  Real* hu;
  Real* hv;
  const Real* z;
};

// Position of a ghost cell: layer k (0 next to the domain) along a side,
// and s the index along the side (i for south/north, j for west/east).
// West/east ghosts cover rows 0..ny-1; south/north ghosts cover columns
// -ghost..nx+ghost-1, so they must be filled after west/east (corners).
template <class Real>
SHALLOWS_HD void fill_ghost_cell(const StateArrays<Real>& a, const Grid& g, Side side, int k, index_t s,
                                 BoundaryCondition<Real> bc, const PhysicsParams<Real>& p) {
  index_t ghost = 0;
  index_t inside = 0;
  switch (side) {
    case Side::west: ghost = g.index(-1 - k, s); inside = g.index(k, s); break;
    case Side::east: ghost = g.index(g.nx + k, s); inside = g.index(g.nx - 1 - k, s); break;
    case Side::south: ghost = g.index(s, -1 - k); inside = g.index(s, k); break;
    case Side::north: ghost = g.index(s, g.ny + k); inside = g.index(s, g.ny - 1 - k); break;
  }
  const State<Real> q = ghost_state(State<Real>{a.h[inside], a.hu[inside], a.hv[inside]}, a.z[inside], side, bc, p);
  a.h[ghost] = q.h;
  a.hu[ghost] = q.hu;
  a.hv[ghost] = q.hv;
}

} // namespace shallows
