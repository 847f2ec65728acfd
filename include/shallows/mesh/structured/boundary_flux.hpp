// SPDX-License-Identifier: MIT
#pragma once
// The water crossing a grid side, for the mass balance of runs with open,
// inflow or level boundaries (first order). The fluctuations of a row of
// edges telescope: the cells of a row gain sum(to_right + to_left) = the
// numerical fluxes F* of the two boundary edges, and the boundary edge's F*
// is the inside cell's flux less the fluctuation it receives (west:
// F* = hu - to_right.h). Evaluated with the edge function the step uses, on
// the state the step starts from, it gives the water the step moved across
// the side to round-off.
#include "shallows/bc/boundary.hpp"
#include "shallows/bc/side_account.hpp"
#include "shallows/mesh/structured/cartesian_edges.hpp"

namespace shallows {

// Flux (m^2/s, per unit length of the side) into the domain through the
// boundary edge of the cell `inside` on `side`, whose ghost cell is `ghost`
// (bed mirrored: z_ghost = z_inside).
template <class Real>
SHALLOWS_HD double boundary_inflow_rate(Side side, State<Real> ghost, State<Real> inside, Real z,
                                        const PhysicsParams<Real>& p) {
  const double qn = static_cast<double>(side == Side::west || side == Side::east ? inside.hu : inside.hv);
  switch (side) {
    case Side::west: return edge_inflow(qn, cartesian_edge<0>(ghost, z, inside, z, p), false);
    case Side::east: return edge_inflow(qn, cartesian_edge<0>(inside, z, ghost, z, p), true);
    case Side::south: return edge_inflow(qn, cartesian_edge<1>(ghost, z, inside, z, p), false);
    case Side::north:
    default: return edge_inflow(qn, cartesian_edge<1>(inside, z, ghost, z, p), true);
  }
}

}  // namespace shallows
