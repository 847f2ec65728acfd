// SPDX-License-Identifier: MIT
// Host side of the CUDA executor: device memory, launches, time control.
// The kernels and the design are described in step_kernels.cuh.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <system_error>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "batched_advance.cuh"
#include "boundary_flow.cuh"
#include "cuda_check.cuh"
#include "device_array.cuh"
#include "executor_base.cuh"
#include "forcing_kernels.cuh"
#include "halo_kernels.cuh"
#include "rate_links.cuh"
#include "read_back.cuh"
#include "shallows/exec/cuda_backend.hpp"
#include "shallows/exec/host_fields.hpp"
#include "shallows/solver/capabilities.hpp"
#include "shallows/solver/mass_balance.hpp"
#include "snapshot_stager.cuh"
#include "step_kernels.cuh"
#include "step_timeline.cuh"

namespace shallows {
namespace gpu {

std::string device_label() {
  int dev = -1;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    return "device ?";
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
    cudaGetLastError();
    return "device " + std::to_string(dev);
  }
  return "device " + std::to_string(dev) + " (" + prop.name + ")";
}

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  std::string msg = std::string("CUDA error: ") + call + " failed on " + device_label() + ": " +
                    cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ") at " + file + ":" +
                    std::to_string(line);
  throw std::runtime_error(msg);
}

void require_free_memory(std::size_t bytes, const std::string& what) {
  std::size_t free_b = 0, total_b = 0;
  SHALLOWS_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  // Keep a small reserve for the runtime and the kernels' own needs.
  const std::size_t reserve = std::size_t(64) << 20;
  if (bytes + reserve > free_b) {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "CUDA backend: %s needs %.1f MiB of device memory on %s, but only %.1f MiB of %.1f MiB are free",
                  what.c_str(), double(bytes) / 1048576.0, device_label().c_str(), double(free_b) / 1048576.0,
                  double(total_b) / 1048576.0);
    throw std::runtime_error(buf);
  }
}

} // namespace gpu

namespace {

using gpu::Ctrl;
using gpu::Launch;

enum class KernelKind { lagged, plain };

// auto: the plain kernels on one GPU where the grid is small, since a thread
// per cell keeps the GPU busier than the lagged kernel's few long marches
// (bench/results.md: on an H200 plain steps S004-T1 2.2-2.5 times as fast at
// 128^2 and 256^2, 1.1 times at 512^2 and 0.66 times at 1024^2; with rain,
// Green-Ampt, a source and a tracer 2.2-2.5 times as fast up to 400 x 300,
// 1.4 at 1000 x 750, even at 2000 x 1500). A run that may skip dry chunks
// (no forcing, no scalars) keeps lagged above 256^2, where skipping pays; a
// rank keeps lagged, whose rate the GPUs all-reduce without the host.
KernelKind parse_kernel(const std::string& k, const Problem& p, bool distributed) {
  if (k == "lagged") return KernelKind::lagged;
  if (k == "plain") return KernelKind::plain;
  if (k == "auto") {
    const index_t small = skips_dry_cells(p) ? index_t(256) * 256 : index_t(1500) * 1500;
    return !distributed && p.grid.cells() <= small ? KernelKind::plain : KernelKind::lagged;
  }
  throw std::runtime_error("CUDA backend: unknown kernel '" + k + "' (valid: auto, lagged, plain)");
}

// Strips of 30 columns (32 lanes less a halo lane on each side), `rows` rows each.
gpu::ChunkGrid make_chunk_grid(const Grid& g, int rows) {
  gpu::ChunkGrid cg;
  cg.rows = rows;
  cg.strips = (g.nx + cg.width - 1) / cg.width;
  cg.chunk_rows = (g.ny + rows - 1) / rows;
  cg.chunks = cg.strips * cg.chunk_rows;
  return cg;
}

// Whether a rank's halo is wide enough for the lagged kernel over k steps
// between exchanges. The exchange brings the state of H halo rings; the rhs
// of a halo cell, computed again from it (refresh_ghosts), is valid on H - 1
// rings, as the outermost lacks its outer neighbour. A step takes the new
// state from the state and rhs, so each step loses one ring of both: the
// owned cells need H - 1 >= k, H = k + 1.
bool lagged_fits_halo(const Problem& p, int k) {
  const CellBox o = p.owned;
  const index_t need = static_cast<index_t>(k) + 1;
  const index_t widths[4] = {o.i0, p.grid.nx - o.i1, o.j0, p.grid.ny - o.j1};
  for (index_t w : widths)
    if (w > 0 && w < need) return false;  // 0: a side of the domain
  return true;
}

// Rows per chunk: the longest march that still gives every SM a few dozen warps.
int choose_rows(const Grid& g, int sms) {
  const index_t strips = (g.nx + gpu::ChunkGrid{}.width - 1) / gpu::ChunkGrid{}.width;
  const index_t wanted = static_cast<index_t>(sms) * 32;
  int rows = 64;
  while (rows > 8 && strips * ((g.ny + rows - 1) / rows) < wanted) rows /= 2;
  return rows;
}

// The chunks the boxes touch, each once, after three copies of their count
// (list_count of each Ctrl slot, as warp_chunk reads a list); touched: 1 for
// each chunk listed.
std::vector<unsigned> chunks_touched(const gpu::ChunkGrid& cg, const std::vector<CellBox>& boxes,
                                     std::vector<unsigned char>& touched) {
  touched.assign(static_cast<std::size_t>(cg.chunks), 0);
  std::vector<unsigned> list(3, 0);
  for (const CellBox& box : boxes) {
    const CellBox c = cg.chunks_over(box);
    for (index_t y = c.j0; y < c.j1; ++y) {
      for (index_t x = c.i0; x < c.i1; ++x) {
        const auto chunk = static_cast<std::size_t>(y * cg.strips + x);
        if (!touched[chunk]) list.push_back(static_cast<unsigned>(chunk));
        touched[chunk] = 1;
      }
    }
  }
  for (std::size_t s = 0; s < 3; ++s) list[s] = static_cast<unsigned>(list.size() - 3);
  return list;
}

template <class Real>
class CudaExecutor final : public gpu::WithForcing<Real, GridCells, gpu::GridRankBase<Real, Ctrl>> {
  using Base = gpu::WithForcing<Real, GridCells, gpu::GridRankBase<Real, Ctrl>>;
  using Base::ctrl_;
  using Base::forcing_;
  using Base::sides_;
  using Base::device_;
  using Base::device_rate_;
  using Base::grid_;
  using Base::host_in_;
  using Base::prop_;
  using Base::rate_links_;
  using Base::slot_;
  using Base::steps_launched_;
  using Base::stream_;

 public:
  CudaExecutor(const Problem& p, const BackendOptions& o, const CudaOptions& co)
      : Base(p.grid, co.device),
        // A rank of a distributed run: the host all-reduces each step's rate
        // (of the state the lagged kernel made, or between the plain rate
        // and update kernels).
        distributed_(p.owned.cells() > 0),
        // The lagged kernel applies the cell forcing itself (rain,
        // infiltration, a Manning map), the sources run after it, and it
        // takes the sides' series on the device (ForcingDevice::marches); a
        // rank's sources, structures or side series need the plain kernels,
        // after whose update the forcing kernels change the state. Passive
        // scalars follow the lagged kernel in a pass of their own
        // (lagged_scalars_kernel), on one process and with sides of
        // constant values; else the plain update kernel transports them.
        // Boundary segments need the plain kernels. On a rank, lagged needs
        // a halo one cell wider than k steps use (lagged_fits_halo).
        kind_((p.forcing.active() && !gpu::forcing::ForcingDevice<Real>::marches(p.forcing, distributed_)) ||
                      (!p.scalars.empty() && (distributed_ || p.forcing.has_boundary_series())) ||
                      !p.segments.empty() ||
                      (distributed_ && !lagged_fits_halo(p, o.halo_steps))
                  ? KernelKind::plain
                  : parse_kernel(co.kernel, p, distributed_)),
        // On ranks too: unpack_box sets the flags of the chunks a halo
        // touches. Never with forcing (rain falls on dry chunks as well) nor
        // with scalars (a skipped chunk would not store its mass fluxes).
        dry_skip_(co.dry_skip && o.dry_skip && kind_ != KernelKind::plain && skips_dry_cells(p)),
        compact_(dry_skip_ && co.compact),
        track_maxima_(o.track_maxima),
        arrival_threshold_(o.arrival_threshold),
        min_blocks_(co.min_blocks) {
    if (grid_.nx <= 0 || grid_.ny <= 0) throw std::runtime_error("CUDA backend: empty grid");

    // With dry skipping, chunks of 16 rows: the computed ring around the wet
    // area shrinks (S004-T2 4096^2: time per step 1.17x wet fraction x the
    // all-wet time, against 1.38x at 64 rows) for 5% on all-wet grids.
    const int auto_rows = choose_rows(grid_, prop_.multiProcessorCount);
    const int rows = co.rows > 0 ? co.rows : (dry_skip_ ? std::min(auto_rows, 16) : auto_rows);
    cg_step_ = make_chunk_grid(grid_, rows);

    const auto padded = static_cast<std::size_t>(grid_.padded_size());
    const auto chunks = static_cast<std::size_t>(cg_step_.chunks);
    const bool lagged = kind_ == KernelKind::lagged;
    const std::size_t per_cell = (lagged ? 13 : 7) + 2 * p.scalars.size() + (lagged && !p.scalars.empty() ? 4 : 0);
    std::size_t need = per_cell * padded * sizeof(Real) + 3 * sizeof(Ctrl) +
                       sizeof(unsigned long long) + static_cast<std::size_t>(grid_.ny) * sizeof(double);
    if (dry_skip_) need += 3 * chunks;
    if (compact_) need += chunks * sizeof(unsigned) + 3 * sizeof(unsigned);
    if (track_maxima_) need += padded * (2 * sizeof(Real) + sizeof(double));
    // The lagged kernel's forcing keeps row parts per strip of chunks.
    const index_t march_strips = lagged && p.forcing.forces_cells() ? cg_step_.strips : 0;
    need += gpu::forcing::ForcingDevice<Real>::bytes(p, GridCells{p.grid, p.owned_cells()}, march_strips);
    char what[160];
    std::snprintf(what, sizeof what, "a %lldx%lld grid in %s", static_cast<long long>(grid_.nx),
                  static_cast<long long>(grid_.ny), sizeof(Real) == 4 ? "float" : "double");
    gpu::require_free_memory(need, what);
    // First: it checks the forcing's sizes and cells, before the stream and pinned buffers exist.
    forcing_ = gpu::forcing::ForcingDevice<Real>(p, GridCells{p.grid, p.owned_cells()}, march_strips);
    boundary_ = p.forcing.boundary;
    boundary_series_ = p.forcing.has_boundary_series() || segments_follow_series(p.segments);
    segment_specs_ = p.segments;
    // On a rank, the sides facing other ranks are open: boundary_rate_kernel counts only the domain's.
    sides_ = gpu::SideAccount(!closed_domain(p), 8);

    // The greatest priority: a halo exchange's kernels on stream_ go ahead of
    // the inner chunks that run beside it on inner_stream_ (launch_lagged).
    this->open_stream(true);
    if (const char* t = std::getenv("SHALLOWS_CUDA_TIMELINE"); t && *t && std::strcmp(t, "0") != 0)
      timeline_ = std::make_unique<gpu::StepTimeline>(device_);
    for (int b = 0; b < 2; ++b) {
      h_[b] = DeviceArray<Real>(padded);
      hu_[b] = DeviceArray<Real>(padded);
      hv_[b] = DeviceArray<Real>(padded);
    }
    z_ = DeviceArray<Real>(padded);
    forcing_.set_bed(z_.get());  // inactive cells (NaN bed) get no forcing
    if (!p.scalars.empty()) {
      const ScalarInflow<Real> inflow = scalar_inflow<Real>(p);
      std::vector<Real*> pointers;
      for (std::size_t s = 0; s < 2 * p.scalars.size(); ++s) pointers.push_back(hc_.emplace_back(padded).get());
      hc_ptrs_ = DeviceArray<Real*>(pointers.size());
      hc_ptrs_.upload(pointers.data(), pointers.size());
      scalar_side_ = DeviceArray<Real>(inflow.side.size());
      scalar_side_.upload(inflow.side.data(), inflow.side.size());
      scalar_segment_ = DeviceArray<Real>(inflow.segment.size());
      scalar_segment_.upload(inflow.segment.data(), inflow.segment.size());
      forcing_.set_scalars(hc_ptrs_.get(), inflow);
    }
    if (const std::vector<unsigned char> walls = grid_wall_faces(p.forcing, grid_); !walls.empty()) {
      walls_ = DeviceArray<unsigned char>(walls.size());
      walls_.upload(walls.data(), walls.size());
    }
    if (!p.segments.empty()) {
      const std::vector<SegmentCondition<Real>> now = segments_at<Real>(p.segments, 0.0);
      segments_ = DeviceArray<SegmentCondition<Real>>(now.size());
      segments_.upload(now.data(), now.size());
    }
    if (lagged) {
      for (int b = 0; b < 2; ++b) {
        rh_[b] = DeviceArray<Real>(padded);
        rhu_[b] = DeviceArray<Real>(padded);
        rhv_[b] = DeviceArray<Real>(padded);
        if (p.scalars.empty()) continue;
        for (DeviceArray<Real>* m : {&mass_x_[b], &mass_y_[b]}) {
          *m = DeviceArray<Real>(padded);
          SHALLOWS_CUDA_CHECK(cudaMemset(m->get(), 0, padded * sizeof(Real)));
        }
        mass_.x[b] = mass_x_[b].get();
        mass_.y[b] = mass_y_[b].get();
      }
    }
    ctrl_ = DeviceArray<Ctrl>(3);
    computed_ = DeviceArray<unsigned long long>(1);
    gain_ = DeviceArray<double>(1);
    rows_ = DeviceArray<double>(static_cast<std::size_t>(grid_.ny));
    if (dry_skip_) {
      dry_[0] = DeviceArray<unsigned char>(chunks);
      dry_[1] = DeviceArray<unsigned char>(chunks);
      same_ = DeviceArray<unsigned char>(chunks);
    }
    if (compact_) {
      list_ = DeviceArray<unsigned>(chunks);
      list_count_ = DeviceArray<unsigned>(3);
    }
    if (track_maxima_) {
      max_h_ = DeviceArray<Real>(padded);
      max_speed_ = DeviceArray<Real>(padded);
      arrival_ = DeviceArray<double>(padded);
    }

    // Parameters shared by all kernels.
    base_.nx = grid_.nx;
    base_.ny = grid_.ny;
    base_.pitch = grid_.pitch();
    base_.phys = to_precision<Real>(p.physics);
    base_.level_sides = 0;
    for (int s = 0; s < 4; ++s) {
      base_.bc[s] = to_precision<Real>(p.boundary[static_cast<std::size_t>(s)]);
      if (p.boundary[static_cast<std::size_t>(s)].kind == BoundaryKind::level) base_.level_sides |= 1 << s;
    }
    base_.inv_dx = Real(1.0 / grid_.dx);
    base_.inv_dy = Real(1.0 / grid_.dy);
    base_.half_inv_dx = Real(0.5 / grid_.dx);
    base_.half_inv_dy = Real(0.5 / grid_.dy);
    base_.cfl = p.cfl;
    base_.dry_dt = dry_time_step(p);
    for (int b = 0; b < 2; ++b) {
      base_.h[b] = h_[b].get();
      base_.hu[b] = hu_[b].get();
      base_.hv[b] = hv_[b].get();
      base_.dry[b] = dry_[b].get();
      base_.rh[b] = rh_[b].get();
      base_.rhu[b] = rhu_[b].get();
      base_.rhv[b] = rhv_[b].get();
    }
    base_.z = z_.get();
    base_.same = same_.get();
    base_.computed = computed_.get();
    base_.positivity_sum = gain_.get();
    base_.list = list_.get();
    base_.list_count = list_count_.get();
    base_.ctrl = ctrl_.get();
    base_.dry_skip = dry_skip_ ? 1 : 0;
    base_.cg = cg_step_;
    base_.owned = p.owned_cells();
    base_.max_h = max_h_.get();
    base_.max_speed = max_speed_.get();
    base_.arrival = arrival_.get();
    base_.arrival_threshold = arrival_threshold_;
    plain_.hc = hc_ptrs_.get();
    plain_.scalar_side = scalar_side_.get();
    plain_.scalars = static_cast<int>(p.scalars.size());
    plain_.segments = segments_.get();
    plain_.segment_count = static_cast<int>(p.segments.size());
    plain_.scalar_segment = scalar_segment_.get();
    base_.walls = walls_.get();
    if (march_strips > 0) march_ = forcing_.march();
    const bool moves_water = !p.forcing.sources.empty() || !p.forcing.structures.empty();
    if (lagged && moves_water) list_after_sources(p);
    side_series_ = gpu::forcing::SideSeriesDevice(p.forcing.boundary);
    march_.sides = side_series_.views();
    sources_series_ = lagged && (moves_water || p.forcing.has_boundary_series());

    {
      const PaddedFields<Real> f = make_padded_fields<Real>(p);
      SHALLOWS_CUDA_CHECK(cudaMemcpy(z_.get(), f.z.data(), padded * sizeof(Real), cudaMemcpyHostToDevice));
      set_state(f.h, f.hu, f.hv);
      set_scalars(make_padded_scalars<Real>(p));
    }
    SHALLOWS_CUDA_CHECK(cudaMemsetAsync(computed_.get(), 0, sizeof(unsigned long long), stream_));
    SHALLOWS_CUDA_CHECK(cudaMemsetAsync(gain_.get(), 0, sizeof(double), stream_));
    if (track_maxima_) {
      SHALLOWS_CUDA_CHECK(cudaMemsetAsync(max_h_.get(), 0, padded * sizeof(Real), stream_));
      SHALLOWS_CUDA_CHECK(cudaMemsetAsync(max_speed_.get(), 0, padded * sizeof(Real), stream_));
      // "Never arrived": the host's quiet NaN, so that output files hold the CPU run's bits.
      arrival_.fill_async(std::numeric_limits<double>::quiet_NaN(), stream_);
      launch_maxima(0, gpu::MaximaOf::fixed, 0.0);
    }
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  ~CudaExecutor() override {
    if (stream_) cudaStreamSynchronize(stream_);
    timeline_.reset();  // prints, while its stream still exists
    if (inner_stream_) cudaStreamSynchronize(inner_stream_);
    if (split_start_) cudaEventDestroy(split_start_);
    if (inner_done_) cudaEventDestroy(inner_done_);
    if (inner_stream_) cudaStreamDestroy(inner_stream_);
  }

  std::string name() const override { return "cuda"; }

  // The lagged kernel takes the new state's side series at t + dt, the next
  // t of a caller of step() (Simulation::advance_steps); advance() runs on
  // the device, where a step clipped to the target lands on it exactly.
  double step(double t, double dt_max) override {
    // Sides that follow a time series take its value at the step's start (as on the CPU).
    for (std::size_t s = 0; s < 4; ++s) base_.bc[s] = condition_at_time(base_.bc[s], boundary_[s].view(), t);
    if (segments_follow_series(segment_specs_)) {
      const std::vector<SegmentCondition<Real>> now = segments_at<Real>(segment_specs_, t);
      SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(segments_.get(), now.data(), now.size() * sizeof(now[0]),
                                          cudaMemcpyHostToDevice, stream_));
    }
    const Launch a{slot_, 1, t, std::numeric_limits<double>::infinity(), dt_max, std::numeric_limits<long long>::max()};
    settle_pending_rate(t);
    launch_step(a);
    const Ctrl c = fetch_ctrl();
    if (c.status != 0) throw not_finite(t);
    // The lagged kernel left its local rate of the new state in the slot: the next step's dt needs all ranks'.
    if (distributed_ && kind_ == KernelKind::lagged && !device_rate_) reduce_slot_rate(c, c.t);
    return c.dt;
  }

  CudaAdvance advance(double t, double target, index_t max_steps) override {
    if (!takes_step(t, target, 0, max_steps)) return {t, 0, 0};
    // The host sets a time series' value in each launch of the plain
    // kernels, and a rank's rate goes through the host unless the GPUs
    // all-reduce it: one step at a time.
    if ((boundary_series_ && kind_ == KernelKind::plain) || (distributed_ && !device_rate_))
      return Backend::advance(t, target, max_steps);
    settle_pending_rate(t);
    const MaximaPairing before{maxima_pair_next_, maxima_behind_, steps_launched_};
    const AdvanceResult r = gpu::advance_from_slot(
        t, target, max_steps, &ctrl_.get()[slot_], host_in_, stream_,
        [&] { launch_step(Launch{slot_, 0, 0.0, target, std::numeric_limits<double>::infinity(), max_steps}); },
        [&] { return fetch_ctrl(); }, [&](double at) { return not_finite(at); });
    realign_maxima(before, r.steps);
    return r;
  }

  void read_state(Fields& out) const override {
    const Ctrl c = fetch_ctrl();
    gpu::download_state(grid_, h_[c.parity], hu_[c.parity], hv_[c.parity], out);
    out.hc.resize(hc_.size() / 2);
    for (std::size_t s = 0; s < out.hc.size(); ++s)
      gpu::download_interior(grid_, hc_[2 * s + static_cast<std::size_t>(c.parity)], out.hc[s]);
  }

  std::vector<double> read_field(StateField which) const override {
    const Ctrl c = fetch_ctrl();
    std::vector<double> out;
    gpu::download_interior(grid_, state_field(which, h_, hu_, hv_)[c.parity], out);
    return out;
  }

  // Gauges alone: the listed cells of the current state, not the whole of it.
  Fields read_cells(const std::vector<std::size_t>& cells) const override {
    const Ctrl c = fetch_ctrl();
    std::vector<const Real*> fields{h_[c.parity].get(), hu_[c.parity].get(), hv_[c.parity].get()};
    for (std::size_t s = 0; s < hc_.size() / 2; ++s)
      fields.push_back(hc_[2 * s + static_cast<std::size_t>(c.parity)].get());
    std::vector<std::vector<double>> v = gather_.read(grid_, cells, fields, stream_);
    Fields out;
    out.h = std::move(v[0]);
    out.hu = std::move(v[1]);
    out.hv = std::move(v[2]);
    for (std::size_t f = 3; f < v.size(); ++f) out.hc.push_back(std::move(v[f]));
    return out;
  }

  void load_state(const Fields& in) override {
    const auto cells = static_cast<std::size_t>(grid_.cells());
    check_load_size(fields_sized(in, cells) && scalars_sized(in, hc_.size() / 2, cells), "load_state");
    const auto padded = static_cast<std::size_t>(grid_.padded_size());
    std::vector<Real> h(padded, Real(0)), hu(padded, Real(0)), hv(padded, Real(0));
    copy_into_interior(grid_, in.h, h.data());
    copy_into_interior(grid_, in.hu, hu.data());
    copy_into_interior(grid_, in.hv, hv.data());
    set_state(h, hu, hv);
    std::vector<std::vector<Real>> hc(in.hc.size(), std::vector<Real>(padded, Real(0)));
    for (std::size_t s = 0; s < hc.size(); ++s) copy_into_interior(grid_, in.hc[s], hc[s].data());
    set_scalars(hc);
  }

  void load_maxima(const Maxima& in) override {
    maxima_behind_ = false;
    if (track_maxima_) gpu::upload_grid_maxima(grid_, in, max_h_, max_speed_, arrival_, stream_);
  }

  // The current state for output: its parity comes with the control slot (a
  // few bytes, synchronising); the fields go to the host through the stager
  // (a D2D copy on stream_, the rest on the stager's copy stream).
  Snapshot snapshot() override {
    // With scalars: a synchronous read (the stager copies h, hu, hv only).
    if (!hc_.empty()) return Backend::snapshot();
    const Ctrl c = fetch_ctrl();
    return stager_.snapshot(stream_, h_[c.parity].get(), hu_[c.parity].get(), hv_[c.parity].get());
  }

  void read_maxima(Maxima& out) const override {
    if (maxima_behind_) {
      // The current state may come from a step without maxima (launch_lagged).
      launch_maxima(slot_, gpu::MaximaOf::current, 0.0);
      maxima_behind_ = false;
    }
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    out = Maxima{};
    if (!track_maxima_) return;
    gpu::download_interior(grid_, max_h_, out.max_h);
    gpu::download_interior(grid_, max_speed_, out.max_speed);
    gpu::download_interior(grid_, arrival_, out.arrival_time);
  }

  double volume() const override {
    const unsigned threads = 128;
    const auto blocks = static_cast<unsigned>((grid_.ny + threads - 1) / threads);
    gpu::row_volume_kernel<Real><<<blocks, threads, 0, stream_>>>(base_, slot_, rows_.get());
    SHALLOWS_CUDA_CHECK_LAUNCH("row_volume_kernel");
    std::vector<double> rows(static_cast<std::size_t>(grid_.ny));
    SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(rows.data(), rows_.get(), rows.size() * sizeof(double),
                                        cudaMemcpyDeviceToHost, stream_));
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return layout_volume(GridCells{grid_, {}}, rows);
  }

  // Summed on the device by warps with a clamp (warp_add_nonzero), in the
  // order the atomics come: exact to round-off, not bit-identical to the CPU.
  double positivity_volume() const override { return gpu::read_scalar(gain_, stream_) * grid_.dx * grid_.dy; }

  // The lagged kernel's infiltration follows the state's buffers.
  int forcing_parity() const override { return march_.strips > 0 ? fetch_ctrl().parity : 0; }

  // What an unpacked box needs before the next step: the dry flags of its
  // chunks, and (lagged kernel) their rhs, in refresh_ghosts.
  void box_arrived(const CellBox& box, int parity) override {
    if (dry_skip_) {
      const auto blocks = static_cast<unsigned>((cg_step_.chunks_over(box).cells() + 3) / 4);  // a warp per chunk
      gpu::box_dry_flags_kernel<Real><<<blocks, 128, 0, stream_>>>(base_, parity, box);
      SHALLOWS_CUDA_CHECK_LAUNCH("box_dry_flags_kernel");
    }
    if (kind_ == KernelKind::lagged) unpacked_.push_back(box);
  }

  // The lagged kernel's next step runs the chunks whose neighbourhood lies
  // in `inner` beside the exchange (launch_lagged); the plain kernels take
  // the exchange at once.
  bool exchange_in_next_step(const CellBox& inner, std::function<void()> exchange) override {
    if (kind_ != KernelKind::lagged) return HaloEndpoint::exchange_in_next_step(inner, std::move(exchange));
    if (inner_stream_ == nullptr) {
      SHALLOWS_CUDA_CHECK(cudaStreamCreateWithFlags(&inner_stream_, cudaStreamNonBlocking));
      SHALLOWS_CUDA_CHECK(cudaEventCreateWithFlags(&split_start_, cudaEventDisableTiming));
      SHALLOWS_CUDA_CHECK(cudaEventCreateWithFlags(&inner_done_, cudaEventDisableTiming));
    }
    if (inner_chunks_.size() == 0 || inner.i0 != split_inner_.i0 || inner.j0 != split_inner_.j0 ||
        inner.i1 != split_inner_.i1 || inner.j1 != split_inner_.j1)
      split_chunks(inner);
    pending_exchange_ = std::move(exchange);
    return true;
  }

  // The chunks whose 3 x 3 neighbourhood of chunks lies in `inner`, and the
  // others, as lists with three copies of their count ahead (list_count of
  // each Ctrl slot). An inner chunk reads no cell, rhs or dry flag that an
  // exchange writes (unpack_box, box_dry_flags_kernel, refresh_ghosts).
  void split_chunks(const CellBox& inner) {
    std::vector<unsigned> in(3, 0), rest(3, 0);
    const gpu::ChunkGrid& cg = cg_step_;
    for (index_t cy = 0; cy < cg.chunk_rows; ++cy) {
      for (index_t sx = 0; sx < cg.strips; ++sx) {
        const index_t i0 = std::max<index_t>(sx - 1, 0) * cg.width, j0 = std::max<index_t>(cy - 1, 0) * cg.rows;
        const index_t i1 = std::min((sx + 2) * cg.width, grid_.nx), j1 = std::min((cy + 2) * cg.rows, grid_.ny);
        const bool inside = i0 >= inner.i0 && j0 >= inner.j0 && i1 <= inner.i1 && j1 <= inner.j1;
        (inside ? in : rest).push_back(static_cast<unsigned>(cy * cg.strips + sx));
      }
    }
    for (std::vector<unsigned>* list : {&in, &rest})
      for (std::size_t s = 0; s < 3; ++s) (*list)[s] = static_cast<unsigned>(list->size() - 3);
    inner_chunks_ = DeviceArray<unsigned>(in.size());
    inner_chunks_.upload(in.data(), in.size());
    rest_chunks_ = DeviceArray<unsigned>(rest.size());
    rest_chunks_.upload(rest.data(), rest.size());
    split_inner_ = inner;
  }

  // Ghost states are computed where they are read, never stored; the
  // unpacks' copies read the caller's buffers until the stream gets here.
  // The lagged kernel's rhs of the chunks the halos touch is computed again
  // from their new state (lagged_fits_halo): half the bytes of sending it.
  void refresh_ghosts() override {
    if (!unpacked_.empty()) {
      DeviceArray<unsigned>& list = halo_chunks();
      Params p = base_;
      p.dry_skip = 0;
      p.list_count = list.get();  // the count heads the list, once per slot
      p.list = list.get() + 3;
      const auto count = static_cast<index_t>(list.size() - 3);
      const Launch a{slot_, 0, 0.0, 0.0, 0.0, 0};
      // Its rates of owned cells are the state's own, already in the slot: the maximum does not move.
      if (count > 0) {
        gpu::first_rhs_kernel<Real><<<static_cast<unsigned>((count + gpu::kBlockWarps - 1) / gpu::kBlockWarps),
                                        gpu::kBlockThreads, 0, stream_>>>(p, a, side_series_.views(), mass_);
        SHALLOWS_CUDA_CHECK_LAUNCH("first_rhs_kernel (halo chunks)");
      }
      unpacked_.clear();
    }
    this->wait_for_boxes();
  }

  // The chunks the unpacked boxes touch, each once, after three copies of
  // their count (list_count of each Ctrl slot); the same boxes every
  // exchange, so made once.
  DeviceArray<unsigned>& halo_chunks() {
    if (halo_chunks_.size() == 0) {
      std::vector<unsigned char> seen;
      const std::vector<unsigned> list = chunks_touched(cg_step_, unpacked_, seen);
      halo_chunks_ = DeviceArray<unsigned>(list.size());
      halo_chunks_.upload(list.data(), list.size());
    }
    return halo_chunks_;
  }

  CudaStats stats() const override {
    CudaStats s = this->base_stats();
    s.kernel = kind_ == KernelKind::lagged ? "lagged" : "plain";
    if (kind_ != KernelKind::plain) {
      s.chunk_width = cg_step_.width;
      s.chunk_rows = cg_step_.rows;
      s.chunks = cg_step_.chunks;
    }
    unsigned long long computed = 0;
    SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(&computed, computed_.get(), sizeof computed, cudaMemcpyDeviceToHost, stream_));
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    s.chunks_computed = static_cast<index_t>(computed);
    // Lagged: read h, hu, hv, z and the rhs, write h, hu, hv and the rhs.
    // Plain: read h, hu, hv, z twice (rate pass, update pass), write h, hu, hv.
    // Scalars: each one's h c read and written; after the lagged kernel also
    // its 2 mass fluxes stored and the pass's 5 reads (lagged_scalars_kernel).
    const bool lagged = kind_ == KernelKind::lagged;
    const double values = (lagged ? 13.0 : 11.0) + 2.0 * plain_.scalars + (lagged && plain_.scalars > 0 ? 7.0 : 0.0);
    s.bytes_per_cell_update = double(sizeof(Real)) * values;
    return s;
  }

 private:
  using Params = gpu::Params<Real>;

  static unsigned march_blocks(const gpu::ChunkGrid& cg) {
    return static_cast<unsigned>((cg.chunks + gpu::kBlockWarps - 1) / gpu::kBlockWarps);
  }

  unsigned plain_blocks() const {
    const index_t tx = (grid_.nx + gpu::kPlainX - 1) / gpu::kPlainX;
    const index_t ty = (grid_.ny + gpu::kPlainY - 1) / gpu::kPlainY;
    return static_cast<unsigned>(tx * ty);
  }

  std::runtime_error not_finite(double t) const {
    if (device_rate_ && rate_links_.timed_out())
      return std::runtime_error("another rank did not post its CFL rate within an hour (GPU all-reduce) at t = " +
                                std::to_string(t) + " s");
    return Base::not_finite(t);
  }

  // Padded h c of each scalar into both of its buffers.
  void set_scalars(const std::vector<std::vector<Real>>& hc) {
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    for (std::size_t s = 0; s < hc.size(); ++s) {
      for (std::size_t b = 0; b < 2; ++b) hc_[2 * s + b].upload(hc[s].data(), hc[s].size());
    }
    SHALLOWS_CUDA_CHECK(cudaDeviceSynchronize());
  }

  // A padded state into both buffers, and what the step kernels keep about it
  // (control slots, dry flags, the lagged kernel's rhs) computed again as at
  // the start of a run: the constructor's initial state, or load_state's.
  void set_state(const std::vector<Real>& h, const std::vector<Real>& hu, const std::vector<Real>& hv) {
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const std::size_t padded = h.size();
    // Into both buffers (so that skipped chunks are consistent).
    {
      const std::size_t bytes = padded * sizeof(Real);
      for (int b = 0; b < 2; ++b) {
        SHALLOWS_CUDA_CHECK(cudaMemcpy(h_[b].get(), h.data(), bytes, cudaMemcpyHostToDevice));
        SHALLOWS_CUDA_CHECK(cudaMemcpy(hu_[b].get(), hu.data(), bytes, cudaMemcpyHostToDevice));
        SHALLOWS_CUDA_CHECK(cudaMemcpy(hv_[b].get(), hv.data(), bytes, cudaMemcpyHostToDevice));
      }
      // Pageable copies may still be in flight; stream_ does not wait for the legacy stream.
      SHALLOWS_CUDA_CHECK(cudaDeviceSynchronize());
    }
    slot_ = 0;
    known_parity_ = -1;
    maxima_pair_next_ = false;
    maxima_behind_ = false;  // the maxima hold this state (the constructor's) or are loaded next (a restart's)
    SHALLOWS_CUDA_CHECK(cudaMemsetAsync(ctrl_.get(), 0, 3 * sizeof(Ctrl), stream_));
    if (compact_) SHALLOWS_CUDA_CHECK(cudaMemsetAsync(list_count_.get(), 0, 3 * sizeof(unsigned), stream_));
    if (dry_skip_) {
      const auto chunks = static_cast<std::size_t>(cg_step_.chunks);
      SHALLOWS_CUDA_CHECK(cudaMemsetAsync(same_.get(), 1, chunks, stream_));
      SHALLOWS_CUDA_CHECK(cudaMemsetAsync(dry_[1].get(), 0, chunks, stream_));
      const unsigned threads = 128;
      const auto blocks = static_cast<unsigned>((cg_step_.chunks + threads - 1) / threads);
      gpu::dry_flags_kernel<Real><<<blocks, threads, 0, stream_>>>(base_, 0);
      SHALLOWS_CUDA_CHECK_LAUNCH("dry_flags_kernel");
    }
    if (kind_ == KernelKind::lagged) {
      // The lagged kernel also takes the rhs of its input state: the first
      // one into both buffers (skipped chunks rely on equal buffers).
      const std::size_t bytes = padded * sizeof(Real);
      for (int b = 0; b < 2; ++b) {
        SHALLOWS_CUDA_CHECK(cudaMemsetAsync(rh_[b].get(), 0, bytes, stream_));
        SHALLOWS_CUDA_CHECK(cudaMemsetAsync(rhu_[b].get(), 0, bytes, stream_));
        SHALLOWS_CUDA_CHECK(cudaMemsetAsync(rhv_[b].get(), 0, bytes, stream_));
      }
      launch_first_rhs(Launch{0, 0, 0.0, 0.0, 0.0, 0});
      // Sides that follow a series: this rhs took them at t = 0; the first
      // step takes it again at its own start (launch_step).
      rhs_at_first_step_ = boundary_series_;
      SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(rh_[1].get(), rh_[0].get(), bytes, cudaMemcpyDeviceToDevice, stream_));
      SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(rhu_[1].get(), rhu_[0].get(), bytes, cudaMemcpyDeviceToDevice, stream_));
      SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(rhv_[1].get(), rhv_[0].get(), bytes, cudaMemcpyDeviceToDevice, stream_));
      rate_pending_ = distributed_;  // first_rhs_kernel's rate is this rank's own
    }
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  int box_parity() const override { return current_parity(); }

  // The lagged kernel's steps alone, where nothing else in a step needs the host.
  bool device_rate_possible() const override {
    return distributed_ && kind_ == KernelKind::lagged && !boundary_series_ && !forcing_.host_reduces();
  }

  gpu::BoxFields<Real> box_reals(int parity) const override {
    gpu::BoxFields<Real> f{{h_[parity].get(), hu_[parity].get(), hv_[parity].get()}};
    for (std::size_t s = 0; s < hc_.size() / 2; ++s) f.f.push_back(hc_[2 * s + static_cast<std::size_t>(parity)].get());
    return f;
  }

  gpu::BoxFields<double> box_doubles(int parity) const override {
    return gpu::infiltration_box_field(forcing_.infiltrated(parity));
  }

  // Before a rank's first step: the initial state's rate (first_rhs_kernel's,
  // this rank's own) replaced by all ranks'.
  void settle_pending_rate(double t) {
    if (!rate_pending_) return;
    if (device_rate_) {
      rate_links_.launch(&ctrl_.get()[slot_].rate_bits, stream_);
      rate_pending_ = false;
    } else {
      reduce_slot_rate(fetch_ctrl(), t);
    }
  }

  // A rank's step: the slot's own rate (of its owned cells, from the kernel
  // that made the state or the plain rate kernel) replaced by the largest of
  // all ranks, before the next kernel decides dt from it. That is one of the
  // ranks' Real rates: exact in Real.
  void reduce_slot_rate(const Ctrl& c, double t) {
    if (c.rate_bits == gpu::kNonFinite) throw not_finite(t);
    Real local = 0;
    std::memcpy(&local, &c.rate_bits, sizeof(Real));  // the bits of a non-negative Real (encode_rate)
    const auto global = static_cast<Real>(this->reduce_rate(static_cast<double>(local)));
    host_in_->rate_bits = 0;
    std::memcpy(&host_in_->rate_bits, &global, sizeof(Real));
    SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(&ctrl_.get()[slot_].rate_bits, &host_in_->rate_bits,
                                        sizeof(unsigned long long), cudaMemcpyHostToDevice, stream_));
    rate_pending_ = false;
  }

  // The kernels of one step from slot_ (a no-op on the device once the
  // launch's target or step limit is reached), then the maxima.
  void launch_step(const Launch& a) {
    // A first rhs to compute again (set_state) reads the halos: the exchange then goes first.
    if (pending_exchange_ && rhs_at_first_step_) std::exchange(pending_exchange_, nullptr)();
    const bool split = static_cast<bool>(pending_exchange_);
    known_parity_ = -1;
    if (timeline_) timeline_->begin(stream_);
    if (rhs_at_first_step_) {
      // The first rhs and rate again, the sides' series at this step's start.
      SHALLOWS_CUDA_CHECK(
          cudaMemsetAsync(&ctrl_.get()[a.slot].rate_bits, 0, sizeof(unsigned long long), stream_));
      launch_first_rhs(a);
      rhs_at_first_step_ = false;
    }
    if (sides_.kept()) {
      gpu::boundary_rate_kernel<Real><<<4, gpu::forcing::kThreads, 0, stream_>>>(
          base_, plain_, a, side_series_.views(), grid_.dx, grid_.dy, sides_.rate());
      SHALLOWS_CUDA_CHECK_LAUNCH("boundary_rate_kernel");
    }
    if (compact_ && split) {
      // The split step's lists are fixed (split_chunks) and its chunks skip dry neighbourhoods themselves; the
      // next step's list_kernel counts into the slot that this one's would have zeroed.
      SHALLOWS_CUDA_CHECK(cudaMemsetAsync(list_count_.get() + (a.slot + 1) % 3, 0, sizeof(unsigned), stream_));
    } else if (compact_) {
      const unsigned threads = 128;
      const auto blocks = static_cast<unsigned>((cg_step_.chunks + threads - 1) / threads);
      gpu::list_kernel<Real><<<blocks, threads, 0, stream_>>>(base_, a);
      SHALLOWS_CUDA_CHECK_LAUNCH("list_kernel");
    }
    switch (kind_) {
      case KernelKind::lagged:
        launch_lagged(a);
        if (plain_.scalars > 0) launch_scalars_pass(a);
        break;
      case KernelKind::plain:
        if (base_.walls) {
          gpu::plain_rate_kernel<Real, true><<<plain_blocks(), gpu::kBlockThreads, 0, stream_>>>(base_, plain_, a, 1);
        } else {
          gpu::plain_rate_kernel<Real, false><<<plain_blocks(), gpu::kBlockThreads, 0, stream_>>>(base_, plain_, a, 1);
        }
        SHALLOWS_CUDA_CHECK_LAUNCH("plain_rate_kernel");
        // A rank (one step per launch, Backend::set_rate_reducer): all ranks' rate before the update decides dt.
        if (distributed_) reduce_slot_rate(fetch_ctrl(), a.t_in);
        launch_plain_update(a);
        SHALLOWS_CUDA_CHECK_LAUNCH("plain_update_kernel");
        break;
    }
    if (forcing_.active()) forcing_.launch(step_clock(a), stream_, this->sum_reducer());
    if (after_sources_.size() > 0) launch_after_sources((a.slot + 1) % 3);
    if (sides_.kept()) {
      sides_.template add<Real>(ctrl_.get(), (a.slot + 1) % 3, stream_);
    }
    if (device_rate_) rate_links_.launch(&ctrl_.get()[(a.slot + 1) % 3].rate_bits, stream_);
    if (timeline_) timeline_->end(stream_);
    slot_ = (slot_ + 1) % 3;
    ++steps_launched_;
    // The lagged kernel grows the maxima itself (launch_lagged); the plain kernels leave them to slot_maxima_kernel.
    if (track_maxima_ && kind_ != KernelKind::lagged) launch_maxima(slot_, gpu::MaximaOf::step, 0.0);
  }

  // The lagged kernel's rhs and rate of the state in slot a.slot, over every
  // chunk (the sides' series at its time, as step_prologue takes it).
  void launch_first_rhs(const Launch& a) {
    Params p = base_;
    p.dry_skip = 0;
    p.list = nullptr;
    gpu::first_rhs_kernel<Real><<<march_blocks(cg_step_), gpu::kBlockThreads, 0, stream_>>>(
        p, a, side_series_.views(), mass_);
    SHALLOWS_CUDA_CHECK_LAUNCH("first_rhs_kernel");
  }

  // The chunks next to a source (MarchForcing::after_sources): the rhs and
  // rate of the state in `slot` once the sources changed it, and its maxima.
  void launch_after_sources(int slot) {
    Params p = base_;
    p.dry_skip = 0;
    p.list_count = after_sources_.get();  // the count heads the list, once per slot
    p.list = after_sources_.get() + 3;
    const auto count = static_cast<index_t>(after_sources_.size() - 3);
    const auto blocks = static_cast<unsigned>((count + gpu::kBlockWarps - 1) / gpu::kBlockWarps);
    const Launch a{slot, 0, 0.0, 0.0, 0.0, 0};
    if (track_maxima_) {
      gpu::first_rhs_kernel<Real, true><<<blocks, gpu::kBlockThreads, 0, stream_>>>(p, a, side_series_.views(),
                                                                                         mass_);
    } else {
      gpu::first_rhs_kernel<Real><<<blocks, gpu::kBlockThreads, 0, stream_>>>(p, a, side_series_.views(), mass_);
    }
    SHALLOWS_CUDA_CHECK_LAUNCH("first_rhs_kernel (chunks after the sources)");
  }

  // The chunks whose cells or one-cell rings hold a source's cell or a
  // structure's (which the forcing changes after the kernel as a source
  // does): as a list (chunks_touched) and as flags.
  void list_after_sources(const Problem& p) {
    std::vector<CellBox> rings;
    const auto ring = [&](index_t cell) {
      const index_t i = cell % grid_.nx, j = cell / grid_.nx;
      rings.push_back({std::max<index_t>(i - 1, 0), std::max<index_t>(j - 1, 0), std::min(i + 2, grid_.nx),
                       std::min(j + 2, grid_.ny)});
    };
    for (const VolumeSource& s : p.forcing.sources)
      for (index_t cell : s.cells) ring(cell);
    for (const Structure& s : p.forcing.structures) {
      if (s.has_ends()) {
        ring(s.inlet);
        ring(s.outlet);
      }
      for (const LineCrossing& x : s.crossings) {
        ring(x.left);
        ring(x.right);
      }
    }
    std::vector<unsigned char> flag;
    const std::vector<unsigned> list = chunks_touched(cg_step_, rings, flag);
    if (list.size() == 3) return;  // sources without cells (a Problem built in code): nothing to settle
    after_sources_ = DeviceArray<unsigned>(list.size());
    after_sources_.upload(list.data(), list.size());
    after_sources_flag_ = DeviceArray<unsigned char>(flag.size());
    after_sources_flag_.upload(flag.data(), flag.size());
    march_.after_sources = after_sources_flag_.get();
  }

  // The step from slot a.slot as the forcing kernels see it.
  gpu::StepClock<Real> step_clock(const Launch& a) const {
    return {ctrl_.get(), a.slot, a.use_t_in, a.t_in, {h_[0].get(), h_[1].get()}, {hu_[0].get(), hu_[1].get()},
            {hv_[0].get(), hv_[1].get()}};
  }

  // The scalars over the step the lagged kernel just took (before the
  // sources, which bring theirs to the new state).
  void launch_scalars_pass(const Launch& a) {
    if (march_.strips > 0) {
      gpu::lagged_scalars_kernel<Real, gpu::StepClock<Real>, true>
          <<<plain_blocks(), gpu::kBlockThreads, 0, stream_>>>(base_, plain_, mass_, step_clock(a), march_);
    } else {
      gpu::lagged_scalars_kernel<Real, gpu::StepClock<Real>, false>
          <<<plain_blocks(), gpu::kBlockThreads, 0, stream_>>>(base_, plain_, mass_, step_clock(a), march_);
    }
    SHALLOWS_CUDA_CHECK_LAUNCH("lagged_scalars_kernel");
  }

  void launch_plain_update(const Launch& a) {
    if (base_.walls) return launch_plain_update_with<true>(a);
    launch_plain_update_with<false>(a);
  }

  template <bool kWalls>
  void launch_plain_update_with(const Launch& a) {
    if (plain_.scalars > 0) {
      gpu::plain_update_kernel<Real, true, kWalls><<<plain_blocks(), gpu::kBlockThreads, 0, stream_>>>(base_, plain_, a);
    } else {
      gpu::plain_update_kernel<Real, false, kWalls>
          <<<plain_blocks(), gpu::kBlockThreads, 0, stream_>>>(base_, plain_, a);
    }
  }

  template <int kMinBlocks, bool kRanked, bool kMaxima, bool kForcing = false, bool kSources = false,
            bool kScalars = false, bool kSolve = true>
  void launch_lagged_with(const Launch& a) {
    if (run_over_.list == nullptr) {
      gpu::lagged_kernel<Real, kMinBlocks, kRanked, kMaxima, kForcing, kSources, kScalars, kSolve>
          <<<march_blocks(cg_step_), gpu::kBlockThreads, 0, stream_>>>(base_, a, march_, mass_);
    } else {
      Params p = base_;
      p.list_count = run_over_.list->get();  // the count heads the list, once per slot
      p.list = run_over_.list->get() + 3;
      const auto count = static_cast<index_t>(run_over_.list->size() - 3);
      const auto blocks =
          static_cast<unsigned>(std::max<index_t>((count + gpu::kBlockWarps - 1) / gpu::kBlockWarps, 1));
      gpu::lagged_kernel<Real, kMinBlocks, kRanked, kMaxima, kForcing, kSources, kScalars, kSolve>
          <<<blocks, gpu::kBlockThreads, 0, run_over_.stream>>>(p, a, march_, mass_);
    }
    SHALLOWS_CUDA_CHECK_LAUNCH("lagged_kernel");
  }

  // Scalars (one process, no side series): instances that store the mass fluxes.
  template <bool kMaxima>
  void launch_lagged_with_fluxes(const Launch& a) {
    if (sources_series_) {
      if (march_.strips > 0) return launch_lagged_with<0, false, kMaxima, true, true, true>(a);
      return launch_lagged_with<0, false, kMaxima, false, true, true>(a);
    }
    if (march_.strips > 0) return launch_lagged_with<0, false, kMaxima, true, false, true>(a);
    launch_lagged_with<0, false, kMaxima, false, false, true>(a);
  }

  template <bool kMaxima>
  void launch_lagged_tracking(const Launch& a) {
    if (distributed_) {
      if (march_.strips > 0) return launch_lagged_with<0, true, kMaxima, true>(a);
      return launch_lagged_with<0, true, kMaxima>(a);
    }
    if (mass_.x[0]) return launch_lagged_with_fluxes<kMaxima>(a);
    // Sources or side series (one process only): an instance of their own, so that the others keep their registers.
    if (sources_series_) {
      if (march_.strips > 0) return launch_lagged_with<0, false, kMaxima, true, true>(a);
      return launch_lagged_with<0, false, kMaxima, false, true>(a);
    }
    if (march_.strips > 0) {
      // Without Green-Ampt (rain, a Manning map, a constant loss): the instance without its solve.
      if (march_.cell.in.model != InfiltrationModel::green_ampt)
        return launch_lagged_with<0, false, kMaxima, true, false, false, false>(a);
      return launch_lagged_with<0, false, kMaxima, true>(a);
    }
    switch (min_blocks_) {
      case 2: launch_lagged_with<2, false, kMaxima>(a); break;
      case 4: launch_lagged_with<4, false, kMaxima>(a); break;
      case 6: launch_lagged_with<6, false, kMaxima>(a); break;
      default: launch_lagged_with<0, false, kMaxima>(a); break;
    }
  }

  // With maxima, every other step runs the kMaxima instance, which grows
  // them with both of its states; the steps between run the benchmark's.
  // With an exchange pending (exchange_in_next_step), the step runs as two
  // launches: the inner chunks on inner_stream_, beside the exchange that
  // the host runs meanwhile on stream_, then the other chunks on stream_
  // once the halos are in. Both read state n and write state n + 1 into the
  // other buffer; each chunk is computed once, as in one launch. Both
  // launches' step_prologue writes the same next slot.
  void launch_lagged(const Launch& a) {
    const bool maxima = track_maxima_ && maxima_pair_next_;
    if (track_maxima_) {
      if (!maxima) maxima_behind_ = true;
      maxima_pair_next_ = !maxima_pair_next_;
    }
    const auto launch = [&] { maxima ? launch_lagged_tracking<true>(a) : launch_lagged_tracking<false>(a); };
    if (!pending_exchange_) return launch();
    const std::function<void()> exchange = std::exchange(pending_exchange_, nullptr);
    SHALLOWS_CUDA_CHECK(cudaEventRecord(split_start_, stream_));
    SHALLOWS_CUDA_CHECK(cudaStreamWaitEvent(inner_stream_, split_start_, 0));
    run_over_ = {&inner_chunks_, inner_stream_};
    launch();
    run_over_ = {};
    SHALLOWS_CUDA_CHECK(cudaEventRecord(inner_done_, inner_stream_));
    exchange();
    run_over_ = {&rest_chunks_, stream_};
    launch();
    run_over_ = {};
    SHALLOWS_CUDA_CHECK(cudaStreamWaitEvent(stream_, inner_done_, 0));
  }

  // launch_lagged's pairing at the start of an advance.
  struct MaximaPairing {
    bool pair_next, behind;
    index_t launched;
  };

  // launch_lagged alternates by launch, but a batch's last launches may take
  // no step (its target or step limit reached): the pairing then follows
  // the steps taken, so that the state of the last one is grown (behind)
  // before the next step overwrites it, or by the kMaxima launch that takes
  // the next step.
  void realign_maxima(const MaximaPairing& before, index_t taken) {
    const index_t launched = steps_launched_ - before.launched;
    if (!track_maxima_ || kind_ != KernelKind::lagged || taken == launched) return;
    if (taken == 0) {
      maxima_pair_next_ = before.pair_next;
      maxima_behind_ = before.behind;
      return;
    }
    // Launch k of the advance ran the kMaxima instance if before.pair_next == (k even).
    const bool last_grown = before.pair_next == ((taken - 1) % 2 == 0);
    maxima_pair_next_ = !last_grown;
    maxima_behind_ = !last_grown;
  }

  void launch_maxima(int slot, gpu::MaximaOf of, double t) const {
    const unsigned threads = 256;
    const index_t cells = grid_.cells();
    const auto blocks = static_cast<unsigned>(std::min<index_t>((cells + threads - 1) / threads, 65536));
    gpu::slot_maxima_kernel<Real><<<blocks, threads, 0, stream_>>>(base_, slot, of, t);
    SHALLOWS_CUDA_CHECK_LAUNCH("slot_maxima_kernel");
  }

  // Base::fetch_ctrl, whose parity current_parity keeps.
  Ctrl fetch_ctrl() const {
    const Ctrl c = Base::fetch_ctrl();
    known_parity_ = c.parity;
    return c;
  }

  // The current state's buffer parity: known since the last fetch_ctrl
  // unless a step was launched since (a halo exchange follows a step's).
  int current_parity() const { return known_parity_ >= 0 ? known_parity_ : fetch_ctrl().parity; }

  bool distributed_;
  bool rate_pending_ = false;  // a rank's slot holds its own rate, not yet all ranks' (reduce_slot_rate)
  std::unique_ptr<gpu::StepTimeline> timeline_;  // SHALLOWS_CUDA_TIMELINE: kernel time and gaps per step
  KernelKind kind_;
  bool dry_skip_;
  bool compact_;
  bool track_maxima_;
  // The lagged kernel's maxima (launch_lagged): whether the next step grows
  // them, and whether a state since the last catch-up may be ungrown.
  bool maxima_pair_next_ = false;
  mutable bool maxima_behind_ = false;
  double arrival_threshold_;
  int min_blocks_;
  gpu::ChunkGrid cg_step_{};
  Params base_{};
  gpu::PlainExtras<Real> plain_{};  // what only the plain kernels take (scalars, segments)
  // Passive scalars on the lagged kernel: the mass fluxes of the state's
  // edges, by parity (MassFluxes; null pointers otherwise).
  gpu::MassFluxes<Real> mass_{};
  DeviceArray<Real> mass_x_[2], mass_y_[2];
  DeviceArray<Real> h_[2], hu_[2], hv_[2], z_;
  std::vector<CellBox> unpacked_;         // boxes unpacked since refresh_ghosts (lagged kernel)
  mutable int known_parity_ = -1;         // current_parity; -1: not known
  DeviceArray<unsigned> halo_chunks_;     // halo_chunks
  // An exchange beside the next step's inner chunks (exchange_in_next_step, launch_lagged).
  std::function<void()> pending_exchange_;
  CellBox split_inner_;
  DeviceArray<unsigned> inner_chunks_, rest_chunks_;  // split_chunks
  cudaStream_t inner_stream_ = nullptr;
  cudaEvent_t split_start_ = nullptr, inner_done_ = nullptr;
  struct ChunkRun {
    const DeviceArray<unsigned>* list = nullptr;  // null: every chunk, on stream_
    cudaStream_t stream = nullptr;
  };
  ChunkRun run_over_;  // what launch_lagged_with launches over
  DeviceArray<unsigned> after_sources_;   // list_after_sources (empty: no source, or the plain kernels)
  DeviceArray<unsigned char> after_sources_flag_;
  DeviceArray<unsigned char> walls_;  // Params::walls; empty: no line crosses the grid
  gpu::forcing::SideSeriesDevice side_series_;  // Forcing::boundary on the device
  bool sources_series_ = false;     // the lagged kernel's kSourcesSeries instance
  bool rhs_at_first_step_ = false;  // the stored rhs took the sides' series at t = 0 (set_state)
  // Passive scalars: h c of scalar s in hc_[2 s + parity], their device
  // pointers (PlainExtras::hc) and the sides' concentrations.
  std::vector<DeviceArray<Real>> hc_;
  DeviceArray<Real*> hc_ptrs_;
  DeviceArray<Real> scalar_side_;
  // Boundary segments: their conditions (values at the current step), their
  // specification (time series) and the scalars' concentrations through them.
  DeviceArray<SegmentCondition<Real>> segments_;
  std::vector<BoundarySegment> segment_specs_;
  DeviceArray<Real> scalar_segment_;
  DeviceArray<Real> rh_[2], rhu_[2], rhv_[2];
  DeviceArray<unsigned long long> computed_;
  DeviceArray<double> gain_;  // positivity account (depths; times dx dy on reading)
  DeviceArray<double> rows_;
  DeviceArray<unsigned char> dry_[2], same_;
  DeviceArray<unsigned> list_, list_count_;
  DeviceArray<Real> max_h_, max_speed_;
  DeviceArray<double> arrival_;
  gpu::forcing::MarchForcing<Real> march_{};  // the lagged kernel's forcing (strips = 0: none)
  std::array<TimeSeries, 4> boundary_;  // Forcing::boundary
  bool boundary_series_ = false;
  // Last: destroyed first, after the destructor has synchronised stream_.
  gpu::SnapshotStager<Real> stager_{grid_};
  mutable gpu::CellGather<Real> gather_;  // read_cells
};

} // namespace

CudaOptions cuda_options_from_environment() {
  CudaOptions o;
  o.kernel = "auto";
  if (const char* k = std::getenv("SHALLOWS_CUDA_KERNEL"); k && *k) o.kernel = k;
  if (const char* d = std::getenv("SHALLOWS_CUDA_DRY_SKIP"); d && *d) o.dry_skip = std::strcmp(d, "0") != 0;
  if (const char* c = std::getenv("SHALLOWS_CUDA_COMPACT"); c && *c) o.compact = std::strcmp(c, "0") != 0;
  if (const char* r = std::getenv("SHALLOWS_CUDA_ROWS"); r && *r) o.rows = std::atoi(r);
  if (const char* v = std::getenv("SHALLOWS_CUDA_DEVICE"); v && *v) o.device = std::atoi(v);
  if (const char* m = std::getenv("SHALLOWS_CUDA_MIN_BLOCKS"); m && *m) o.min_blocks = std::atoi(m);
  return o;
}

CudaOptions cuda_options(const BackendOptions& options) {
  CudaOptions o = cuda_options_from_environment();
  if (options.cuda_device >= 0) o.device = options.cuda_device;
  return o;
}

std::unique_ptr<CudaBackend> make_cuda_roe3_backend(const Problem& problem, const BackendOptions& options,
                                                    const CudaOptions& cuda);

std::unique_ptr<CudaBackend> make_cuda_backend(const Problem& problem, const BackendOptions& options,
                                               const CudaOptions& cuda) {
  // The third-order scheme has its own executor (roe3_backend.cu).
  if (problem.scheme == Scheme::roe3) return make_cuda_roe3_backend(problem, options, cuda);
  if (problem.precision == Precision::single_precision) {
    return std::make_unique<CudaExecutor<float>>(problem, options, cuda);
  }
  return std::make_unique<CudaExecutor<double>>(problem, options, cuda);
}

std::unique_ptr<Backend> make_cuda_backend(const Problem& problem, const BackendOptions& options) {
  return make_cuda_backend(problem, options, cuda_options(options));
}

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error of a missing driver
    return 0;
  }
  return n;
}

bool cuda_mps_running() {
  const char* dir = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  std::error_code ec;
  return std::filesystem::exists(std::filesystem::path(dir && *dir ? dir : "/tmp/nvidia-mps") / "control", ec);
}

double cuda_copy_bandwidth(std::size_t bytes, int device) {
  SHALLOWS_CUDA_CHECK(cudaSetDevice(device));
  gpu::require_free_memory(2 * bytes, "the copy-bandwidth measurement");
  DeviceArray<unsigned char> src(bytes), dst(bytes);
  SHALLOWS_CUDA_CHECK(cudaMemset(src.get(), 1, bytes));
  SHALLOWS_CUDA_CHECK(cudaMemset(dst.get(), 0, bytes));
  cudaEvent_t start = nullptr, stop = nullptr;
  SHALLOWS_CUDA_CHECK(cudaEventCreate(&start));
  SHALLOWS_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> seconds;
  try {
    for (int k = 0; k < 12; ++k) {
      SHALLOWS_CUDA_CHECK(cudaEventRecord(start));
      SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice));
      SHALLOWS_CUDA_CHECK(cudaEventRecord(stop));
      SHALLOWS_CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      SHALLOWS_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      if (k >= 2) seconds.push_back(double(ms) * 1e-3);  // the first two warm up
    }
  } catch (...) {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    throw;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  return 2.0 * double(bytes) / median;
}

} // namespace shallows
