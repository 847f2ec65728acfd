// SPDX-License-Identifier: MIT
#pragma once
// Device side of the CUDA executor of the third-order scheme (roe3_backend.cu):
// kernels that call the header-only numerics of numerics/roe3.hpp and
// numerics/ssp_rk3.hpp with the same expressions, in the same order, as the
// CPU executor (src/exec/openmp/cartesian_cpu_roe3.cpp).
//
// One SSP-RK3 stage is one pass of march_kernel over the stage input: a warp
// owns a strip of 32 adjacent columns (30 it updates plus one halo lane on
// each side) and marches up a chunk of rows. For each row it reconstructs its
// cells (cell_trace: nine-cell stencil read through L1), evaluates the x-edge
// to its east neighbour (whose west Gauss points arrive by a shuffle) and the
// y-edge to the row below (whose north Gauss points it kept from the previous
// row), so each edge is evaluated once. A cell's right-hand side is complete
// when the row above it has been reconstructed; stages 2 and 3 then apply the
// stage right away, so the traces never leave registers. Stage 1 stores the
// rhs instead: its dt needs the CFL rate of the whole grid first (dt_kernel),
// and apply_kernel then forms U1.
//
// Time control (struct Roe3Ctrl) lives on the device, so that the host can
// launch a batch of steps (a CUDA graph of one step, replayed) and
// synchronise once per batch: begin_kernel decides whether a step is taken,
// the kernels of a step return at once when it is not.
#include <cuda_runtime.h>

#include "shallows/solver/cell_layout.hpp"
#include "shallows/solver/cell_maxima.hpp"
#include "shallows/solver/time_step.hpp"
#include "shallows/mesh/structured/ghost_cells.hpp"
#include "shallows/numerics/roe3.hpp"
#include "shallows/physics/forcing.hpp"
#include "shallows/physics/scalar_transport.hpp"
#include "shallows/numerics/ssp_rk3.hpp"
#include "forcing_kernels.cuh"
#include "warp.cuh"

namespace shallows::gpu::roe3k {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kStripWidth = 30;  // columns a warp updates (32 lanes minus two halo lanes)

// Time control of the run, one slot (the kernels of a step run in order on
// one stream). The host sets t, steps and the launch limits before a batch.
struct Roe3Ctrl {
  double t;             // time of the current state
  long long steps;      // steps taken since the host last set t
  double dt;            // dt of the last step taken
  double maxima_time;   // start of the last step + dt, not clipped to the target: the time the maxima take
  double target;        // stop at this time (Simulation::advance_to semantics)
  double dt_max;        // cap on dt (Backend::step's dt_max)
  long long max_steps;  // stop after this many steps since t was set
  unsigned long long rate_bits;  // largest CFL rate of U^n (bits of a non-negative double)
  int active;           // 1 while the current step is being taken
  int bad;              // a stage produced a non-finite rhs or rate
  int status;           // 0: fine; 1: the solution is no longer finite (at t)
  int pad;
};

// Passive scalars (scalar_transport.hpp), stage by stage as the CPU
// executor's transport_scalars and combine_scalars: h c of scalar s in
// buffer b at hc[3 s + b] (b: 0 U^n, 1 U1, 2 U2, padded).
template <class Real>
struct ScalarArgs {
  Real* const* hc = nullptr;
  int count = 0;
  int src = 0, dst = 0;  // buffers of the stage input and output
  Real* mass[4] = {};    // stage 1: each cell's west, east, south, north mass flux (dense), for apply_kernel
  BoundaryKind kind[4] = {};             // the sides' conditions
  const Real* side_c = nullptr;          // concentration through side k: side_c[4 s + k]
  const SegmentCondition<Real>* segments = nullptr;
  int segment_count = 0;
  const Real* segment_c = nullptr;       // through segment k: segment_c[s segment_count + k]
};

template <class Real>
struct MarchArgs {
  StateArrays<Real> src;  // stage input: the stencils are read from it (ghosts filled)
  StateArrays<Real> un;   // U^n (stages 2, 3)
  StateArrays<Real> dst;  // stage output (stages 2, 3; may alias un: read and written by one thread)
  Real* rh;               // stage 1: rhs of U^n, dense j * nx + i
  Real* rhu;
  Real* rhv;
  const roe3::BedPoints<Real>* bed;  // padded layout, interior and first ghost ring
  Grid g;
  roe3::Params<Real> prm;
  int rows;               // rows per chunk
  index_t strips, chunks;
  Roe3Ctrl* ctrl;
  double* positivity_sum;  // positivity account: the depths the clamps added (carried to U^{n+1}) of the owned cells, summed
  ScalarArgs<Real> sc;    // count = 0: no scalars
  CellBox owned;          // the cells whose rate, finiteness and clamps count (a rank's own; else the grid)
};

__device__ __forceinline__ double warp_max(double v) {
  for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}

// The scalars of active cell (i, j) (padded index c) after stage k of dt,
// whose edges carry the mass fluxes fw..fn: from the stage input's depths
// src_h and h c, combined with U^n's (depth hn) from stage 2 on; h c of the
// stage output = the concentration times its depth h1.
template <class Real>
__device__ void stage_scalars(const ScalarArgs<Real>& scalars, int k, const Grid& g, const Real* src_h, index_t i,
                              index_t j, index_t c, Real fw, Real fe, Real fs, Real fn, Real hn, Real h1, Real dt,
                              Real inv_dx, Real inv_dy) {
  const index_t pitch = g.pitch();
  for (int s = 0; s < scalars.count; ++s) {
    const Real* hc = scalars.hc[3 * s + scalars.src];
    const ScalarSides<Real> sides{{scalars.kind[0], scalars.kind[1], scalars.kind[2], scalars.kind[3]},
                                  scalars.side_c + 4 * s, scalars.segments, scalars.segment_count,
                                  scalars.segment_c + s * scalars.segment_count};
    const ScalarStencil<Real> st =
        grid_scalar_stencil(i, j, g.nx, g.ny, c, pitch, hc, concentration(hc[c], src_h[c]), fw, fe, fs, fn, sides,
                            [&](Side, index_t x) { return src_h[x]; });
    Real conc = transported_concentration(st, src_h[c], dt, inv_dx, inv_dy);
    if (k > 0) {
      const Real cn = concentration(scalars.hc[3 * s][c], hn);
      conc = combined_concentration(cn, hn, conc, transported_water(st, src_h[c], dt, inv_dx, inv_dy),
                                    ssp_rk3::stage_weight<Real>(k));
    }
    scalars.hc[3 * s + scalars.dst][c] = conc * h1;
  }
}

template <class Real>
__device__ __forceinline__ void gather9(const Real* __restrict__ a, index_t c, index_t pitch, Real (&out)[9]) {
#pragma unroll
  for (int dj = -1; dj <= 1; ++dj) {
#pragma unroll
    for (int di = -1; di <= 1; ++di) out[3 * (dj + 1) + (di + 1)] = a[c + dj * pitch + di];
  }
}

// One stage: kStage 0 stores L(U^n) and reduces the CFL rate; 1 and 2 apply
// ssp_rk3::stage with the step's dt. Every lane of a warp takes the same
// path through the row loop (shuffles need the whole warp).
// kMinBlocks > 0 asks the compiler for that many resident blocks per SM (a
// register cap of 65536 / (128 kMinBlocks)); 0 leaves registers uncapped.
// kScalars: with the passive scalars' mass fluxes (stage 1 stores them for
// apply_kernel; stages 2 and 3 transport the scalars); without, the kernel
// of every other run keeps its registers.
template <class Real, int kStage, int kMinBlocks, bool kScalars = false>
__global__ void __launch_bounds__(kThreads, kMinBlocks > 0 ? kMinBlocks : 1) march_kernel(const MarchArgs<Real> march) {
  if (!march.ctrl->active) return;
  const index_t warp = static_cast<index_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5);
  if (warp >= march.strips * march.chunks) return;
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const Grid& g = march.g;
  const roe3::Params<Real>& prm = march.prm;
  const PhysicsParams<Real>& p = prm.phys;
  const index_t pitch = g.pitch();
  const index_t strip = warp % march.strips;
  const index_t j0 = (warp / march.strips) * march.rows;
  const index_t j1 = j0 + march.rows < g.ny ? j0 + march.rows : g.ny;
  // Column of this lane; lanes past the first ghost column repeat it (their
  // results are never used, their loads stay inside the padding).
  const index_t i = strip * kStripWidth - 1 + lane;
  const index_t ic = i < g.nx ? i : g.nx;
  const bool owner = lane >= 1 && lane <= kStripWidth && i < g.nx;
  const double dt = kStage > 0 ? march.ctrl->dt : 0.0;

  CellPrimitive<Real> below[2];          // north Gauss points of the row below
  State<Real> fx_pend{}, fy_pend{}, interior_pend{};  // partial sums of the row below
  Real sx_pend(0), sy_pend(0);
  Real mw_pend(0), me_pend(0), ms_pend(0);  // kScalars: mass fluxes of the row below (west, east, south)
  double rate = 0;
  bool bad = false;
  Real added_depth_sum(0);

  for (index_t j = j0 - 1; j <= j1; ++j) {
    const index_t c = g.index(ic, j);
    Real h[9], hu[9], hv[9], z[9];
    gather9(march.src.h, c, pitch, h);
    gather9(march.src.hu, c, pitch, hu);
    gather9(march.src.hv, c, pitch, hv);
    gather9(march.src.z, c, pitch, z);
    const roe3::CellTrace<Real> t = roe3::cell_trace(h, hu, hv, z, march.bed[c], prm);

    // y-edge between the row below and this one: completes the row below
    // (from the second row on; the first row's south edge starts it).
    if (j >= j0) {
      roe3::EdgePair<Real> s;
#pragma unroll
      for (int l = 0; l < 2; ++l) s.f[l] = cartesian_edge<1>(below[l], t.at(recon::south + l), p);
      Real mn(0);  // kScalars: the y-edge's mass flux
      if constexpr (kScalars) {
        const CellPrimitive<Real> above[2] = {t.at(recon::south), t.at(recon::south + 1)};
        mn = roe3::pair_mass_flux<1>(below, above, s);
      }
      if (owner && j > j0) {
        const index_t cb = g.index(i, j - 1);
        const State<Real> r = roe3::rhs_from(fx_pend, fy_pend + roe3::into_lower(s), interior_pend, prm);
        // On a rank, the halo's cells are another rank's, and stale at the block's edge.
        if (!math::is_nan(march.src.z[cb]) && march.owned.contains(i, j - 1)) {
          if (kStage == 0) {
            const Real cr = roe3::rate_from(sx_pend, math::max(sy_pend, roe3::pair_speed(s)), prm);
            bad = bad || !(isfinite(cr) && isfinite(r.h) && isfinite(r.hu) && isfinite(r.hv));
            rate = fmax(rate, static_cast<double>(cr));
          } else {
            bad = bad || !(isfinite(r.h) && isfinite(r.hu) && isfinite(r.hv));
          }
        }
        if (kStage == 0) {
          const index_t d = (j - 1) * g.nx + i;
          march.rh[d] = r.h;
          march.rhu[d] = r.hu;
          march.rhv[d] = r.hv;
          if constexpr (kScalars) {
            march.sc.mass[0][d] = mw_pend;
            march.sc.mass[1][d] = me_pend;
            march.sc.mass[2][d] = ms_pend;
            march.sc.mass[3][d] = mn;
          }
        } else if (!math::is_nan(march.src.z[cb])) {
          const State<Real> u0{march.un.h[cb], march.un.hu[cb], march.un.hv[cb]};
          const State<Real> uk{march.src.h[cb], march.src.hu[cb], march.src.hv[cb]};
          Real added_depth;
          const State<Real> q = ssp_rk3::stage(kStage, u0, uk, r, static_cast<Real>(dt), p, added_depth);
          march.dst.h[cb] = q.h;
          march.dst.hu[cb] = q.hu;
          march.dst.hv[cb] = q.hv;
          if (march.owned.contains(i, j - 1)) added_depth_sum += added_depth;  // a rank's own cells (the halo's are another's)
          if constexpr (kScalars) {
            stage_scalars(march.sc, kStage, g, march.src.h, i, j - 1, cb, mw_pend, me_pend, ms_pend, mn, u0.h, q.h,
                          static_cast<Real>(dt), prm.inv_dx, prm.inv_dy);
          }
        }
      }
      fy_pend = roe3::into_upper(s);
      sy_pend = roe3::pair_speed(s);
      if constexpr (kScalars) ms_pend = mn;
    }

    // x-edge to the east neighbour; the west edge arrives from the lane below.
    if (j >= j0 && j < j1) {
      roe3::EdgePair<Real> e;
      CellPrimitive<Real> east_side[2];
#pragma unroll
      for (int l = 0; l < 2; ++l) {
        east_side[l] = shfl_down(t.at(recon::west + l), 1);
        e.f[l] = cartesian_edge<0>(t.at(recon::east + l), east_side[l], p);
      }
      if constexpr (kScalars) {
        const CellPrimitive<Real> west_side[2] = {t.at(recon::east), t.at(recon::east + 1)};
        me_pend = roe3::pair_mass_flux<0>(west_side, east_side, e);
        mw_pend = shfl_up(me_pend, 1);
      }
      const State<Real> from_west = shfl_up(roe3::into_upper(e), 1);
      const Real west_speed = shfl_up(roe3::pair_speed(e), 1);
      fx_pend = from_west + roe3::into_lower(e);
      sx_pend = math::max(west_speed, roe3::pair_speed(e));
      interior_pend = t.interior;
    }
#pragma unroll
    for (int l = 0; l < 2; ++l) below[l] = t.at(recon::north + l);
  }

  if (__any_sync(kFullMask, bad) && lane == 0) atomicOr(&march.ctrl->bad, 1);
  if (kStage > 0) warp_add_nonzero(march.positivity_sum, static_cast<double>(added_depth_sum));
  if (kStage == 0) {
    rate = warp_max(rate);
    if (lane == 0 && rate > 0) {
      atomicMax(&march.ctrl->rate_bits, static_cast<unsigned long long>(__double_as_longlong(rate)));
    }
  }
}

// The bed at the quadrature points of the interior and the first ghost ring
// (static: once per run).
template <class Real>
__global__ void bed_kernel(const Real* __restrict__ z, Grid g, recon::Params<Real> rec,
                           roe3::BedPoints<Real>* __restrict__ bed) {
  const index_t w = g.nx + 2;
  const index_t t = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= w * (g.ny + 2)) return;
  const index_t c = g.index(t % w - 1, t / w - 1);
  Real zs[9];
  gather9(z, c, g.pitch(), zs);
  bed[c] = roe3::bed_points(zs, rec);
}

// Start of a step: is one to be taken?
__global__ void begin_kernel(Roe3Ctrl* ctrl) {
  Roe3Ctrl& c = *ctrl;
  c.active = c.status == 0 && takes_step(c.t, c.target, c.steps, c.max_steps);
  c.rate_bits = 0;
  c.bad = 0;
}

// dt from the rate of U^n, and the new time: step control as every
// executor's (solver/time_step.hpp).
__global__ void dt_kernel(Roe3Ctrl* ctrl, double cfl, double dry_dt) {
  Roe3Ctrl& c = *ctrl;
  if (!c.active) return;
  if (c.bad) {
    c.status = 1;
    c.active = 0;
    return;
  }
  const double rate = __longlong_as_double(static_cast<long long>(c.rate_bits));
  const double dt = cfl_time_step(rate, cfl, dry_dt, step_cap(c.t, c.target, c.dt_max));
  c.dt = dt;
  c.maxima_time = c.t + dt;
  c.t = step_end_time(c.t, dt, c.target);
  c.steps += 1;
}

// End of a step: a non-finite later stage stops the run.
__global__ void end_kernel(Roe3Ctrl* ctrl) {
  Roe3Ctrl& c = *ctrl;
  if (c.active && c.bad) c.status = 1;
}

// U1 = stage 1 from U^n and its stored rhs, point-wise (kScalars: and the
// scalars, from the mass fluxes stage 1 stored).
template <class Real, bool kScalars = false>
__global__ void apply_kernel(const MarchArgs<Real> march) {
  if (!march.ctrl->active) return;
  const Grid& g = march.g;
  const index_t n = g.cells();
  const index_t t = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  Real added_depth(0);
  // No early return: the whole warp adds its gains at the end.
  if (t < n) {
    const index_t c = g.index(t % g.nx, t / g.nx);
    if (!math::is_nan(march.un.z[c])) {
      const State<Real> u0{march.un.h[c], march.un.hu[c], march.un.hv[c]};
      const Real dt = static_cast<Real>(march.ctrl->dt);
      const State<Real> q = ssp_rk3::stage(0, u0, u0, State<Real>{march.rh[t], march.rhu[t], march.rhv[t]}, dt,
                                           march.prm.phys, added_depth);
      march.dst.h[c] = q.h;
      march.dst.hu[c] = q.hu;
      march.dst.hv[c] = q.hv;
      if (!march.owned.contains(t % g.nx, t / g.nx)) added_depth = Real(0);  // a rank's halo cell: its owner counts it
      if constexpr (kScalars) {
        const ScalarArgs<Real>& scalars = march.sc;
        stage_scalars(scalars, 0, g, march.un.h, t % g.nx, t / g.nx, c, scalars.mass[0][t], scalars.mass[1][t],
                      scalars.mass[2][t], scalars.mass[3][t], u0.h, q.h, dt, march.prm.inv_dx, march.prm.inv_dy);
      }
    }
  }
  warp_add_nonzero(march.positivity_sum, static_cast<double>(added_depth));
}

// Sides whose condition follows a time series (Forcing::boundary; n = 0:
// the constant value), evaluated on the device at *t, the step's start time
// (t null: the constant values).
struct SideSeries {
  forcing::SideSeries views;
  const double* t = nullptr;
};

template <class Real>
__device__ BoundaryCondition<Real> at_time(BoundaryCondition<Real> bc, const SideSeries& series, int side) {
  return series.t ? condition_at_time(bc, series.views.side[side], *series.t) : bc;
}

// Boundary segments (Problem::segments): their conditions and, per
// segment, the time series of its value (n = 0: the constant value).
template <class Real>
struct Segments {
  const SegmentCondition<Real>* at = nullptr;
  const SeriesView* series = nullptr;
  int count = 0;
};

// The condition beyond boundary cell `along` of a side: its segment's (at
// *t where the segment follows a series and t is given), else side_bc.
template <class Real>
__device__ BoundaryCondition<Real> cell_bc(BoundaryCondition<Real> side_bc, Side side, index_t along,
                                           const Segments<Real>& seg, const double* t) {
  const int k = segment_at(side, along, seg.at, seg.count);
  if (k < 0) return side_bc;
  return t ? condition_at_time(seg.at[k].bc, seg.series[k], *t) : seg.at[k].bc;
}

// West/east ghosts, layers 0..ghost-1, rows 0..ny-1.
template <class Real>
__global__ void ghost_we_kernel(StateArrays<Real> a, Grid g, BoundaryCondition<Real> west,
                                BoundaryCondition<Real> east, const Roe3Ctrl* ctrl, SideSeries series,
                                Segments<Real> seg, PhysicsParams<Real> p) {
  if (ctrl && !ctrl->active) return;
  west = at_time(west, series, 0);
  east = at_time(east, series, 1);
  const index_t n = static_cast<index_t>(Grid::ghost) * g.ny;
  const index_t t = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const int k = static_cast<int>(t / g.ny);
  const index_t j = t % g.ny;
  fill_ghost_cell(a, g, Side::west, k, j, cell_bc(west, Side::west, j, seg, series.t), p);
  fill_ghost_cell(a, g, Side::east, k, j, cell_bc(east, Side::east, j, seg, series.t), p);
}

// South/north ghosts over the full padded width (corners from west/east).
template <class Real>
__global__ void ghost_sn_kernel(StateArrays<Real> a, Grid g, BoundaryCondition<Real> south,
                                BoundaryCondition<Real> north, const Roe3Ctrl* ctrl, SideSeries series,
                                Segments<Real> seg, PhysicsParams<Real> p) {
  if (ctrl && !ctrl->active) return;
  south = at_time(south, series, 2);
  north = at_time(north, series, 3);
  const index_t w = g.nx + 2 * Grid::ghost;
  const index_t n = static_cast<index_t>(Grid::ghost) * w;
  const index_t t = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const int k = static_cast<int>(t / w);
  const index_t i = t % w - Grid::ghost;
  fill_ghost_cell(a, g, Side::south, k, i, cell_bc(south, Side::south, i, seg, series.t), p);
  fill_ghost_cell(a, g, Side::north, k, i, cell_bc(north, Side::north, i, seg, series.t), p);
}

// Maxima after a step, as CpuGridBackend::update_maxima with the time
// maxima_time (ctrl null: of the initial state, at time 0).
template <class Real>
__global__ void step_maxima_kernel(StateArrays<Real> a, Grid g, Real h_dry, double threshold, const Roe3Ctrl* ctrl,
                                   double* __restrict__ max_h, double* __restrict__ max_speed,
                                   double* __restrict__ arrival) {
  if (ctrl && !ctrl->active) return;
  const index_t n = g.cells();
  const index_t k = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const index_t c = g.index(k % g.nx, k / g.nx);
  const State<Real> q{a.h[c], a.hu[c], a.hv[c]};
  track_cell_maxima(q, ctrl ? ctrl->maxima_time : 0.0, h_dry, threshold, max_h[k], max_speed[k], arrival[k]);
}

// The sides' account (boundary_flow.cuh) of a step, one thread per boundary
// edge and stage: block (b, s, k) sums the water per second and unit length
// into and out of the domain through edges b kThreads.. of side s that the
// right-hand side of stage k's input a[k] (ghosts filled) moves, into
// part[2 ((k 4 + s) gridDim.x + b)] and the next slot, when the step is
// taken. One launch for the three stages (before stage 3 overwrites U^n):
// each launch costs its latency, not its work.
template <class Real>
struct StageInputs {
  StateArrays<Real> a[3];
};

template <class Real>
__global__ void __launch_bounds__(forcing::kThreads)
    side_rate_kernel(StageInputs<Real> in, const roe3::BedPoints<Real>* bed, Grid g, roe3::Params<Real> prm,
                     CellBox owned, const Roe3Ctrl* ctrl, double* part) {
  if (!ctrl->active) return;  // the whole grid
  __shared__ double sum_buf[forcing::kThreads];
  const int side = static_cast<int>(blockIdx.y);
  const StateArrays<Real>& a = in.a[blockIdx.z];
  const bool x_side = side < 2;
  const bool ghost_first = side == 0 || side == 2;
  const SideCells along = owned_side_cells(owned, g.nx, g.ny, side);  // a rank's part of a domain side
  const index_t pitch = g.pitch();
  const auto trace = [&](index_t c) {
    Real h[9], hu[9], hv[9], z[9];
    gather9(a.h, c, pitch, h);
    gather9(a.hu, c, pitch, hu);
    gather9(a.hv, c, pitch, hv);
    gather9(a.z, c, pitch, z);
    return roe3::cell_trace(h, hu, hv, z, bed[c], prm);
  };
  double rate_in = 0, rate_out = 0;
  const index_t k = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const SideCell e = side_cell(side, k, g.nx, g.ny);
  if (k >= along.begin && k < along.end && !math::is_nan(a.z[g.index(e.i, e.j)])) {
    const index_t c = g.index(e.i, e.j);
    const index_t ghost = g.index(e.i + e.di, e.j + e.dj);
    account_side(rate_in, rate_out,
                 x_side ? roe3::boundary_inflow<0>(trace(c), trace(ghost), ghost_first, prm.phys)
                        : roe3::boundary_inflow<1>(trace(c), trace(ghost), ghost_first, prm.phys));
  }
  rate_in = forcing::block_sum(rate_in, sum_buf);
  rate_out = forcing::block_sum(rate_out, sum_buf);
  if (threadIdx.x == 0) {
    const index_t at = 2 * ((static_cast<index_t>(blockIdx.z) * 4 + side) * gridDim.x + blockIdx.x);
    part[at] = rate_in;
    part[at + 1] = rate_out;
  }
}

// flow[t] (t = 2 s + 0 in, + 1 out) += over the three stages, the sums of
// their side_rate_kernel parts (`blocks` per side, stage k's from
// part + 8 blocks k, in block order) times the side's length, the stage's
// weight in U^{n+1} (ssp_rk3::rhs_weight) and dt (in the run's precision),
// when the step was taken.
template <class Real>
__global__ void side_add_kernel(const Roe3Ctrl* ctrl, const double* part, int blocks, double dx, double dy,
                                double* flow) {
  if (!ctrl->active || threadIdx.x >= 8) return;
  const int t = static_cast<int>(threadIdx.x), side = t / 2;
  const double dt = static_cast<double>(static_cast<Real>(ctrl->dt));
  const double length = side < 2 ? dy : dx;
  for (int k = 0; k < ssp_rk3::stages; ++k) {
    const double* p = part + 8 * static_cast<index_t>(blocks) * k + 2 * side * blocks + (t & 1);
    double sum = 0;
    for (int b = 0; b < blocks; ++b) sum += p[2 * b];
    flow[t] += ssp_rk3::rhs_weight(k) * dt * (sum * length);
  }
}

} // namespace shallows::gpu::roe3k
