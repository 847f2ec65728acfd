// SPDX-License-Identifier: MIT
#pragma once
// Explicit update of one cell from its accumulated fluctuations, followed by
// the point-wise corrections every executor applies in the same order.
#include "shallows/core/state.hpp"
#include "shallows/physics/friction.hpp"
#include "shallows/physics/params.hpp"

namespace shallows {

// q^{n+1} = q^n + dt * rhs, where rhs = -(1/|V|) sum_edges |Gamma| F_i.
// Depth is clamped at zero: the fallback to HLL at dry edges keeps it
// non-negative up to round-off, and the clamp removes that round-off. Cells
// at or below h_dry keep their water but lose their velocity.
template <class Real>
SHALLOWS_HD State<Real> advance_cell(State<Real> q, State<Real> rhs, Real dt,
                                     const PhysicsParams<Real>& p) {
  State<Real> n{q.h + dt * rhs.h, q.hu + dt * rhs.hu, q.hv + dt * rhs.hv};
  if (n.h <= p.h_dry) {
    n.h = n.h > Real(0) ? n.h : Real(0);
    n.hu = Real(0);
    n.hv = Real(0);
    return n;
  }
  return apply_manning(n, dt, p);
}

} // namespace shallows
