// SPDX-License-Identifier: MIT
#pragma once
// Transport of passive scalars (seed 004, appendix) with the flow's own mass
// flux, first order, written once for every executor.
//
// A step of the flow moves water across each edge: the mass flux F of the
// edge follows from its Roe fluctuations (the left cell loses hn_l +
// to_left.h, the right one gains hn_r - to_right.h; the h components of the
// fluctuations sum to hn_r - hn_l, so both agree to round-off). The scalar
// crosses the edge with the upwind cell's concentration, G = F c_upwind.
// A cell's new concentration is the ratio of its scalar and its water after
// the same fluxes,
//     c' = (h c - dt div G) / (h - dt div F),
// a convex combination of its own and its inflowing neighbours'
// concentrations while no cell sends more water than it holds (the flow's
// CFL condition): a uniform concentration stays uniform to round-off (c' =
// c (1 + O(eps)) per step), with wet/dry fronts, and no new extremum appears
// (c' is also clipped to that range, so that a step beyond the CFL bound
// cannot make one). The
// state h c is then c' times the flow's new depth. The flow's depth comes
// from the fluctuations, not from F, so h c is conserved to round-off of the
// fluxes (the difference of the two depths), not bit for bit.
#include "shallows/bc/boundary.hpp"
#include "shallows/core/math.hpp"
#include "shallows/physics/forcing.hpp"
#include "shallows/physics/riemann/roe.hpp"

namespace shallows {

// Concentration of a cell: h c / h where it holds water, 0 where it holds none.
template <class Real>
SHALLOWS_HD Real concentration(Real hc, Real h) {
  return h > Real(0) ? hc / h : Real(0);
}

// The concentration beyond a side: an open side copies the inside (outflow
// carries the cell's own), every other side brings its given concentration
// (a wall moves no water across).
template <class Real>
SHALLOWS_HD Real ghost_concentration(BoundaryKind kind, Real inside, Real given) {
  return kind == BoundaryKind::open ? inside : given;
}

// Mass flux (m^2/s, from left to right along the edge's axis) of an edge
// with fluctuations f between cells with normal discharges hn_l, hn_r: the
// mean of the two cells' views, antisymmetric bit for bit under mirroring.
// None through an edge with an inactive side (a wall).
template <class Real>
SHALLOWS_HD Real edge_mass_flux(Real hn_l, Real hn_r, const EdgeFluctuation<Real>& f, bool both_active) {
  const Real F = Real(0.5) * ((hn_l + f.to_left.h) + (hn_r - f.to_right.h));
  return both_active ? F : Real(0);
}

// What one cell's scalar sees of a step: the mass fluxes of its edges (west,
// east, south, north; positive along +x and +y) and the concentrations of
// the cell and of the cells beyond them.
template <class Real>
struct ScalarStencil {
  Real fw, fe, fs, fn;
  Real c, cw, ce, cs, cn;
};

// The concentration beyond side `side` of the boundary cell at `along` (its
// index along the side), whose own is `inside`: ghost_concentration with the
// condition of the cell's segment and the concentration it brings
// (segment_given[k] for segment k), else the side's.
template <class Real>
SHALLOWS_HD Real concentration_beyond(Side side, index_t along, Real inside, BoundaryKind side_kind, Real side_given,
                                      const SegmentCondition<Real>* segments, int count, const Real* segment_given) {
  const int k = segment_at(side, along, segments, count);
  return k >= 0 ? ghost_concentration(segments[k].bc.kind, inside, segment_given[k])
                : ghost_concentration(side_kind, inside, side_given);
}

// What a scalar finds beyond a grid's sides: each side's condition and the
// concentration it brings (west, east, south, north), the segments and the
// concentration each brings (segment_given[k] for segment k).
template <class Real>
struct ScalarSides {
  BoundaryKind kind[4];
  const Real* given;
  const SegmentCondition<Real>* segments;
  int count;
  const Real* segment_given;
};

// The stencil of active cell (i, j) (padded index c, rows `pitch` apart) of
// an nx x ny grid whose edges carry the mass fluxes fw..fn and whose
// concentration is cc, for the scalar whose h c is hc: a neighbour inside the
// grid brings concentration(hc[x], depth(side, x)), one beyond a side its
// ghost's concentration. Every grid executor's stencil, CPU and GPU.
template <class Real, class Depth>
SHALLOWS_HD ScalarStencil<Real> grid_scalar_stencil(index_t i, index_t j, index_t nx, index_t ny, index_t c,
                                                    index_t pitch, const Real* __restrict__ hc, Real cc, Real fw,
                                                    Real fe, Real fs, Real fn, const ScalarSides<Real>& sides,
                                                    const Depth& depth) {
  const auto beyond = [&](bool outside, Side side, index_t along, index_t x) {
    if (!outside) return concentration(hc[x], depth(side, x));
    const auto sd = static_cast<int>(side);
    return concentration_beyond(side, along, cc, sides.kind[sd], sides.given[sd], sides.segments, sides.count,
                                sides.segment_given);
  };
  return {fw,
          fe,
          fs,
          fn,
          cc,
          beyond(i == 0, Side::west, j, c - 1),
          beyond(i == nx - 1, Side::east, j, c + 1),
          beyond(j == 0, Side::south, i, c - pitch),
          beyond(j == ny - 1, Side::north, i, c + pitch)};
}

// The cell's water after the fluxes of the stencil over dt from depth h.
template <class Real>
SHALLOWS_HD Real transported_water(const ScalarStencil<Real>& s, Real h, Real dt, Real inv_dx, Real inv_dy) {
  return h - dt * ((s.fe - s.fw) * inv_dx + (s.fn - s.fs) * inv_dy);
}

// The cell's concentration after a step of dt (see the file comment); h is
// its depth before the step.
template <class Real>
SHALLOWS_HD Real transported_concentration(const ScalarStencil<Real>& s, Real h, Real dt, Real inv_dx,
                                           Real inv_dy) {
  const auto up = [](Real F, Real c_l, Real c_r) { return F > Real(0) ? c_l : c_r; };
  const Real gw = s.fw * up(s.fw, s.cw, s.c);
  const Real ge = s.fe * up(s.fe, s.c, s.ce);
  const Real gs = s.fs * up(s.fs, s.cs, s.c);
  const Real gn = s.fn * up(s.fn, s.c, s.cn);
  const Real water = transported_water(s, h, dt, inv_dx, inv_dy);
  const Real scalar = h * s.c - dt * ((ge - gw) * inv_dx + (gn - gs) * inv_dy);
  // The range of what enters: the cell's own and its inflowing neighbours'.
  Real lo = s.c, hi = s.c;
  const auto widen = [&](bool inflow, Real c) {
    lo = inflow ? math::min(lo, c) : lo;
    hi = inflow ? math::max(hi, c) : hi;
  };
  widen(s.fw > Real(0), s.cw);
  widen(s.fe < Real(0), s.ce);
  widen(s.fs > Real(0), s.cs);
  widen(s.fn < Real(0), s.cn);
  const Real c1 = water > Real(0) ? scalar / water : s.c;
  return math::min(math::max(c1, lo), hi);
}

// A mesh cell's concentration after a step (first order; the same
// arguments as transported_concentration, for a polygon): out[k] is the water
// its edge k (in slot order) takes out of it over the step per unit area,
// dt F |e| / A (negative where water comes in), beyond[k] the concentration
// across that edge; h and c are the cell's depth and concentration before
// the step. A uniform concentration stays exactly uniform, and c' stays in
// the range of the cell's own and its inflowing neighbours'.
template <class Real>
SHALLOWS_HD Real mesh_transported_concentration(const Real* out, const Real* beyond, int n, Real h, Real c) {
  Real water = h, scalar = h * c, lo = c, hi = c;
  for (int k = 0; k < n; ++k) {
    const bool inflow = out[k] < Real(0);
    water -= out[k];
    scalar -= out[k] * (inflow ? beyond[k] : c);
    lo = inflow ? math::min(lo, beyond[k]) : lo;
    hi = inflow ? math::max(hi, beyond[k]) : hi;
  }
  const Real c1 = water > Real(0) ? scalar / water : c;
  return math::min(math::max(c1, lo), hi);
}

// A multi-stage scheme's concentration of a cell (roe3's SSP-RK3 stages):
// the stage combines the water as U^n + b (E - U^n), with E the Euler step
// from the stage input; its concentration is the mean of U^n's (cn, depth
// hn) and the Euler step's (ce, water `water`) weighted by (1 - b) hn and b
// times the water, kept within [min, max] of the two. A convex combination
// of concentrations already present: a uniform one stays uniform, no new
// extremum appears.
template <class Real>
SHALLOWS_HD Real combined_concentration(Real cn, Real hn, Real ce, Real water, Real b) {
  const Real wn = (Real(1) - b) * hn;
  const Real we = b * math::max(water, Real(0));
  const Real mixed = wn + we > Real(0) ? (wn * cn + we * ce) / (wn + we) : ce;
  return math::min(math::max(mixed, math::min(cn, ce)), math::max(cn, ce));
}

// A cell's h c after its forcing (apply_cell_forcing, which moved `moved`
// from the depth h the step left): the rain brings its concentration, then
// the infiltration takes the water's own.
SHALLOWS_HD double forced_scalar(double hc, double h, const ForcingDepths& moved, double c_rain) {
  const double with_rain = hc + c_rain * moved.rain;
  const double water = h + moved.rain;
  return water > 0 ? with_rain * ((water - moved.infiltration) / water) : with_rain;
}

// A cell's h c after a volume source gave it depth d (< 0: took it) from
// depth h: a source brings its concentration, a sink takes the cell's own.
SHALLOWS_HD double sourced_scalar(double hc, double h, double d, double c_source) {
  if (d >= 0) return hc + c_source * d;
  return h > 0 ? hc * ((h + d) / h) : hc;
}

}  // namespace shallows
