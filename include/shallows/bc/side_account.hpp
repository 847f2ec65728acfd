// SPDX-License-Identifier: MIT
#pragma once
// The account of the water through a domain's sides (grids) or boundary
// groups (meshes), per step, for the mass balance: one point-wise rate per
// boundary edge and one split into in and out, which every executor's side
// account calls (CPU and GPU, first and third order), in double.
#include "shallows/core/config.hpp"
#include "shallows/physics/riemann/roe.hpp"

namespace shallows {

// Water per second and unit length into the domain through a boundary edge
// with fluctuations f, whose inside cell has the normal discharge qn (along
// the edge's axis or normal, from its left to its right cell): the edge's
// numerical mass flux F* is that discharge less the fluctuation the edge
// gives the inside cell; summed over the cells the interior edges cancel,
// so the volume changes by the sum of these to round-off. Inside on the
// right (the ghost first, west or south): F* = qn - to_right.h flows in; on
// the left: F* = qn + to_left.h flows out.
template <class Real>
SHALLOWS_HD double edge_inflow(double qn, const EdgeFluctuation<Real>& f, bool inside_left) {
  return inside_left ? -(qn + static_cast<double>(f.to_left.h)) : qn - static_cast<double>(f.to_right.h);
}

// A volume (or rate) v into the domain, added to a side's accounts: in where
// v > 0, else out.
SHALLOWS_HD void account_side(double& in, double& out, double v) {
  if (v > 0) in += v;
  else out -= v;
}

// Boundary cell k along side `side` (0..3: west, east, south, north) of an
// nx x ny grid, (i, j), and the step (di, dj) to its ghost.
struct SideCell {
  index_t i, j, di, dj;
};
SHALLOWS_HD SideCell side_cell(int side, index_t k, index_t nx, index_t ny) {
  return {side == 0 ? 0 : side == 1 ? nx - 1 : k, side == 2 ? 0 : side == 3 ? ny - 1 : k,
          side == 0 ? -1 : side == 1 ? 1 : 0, side == 2 ? -1 : side == 3 ? 1 : 0};
}

}  // namespace shallows
