// SPDX-License-Identifier: MIT
#pragma once
// Edges of the Cartesian grid as every executor evaluates them: inactive
// cells (bed = NaN, from a raster's NODATA) act as walls for their active
// neighbours.
#include "shallows/core/math.hpp"
#include "shallows/physics/riemann/roe.hpp"

namespace shallows {

// The Roe solver across an edge of the axis. A function, not a lambda: the
// host compiler keeps a lambda out of line once several callers instantiate
// it (the boundary account's), a call per edge that cost the CPU executor
// 5x; SHALLOWS_HD forces it inline.
template <int axis, class Real>
SHALLOWS_HD EdgeFluctuation<Real> roe_along(const CellPrimitive<Real>& a, const CellPrimitive<Real>& b,
                                            const PhysicsParams<Real>& p) {
  if constexpr (axis == 0) {
    return roe_x(a, b, p);
  } else {
    return roe_y(a, b, p);
  }
}

// axis 0: x-edge (left = west, right = east); axis 1: y-edge (left = south, right = north).
template <int axis, class Real>
SHALLOWS_HD EdgeFluctuation<Real> cartesian_edge(const CellPrimitive<Real>& l, const CellPrimitive<Real>& r,
                                                 const PhysicsParams<Real>& p) {
  // The wall image of a cell: normal discharge and velocity reversed.
  const auto mirror = [](CellPrimitive<Real> q) {
    if constexpr (axis == 0) {
      q.hu = -q.hu;
      q.u = -q.u;
    } else {
      q.hv = -q.hv;
      q.v = -q.v;
    }
    return q;
  };
  const auto pick = [](bool condition, const CellPrimitive<Real>& a, const CellPrimitive<Real>& b) {
    return CellPrimitive<Real>{condition ? a.h : b.h,   condition ? a.hu : b.hu, condition ? a.hv : b.hv,
                               condition ? a.z : b.z,   condition ? a.u : b.u,   condition ? a.v : b.v,
                               condition ? a.sqrt_h : b.sqrt_h, condition ? a.c : b.c};
  };
  // An inactive side is replaced by the wall image of the active one; its own
  // fluctuation is dropped. Selected, not branched, so that loops vectorise.
  const bool active_l = !math::is_nan(l.z);
  const bool active_r = !math::is_nan(r.z);
#if defined(__CUDA_ARCH__)
  // Nearly every edge has two active sides: skip the selects (same values).
  if (active_l & active_r) return roe_along<axis>(l, r, p);
#endif
  EdgeFluctuation<Real> f = roe_along<axis>(pick(active_l, l, mirror(r)), pick(active_r, r, mirror(l)), p);
  const State<Real> none{Real(0), Real(0), Real(0)};
  f.to_left = detail::select(active_l, f.to_left, none);
  f.to_right = detail::select(active_r, f.to_right, none);
  f.speed = (active_l | active_r) ? f.speed : Real(0);
  return f;
}

template <int axis, class Real>
SHALLOWS_HD EdgeFluctuation<Real> cartesian_edge(State<Real> l, Real zl, State<Real> r, Real zr,
                                                 const PhysicsParams<Real>& p) {
  return cartesian_edge<axis>(cell_primitive(l, zl, p), cell_primitive(r, zr, p), p);
}

// The fluctuations of a wall (a line of a weir or a wall) between the
// active cells l and r of an axis: each side sees its own wall image, as
// next to an inactive cell; `left` is l's side of the edge, `right` r's.
template <int axis, class Real>
SHALLOWS_HD void wall_edge(CellPrimitive<Real> l, CellPrimitive<Real> r, const PhysicsParams<Real>& p,
                           EdgeFluctuation<Real>& left, EdgeFluctuation<Real>& right) {
  CellPrimitive<Real> gone = r;
  gone.z = math::quiet_nan(Real(0));
  left = cartesian_edge<axis>(l, gone, p);
  gone = l;
  gone.z = math::quiet_nan(Real(0));
  right = cartesian_edge<axis>(gone, r, p);
}

} // namespace shallows
