// SPDX-License-Identifier: MIT
#pragma once
// Third-order well-balanced path-conservative Roe scheme of seed 003
// (eqs. 16, 27-30) on a uniform Cartesian grid: the semi-discrete right-hand
// side of one cell, split into pieces that a CPU loop or a CUDA kernel
// assembles in the same way.
//
// Per cell and Runge-Kutta stage:
//  1. cell_trace(): the compact reconstruction (numerics/reconstruction.hpp)
//     of eta = h + z, hu and hv on the nine-cell stencil, with z
//     reconstructed once (bed_points(), the bed is static) and h = P_eta - P_z,
//     evaluated at the two Gauss points of each edge (primitive states, ready
//     for the Roe solver) and at the 2 x 2 Gauss points inside; plus the cell's
//     interior term (below).
//  2. Per edge and Gauss point, the first-order fluctuations of the existing
//     Roe solver (cartesian_edge<axis>, which also treats inactive cells as
//     walls) on the two reconstructed states: F^- = P^-(A dU - S dH) to the
//     left cell, F^+ to the right cell (seed 003 eq. 28 without F(U_L)).
//  3. cell_rhs(): with w_l = 1/2 the Gauss weights on an edge,
//        dU_i/dt = -[ sum_edges |E|/|V| sum_l w_l F_{i,l} + T_i ],
//        T_i = 1/|V| sum_edges |E| sum_l w_l Fadv_n(U_i at the point)
//            + sum_q 1/4 (0, g h grad(eta))(x_q),
//     where Fadv_n = (q_n, hu q_n/h, hv q_n/h) is the flux without the
//     pressure. This equals eq. 27: the flux of U_i through its own edges
//     (eq. 28's F(U_L)) plus the bed-source volume integral, because
//        oint g h^2/2 n + int g h grad z = int g h grad(h + z) = int g h grad eta
//     for the cell's own polynomials. The pressure and bed source are thus
//     integrated together by the 2 x 2 Gauss rule, which is exact here (h is
//     quadratic, grad eta linear), and a lake at rest, where P_eta is exactly
//     constant, gives T = 0 and zero fluctuations exactly in floating point.
//
// First-order fallback (positivity next to dry cells): a cell whose stencil
// holds a dry (h <= h_dry) or inactive cell, whose reconstructed depth is
// <= h_dry at any of its 12 quadrature points, or whose reconstructed
// velocity at an edge point exceeds the stencil's (|u| + |v| > max_k(|u_k| +
// |v_k|) + max_k c_k: thin films), uses its cell average at every point
// (T = 0): the scheme is then the first-order scheme of roe.hpp there, with
// its wet/dry treatment. The edges between such a cell and a
// third-order neighbour still see that neighbour's reconstruction.
//
// Time step, seed 003 eq. 6: dt max_{edges, points, k} |lambda_k| / d_ij = delta,
// d_ij = dx/2 or dy/2 the distance from the cell centre to the edge.
#include <cmath>

#include "shallows/bc/side_account.hpp"
#include "shallows/core/math.hpp"
#include "shallows/core/state.hpp"
#include "shallows/mesh/structured/cartesian_edges.hpp"
#include "shallows/numerics/reconstruction.hpp"
#include "shallows/physics/params.hpp"
#include "shallows/physics/riemann/roe.hpp"
#include "shallows/physics/scalar_transport.hpp"

namespace shallows::roe3 {

// Constants of the scheme for one grid.
template <class Real>
struct Params {
  PhysicsParams<Real> phys;
  recon::Params<Real> rec;
  Real inv_dx, inv_dy;
  Real sqrt_g;  // celerity at a point: sqrt(g) sqrt(h), one root instead of two
};

template <class Real>
Params<Real> make_params(const PhysicsParams<Real>& phys, double dx, double dy) {
  return {phys, recon::make_params<Real>(dx, dy), static_cast<Real>(1.0 / dx), static_cast<Real>(1.0 / dy),
          static_cast<Real>(std::sqrt(static_cast<double>(phys.g)))};
}

// The bed's reconstruction at the 8 edge and 4 interior Gauss points
// (recon::PointValues layout). Static: computed once per cell.
template <class Real>
using BedPoints = recon::PointValues<Real>;

template <class Real>
SHALLOWS_HD BedPoints<Real> bed_points(const Real (&z)[9], const recon::Params<Real>& rec) {
  return recon::edge_and_interior_values(recon::reconstruct(z, rec));
}

// What a cell offers its edges and keeps for itself: the primitive states at
// the 8 edge Gauss points (index as recon::PointValues::edge: east 0-1, west
// 2-3, north 4-5, south 6-7), stored by component so that the per-point loops
// vectorise, and the interior term.
template <class Real>
struct CellTrace {
  Real h[8], hu[8], hv[8], z[8], u[8], v[8], sqrt_h[8], c[8];
  State<Real> interior;  // T_i of the header comment
  bool high_order;       // false: first-order fallback

  SHALLOWS_HD CellPrimitive<Real> at(int k) const { return {h[k], hu[k], hv[k], z[k], u[k], v[k], sqrt_h[k], c[k]}; }
};

namespace detail {

template <class Real>
SHALLOWS_HD CellTrace<Real> constant_trace(Real h, Real hu, Real hv, Real z, const PhysicsParams<Real>& p) {
  CellTrace<Real> t;
  const CellPrimitive<Real> c = cell_primitive(State<Real>{h, hu, hv}, z, p);
  for (int k = 0; k < 8; ++k) {
    t.h[k] = c.h;
    t.hu[k] = c.hu;
    t.hv[k] = c.hv;
    t.z[k] = c.z;
    t.u[k] = c.u;
    t.v[k] = c.v;
    t.sqrt_h[k] = c.sqrt_h;
    t.c[k] = c.c;
  }
  t.interior = {Real(0), Real(0), Real(0)};
  t.high_order = false;
  return t;
}

} // namespace detail

// Reconstruction of one cell. h, hu, hv, z: the nine-cell stencil
// (z NaN marks an inactive cell); zp: bed_points() of this cell.
template <class Real>
SHALLOWS_HD CellTrace<Real> cell_trace(const Real (&h)[9], const Real (&hu)[9], const Real (&hv)[9],
                                       const Real (&z)[9], const BedPoints<Real>& zp, const Params<Real>& prm) {
  const PhysicsParams<Real>& p = prm.phys;
  bool wet = true;
  for (int k = 0; k < 9; ++k) wet = wet && h[k] > p.h_dry && !math::is_nan(z[k]);
  if (!wet) return detail::constant_trace(h[4], hu[4], hv[4], z[4], p);

  Real eta[9];
  for (int k = 0; k < 9; ++k) eta[k] = h[k] + z[k];
  const recon::Quadratic<Real> pe = recon::reconstruct(eta, prm.rec);
  const recon::PointValues<Real> ve = recon::edge_and_interior_values(pe);

  // Depths at the 12 points; any too small: first order.
  CellTrace<Real> t;
  Real hq[4];
  bool positive = true;
  for (int k = 0; k < 8; ++k) {
    t.h[k] = ve.edge[k] - zp.edge[k];
    positive = positive && t.h[k] > p.h_dry;
  }
  for (int k = 0; k < 4; ++k) {
    hq[k] = ve.q[k] - zp.q[k];
    positive = positive && hq[k] > p.h_dry;
  }
  if (!positive) return detail::constant_trace(h[4], hu[4], hv[4], z[4], p);

  const recon::PointValues<Real> vu = recon::edge_and_interior_values(recon::reconstruct(hu, prm.rec));
  const recon::PointValues<Real> vv = recon::edge_and_interior_values(recon::reconstruct(hv, prm.rec));
  for (int k = 0; k < 8; ++k) {
    // As cell_primitive(), with every depth above h_dry.
    const Real inv_h = Real(1) / t.h[k];
    t.hu[k] = vu.edge[k];
    t.hv[k] = vv.edge[k];
    t.z[k] = zp.edge[k];
    t.u[k] = t.hu[k] * inv_h;
    t.v[k] = t.hv[k] * inv_h;
    t.sqrt_h[k] = math::sqrt(t.h[k]);
    t.c[k] = prm.sqrt_g * t.sqrt_h[k];
  }

  // Velocity bound: hu and h are reconstructed separately, so where the
  // depth is small a point's velocity hu/h can be far above anything in the
  // stencil (thin films at wet/dry fronts). Such a cell falls back to first
  // order when |u| + |v| at a point exceeds max_k (|u_k| + |v_k|) + max_k c_k.
  // Without the nine divisions: every h_k > 0 here, so x <= max_k a_k / h_k
  // exactly when x h_k <= a_k for some k.
  Real hmax(0);
  for (int k = 0; k < 9; ++k) hmax = math::max(hmax, h[k]);
  Real point_speed(0);
  for (int k = 0; k < 8; ++k) point_speed = math::max(point_speed, math::abs(t.u[k]) + math::abs(t.v[k]));
  const Real excess = point_speed - prm.sqrt_g * math::sqrt(hmax);
  bool bounded = excess <= Real(0);
  for (int k = 0; k < 9; ++k) bounded = bounded | (excess * h[k] <= math::abs(hu[k]) + math::abs(hv[k]));
  if (!bounded) return detail::constant_trace(h[4], hu[4], hv[4], z[4], p);
  t.high_order = true;

  // Advective fluxes through the cell's own edges (Gauss weights 1/2):
  // (q_n, hu q_n / h, hv q_n / h), east minus west and north minus south.
  Real fx_h(0), fx_hu(0), fx_hv(0), fy_h(0), fy_hu(0), fy_hv(0);
  for (int l = 0; l < 2; ++l) {
    const int e = recon::east + l, w = recon::west + l, n = recon::north + l, s = recon::south + l;
    fx_h += t.hu[e] - t.hu[w];
    fx_hu += t.hu[e] * t.u[e] - t.hu[w] * t.u[w];
    fx_hv += t.hv[e] * t.u[e] - t.hv[w] * t.u[w];
    fy_h += t.hv[n] - t.hv[s];
    fy_hu += t.hu[n] * t.v[n] - t.hu[s] * t.v[s];
    fy_hv += t.hv[n] * t.v[n] - t.hv[s] * t.v[s];
  }
  // Pressure and bed source: (1/4) sum_q g h grad(eta), 2 x 2 Gauss points (+-g, +-g).
  const Real g = recon::gauss_offset<Real>();
  Real px(0), py(0);
  for (int k = 0; k < 4; ++k) {
    const Real xi = (k & 1) ? g : -g;
    const Real et = (k & 2) ? g : -g;
    px += hq[k] * pe.d_xi(xi, et);
    py += hq[k] * pe.d_eta(xi, et);
  }
  const Real half(0.5);
  const Real gq = Real(0.25) * p.g;
  t.interior = {half * (fx_h * prm.inv_dx + fy_h * prm.inv_dy),
                half * (fx_hu * prm.inv_dx + fy_hu * prm.inv_dy) + gq * px * prm.inv_dx,
                half * (fx_hv * prm.inv_dx + fy_hv * prm.inv_dy) + gq * py * prm.inv_dy};
  return t;
}

// Fluctuations of one Cartesian edge at its two Gauss points; axis 0: x-edge
// (left = west cell's e[], right = east cell's w[]); axis 1: y-edge (left =
// south cell's n[], right = north cell's s[]).
template <class Real>
struct EdgePair {
  EdgeFluctuation<Real> f[2];
};

template <int axis, class Real>
SHALLOWS_HD EdgePair<Real> edge_pair(const CellTrace<Real>& left, const CellTrace<Real>& right,
                                     const PhysicsParams<Real>& p) {
  EdgePair<Real> e;
  for (int l = 0; l < 2; ++l) {
    if constexpr (axis == 0) {
      e.f[l] = cartesian_edge<0>(left.at(recon::east + l), right.at(recon::west + l), p);
    } else {
      e.f[l] = cartesian_edge<1>(left.at(recon::north + l), right.at(recon::south + l), p);
    }
  }
  return e;
}

// What an edge pair gives the cell above or east of it (F^+ at both points),
// and the cell below or west of it (F^-).
template <class Real>
SHALLOWS_HD State<Real> into_upper(const EdgePair<Real>& e) {
  return e.f[0].to_right + e.f[1].to_right;
}

template <class Real>
SHALLOWS_HD State<Real> into_lower(const EdgePair<Real>& e) {
  return e.f[0].to_left + e.f[1].to_left;
}

// Mass flux (m^2/s along the axis) of an edge pair from the two cells'
// primitive states at its Gauss points (left[l], right[l] at point l): the
// Gauss mean of edge_mass_flux (scalar_transport.hpp) at the two points, each
// the mean of the two cells' views (the normal discharge and the fluctuation
// it gets). A cell's depth rhs is minus the divergence of its own views,
// which these match to round-off. None through an edge with an inactive side.
template <int axis, class Real>
SHALLOWS_HD Real pair_mass_flux(const CellPrimitive<Real> (&left)[2], const CellPrimitive<Real> (&right)[2],
                                const EdgePair<Real>& e) {
  Real sum(0);
  for (int l = 0; l < 2; ++l) {
    const Real qa = axis == 0 ? left[l].hu : left[l].hv;
    const Real qb = axis == 0 ? right[l].hu : right[l].hv;
    sum += edge_mass_flux(qa, qb, e.f[l], !math::is_nan(left[l].z) && !math::is_nan(right[l].z));
  }
  return Real(0.5) * sum;
}

// The same from the traces of the cells left and right of the edge.
template <int axis, class Real>
SHALLOWS_HD Real pair_mass_flux(const CellTrace<Real>& left, const CellTrace<Real>& right, const EdgePair<Real>& e) {
  const int a = axis == 0 ? recon::east : recon::north;
  const int b = axis == 0 ? recon::west : recon::south;
  const CellPrimitive<Real> l[2] = {left.at(a), left.at(a + 1)};
  const CellPrimitive<Real> r[2] = {right.at(b), right.at(b + 1)};
  return pair_mass_flux<axis>(l, r, e);
}

// Water per second and unit length into the domain through a boundary edge
// with fluctuations e, whose inside cell has normal discharges qn0, qn1 at
// the two Gauss points (ghost_first: the ghost is the edge's left cell, west
// or south): the mean over the points of the inside discharge less the
// fluctuation the edge gives the inside cell, as cell_rhs sums them (its
// interior term holds the cell's own normal fluxes). Summed over a grid's
// sides, it is what the right-hand sides change the volume by; in double, as
// the executors account it.
template <class Real>
SHALLOWS_HD double boundary_inflow(const EdgePair<Real>& e, Real qn0, Real qn1, bool ghost_first) {
  const Real qn[2] = {qn0, qn1};
  double q = 0;
  for (int l = 0; l < 2; ++l) q += edge_inflow(static_cast<double>(qn[l]), e.f[l], !ghost_first);
  return 0.5 * q;
}

// The same from the traces of the inside cell and of its ghost.
template <int axis, class Real>
SHALLOWS_HD double boundary_inflow(const CellTrace<Real>& in, const CellTrace<Real>& out, bool ghost_first,
                                   const PhysicsParams<Real>& p) {
  const EdgePair<Real> e = ghost_first ? edge_pair<axis>(out, in, p) : edge_pair<axis>(in, out, p);
  const Real* qn = axis == 0 ? in.hu : in.hv;
  const int point = axis == 0 ? (ghost_first ? recon::west : recon::east) : (ghost_first ? recon::south : recon::north);
  return boundary_inflow(e, qn[point], qn[point + 1], ghost_first);
}

// Largest wave speed of an edge pair.
template <class Real>
SHALLOWS_HD Real pair_speed(const EdgePair<Real>& e) {
  return math::max(e.f[0].speed, e.f[1].speed);
}

// dU/dt of a cell from the sums of what its x-edges (fx = from the west edge
// + from the east edge) and y-edges (fy, south + north) give it, and its
// interior term. An executor that meets a cell's edges one at a time keeps
// these partial sums instead of the edge pairs.
template <class Real>
SHALLOWS_HD State<Real> rhs_from(State<Real> fx, State<Real> fy, State<Real> interior, const Params<Real>& prm) {
  const Real hx = Real(0.5) * prm.inv_dx, hy = Real(0.5) * prm.inv_dy;
  return {-((fx.h * hx + fy.h * hy) + interior.h), -((fx.hu * hx + fy.hu * hy) + interior.hu),
          -((fx.hv * hx + fy.hv * hy) + interior.hv)};
}

// CFL rate of a cell, eq. 6, from the largest speeds of its x-edges and
// y-edges: |lambda| / d_ij with d_ij = dx/2 or dy/2; dt = delta / max_cells(rate).
template <class Real>
SHALLOWS_HD Real rate_from(Real sx, Real sy, const Params<Real>& prm) {
  return Real(2) * math::max(sx * prm.inv_dx, sy * prm.inv_dy);
}

// dU/dt of a cell from its trace and the fluctuations of its four edges,
// summed in a fixed order (west, east, south, north, interior).
template <class Real>
SHALLOWS_HD State<Real> cell_rhs(const CellTrace<Real>& t, const EdgePair<Real>& west, const EdgePair<Real>& east,
                                 const EdgePair<Real>& south, const EdgePair<Real>& north, const Params<Real>& prm) {
  return rhs_from(into_upper(west) + into_lower(east), into_upper(south) + into_lower(north), t.interior, prm);
}

template <class Real>
SHALLOWS_HD Real cell_rate(const EdgePair<Real>& west, const EdgePair<Real>& east, const EdgePair<Real>& south,
                           const EdgePair<Real>& north, const Params<Real>& prm) {
  return rate_from(math::max(pair_speed(west), pair_speed(east)), math::max(pair_speed(south), pair_speed(north)),
                   prm);
}

} // namespace shallows::roe3
