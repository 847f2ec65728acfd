// SPDX-License-Identifier: MIT
#pragma once
// Compact third-order reconstruction of seed 003, section 3 (eqs. 17-25), on
// a uniform Cartesian cell, for one scalar field.
//
// Coordinates are normalised to the cell: xi = (x - x_c) / dx and
// eta = (y - y_c) / dy, both in [-1/2, 1/2]. The nine-cell stencil is
// numbered as in the seed's figure 2, row by row from the south-west:
//
//     6 7 8        k = 3 (dj + 1) + (di + 1),  V_4 = the cell itself,
//     3 4 5        di, dj in {-1, 0, 1} the column and row offsets.
//     0 1 2
//
// For each edge midpoint p_R, R in {N, S, E, W}, a polynomial P_R of degree
// two is fitted to the averages of six cells (p_E: cells 1, 2, 3, 4, 7, 8,
// eqs. 18-21; the other three by symmetry). Every P_R keeps the average of
// V_4. With the first derivatives of eq. 20 the smoothness indicators
// beta_R = dx^2 dy F_x^2 + dx dy^2 F_y^2 (eq. 24) are formed; if any exceeds
// tol = Delta^2 (Delta the cell diameter) all four polynomials are replaced
// by the conservative first-degree truncations of eq. 23 (p_E: cells 2, 4, 8).
// The result is the WENO-like combination P = sum_R omega_R P_R with
// omega_R ~ lambda_R / (eps + beta_R)^r, lambda_R = 1/4, eps = 1e-6, r = 4
// (eq. 25).
//
// Implementation notes:
//  * Everything is computed from the differences d_k = F_k - F_4, and the
//    constant term is set from conservation, c0 = F_4 - (cxx + cyy) / 12.
//    A constant field is therefore reproduced exactly in floating point
//    (this is what makes the shallow-water scheme exactly well-balanced).
//  * The weights are evaluated as ((eps + beta_min) / (eps + beta_R))^r,
//    the same ratios as the seed's formula without overflow in float; ratios
//    below 1e-20 are set to zero (no effect in either precision, and no
//    subnormal arithmetic).
//  * Host/device functions, no allocation: usable from CUDA kernels.
#include "shallows/core/math.hpp"

namespace shallows::recon {

// P(xi, eta) = c0 + cx xi + cy eta + cxx xi^2 + cxy xi eta + cyy eta^2 (normalised coordinates).
template <class Real>
struct Quadratic {
  Real c0, cx, cy, cxx, cxy, cyy;

  SHALLOWS_HD Real operator()(Real xi, Real eta) const {
    return c0 + cx * xi + cy * eta + cxx * xi * xi + cxy * xi * eta + cyy * eta * eta;
  }
  SHALLOWS_HD Real d_xi(Real xi, Real eta) const { return cx + Real(2) * cxx * xi + cxy * eta; }
  SHALLOWS_HD Real d_eta(Real xi, Real eta) const { return cy + cxy * xi + Real(2) * cyy * eta; }
};

// Constants of the reconstruction on a grid of cells dx x dy.
template <class Real>
struct Params {
  Real beta_wx;  // dy: beta = dy (dx F_x)^2 + dx (dy F_y)^2 in normalised derivatives
  Real beta_wy;  // dx
  Real tol;      // Delta^2 = dx^2 + dy^2
  Real eps;      // 1e-6
};

template <class Real>
Params<Real> make_params(double dx, double dy, double eps = 1e-6) {
  return {static_cast<Real>(dy), static_cast<Real>(dx), static_cast<Real>(dx * dx + dy * dy), static_cast<Real>(eps)};
}

// Half-distance of the two Gauss points on an edge of length 1: 1 / (2 sqrt 3).
template <class Real>
SHALLOWS_HD constexpr Real gauss_offset() {
  return Real(0.28867513459481288225457439025097872782380087563506);
}

namespace detail {

// One polynomial in its own frame, oriented as P_E (the edge point at
// local (+1/2, 0)); inputs are the differences at local offsets
// s = (0,-1), se = (1,-1), w = (-1,0), n = (0,1), ne = (1,1).
template <class Real>
struct Oriented {
  Real gx, gy;                  // eq. 20 derivatives at the edge point (normalised), for beta
  Real cx, cy, cxx, cxy, cyy;   // cell-centred coefficients (eqs. 18-22), or eq. 23 when linear
};

template <class Real>
SHALLOWS_HD Real indicator_gx(Real s, Real se, Real n, Real ne) {
  return Real(0.5) * ((se - s) + (ne - n));
}
template <class Real>
SHALLOWS_HD Real indicator_gy(Real s, Real se, Real n, Real ne) {
  return Real(0.25) * ((n - s) + (ne - se));
}

// Degree two: P_E of eq. 22 re-expanded about the cell centre.
//   cx  = (se - s + ne - n - 2 w) / 4      cy  = (n - s) / 2
//   cxx = (se - s + ne - n + 2 w) / 4      cxy = (s - se - n + ne) / 2    cyy = (s + n) / 2
template <class Real>
SHALLOWS_HD void quadratic_terms(Real s, Real se, Real w, Real n, Real ne, Oriented<Real>& o) {
  const Real quarter(0.25), half(0.5), two(2);
  const Real a = (se - s) + (ne - n);
  o.cx = quarter * (a - two * w);
  o.cy = half * (n - s);
  o.cxx = quarter * (a + two * w);
  o.cxy = half * ((s - se) + (ne - n));
  o.cyy = half * (s + n);
}

// Degree one, eq. 23 (fitted to cells 2, 4, 8 for p_E): cx = (se + ne) / 2, cy = (ne - se) / 2.
template <class Real>
SHALLOWS_HD void linear_terms(Real se, Real ne, Oriented<Real>& o) {
  const Real half(0.5);
  o.cx = half * (se + ne);
  o.cy = half * (ne - se);
  o.cxx = Real(0);
  o.cxy = Real(0);
  o.cyy = Real(0);
}

} // namespace detail

// Reconstruction of one cell from its nine-cell stencil f[k] (numbering above).
// Returns the combined polynomial; `smooth` (optional) tells whether the
// degree-two polynomials were used.
template <class Real>
SHALLOWS_HD Quadratic<Real> reconstruct(const Real (&f)[9], const Params<Real>& prm, bool* smooth = nullptr) {
  const Real c = f[4];
  Real d[9];
  for (int k = 0; k < 9; ++k) d[k] = f[k] - c;

  // Local stencils (s, se, w, n, ne) of the four polynomials, in global numbering:
  //   E: 1 2 3 7 8   W: 1 0 5 7 6   N: 3 6 1 5 8   S: 3 0 7 5 2
  constexpr int st[4][5] = {{1, 2, 3, 7, 8}, {1, 0, 5, 7, 6}, {3, 6, 1, 5, 8}, {3, 0, 7, 5, 2}};
  detail::Oriented<Real> o[4];
  Real beta[4];
  bool all_smooth = true;
  for (int r = 0; r < 4; ++r) {
    const Real s = d[st[r][0]], se = d[st[r][1]], n = d[st[r][3]], ne = d[st[r][4]];
    o[r].gx = detail::indicator_gx(s, se, n, ne);
    o[r].gy = detail::indicator_gy(s, se, n, ne);
    // E, W: local x is global x; N, S: local x is global y.
    const Real gxx = r < 2 ? o[r].gx : o[r].gy;
    const Real gyy = r < 2 ? o[r].gy : o[r].gx;
    beta[r] = prm.beta_wx * gxx * gxx + prm.beta_wy * gyy * gyy;
    all_smooth = all_smooth && !(beta[r] > prm.tol);
  }
  for (int r = 0; r < 4; ++r) {
    const Real s = d[st[r][0]], se = d[st[r][1]], w = d[st[r][2]], n = d[st[r][3]], ne = d[st[r][4]];
    if (all_smooth) {
      detail::quadratic_terms(s, se, w, n, ne, o[r]);
    } else {
      detail::linear_terms(se, ne, o[r]);
    }
  }
  if (smooth) *smooth = all_smooth;

  // Nonlinear weights, as ratios to the smoothest polynomial (eq. 25, r = 4).
  Real bmin = beta[0];
  for (int r = 1; r < 4; ++r) bmin = math::min(bmin, beta[r]);
  Real alpha[4];
  Real sum(0);
  for (int r = 0; r < 4; ++r) {
    const Real q = (prm.eps + bmin) / (prm.eps + beta[r]);
    const Real q2 = q * q;
    // Relative weights below 1e-20 are dropped: they cannot change a result
    // in either precision, and q^4 would be subnormal (slow) in float.
    alpha[r] = q < Real(1e-5) ? Real(0) : q2 * q2;
    sum += alpha[r];
  }
  const Real inv_sum = Real(1) / sum;
  Real wgt[4];
  for (int r = 0; r < 4; ++r) wgt[r] = alpha[r] * inv_sum;

  // Back to the global frame:
  //   E: ( cx,  cy,  cxx,  cxy, cyy)      W: (-cx, cy, cxx, -cxy, cyy)
  //   N: ( cy,  cx,  cyy,  cxy, cxx)      S: ( cy, -cx, cyy, -cxy, cxx)
  Quadratic<Real> p;
  p.cx = wgt[0] * o[0].cx - wgt[1] * o[1].cx + wgt[2] * o[2].cy + wgt[3] * o[3].cy;
  p.cy = wgt[0] * o[0].cy + wgt[1] * o[1].cy + wgt[2] * o[2].cx - wgt[3] * o[3].cx;
  p.cxx = wgt[0] * o[0].cxx + wgt[1] * o[1].cxx + wgt[2] * o[2].cyy + wgt[3] * o[3].cyy;
  p.cxy = wgt[0] * o[0].cxy - wgt[1] * o[1].cxy + wgt[2] * o[2].cxy - wgt[3] * o[3].cxy;
  p.cyy = wgt[0] * o[0].cyy + wgt[1] * o[1].cyy + wgt[2] * o[2].cxx + wgt[3] * o[3].cxx;
  // Conservation (hypothesis H1): the cell average of P is f[4].
  p.c0 = c - (p.cxx + p.cyy) * Real(1.0 / 12.0);
  return p;
}

// Values of a reconstruction at the two Gauss points of each edge, the
// first point at the smaller coordinate along the edge, g = 1 / (2 sqrt 3):
//   edge[0..1] east (+1/2, -+g)   edge[2..3] west (-1/2, -+g)
//   edge[4..5] north (-+g, +1/2)  edge[6..7] south (-+g, -1/2)
// and at the 2 x 2 Gauss points inside, q[k] at (-+g, -+g), k = 2 (eta > 0) + (xi > 0).
enum EdgePoint : int { east = 0, west = 2, north = 4, south = 6 };

template <class Real>
struct PointValues {
  Real edge[8];
  Real q[4];
};

template <class Real>
SHALLOWS_HD PointValues<Real> edge_and_interior_values(const Quadratic<Real>& p) {
  const Real g = gauss_offset<Real>();
  const Real half(0.5), quarter(0.25), twelfth = Real(1.0 / 12.0);
  PointValues<Real> v;
  // Written as (even part) +- (odd part) so that a constant is reproduced exactly.
  const Real edge_x = p.c0 + quarter * p.cxx + twelfth * p.cyy;  // at xi = +-1/2, symmetric part in eta
  const Real edge_y = p.c0 + twelfth * p.cxx + quarter * p.cyy;
  const Real ex = half * p.cx;                     // xi = +-1/2: +- cx / 2
  const Real ey = half * p.cy;
  const Real tx = g * (p.cy + half * p.cxy);       // along the east edge: eta (cy + cxy xi) at xi = 1/2
  const Real tx_w = g * (p.cy - half * p.cxy);     // along the west edge
  const Real ty = g * (p.cx + half * p.cxy);       // along the north edge
  const Real ty_s = g * (p.cx - half * p.cxy);     // along the south edge
  v.edge[east] = (edge_x + ex) - tx;
  v.edge[east + 1] = (edge_x + ex) + tx;
  v.edge[west] = (edge_x - ex) - tx_w;
  v.edge[west + 1] = (edge_x - ex) + tx_w;
  v.edge[north] = (edge_y + ey) - ty;
  v.edge[north + 1] = (edge_y + ey) + ty;
  v.edge[south] = (edge_y - ey) - ty_s;
  v.edge[south + 1] = (edge_y - ey) + ty_s;
  const Real inner = p.c0 + twelfth * (p.cxx + p.cyy);
  const Real gx = g * p.cx, gy = g * p.cy, gg = twelfth * p.cxy;  // g^2 = 1/12
  v.q[0] = (inner - gx - gy) + gg;
  v.q[1] = (inner + gx - gy) - gg;
  v.q[2] = (inner - gx + gy) - gg;
  v.q[3] = (inner + gx + gy) + gg;
  return v;
}

} // namespace shallows::recon
