// SPDX-License-Identifier: MIT
#pragma once
// First-order path-conservative Roe scheme for the shallow-water equations
// with bed (seed 000 eqs. 4-7, seed 001 eqs. 6-17), in fluctuation form.
//
// For an edge with unit normal n pointing from the left cell to the right
// cell, the "flux-difference" vector including the bed source is
//     R = A(W~) (W_r - W_l) - S(W~) (H_r - H_l),
// decomposed on the Roe eigenvectors, R = sum_k beta_k r_k. The left cell
// receives F^- = sum_{lambda_k < 0} beta_k r_k, the right cell
// F^+ = sum_{lambda_k > 0} beta_k r_k (F^- + F^+ = R), and a cell advances by
//     W_i -= dt / |V_i| * sum_edges |Gamma| F_i.
// With z = -H the bed term becomes + g h~ (z_r - z_l) in the normal momentum,
// so R_n = g h~ (eta_r - eta_l) - u~n^2 dh + 2 u~n d(hun), which vanishes for
// a lake at rest: the scheme is exactly well-balanced.
//
// Additions to the plain Roe scheme:
//  * Harten-Hyman entropy fix for transonic rarefactions (seed 000 remark 2),
//    applied to the flux part of the wave; the bed part keeps its sign rule,
//    so the fix never disturbs a lake at rest.
//  * Emerging bottom (seed 000 remark 4, Castro et al. 2005): a dry cell whose
//    bed stands above the neighbour's free surface receives nothing, and the
//    wet neighbour sees a wall.
//  * Positivity: where a side is dry or the Roe intermediate depths are
//    negative (strong rarefactions, vacuum), the edge falls back to the HLL
//    fluctuations with Einfeldt speeds (dry-front speed u +- 2c), whose
//    diffusion acts on the free surface eta instead of h so that it is still
//    well-balanced.
// The formulas are written so that a mirrored edge produces the mirrored
// fluctuations bit for bit (left and right parts are computed separately).
#include "shallows/core/math.hpp"
#include "shallows/core/state.hpp"
#include "shallows/physics/params.hpp"

namespace shallows {

// Fluctuations of one edge, in the frame of the edge normal (h, normal, tangential)
// or the Cartesian frame (h, hu, hv), depending on the caller.
template <class Real>
struct EdgeFluctuation {
  State<Real> to_left;   // F^-: what the left cell subtracts (times dt |Gamma| / |V|)
  State<Real> to_right;  // F^+: what the right cell subtracts
  Real speed;            // max |wave speed| of the edge, for the CFL condition (eq. 8)
};

// What the edges of a cell need from it, computed once per cell: the
// divisions and square roots dominate the cost of an edge.
template <class Real>
struct CellPrimitive {
  Real h, hu, hv, z;
  Real u, v;    // velocity, zero in dry cells (h <= h_dry)
  Real sqrt_h;  // Roe-average weight
  Real c;       // sqrt(g h)
};

template <class Real>
SHALLOWS_HD CellPrimitive<Real> cell_primitive(State<Real> q, Real z, const PhysicsParams<Real>& p) {
  const Real inv_h = q.h <= p.h_dry ? Real(0) : Real(1) / q.h;
  return {q.h, q.hu, q.hv, z, q.hu * inv_h, q.hv * inv_h, math::sqrt(q.h), math::sqrt(p.g * q.h)};
}

namespace detail {

// One side of an edge in the edge frame: normal/tangential discharge and velocity.
template <class Real>
struct EdgeSide {
  Real h, hn, ht, z, un, ut, sqrt_h, c;
};

template <class Real>
SHALLOWS_HD State<Real> select(bool condition, State<Real> a, State<Real> b) {
  return {condition ? a.h : b.h, condition ? a.hu : b.hu, condition ? a.hv : b.hv};
}

// Left- and right-going parts of a wave of speed lambda and strength beta:
// weights 1 and 0 by the sign of lambda; a standing wave is shared equally,
// so mirrored edges stay mirrored.
template <class Real>
SHALLOWS_HD Real weight_left(Real lambda) {
  return lambda < Real(0) ? Real(1) : (Real(0) < lambda ? Real(0) : Real(0.5));
}
template <class Real>
SHALLOWS_HD Real going_left(Real lambda, Real beta) {
  return weight_left(lambda) * beta;
}
template <class Real>
SHALLOWS_HD Real going_right(Real lambda, Real beta) {
  return (Real(1) - weight_left(lambda)) * beta;
}

// Roe averages (seed 000 eq. 7), eigenvalues and wave strengths of an edge:
// R = A dW - S dH = sum beta_k r_k. `both_dry` guards the divisions of an
// edge whose result is discarded.
template <class Real>
struct RoeWaves {
  Real un, ut, c, lambda1, lambda3;
  Real alpha1, alpha3;        // strengths without the source, for the intermediate depths
  Real beta1, beta2, beta3;
  Real sigma;                 // bed part of wave 1: beta1 = lambda1 alpha1 - sigma
};

template <class Real>
SHALLOWS_HD RoeWaves<Real> roe_waves(const EdgeSide<Real>& l, const EdgeSide<Real>& r, bool both_dry,
                                     const PhysicsParams<Real>& p) {
  const Real half(0.5), one(1), two(2);
  const Real sl = l.sqrt_h;
  const Real sr = r.sqrt_h;
  const Real hm = half * (l.h + r.h);
  const Real c = math::sqrt(p.g * hm);
  // One division for both denominators (s = sl + sr and 2c).
  const Real s = both_dry ? one : sl + sr;
  const Real two_c = both_dry ? one : two * c;
  const Real inv = one / (s * two_c);
  const Real inv_s = two_c * inv;
  const Real inv_2c = s * inv;
  RoeWaves<Real> w;
  w.un = (sl * l.un + sr * r.un) * inv_s;
  w.ut = (sl * l.ut + sr * r.ut) * inv_s;
  const Real un = w.un, ut = w.ut;
  w.c = c;

  const Real dh = r.h - l.h;
  const Real dhn = r.hn - l.hn;
  const Real dht = r.ht - l.ht;
  const Real deta = (r.h + r.z) - (l.h + l.z);

  // R = A dW - S dH in the edge frame.
  const Real r_h = dhn;
  const Real r_n = p.g * hm * deta - un * un * dh + two * un * dhn;
  const Real r_t = ut * dhn + un * dht - un * ut * dh;

  w.lambda1 = un - c;
  w.lambda3 = un + c;
  w.alpha1 = ((c + un) * dh - dhn) * inv_2c;
  w.alpha3 = (dhn + (c - un) * dh) * inv_2c;
  w.beta1 = ((c + un) * r_h - r_n) * inv_2c;
  w.beta3 = (r_n + (c - un) * r_h) * inv_2c;
  w.beta2 = r_t - ut * r_h;
  w.sigma = p.g * hm * (r.z - l.z) * inv_2c;
  return w;
}

// r1 = (1, u~n - c~, u~t), r2 = (0, 0, 1), r3 = (1, u~n + c~, u~t).
template <class Real>
SHALLOWS_HD State<Real> roe_assemble(const RoeWaves<Real>& w, Real b1, Real b2, Real b3) {
  return {b1 + b3, b1 * w.lambda1 + b3 * w.lambda3, (b1 + b3) * w.ut + b2};
}

// Where the Roe fluctuations hold: both sides wet, the Roe intermediate
// depths positive, and the bed step small against the depths (the bed term
// of a thin layer over a large step could empty a cell). A NaN bed (an
// inactive side) fails the last comparison.
template <class Real>
SHALLOWS_HD bool roe_applies(const EdgeSide<Real>& l, const EdgeSide<Real>& r, const RoeWaves<Real>& w,
                             const PhysicsParams<Real>& p) {
  return (l.h > p.h_dry) & (r.h > p.h_dry) & (l.h + w.alpha1 > Real(0)) & (r.h - w.alpha3 > Real(0)) &
         (math::abs(r.z - l.z) < Real(0.5) * math::min(l.h, r.h));
}

// Transonic rarefactions of waves 1 and 3 (Harten-Hyman).
template <class Real>
SHALLOWS_HD bool sonic1(const EdgeSide<Real>& l, const EdgeSide<Real>& r) {
  return (l.un - l.c < Real(0)) & (Real(0) < r.un - r.c);
}
template <class Real>
SHALLOWS_HD bool sonic3(const EdgeSide<Real>& l, const EdgeSide<Real>& r) {
  return (l.un + l.c < Real(0)) & (Real(0) < r.un + r.c);
}

// Roe fluctuations in the edge frame. z is the bed elevation (positive up).
// Every branch is computed and the result selected, with no early return:
// the CPU loops then vectorise and GPU warps do not diverge. Denominators
// are guarded only where their result is discarded.
template <class Real>
SHALLOWS_HD EdgeFluctuation<Real> roe_rotated(const EdgeSide<Real>& l, const EdgeSide<Real>& r,
                                              const PhysicsParams<Real>& p) {
  const Real zero(0), half(0.5), one(1), two(2);
  const Real hl = l.h, hnl = l.hn, zl = l.z, unl = l.un, utl = l.ut, cl = l.c;
  const Real hr = r.h, hnr = r.hn, zr = r.z, unr = r.un, utr = r.ut, cr = r.c;
  const bool dry_l = hl <= p.h_dry;
  const bool dry_r = hr <= p.h_dry;
  const bool both_dry = dry_l & dry_r;  // & not &&: no branch, loops vectorise
  // Emerging bottom: the dry side's bed is above the wet side's surface.
  const bool emerging_l = dry_l & (hr + zr <= zl);
  const bool emerging_r = dry_r & (hl + zl <= zr);
  const State<Real> none{zero, zero, zero};
  // Emerging bottom: the dry bank receives nothing and the wet side sees a
  // wall, F = F(W_wet) - (0, g h^2 / 2, 0).
  const State<Real> wall_r{hnr, hnr * unr, hnr * utr};
  const State<Real> wall_l{-hnl, -(hnl * unl), -(hnl * utl)};
#if defined(__CUDA_ARCH__)
  // On the GPU these conditions are nearly always the same across a warp:
  // returning early skips the work of the paths not taken. The values are
  // those the selects below would give.
  if (both_dry) return {none, none, zero};
  if (emerging_l) return {none, wall_r, math::abs(unr) + cr};
  if (emerging_r) return {wall_l, none, math::abs(unl) + cl};
#endif

  const RoeWaves<Real> w = roe_waves(l, r, both_dry, p);
  const Real un = w.un, lambda1 = w.lambda1, lambda3 = w.lambda3;
  const Real alpha1 = w.alpha1, alpha3 = w.alpha3, beta1 = w.beta1, beta3 = w.beta3, sigma = w.sigma;

  // Harten-Hyman: a transonic rarefaction is split between both cells.
  const Real l1l = unl - cl, l1r = unr - cr;
  const bool is_sonic1 = sonic1(l, r);
#if defined(__CUDA_ARCH__)
  // A division is a subroutine on the GPU: only where the fix applies.
  Real lm = zero;
  if (is_sonic1) lm = l1l * (l1r - lambda1) / (l1r - l1l);
#else
  const Real lm = is_sonic1 ? l1l * (l1r - lambda1) / (l1r - l1l) : zero;
#endif
  const Real b1_l = is_sonic1 ? lm * alpha1 + going_left(lambda1, -sigma) : going_left(lambda1, beta1);
  const Real b1_r = is_sonic1 ? beta1 - b1_l : going_right(lambda1, beta1);
  const Real l3l = unl + cl, l3r = unr + cr;
  const bool is_sonic3 = sonic3(l, r);
#if defined(__CUDA_ARCH__)
  Real lp = zero;
  if (is_sonic3) lp = l3r * (lambda3 - l3l) / (l3r - l3l);
#else
  const Real lp = is_sonic3 ? l3r * (lambda3 - l3l) / (l3r - l3l) : zero;
#endif
  const Real b3_r = is_sonic3 ? lp * alpha3 + going_right(lambda3, sigma) : going_right(lambda3, beta3);
  const Real b3_l = is_sonic3 ? beta3 - b3_r : going_left(lambda3, beta3);
  const Real b2_l = going_left(un, w.beta2);
  const Real b2_r = going_right(un, w.beta2);

  const State<Real> roe_l = roe_assemble(w, b1_l, b2_l, b3_l);
  const State<Real> roe_r = roe_assemble(w, b1_r, b2_r, b3_r);
  const Real roe_speed = math::max(math::abs(lambda1), math::abs(lambda3));

  // Roe where it applies (roe_applies), HLL on the hydrostatic reconstruction else.
  const bool use_roe = roe_applies(l, r, w, p);
#if defined(__CUDA_ARCH__)
  if (use_roe) return {roe_l, roe_r, roe_speed};
#endif

  // Elsewhere: HLL on the hydrostatic reconstruction of Audusse et al. (2004),
  // h* = max(0, eta - max(z_l, z_r)) with the cells' velocities. In
  // fluctuation form the bed enters only through h*, and what is left of
  // F(W*) - F(W) after the pressure terms cancel is (h* - h)(un, un^2, un ut):
  // a lake at rest gives exactly zero, and a cell never sends more water than
  // it holds (positivity under the CFL condition), also on steep slopes.
  const Real z_top = math::max(zl, zr);
  const Real hl_s = math::max(hl + zl - z_top, zero);
  const Real hr_s = math::max(hr + zr - z_top, zero);
  // Speeds from the cells' own celerities, c >= c(h*): bounds at least as
  // wide as those of the reconstructed states (positivity holds) without two
  // more square roots per edge.
  const Real s_l = hl_s > zero ? math::min(unl - cl, unr - cr) : unr - two * cr;
  const Real s_r = hr_s > zero ? math::max(unl + cl, unr + cr) : unl + two * cl;
  const Real hnl_s = hl_s * unl, hnr_s = hr_s * unr;
  const State<Real> dw{hr_s - hl_s, hnr_s - hnl_s, hr_s * utr - hl_s * utl};
  const State<Real> df{hnr_s - hnl_s,
                       (hnr_s * unr + half * p.g * hr_s * hr_s) - (hnl_s * unl + half * p.g * hl_s * hl_s),
                       hnr_s * utr - hnl_s * utl};
  const Real inv_ds = one / (s_l < s_r ? s_r - s_l : one);
  const Real wl = s_l * inv_ds;
  const Real wr = s_r * inv_ds;
  const State<Real> mid_l{wl * (s_r * dw.h - df.h), wl * (s_r * dw.hu - df.hu), wl * (s_r * dw.hv - df.hv)};
  const State<Real> mid_r{wr * (df.h - s_l * dw.h), wr * (df.hu - s_l * dw.hu), wr * (df.hv - s_l * dw.hv)};
  const State<Real> hll_l0 = select(s_l >= zero, none, select(s_r <= zero, df, mid_l));
  const State<Real> hll_r0 = select(s_l >= zero, df, select(s_r <= zero, none, mid_r));
  const Real cut_l = hl_s - hl, cut_r = hr - hr_s;
  const State<Real> hll_l{hll_l0.h + cut_l * unl, hll_l0.hu + cut_l * unl * unl, hll_l0.hv + cut_l * unl * utl};
  const State<Real> hll_r{hll_r0.h + cut_r * unr, hll_r0.hu + cut_r * unr * unr, hll_r0.hv + cut_r * unr * utr};
  const Real hll_speed = math::max(math::abs(s_l), math::abs(s_r));

  EdgeFluctuation<Real> f{select(use_roe, roe_l, hll_l), select(use_roe, roe_r, hll_r),
                          use_roe ? roe_speed : hll_speed};
  f.to_left = select(emerging_l, none, select(emerging_r, wall_l, f.to_left));
  f.to_right = select(emerging_l, wall_r, select(emerging_r, none, f.to_right));
  f.speed = emerging_l ? math::abs(unr) + cr : (emerging_r ? math::abs(unl) + cl : f.speed);
  f.to_left = select(both_dry, none, f.to_left);
  f.to_right = select(both_dry, none, f.to_right);
  f.speed = both_dry ? zero : f.speed;
  return f;
}

} // namespace detail

namespace detail {

// A cell seen from an edge with normal +x (left = west cell, right = east
// cell): the edge frame is the Cartesian frame.
template <class Real>
SHALLOWS_HD EdgeSide<Real> x_side(const CellPrimitive<Real>& q) {
  return {q.h, q.hu, q.hv, q.z, q.u, q.v, q.sqrt_h, q.c};
}

// A cell seen from an edge with normal +y (left = south cell, right = north
// cell): normal discharge hv, tangential discharge -hu (tangent (-ny, nx) =
// (-1, 0)).
template <class Real>
SHALLOWS_HD EdgeSide<Real> y_side(const CellPrimitive<Real>& q) {
  return {q.h, q.hv, -q.hu, q.z, q.v, -q.u, q.sqrt_h, q.c};
}

// Fluctuations of a +y edge back in the Cartesian frame.
template <class Real>
SHALLOWS_HD EdgeFluctuation<Real> from_y_frame(EdgeFluctuation<Real> f) {
  f.to_left = {f.to_left.h, -f.to_left.hv, f.to_left.hu};
  f.to_right = {f.to_right.h, -f.to_right.hv, f.to_right.hu};
  return f;
}

} // namespace detail

template <class Real>
SHALLOWS_HD EdgeFluctuation<Real> roe_x(const CellPrimitive<Real>& l, const CellPrimitive<Real>& r,
                                        const PhysicsParams<Real>& p) {
  return detail::roe_rotated(detail::x_side(l), detail::x_side(r), p);
}

template <class Real>
SHALLOWS_HD EdgeFluctuation<Real> roe_y(const CellPrimitive<Real>& l, const CellPrimitive<Real>& r,
                                        const PhysicsParams<Real>& p) {
  return detail::from_y_frame(detail::roe_rotated(detail::y_side(l), detail::y_side(r), p));
}

template <class Real>
SHALLOWS_HD EdgeFluctuation<Real> roe_x(State<Real> l, Real zl, State<Real> r, Real zr, const PhysicsParams<Real>& p) {
  return roe_x(cell_primitive(l, zl, p), cell_primitive(r, zr, p), p);
}

template <class Real>
SHALLOWS_HD EdgeFluctuation<Real> roe_y(State<Real> l, Real zl, State<Real> r, Real zr, const PhysicsParams<Real>& p) {
  return roe_y(cell_primitive(l, zl, p), cell_primitive(r, zr, p), p);
}

// Edge with an arbitrary unit normal (nx, ny) pointing from l to r, for
// unstructured meshes: the states rotated into the edge frame (normal,
// tangential = (-ny, nx)), solved, and the fluctuations rotated back.
template <class Real>
SHALLOWS_HD EdgeFluctuation<Real> roe_normal(const CellPrimitive<Real>& l, const CellPrimitive<Real>& r, Real nx, Real ny,
                                             const PhysicsParams<Real>& p) {
  const auto side = [nx, ny](const CellPrimitive<Real>& q) {
    return detail::EdgeSide<Real>{q.h, q.hu * nx + q.hv * ny, q.hv * nx - q.hu * ny, q.z, q.u * nx + q.v * ny,
                                  q.v * nx - q.u * ny, q.sqrt_h, q.c};
  };
  EdgeFluctuation<Real> f = detail::roe_rotated(side(l), side(r), p);
  const auto back = [nx, ny](State<Real> s) {
    return State<Real>{s.h, s.hu * nx - s.hv * ny, s.hu * ny + s.hv * nx};
  };
  f.to_left = back(f.to_left);
  f.to_right = back(f.to_right);
  return f;
}

template <class Real>
SHALLOWS_HD EdgeFluctuation<Real> roe_normal(State<Real> ql, Real zl, State<Real> qr, Real zr, Real nx, Real ny,
                                             const PhysicsParams<Real>& p) {
  return roe_normal(cell_primitive(ql, zl, p), cell_primitive(qr, zr, p), nx, ny, p);
}

} // namespace shallows
