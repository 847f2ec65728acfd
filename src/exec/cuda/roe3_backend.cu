// SPDX-License-Identifier: MIT
// CUDA executor of the third-order scheme (scheme = "roe3", seed 003), plain
// version: one thread per cell, the numbers of the CPU executor
// (src/exec/openmp/cartesian_cpu_roe3.cpp) with the same header-only
// numerics. Per SSP-RK3 stage:
//   1. ghost fill of the stage input (west/east, then south/north over the
//      padded width: two launches, as the CPU does);
//   2. trace kernel: roe3::cell_trace of every interior cell and of the first
//      ghost ring into a global array (padded indexing);
//   3. rhs kernel: the four edge_pairs of a cell from the stored traces,
//      cell_rhs into rhs arrays, cell_rate of active cells reduced per warp and
//      combined with atomicMax on the bits of the non-negative double rate
//      (order-independent, so deterministic); a flag marks non-finite values;
//   4. stage kernel: ssp_rk3::stage point-wise, as the CPU's apply_stage.
// The rate and the flag are copied to the host after every stage (a few
// bytes): dt is computed in double from the first stage's rate exactly as the
// CPU does, and a non-finite stage throws before it is applied.
// The bed's quadrature-point values are computed once on the host with the
// same function and copied to the device. Compiled with --fmad=false, the
// results match the CPU's to round-off (in practice bit for bit).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_check.cuh"
#include "device_array.cuh"
#include "shallows/exec/cuda_backend.hpp"
#include "shallows/exec/host_fields.hpp"
#include "shallows/mesh/structured/ghost_cells.hpp"
#include "shallows/numerics/roe3.hpp"
#include "shallows/numerics/ssp_rk3.hpp"
#include "shallows/solver/backend.hpp"

namespace shallows {

std::unique_ptr<Backend> make_cuda_roe3_backend(const Problem& problem, const BackendOptions& options);

namespace {

constexpr unsigned kThreads = 128;

unsigned blocks_for(index_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// West/east ghosts, layers 0..ghost-1, rows 0..ny-1.
template <class Real>
__global__ void ghost_we_kernel(StateArrays<Real> a, Grid g, BoundaryCondition<Real> west,
                                BoundaryCondition<Real> east) {
  const index_t n = static_cast<index_t>(Grid::ghost) * g.ny;
  const index_t t = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const int k = static_cast<int>(t / g.ny);
  const index_t j = t % g.ny;
  fill_ghost_cell(a, g, Side::west, k, j, west);
  fill_ghost_cell(a, g, Side::east, k, j, east);
}

// South/north ghosts over the full padded width (corners from west/east).
template <class Real>
__global__ void ghost_sn_kernel(StateArrays<Real> a, Grid g, BoundaryCondition<Real> south,
                                BoundaryCondition<Real> north) {
  const index_t w = g.nx + 2 * Grid::ghost;
  const index_t n = static_cast<index_t>(Grid::ghost) * w;
  const index_t t = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const int k = static_cast<int>(t / w);
  const index_t i = t % w - Grid::ghost;
  fill_ghost_cell(a, g, Side::south, k, i, south);
  fill_ghost_cell(a, g, Side::north, k, i, north);
}

template <class Real>
__device__ __forceinline__ void gather9(const Real* a, index_t c, index_t pitch, Real (&out)[9]) {
  for (int dj = -1; dj <= 1; ++dj) {
    for (int di = -1; di <= 1; ++di) out[3 * (dj + 1) + (di + 1)] = a[c + dj * pitch + di];
  }
}

// Traces of the interior and the first ghost ring (columns/rows -1..n).
template <class Real>
__global__ void trace_kernel(StateArrays<Real> a, Grid g, roe3::Params<Real> prm,
                             const roe3::BedPoints<Real>* __restrict__ bed, roe3::CellTrace<Real>* __restrict__ out) {
  const index_t w = g.nx + 2, hgt = g.ny + 2;
  const index_t t = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= w * hgt) return;
  const index_t i = t % w - 1, j = t / w - 1;
  const index_t c = g.index(i, j);
  const index_t pitch = g.pitch();
  Real h[9], hu[9], hv[9], z[9];
  gather9(a.h, c, pitch, h);
  gather9(a.hu, c, pitch, hu);
  gather9(a.hv, c, pitch, hv);
  gather9(a.z, c, pitch, z);
  out[c] = roe3::cell_trace(h, hu, hv, z, bed[c], prm);
}

__device__ __forceinline__ double warp_max(double v) {
  for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_down_sync(0xffffffffu, v, o));
  return v;
}

// rhs of every interior cell; the largest rate of active cells into *rate
// (bits of a non-negative double), any non-finite value sets *bad.
template <class Real>
__global__ void rhs_kernel(Grid g, roe3::Params<Real> prm, const Real* __restrict__ z,
                           const roe3::CellTrace<Real>* __restrict__ tr, Real* __restrict__ rh,
                           Real* __restrict__ rhu, Real* __restrict__ rhv, unsigned long long* rate_bits,
                           int* bad) {
  const index_t n = g.cells();
  const index_t t = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  double local = 0;
  if (t < n) {
    const index_t i = t % g.nx, j = t / g.nx;
    const index_t c = g.index(i, j);
    const index_t pitch = g.pitch();
    const PhysicsParams<Real>& p = prm.phys;
    const roe3::EdgePair<Real> west = roe3::edge_pair<0>(tr[c - 1], tr[c], p);
    const roe3::EdgePair<Real> east = roe3::edge_pair<0>(tr[c], tr[c + 1], p);
    const roe3::EdgePair<Real> south = roe3::edge_pair<1>(tr[c - pitch], tr[c], p);
    const roe3::EdgePair<Real> north = roe3::edge_pair<1>(tr[c], tr[c + pitch], p);
    const State<Real> r = roe3::cell_rhs(tr[c], west, east, south, north, prm);
    rh[t] = r.h;
    rhu[t] = r.hu;
    rhv[t] = r.hv;
    if (!math::is_nan(z[c])) {
      const Real rate = roe3::cell_rate(west, east, south, north, prm);
      const bool finite = isfinite(rate) && isfinite(r.h) && isfinite(r.hu) && isfinite(r.hv);
      if (!finite) {
        atomicOr(bad, 1);
      } else if (rate > Real(0)) {
        local = static_cast<double>(rate);
      }
    }
  }
  local = warp_max(local);
  if ((threadIdx.x & 31u) == 0 && local > 0) {
    atomicMax(rate_bits, static_cast<unsigned long long>(__double_as_longlong(local)));
  }
}

// dst = stage k from U^n (un), the stage input src and the rhs.
template <class Real>
__global__ void stage_kernel(int k, Grid g, PhysicsParams<Real> p, StateArrays<Real> un, StateArrays<Real> src,
                             StateArrays<Real> dst, const Real* __restrict__ rh, const Real* __restrict__ rhu,
                             const Real* __restrict__ rhv, Real dt) {
  const index_t n = g.cells();
  const index_t t = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const index_t i = t % g.nx, j = t / g.nx;
  const index_t c = g.index(i, j);
  if (math::is_nan(un.z[c])) return;
  const State<Real> u0{un.h[c], un.hu[c], un.hv[c]};
  const State<Real> uk{src.h[c], src.hu[c], src.hv[c]};
  const State<Real> q = ssp_rk3::stage(k, u0, uk, State<Real>{rh[t], rhu[t], rhv[t]}, dt, p);
  dst.h[c] = q.h;
  dst.hu[c] = q.hu;
  dst.hv[c] = q.hv;
}

// Maxima after a step that ended at time t, as CpuGridBackend::update_maxima.
template <class Real>
__global__ void maxima_kernel(StateArrays<Real> a, Grid g, double h_dry, double threshold, double t,
                              double* __restrict__ max_h, double* __restrict__ max_speed,
                              double* __restrict__ arrival) {
  const index_t n = g.cells();
  const index_t k = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const index_t c = g.index(k % g.nx, k / g.nx);
  const double hc = static_cast<double>(a.h[c]);
  if (hc <= h_dry) return;
  const double speed = hypot(static_cast<double>(a.hu[c]), static_cast<double>(a.hv[c])) / hc;
  max_h[k] = fmax(max_h[k], hc);
  max_speed[k] = fmax(max_speed[k], speed);
  if (isnan(arrival[k]) && hc > threshold) arrival[k] = t;
}

template <class Real>
class CudaRoe3Backend final : public Backend {
 public:
  CudaRoe3Backend(const Problem& p, const BackendOptions& o)
      : grid_(p.grid),
        physics_(to_precision<Real>(p.physics)),
        prm_(roe3::make_params<Real>(physics_, p.grid.dx, p.grid.dy)),
        cfl_(p.cfl),
        track_maxima_(o.track_maxima),
        arrival_threshold_(o.arrival_threshold) {
    if (grid_.nx <= 0 || grid_.ny <= 0) throw std::runtime_error("CUDA backend: empty grid");
    const int device = cuda_options_from_environment().device;
    const int count = cuda_device_count();
    if (device < 0 || device >= count) {
      throw std::runtime_error("CUDA backend: device " + std::to_string(device) + " requested, " +
                               std::to_string(count) + " present");
    }
    SHALLOWS_CUDA_CHECK(cudaSetDevice(device));
    for (int s = 0; s < 4; ++s) bc_[s] = to_precision<Real>(p.boundary[s]);

    const auto padded = static_cast<std::size_t>(grid_.padded_size());
    const auto cells = static_cast<std::size_t>(grid_.cells());
    std::size_t need = padded * (7 * sizeof(Real) + sizeof(roe3::BedPoints<Real>) + sizeof(roe3::CellTrace<Real>)) +
                       3 * cells * sizeof(Real) + (track_maxima_ ? 3 * cells * sizeof(double) : 0) + 64;
    char what[160];
    std::snprintf(what, sizeof what, "a %lldx%lld roe3 grid in %s", static_cast<long long>(grid_.nx),
                  static_cast<long long>(grid_.ny), sizeof(Real) == 4 ? "float" : "double");
    cudax::require_free_memory(need, what);

    PaddedFields<Real> f = make_padded_fields<Real>(p);
    for (auto* b : {&h_, &hu_, &hv_, &sh_, &shu_, &shv_, &z_}) *b = DeviceArray<Real>(padded);
    h_.upload(f.h.data(), padded);
    hu_.upload(f.hu.data(), padded);
    hv_.upload(f.hv.data(), padded);
    sh_.upload(f.h.data(), padded);
    shu_.upload(f.hu.data(), padded);
    shv_.upload(f.hv.data(), padded);
    z_.upload(f.z.data(), padded);
    for (auto* b : {&rh_, &rhu_, &rhv_}) *b = DeviceArray<Real>(cells);

    // Bed points of the interior and the first ghost ring, on the host.
    std::vector<roe3::BedPoints<Real>> bed(padded, roe3::BedPoints<Real>{});
    const index_t pitch = grid_.pitch();
    for (index_t j = -1; j <= grid_.ny; ++j) {
      for (index_t i = -1; i <= grid_.nx; ++i) {
        const index_t c = grid_.index(i, j);
        Real zs[9];
        for (int dj = -1; dj <= 1; ++dj) {
          for (int di = -1; di <= 1; ++di) zs[3 * (dj + 1) + (di + 1)] = f.z[static_cast<std::size_t>(c + dj * pitch + di)];
        }
        bed[static_cast<std::size_t>(c)] = roe3::bed_points(zs, prm_.rec);
      }
    }
    bed_ = DeviceArray<roe3::BedPoints<Real>>(padded);
    bed_.upload(bed.data(), padded);
    trace_ = DeviceArray<roe3::CellTrace<Real>>(padded);
    SHALLOWS_CUDA_CHECK(cudaMemset(trace_.get(), 0, padded * sizeof(roe3::CellTrace<Real>)));
    rate_ = DeviceArray<unsigned long long>(1);
    bad_ = DeviceArray<int>(1);

    if (track_maxima_) {
      max_h_ = DeviceArray<double>(cells);
      max_speed_ = DeviceArray<double>(cells);
      arrival_ = DeviceArray<double>(cells);
      const std::vector<double> zero(cells, 0.0), nan(cells, std::numeric_limits<double>::quiet_NaN());
      max_h_.upload(zero.data(), cells);
      max_speed_.upload(zero.data(), cells);
      arrival_.upload(nan.data(), cells);
    }
    fill_ghosts(state_arrays());
    if (track_maxima_) update_maxima(0.0);
    SHALLOWS_CUDA_CHECK(cudaDeviceSynchronize());
  }

  std::string name() const override { return "cuda-roe3"; }

  double step(double t, double dt_max) override {
    double dt = 0;
    for (int k = 0; k < ssp_rk3::stages; ++k) {
      const StateArrays<Real> src = k == 0 ? state_arrays() : stage_arrays();
      fill_ghosts(src);
      const double rate = compute_rhs(src);
      if (!std::isfinite(rate)) {
        throw std::runtime_error("solution is no longer finite at t = " + std::to_string(t) + " s (roe3 stage " +
                                 std::to_string(k + 1) + ")");
      }
      if (k == 0) {
        dt = rate > 0 ? cfl_ / rate : dt_max;
        dt = std::min(dt, dt_max);
      }
      const StateArrays<Real> dst = k == ssp_rk3::stages - 1 ? state_arrays() : stage_arrays();
      stage_kernel<Real><<<blocks_for(grid_.cells()), kThreads>>>(k, grid_, physics_, state_arrays(), src, dst,
                                                                  rh_.get(), rhu_.get(), rhv_.get(),
                                                                  static_cast<Real>(dt));
      SHALLOWS_CUDA_CHECK_LAUNCH("roe3 stage_kernel");
    }
    fill_ghosts(state_arrays());
    if (track_maxima_) update_maxima(t + dt);
    return dt;
  }

  void read_state(Fields& out) const override {
    const auto padded = static_cast<std::size_t>(grid_.padded_size());
    std::vector<Real> buf(padded);
    h_.download(buf.data(), padded);
    copy_interior(grid_, buf.data(), out.h);
    hu_.download(buf.data(), padded);
    copy_interior(grid_, buf.data(), out.hu);
    hv_.download(buf.data(), padded);
    copy_interior(grid_, buf.data(), out.hv);
  }

  void read_maxima(Maxima& out) const override {
    if (!track_maxima_) {
      out.max_h.clear();
      out.max_speed.clear();
      out.arrival_time.clear();
      return;
    }
    const auto cells = static_cast<std::size_t>(grid_.cells());
    out.max_h.resize(cells);
    out.max_speed.resize(cells);
    out.arrival_time.resize(cells);
    max_h_.download(out.max_h.data(), cells);
    max_speed_.download(out.max_speed.data(), cells);
    arrival_.download(out.arrival_time.data(), cells);
  }

  // As CpuGridBackend::volume: rows summed in order, then the rows in order.
  double volume() const override {
    const auto padded = static_cast<std::size_t>(grid_.padded_size());
    std::vector<Real> h(padded);
    h_.download(h.data(), padded);
    double total = 0;
    for (index_t j = 0; j < grid_.ny; ++j) {
      double sum = 0;
      for (index_t i = 0; i < grid_.nx; ++i) sum += static_cast<double>(h[static_cast<std::size_t>(grid_.index(i, j))]);
      total += sum;
    }
    return total * grid_.dx * grid_.dy;
  }

 private:
  StateArrays<Real> state_arrays() const { return {h_.get(), hu_.get(), hv_.get(), z_.get()}; }
  StateArrays<Real> stage_arrays() const { return {sh_.get(), shu_.get(), shv_.get(), z_.get()}; }

  void fill_ghosts(const StateArrays<Real>& a) const {
    ghost_we_kernel<Real><<<blocks_for(Grid::ghost * grid_.ny), kThreads>>>(a, grid_, bc_[0], bc_[1]);
    SHALLOWS_CUDA_CHECK_LAUNCH("roe3 ghost_we_kernel");
    ghost_sn_kernel<Real><<<blocks_for(Grid::ghost * (grid_.nx + 2 * Grid::ghost)), kThreads>>>(a, grid_, bc_[2],
                                                                                                bc_[3]);
    SHALLOWS_CUDA_CHECK_LAUNCH("roe3 ghost_sn_kernel");
  }

  // rhs of every interior cell; the largest rate (NaN if anything is not finite).
  double compute_rhs(const StateArrays<Real>& a) {
    trace_kernel<Real><<<blocks_for((grid_.nx + 2) * (grid_.ny + 2)), kThreads>>>(a, grid_, prm_, bed_.get(),
                                                                                 trace_.get());
    SHALLOWS_CUDA_CHECK_LAUNCH("roe3 trace_kernel");
    SHALLOWS_CUDA_CHECK(cudaMemsetAsync(rate_.get(), 0, sizeof(unsigned long long)));
    SHALLOWS_CUDA_CHECK(cudaMemsetAsync(bad_.get(), 0, sizeof(int)));
    rhs_kernel<Real><<<blocks_for(grid_.cells()), kThreads>>>(grid_, prm_, z_.get(), trace_.get(), rh_.get(),
                                                             rhu_.get(), rhv_.get(), rate_.get(), bad_.get());
    SHALLOWS_CUDA_CHECK_LAUNCH("roe3 rhs_kernel");
    unsigned long long bits = 0;
    int bad = 0;
    rate_.download(&bits, 1);  // synchronises (and reports faults of the kernels)
    bad_.download(&bad, 1);
    if (bad) return std::numeric_limits<double>::quiet_NaN();
    double rate = 0;
    static_assert(sizeof(rate) == sizeof(bits));
    std::memcpy(&rate, &bits, sizeof rate);
    return rate;
  }

  void update_maxima(double t) const {
    maxima_kernel<Real><<<blocks_for(grid_.cells()), kThreads>>>(state_arrays(), grid_,
                                                                static_cast<double>(physics_.h_dry),
                                                                arrival_threshold_, t, max_h_.get(),
                                                                max_speed_.get(), arrival_.get());
    SHALLOWS_CUDA_CHECK_LAUNCH("roe3 maxima_kernel");
  }

  Grid grid_;
  PhysicsParams<Real> physics_;
  roe3::Params<Real> prm_;
  double cfl_;
  bool track_maxima_;
  double arrival_threshold_;
  BoundaryCondition<Real> bc_[4];
  DeviceArray<Real> h_, hu_, hv_, sh_, shu_, shv_, z_, rh_, rhu_, rhv_;
  DeviceArray<roe3::BedPoints<Real>> bed_;
  DeviceArray<roe3::CellTrace<Real>> trace_;
  DeviceArray<unsigned long long> rate_;
  DeviceArray<int> bad_;
  DeviceArray<double> max_h_, max_speed_, arrival_;
};

} // namespace

std::unique_ptr<Backend> make_cuda_roe3_backend(const Problem& problem, const BackendOptions& options) {
  if (problem.precision == Precision::single_precision) {
    return std::make_unique<CudaRoe3Backend<float>>(problem, options);
  }
  return std::make_unique<CudaRoe3Backend<double>>(problem, options);
}

} // namespace shallows
