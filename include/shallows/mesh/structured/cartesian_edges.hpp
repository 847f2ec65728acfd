// SPDX-License-Identifier: MIT
#pragma once
// Edges of the Cartesian grid as every executor evaluates them: inactive
// cells (bed = NaN, from a raster's NODATA) act as walls for their active
// neighbours.
#include "shallows/core/math.hpp"
#include "shallows/physics/riemann/roe.hpp"

namespace shallows {

// axis 0: x-edge (left = west, right = east); axis 1: y-edge (left = south, right = north).
template <int axis, class Real>
SHALLOWS_HD EdgeFluctuation<Real> cartesian_edge(State<Real> l, Real zl, State<Real> r, Real zr,
                                                 const PhysicsParams<Real>& p) {
  const auto solve = [&p](State<Real> a, Real za, State<Real> b, Real zb) {
    if constexpr (axis == 0) {
      return roe_x(a, za, b, zb, p);
    } else {
      return roe_y(a, za, b, zb, p);
    }
  };
  const auto mirror = [](State<Real> q) {
    if constexpr (axis == 0) {
      return State<Real>{q.h, -q.hu, q.hv};
    } else {
      return State<Real>{q.h, q.hu, -q.hv};
    }
  };
  const bool active_l = !math::is_nan(zl);
  const bool active_r = !math::is_nan(zr);
  if (active_l && active_r) return solve(l, zl, r, zr);
  EdgeFluctuation<Real> f{{Real(0), Real(0), Real(0)}, {Real(0), Real(0), Real(0)}, Real(0)};
  if (active_l) {
    f = solve(l, zl, mirror(l), zl);
    f.to_right = {Real(0), Real(0), Real(0)};
  } else if (active_r) {
    f = solve(mirror(r), zr, r, zr);
    f.to_left = {Real(0), Real(0), Real(0)};
  }
  return f;
}

} // namespace shallows
