// SPDX-License-Identifier: MIT
#pragma once
// Optimal third-order TVD (SSP) Runge-Kutta method (Shu-Osher; seed 003 ref. 20):
//     U1      = U^n + dt L(U^n)
//     U2      = 3/4 U^n + 1/4 (U1 + dt L(U1))
//     U^{n+1} = 1/3 U^n + 2/3 (U2 + dt L(U2))
// Each stage is a forward-Euler step E_k = U_k + dt L(U_k) (advance_cell:
// with the dry-cell clean-up and semi-implicit friction of the first-order
// scheme) followed by U_{k+1} = U^n + b_k (E_k - U^n), b = 1, 1/4, 2/3.
// Written as an increment, a cell with L = 0 keeps its bits exactly (the
// convex form a U^n + b E can round), which the lake-at-rest test needs.
// Point-wise, host/device.
#include "shallows/core/state.hpp"
#include "shallows/physics/cell_update.hpp"
#include "shallows/physics/params.hpp"

namespace shallows::ssp_rk3 {

constexpr int stages = 3;

// b_k of the stage: weight of the Euler step against U^n.
template <class Real>
SHALLOWS_HD Real stage_weight(int stage) {
  return stage == 0 ? Real(1) : (stage == 1 ? Real(0.25) : Real(2.0 / 3.0));
}

// Scalar combination U^n + b_k (euler - U^n).
template <class Real>
SHALLOWS_HD Real combine(int stage, Real u_n, Real euler) {
  return stage == 0 ? euler : u_n + stage_weight<Real>(stage) * (euler - u_n);
}

// Weight of stage k's L(U_k) in U^{n+1} = U^n + dt (L0 + L1 + 4 L2) / 6: what
// stage k's right-hand side moves through a boundary counts this much.
SHALLOWS_HD double rhs_weight(int stage) { return stage == 0 ? 1.0 / 6.0 : (stage == 1 ? 1.0 / 6.0 : 2.0 / 3.0); }

// Weight of water added in stage k's state in U^{n+1}: U_{k+1} depends on
// U_k with weight b_k, so a fix in stage k reaches U^{n+1} times
// b_{k+1} ... b_2 (1/6, 2/3, 1).
template <class Real>
SHALLOWS_HD Real carry_weight(int stage) {
  return stage == 0 ? Real(1.0 / 6.0) : (stage == 1 ? Real(2.0 / 3.0) : Real(1));
}

// Whole stage for one cell: u_n the state at the start of the step, u_k the
// stage state, rhs = L(U_k) at the cell. Depths at or below h_dry lose their
// velocity and negative round-off is clamped, as in advance_cell. `added_depth`:
// the depth the clamps of this stage add to U^{n+1} (the Euler step's clamp
// weighted by b_k, the combination's clamp, both carried to the end of the
// step), so that a step's positivity account is the sum over its stages.
template <class Real>
SHALLOWS_HD State<Real> stage(int k, State<Real> u_n, State<Real> u_k, State<Real> rhs, Real dt,
                              const PhysicsParams<Real>& p, Real& added_depth) {
  Real euler_added_depth;
  const State<Real> e = advance_cell(u_k, rhs, dt, p, euler_added_depth);
  if (k == 0) {
    added_depth = carry_weight<Real>(0) * euler_added_depth;
    return e;
  }
  State<Real> r{combine(k, u_n.h, e.h), combine(k, u_n.hu, e.hu), combine(k, u_n.hv, e.hv)};
  Real combine_added_depth(0);
  if (r.h <= p.h_dry) {
    combine_added_depth = clamp_added_depth(r.h);
    r.h = r.h > Real(0) ? r.h : Real(0);
    r.hu = Real(0);
    r.hv = Real(0);
  }
  added_depth = carry_weight<Real>(k) * (stage_weight<Real>(k) * euler_added_depth + combine_added_depth);
  return r;
}

template <class Real>
SHALLOWS_HD State<Real> stage(int k, State<Real> u_n, State<Real> u_k, State<Real> rhs, Real dt,
                              const PhysicsParams<Real>& p) {
  Real added_depth;
  return stage(k, u_n, u_k, rhs, dt, p, added_depth);
}

} // namespace shallows::ssp_rk3
