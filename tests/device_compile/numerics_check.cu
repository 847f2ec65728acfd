// SPDX-License-Identifier: MIT
// Compile-only check, run by CI with nvcc: every numerics header must stay
// usable from device code in both precisions.
#include "shallows/mesh/structured/cartesian_edges.hpp"
#include "shallows/mesh/structured/ghost_cells.hpp"
#include "shallows/physics/cell_update.hpp"
#include "shallows/physics/riemann/roe.hpp"
#include "shallows/numerics/roe3.hpp"
#include "shallows/numerics/ssp_rk3.hpp"

template <class Real>
__global__ void numerics_check(shallows::StateArrays<Real> a, shallows::Grid g, shallows::PhysicsParams<Real> p,
                               Real* out) {
  using namespace shallows;
  const State<Real> l{a.h[0], a.hu[0], a.hv[0]};
  const State<Real> r{a.h[1], a.hu[1], a.hv[1]};
  const auto fx = cartesian_edge<0>(l, a.z[0], r, a.z[1], p);
  const auto fy = cartesian_edge<1>(l, a.z[0], r, a.z[1], p);
  const auto fn = roe_normal(l, a.z[0], r, a.z[1], Real(0.6), Real(0.8), p);
  const State<Real> q = advance_cell(l, fx.to_left + fy.to_right + fn.to_left, Real(1e-3), p);
  fill_ghost_cell(a, g, Side::west, 0, 0, BoundaryCondition<Real>{BoundaryKind::level, Real(1)}, p);
  out[0] = q.h + q.hu + q.hv + fx.speed;
}

// The third-order cell: reconstruction, Gauss-point edge fluctuations, rhs, rate.
template <class Real>
__global__ void roe3_check(const Real* h, const Real* hu, const Real* hv, const Real* z,
                           shallows::roe3::Params<Real> prm, Real* out) {
  using namespace shallows;
  Real hs[9], hus[9], hvs[9], zs[9];
  for (int k = 0; k < 9; ++k) {
    hs[k] = h[k];
    hus[k] = hu[k];
    hvs[k] = hv[k];
    zs[k] = z[k];
  }
  const auto zp = roe3::bed_points(zs, prm.rec);
  const auto t = roe3::cell_trace(hs, hus, hvs, zs, zp, prm);
  const auto e = roe3::edge_pair<0>(t, t, prm.phys);
  const auto n = roe3::edge_pair<1>(t, t, prm.phys);
  const State<Real> r = roe3::cell_rhs(t, e, e, n, n, prm);
  out[0] = r.h + r.hu + r.hv + roe3::cell_rate(e, e, n, n, prm);
}

template __global__ void numerics_check<float>(shallows::StateArrays<float>, shallows::Grid,
                                               shallows::PhysicsParams<float>, float*);
template __global__ void numerics_check<double>(shallows::StateArrays<double>, shallows::Grid,
                                                shallows::PhysicsParams<double>, double*);
template __global__ void roe3_check<float>(const float*, const float*, const float*, const float*,
                                          shallows::roe3::Params<float>, float*);
template __global__ void roe3_check<double>(const double*, const double*, const double*, const double*,
                                           shallows::roe3::Params<double>, double*);
