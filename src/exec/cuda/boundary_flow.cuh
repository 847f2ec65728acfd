// SPDX-License-Identifier: MIT
#pragma once
// The water crossing the domain's sides (grids) or boundary groups (meshes)
// on the CUDA executors, as the CPU executors account it: blocks sum the
// inflow and outflow rates of the boundary edges by a fixed tree (the same
// bits run after run), one block per side or group on the state a step
// starts from (first order: boundary_flux.hpp, mesh_boundary_inflow), or per
// side, stage and 128 edges on the SSP-RK3 stage inputs (third order,
// roe3::boundary_inflow); once the step's dt is known, the rates times dt (and
// the stage weights) join the totals (SideAccount). Launched only where a
// side or group is not a wall. A rank counts the sides of its block that are
// sides of the domain, along its owned cells (owned_side_cells).
#include <vector>

#include "cuda_check.cuh"
#include "device_array.cuh"
#include "forcing_kernels.cuh"
#include "shallows/bc/side_account.hpp"
#include "shallows/mesh/structured/boundary_flux.hpp"
#include "shallows/mesh/unstructured/mesh_transport.hpp"
#include "shallows/solver/backend.hpp"
#include "shallows/solver/forcing.hpp"
#include "step_kernels.cuh"

namespace shallows::gpu {

// rate[2 s], rate[2 s + 1]: the water per second into and out of the domain
// through side s (m^3/s) on the state the step launch starts from, the
// sides' series (side_series) at its time.
template <class Real>
__global__ void __launch_bounds__(forcing::kThreads)
    boundary_rate_kernel(const Params<Real> grid, const PlainExtras<Real> extras, const Launch launch,
                         const forcing::SideSeries side_series, double dx, double dy, double* rate) {
  __shared__ double sum_buf[forcing::kThreads];
  const int side = static_cast<int>(blockIdx.x);
  const Ctrl ctrl = grid.ctrl[launch.slot];
  const int b = ctrl.parity;
  const BoundaryCondition<Real> side_now = side_at(grid, side_series, side, launch_time(ctrl, launch));
  const Real* h = grid.h[b];
  const Real* hu = grid.hu[b];
  const Real* hv = grid.hv[b];
  const bool x_side = side < 2;
  const SideCells along = owned_side_cells(grid.owned, grid.nx, grid.ny, side);  // a rank's part of a domain side
  double in = 0, out = 0;
  for (index_t k = along.begin + threadIdx.x; k < along.end; k += blockDim.x) {
    const SideCell e = side_cell(side, k, grid.nx, grid.ny);
    const index_t c = grid.index(e.i, e.j);
    const State<Real> q{h[c], hu[c], hv[c]};
    const Real z = grid.z[c];
    const State<Real> ghost =
        ghost_state(q, z, static_cast<Side>(side), condition_at(static_cast<Side>(side), k, side_now, extras.segments,
                                                                extras.segment_count),
                    grid.phys);
    account_side(in, out, boundary_inflow_rate(static_cast<Side>(side), ghost, q, z, grid.phys));
  }
  in = forcing::block_sum(in, sum_buf);
  out = forcing::block_sum(out, sum_buf);
  if (threadIdx.x == 0) {
    const double length = x_side ? dy : dx;
    rate[2 * side] = in * length;
    rate[2 * side + 1] = out * length;
  }
}

// rate[2 g], rate[2 g + 1]: the water per second into and out of the domain
// through boundary group g of a mesh (m^3/s) on the state the step launch
// starts from: its open edges open_edges[group_start[g] .. group_start[g + 1]),
// in edge order, one block per group.
template <class Real>
__global__ void __launch_bounds__(forcing::kThreads)
    mesh_boundary_rate_kernel(const MeshArrays<Real> mesh, const MeshState<Real> q, const PhysicsParams<Real> phys,
                              const Ctrl* ctrl, const Launch launch, const mesh_index* open_edges,
                              const index_t* group_start, double* rate) {
  __shared__ double sum_buf[forcing::kThreads];
  if (!launch_takes_step(ctrl[launch.slot], launch)) return;  // the same on every thread
  const index_t g = blockIdx.x;
  double in = 0, out = 0;
  for (index_t k = group_start[g] + threadIdx.x; k < group_start[g + 1]; k += blockDim.x)
    account_side(in, out, mesh_boundary_inflow(mesh, q, open_edges[k], phys));
  in = forcing::block_sum(in, sum_buf);
  out = forcing::block_sum(out, sum_buf);
  if (threadIdx.x == 0) {
    rate[2 * g] = in;
    rate[2 * g + 1] = out;
  }
}

// flow[k] += dt rate[k], k < n, when the launch that filled slot `slot` took
// a step; dt rounded to Dt as the CPU executor takes it (a grid's update's
// precision, a mesh's double).
template <class Dt>
__global__ void boundary_add_kernel(const Ctrl* ctrl, int slot, const double* rate, double* flow, int n) {
  const Ctrl& c = ctrl[slot];
  const int k = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (!c.stepped || k >= n) return;
  flow[k] += static_cast<double>(static_cast<Dt>(c.dt)) * rate[k];
}

// An executor's account of the sides on the device: in and out through each
// of `pairs` sides or boundary groups (flow) and the rates its kernels sum
// before the step's dt is known. Empty where every side is a wall.
class SideAccount {
 public:
  SideAccount() = default;
  SideAccount(bool kept, std::size_t rates, std::size_t pairs = 4) : kept_(kept), pairs_(pairs) {
    if (!kept) return;
    rate_ = DeviceArray<double>(rates);
    flow_ = DeviceArray<double>(2 * pairs);
    SHALLOWS_CUDA_CHECK(cudaMemset(flow_.get(), 0, 2 * pairs * sizeof(double)));
  }

  bool kept() const { return kept_; }
  double* rate() const { return rate_.get(); }
  double* flow() const { return flow_.get(); }

  // flow += dt rate after the launch that filled slot `slot`, on stream (boundary_add_kernel's Dt).
  template <class Dt>
  void add(const Ctrl* ctrl, int slot, cudaStream_t stream) const {
    const int n = static_cast<int>(2 * pairs_);
    boundary_add_kernel<Dt><<<static_cast<unsigned>((n + 127) / 128), 128, 0, stream>>>(ctrl, slot, rate_.get(),
                                                                                         flow_.get(), n);
    SHALLOWS_CUDA_CHECK_LAUNCH("boundary_add_kernel");
  }

  // In, out of each side in order (ForcingState::boundary); synchronises stream.
  std::vector<double> read(cudaStream_t stream) const {
    std::vector<double> v(2 * pairs_);
    SHALLOWS_CUDA_CHECK(
        cudaMemcpyAsync(v.data(), flow_.get(), v.size() * sizeof(double), cudaMemcpyDeviceToHost, stream));
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream));
    return v;
  }

  // Backend::boundary_flow: summed per side in the CPU executors' order.
  BoundaryFlow total(cudaStream_t stream) const {
    if (!kept_) return {};
    const std::vector<double> v = read(stream);
    return BoundaryFlow::of_pairs(v.data(), pairs_);
  }

  // Backend::read_forcing_state's part; load() takes it back (sizes checked).
  void read_into(ForcingState& out, cudaStream_t stream) const {
    if (kept_) out.boundary = read(stream);
  }

  void load(const ForcingState& in, cudaStream_t stream) {
    check_load_size(in.boundary.size() == (kept_ ? 2 * pairs_ : 0u), "load_forcing_state");
    if (!kept_) return;
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream));
    flow_.upload(in.boundary.data(), 2 * pairs_);
  }

 private:
  bool kept_ = false;
  std::size_t pairs_ = 4;
  DeviceArray<double> rate_, flow_;
};

// An executor's forcing over its cells and the account of the water through
// its sides or groups, with the Backend calls that read them and put them
// back (ForcingState::boundary holds the sides' account). Base: the
// executor's base (ExecutorBase or GridRankBase), whose stream_ they use.
template <class Real, class Cells, class Base>
class WithForcing : public Base {
 public:
  ForcingVolumes forcing_volumes() const override { return forcing_.volumes(this->stream_); }
  void read_forcing_state(ForcingState& out) const override {
    forcing_.read(out, this->stream_, forcing_parity());
    sides_.read_into(out, this->stream_);
  }
  void load_forcing_state(const ForcingState& in) override {
    sides_.load(in, this->stream_);
    ForcingState rest = in;
    rest.boundary.clear();
    forcing_.load(rest, this->stream_);
  }
  BoundaryFlow boundary_flow() const override { return sides_.total(this->stream_); }

 protected:
  using Base::Base;
  // The state buffer whose infiltration the forcing's state follows (the lagged kernel's is the state's).
  virtual int forcing_parity() const { return 0; }

  forcing::ForcingDevice<Real, Cells> forcing_;
  SideAccount sides_;
};

}  // namespace shallows::gpu
