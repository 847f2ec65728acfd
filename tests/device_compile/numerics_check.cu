// SPDX-License-Identifier: MIT
// Compile-only check, run by CI with nvcc: every numerics header must stay
// usable from device code in both precisions.
#include "shallows/mesh/structured/cartesian_edges.hpp"
#include "shallows/mesh/structured/ghost_cells.hpp"
#include "shallows/physics/cell_update.hpp"
#include "shallows/physics/riemann/roe.hpp"
#include "shallows/numerics/roe3.hpp"
#include "shallows/numerics/ssp_rk3.hpp"
#include "shallows/mesh/unstructured/mesh_edges.hpp"
#include "shallows/solver/cell_maxima.hpp"
#include "shallows/solver/time_step.hpp"

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

// The point-wise functions every executor calls: step control, maxima, boundary states.
template <class Real>
__global__ void executor_check(shallows::PhysicsParams<Real> p, shallows::SeriesView series, Real* max_h,
                               Real* max_speed, double* arrival, double* out) {
  using namespace shallows;
  const State<Real> q{max_h[1], max_speed[1], max_h[2]};
  const BoundaryCondition<Real> bc =
      condition_at_time(BoundaryCondition<Real>{BoundaryKind::level, Real(1)}, series, 2.0);
  const CellPrimitive<Real> g = boundary_primitive(cell_primitive(q, Real(0), p), Real(0.6), Real(0.8), bc, p);
  const State<Real> ghost = ghost_state(q, Real(0), Side::north, bc, p);
  double arrived_at = 0;
  track_cell_maxima(q, 1.0, p.h_dry, 0.5, max_h[0], max_speed[0], arrival[0]);
  track_cell_maxima_over_step(q, 1.0, true, g.h, g.u, g.v, 2.0, p.h_dry, 0.5, max_h[0], max_speed[0], arrived_at);
  const double dt = cfl_time_step(1.0, 0.5, 0.1, step_cap(0.0, 3.0, 1.0));
  out[0] = takes_step(0.0, 3.0, 0, 10) ? step_end_time(0.0, dt, 3.0) + arrived_at + ghost.h : 0.0;
}

template __global__ void numerics_check<float>(shallows::StateArrays<float>, shallows::Grid,
                                               shallows::PhysicsParams<float>, float*);
template __global__ void numerics_check<double>(shallows::StateArrays<double>, shallows::Grid,
                                                shallows::PhysicsParams<double>, double*);
template __global__ void roe3_check<float>(const float*, const float*, const float*, const float*,
                                          shallows::roe3::Params<float>, float*);
template __global__ void roe3_check<double>(const double*, const double*, const double*, const double*,
                                           shallows::roe3::Params<double>, double*);
template __global__ void executor_check<float>(shallows::PhysicsParams<float>, shallows::SeriesView, float*, float*,
                                               double*, double*);
template __global__ void executor_check<double>(shallows::PhysicsParams<double>, shallows::SeriesView, double*,
                                                double*, double*, double*);
