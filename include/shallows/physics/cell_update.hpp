// SPDX-License-Identifier: MIT
#pragma once
// Explicit update of one cell from its accumulated fluctuations, followed by
// the point-wise corrections every executor applies in the same order.
#include "shallows/core/state.hpp"
#include "shallows/physics/friction.hpp"
#include "shallows/physics/params.hpp"

namespace shallows {

// Depth the clamp h -> max(h, 0) adds (>= 0): water created outside the
// fluxes, per unit area. Executors sum it times the cell area into the
// run's positivity account, so that the mass balance can be checked.
template <class Real>
SHALLOWS_HD Real clamp_added_depth(Real h) {
  return h < Real(0) ? -h : Real(0);
}

// q^{n+1} = q^n + dt * rhs, where rhs = -(1/|V|) sum_edges |Gamma| F_i.
// Depth is clamped at zero: the fallback to HLL at dry edges keeps it
// non-negative up to round-off, and the clamp removes that round-off
// (`added_depth`: the depth it added, clamp_added_depth). Cells at or below h_dry keep
// their water but lose their velocity. Branch-free, so that CPU loops
// vectorise.
template <class Real>
SHALLOWS_HD State<Real> explicit_update(State<Real> q, State<Real> rhs, Real dt, const PhysicsParams<Real>& p,
                                        Real& added_depth) {
  const Real h = q.h + dt * rhs.h;
  const bool dry = h <= p.h_dry;
  added_depth = clamp_added_depth(h);
  return {h > Real(0) ? h : Real(0), dry ? Real(0) : q.hu + dt * rhs.hu, dry ? Real(0) : q.hv + dt * rhs.hv};
}

template <class Real>
SHALLOWS_HD State<Real> explicit_update(State<Real> q, State<Real> rhs, Real dt, const PhysicsParams<Real>& p) {
  Real added_depth;
  return explicit_update(q, rhs, dt, p, added_depth);
}

// The whole cell update: explicit step, then friction (which keeps h).
template <class Real>
SHALLOWS_HD State<Real> advance_cell(State<Real> q, State<Real> rhs, Real dt, const PhysicsParams<Real>& p,
                                     Real& added_depth) {
  return apply_manning(explicit_update(q, rhs, dt, p, added_depth), dt, p);
}

template <class Real>
SHALLOWS_HD State<Real> advance_cell(State<Real> q, State<Real> rhs, Real dt, const PhysicsParams<Real>& p) {
  Real added_depth;
  return advance_cell(q, rhs, dt, p, added_depth);
}

// A dry fixed point: depth in [+0, h_dry], both discharges +0. With a zero
// rhs (every edge of the cell between two cells at or below h_dry, where the
// Roe solver returns exact zeros) advance_cell gives it back bit for bit, and
// its maxima do not grow: a step may leave it out (dry skipping, seed 002
// "sparse simulations").
template <class Real>
SHALLOWS_HD bool dry_fixed_point(State<Real> q, Real h_dry) {
  return math::sign_clear(q.h) && q.h <= h_dry && math::bits_zero(q.hu) && math::bits_zero(q.hv);
}

} // namespace shallows
