// SPDX-License-Identifier: MIT
#pragma once
// The water crossing the grid's sides on the first-order CUDA executor, as
// the CPU executor accounts it (boundary_flux.hpp): before a step, one block
// per side sums the inflow and outflow rates of its boundary edges on the
// state the step starts from, by a fixed tree (the same bits run after run);
// after the step, the rates times the step's dt join the totals. Launched only
// when a side is not a wall.
#include "forcing_kernels.cuh"
#include "shallows/mesh/structured/boundary_flux.hpp"
#include "step_kernels.cuh"

namespace shallows::cudax {

// rate[2 s], rate[2 s + 1]: the water per second into and out of the domain
// through side s (m^3/s) on the state of control slot `slot`.
template <class Real>
__global__ void __launch_bounds__(forcing::kThreads)
    boundary_rate_kernel(const Params<Real> P, const PlainExtras<Real> X, int slot, double dx, double dy, double* rate) {
  __shared__ double sum_buf[forcing::kThreads];
  const int side = static_cast<int>(blockIdx.x);
  const int b = P.ctrl[slot].parity;
  const Real* h = P.h[b];
  const Real* hu = P.hu[b];
  const Real* hv = P.hv[b];
  const bool x_side = side < 2;
  const index_t n = x_side ? P.ny : P.nx;
  double in = 0, out = 0;
  for (index_t k = threadIdx.x; k < n; k += blockDim.x) {
    const index_t i = side == 0 ? 0 : side == 1 ? P.nx - 1 : k;
    const index_t j = side == 2 ? 0 : side == 3 ? P.ny - 1 : k;
    const index_t c = P.index(i, j);
    const State<Real> q{h[c], hu[c], hv[c]};
    const Real z = P.z[c];
    const State<Real> ghost = ghost_state(q, z, static_cast<Side>(side), boundary_cell_bc(P, side, k, X.segments, X.segment_count));
    const double r = boundary_inflow_rate(static_cast<Side>(side), ghost, q, z, P.phys);
    if (r > 0) in += r;
    else out -= r;
  }
  in = forcing::block_sum(in, sum_buf);
  out = forcing::block_sum(out, sum_buf);
  if (threadIdx.x == 0) {
    const double length = x_side ? dy : dx;
    rate[2 * side] = in * length;
    rate[2 * side + 1] = out * length;
  }
}

// flow[k] += dt rate[k] when the launch that filled slot `slot` took a step
// (dt in the run's precision, as the update used it).
template <class Real>
__global__ void boundary_add_kernel(const Ctrl* ctrl, int slot, const double* rate, double* flow) {
  const Ctrl& c = ctrl[slot];
  if (!c.stepped || threadIdx.x >= 8) return;
  flow[threadIdx.x] += static_cast<double>(static_cast<Real>(c.dt)) * rate[threadIdx.x];
}

}  // namespace shallows::cudax
