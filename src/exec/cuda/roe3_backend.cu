// SPDX-License-Identifier: MIT
// Host side of the CUDA executor of the third-order scheme (scheme = "roe3",
// seed 003): device memory, the step as a CUDA graph, time control. The
// kernels and the design are described in roe3_kernels.cuh.
//
// A step (one graph launch): begin_kernel; ghost fill is already done for
// U^n; march stage 1 (rhs of U^n, rate) -> dt_kernel -> apply_kernel (U1);
// ghosts of U1; march stage 2 (U2); ghosts of U2; march stage 3 (U^{n+1}
// in place of U^n); ghosts of U^{n+1}; end_kernel; maxima. Buffers: U^n, U1,
// U2, the rhs of stage 1, the bed at the quadrature points. With forcing
// (forcing_kernels.cuh), forcing_start_kernel keeps the step's start time
// after begin_kernel, and the forcing kernels run on U^{n+1} after stage 3,
// before its ghosts are filled.
// With passive scalars, h c of each has a buffer per state (U^n, U1, U2):
// stage 1 also stores each cell's edge mass fluxes, from which apply_kernel
// transports the scalars into U1; stages 2 and 3 transport them in the march.
// Where a side is not a wall, side_rate_kernel sums what each stage input's
// right-hand side moves through the sides, for the three stages in one
// launch before stage 3; side_add_kernel adds it to the account
// (boundary_flow.cuh).
// The bed's quadrature-point values are computed once (bed_kernel). Compiled with --fmad=false, the
// results match the CPU's bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "batched_advance.cuh"
#include "boundary_flow.cuh"
#include "cuda_check.cuh"
#include "device_array.cuh"
#include "executor_base.cuh"
#include "forcing_kernels.cuh"
#include "halo_kernels.cuh"
#include "read_back.cuh"
#include "roe3_kernels.cuh"
#include "snapshot_stager.cuh"
#include "shallows/exec/cuda_backend.hpp"
#include "shallows/exec/host_fields.hpp"
#include "shallows/solver/backend.hpp"
#include "shallows/solver/mass_balance.hpp"

namespace shallows {

std::unique_ptr<CudaBackend> make_cuda_roe3_backend(const Problem& problem, const BackendOptions& options,
                                                    const CudaOptions& cuda);

namespace {

using gpu::roe3k::Roe3Ctrl;

unsigned blocks_for(index_t n, unsigned threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

// The start of the step being taken, for the forcing (dt_kernel moves t on
// before the stages run).
__global__ void forcing_start_kernel(const Roe3Ctrl* ctrl, double* t0) {
  if (ctrl->active) *t0 = ctrl->t;
}

// What the forcing kernels need of the step just taken: its start, its dt,
// and U^{n+1} (gpu::StepClock's part for the roe3 control slot).
template <class Real>
struct Roe3Clock {
  const Roe3Ctrl* ctrl;
  const double* t0;
  Real* h;
  Real* hu;
  Real* hv;

  __device__ gpu::forcing::StepWindow<Real> window() const { return {ctrl->active != 0, *t0, ctrl->dt, h, hu, hv}; }
};

// Rows per chunk: long marches (each costs two extra rows of
// reconstructions) while the grid still gives about 2.5 waves of the warps
// the GPU holds at once (fewer waves leave SMs idle at the tail; see
// bench/results.md, rows per chunk of the roe3 march kernel).
int choose_rows(const Grid& g, int sms, int resident_warps_per_sm) {
  const index_t strips = (g.nx + gpu::roe3k::kStripWidth - 1) / gpu::roe3k::kStripWidth;
  const auto wanted = static_cast<index_t>(2.5 * sms * resident_warps_per_sm);
  int rows = 64;
  while (rows > 8 && strips * ((g.ny + rows - 1) / rows) < wanted) rows /= 2;
  return rows;
}

template <class Real>
class CudaRoe3Backend final : public gpu::WithForcing<Real, GridCells, gpu::GridRankBase<Real, Roe3Ctrl>> {
  using Base = gpu::WithForcing<Real, GridCells, gpu::GridRankBase<Real, Roe3Ctrl>>;
  using Base::ctrl_;
  using Base::forcing_;
  using Base::sides_;
  using Base::fetch_ctrl;
  using Base::grid_;
  using Base::host_in_;
  using Base::prop_;
  using Base::steps_launched_;
  using Base::stream_;

 public:
  CudaRoe3Backend(const Problem& p, const BackendOptions& o, const CudaOptions& co)
      : Base(p.grid, co.device),
        physics_(to_precision<Real>(p.physics)),
        prm_(roe3::make_params<Real>(physics_, p.grid.dx, p.grid.dy)),
        cfl_(p.cfl),
        dry_dt_(dry_time_step(p)),
        track_maxima_(o.track_maxima),
        arrival_threshold_(o.arrival_threshold),
        // A rank of a distributed run: the host all-reduces each step's rate
        // between stage 1's march and dt_kernel (two graphs per step).
        distributed_(p.owned.cells() > 0),
        owned_(p.owned_cells()) {
    if (grid_.nx <= 0 || grid_.ny <= 0) throw std::runtime_error("CUDA backend: empty grid");
    for (int s = 0; s < 4; ++s) bc_[s] = to_precision<Real>(p.boundary[s]);

    const auto padded = static_cast<std::size_t>(grid_.padded_size());
    const auto cells = static_cast<std::size_t>(grid_.cells());
    const std::size_t need = padded * (10 * sizeof(Real) + sizeof(roe3::BedPoints<Real>)) +
                             3 * cells * sizeof(Real) + (track_maxima_ ? 3 * cells * sizeof(double) : 0) + 4096 +
                             (p.scalars.empty() ? 0 : (3 * p.scalars.size() * padded + 4 * cells) * sizeof(Real)) +
                             gpu::forcing::ForcingDevice<Real>::bytes(p, GridCells{p.grid, p.owned_cells()});
    char what[160];
    std::snprintf(what, sizeof what, "a %lldx%lld roe3 grid in %s", static_cast<long long>(grid_.nx),
                  static_cast<long long>(grid_.ny), sizeof(Real) == 4 ? "float" : "double");
    gpu::require_free_memory(need, what);
    // First: it checks the forcing's sizes and cells, before the stream and pinned buffers exist.
    forcing_ = gpu::forcing::ForcingDevice<Real>(p, GridCells{p.grid, p.owned_cells()});
    // Where the device keeps each step's start time: for the forcing and the time series of sides and segments.
    if (forcing_.active() || segments_follow_series(p.segments)) t0_ = DeviceArray<double>(1);
    boundary_series_ = p.forcing.has_boundary_series() || segments_follow_series(p.segments);
    upload_segments(p.segments);
    side_series_ = gpu::forcing::SideSeriesDevice(p.forcing.boundary);

    this->open_stream();

    // U^n, U1 and U2 all start as the initial state (inactive cells are
    // never written, ghosts are filled before they are read).
    PaddedFields<Real> f = make_padded_fields<Real>(p);
    for (int b = 0; b < 3; ++b) {
      for (auto* a : {&h_[b], &hu_[b], &hv_[b]}) *a = DeviceArray<Real>(padded);
      h_[b].upload(f.h.data(), padded);
      hu_[b].upload(f.hu.data(), padded);
      hv_[b].upload(f.hv.data(), padded);
    }
    z_ = DeviceArray<Real>(padded);
    forcing_.set_bed(z_.get());  // inactive cells (NaN bed) get no forcing
    z_.upload(f.z.data(), padded);
    for (auto* b : {&rh_, &rhu_, &rhv_}) *b = DeviceArray<Real>(cells);

    bed_ = DeviceArray<roe3::BedPoints<Real>>(padded);
    SHALLOWS_CUDA_CHECK(cudaMemsetAsync(bed_.get(), 0, padded * sizeof(roe3::BedPoints<Real>), stream_));
    gpu::roe3k::bed_kernel<Real><<<blocks_for((grid_.nx + 2) * (grid_.ny + 2), 128), 128, 0, stream_>>>(
        z_.get(), grid_, prm_.rec, bed_.get());
    SHALLOWS_CUDA_CHECK_LAUNCH("roe3 bed_kernel");
    if (!p.scalars.empty()) upload_scalars(p);
    side_blocks_ = static_cast<int>(blocks_for(std::max(grid_.nx, grid_.ny), gpu::forcing::kThreads));
    // On a rank, the sides facing other ranks are open: side_rate_kernel counts only the domain's.
    sides_ = gpu::SideAccount(!closed_domain(p), 3 * 8 * static_cast<std::size_t>(side_blocks_));
    ctrl_ = DeviceArray<Roe3Ctrl>(1);
    gain_ = DeviceArray<double>(1);
    SHALLOWS_CUDA_CHECK(cudaMemsetAsync(gain_.get(), 0, sizeof(double), stream_));
    SHALLOWS_CUDA_CHECK(cudaMemcpy(ctrl_.get(), host_in_, sizeof(Roe3Ctrl), cudaMemcpyHostToDevice));

    if (track_maxima_) {
      max_h_ = DeviceArray<double>(cells);
      max_speed_ = DeviceArray<double>(cells);
      arrival_ = DeviceArray<double>(cells);
      const std::vector<double> zero(cells, 0.0), nan(cells, std::numeric_limits<double>::quiet_NaN());
      max_h_.upload(zero.data(), cells);
      max_speed_.upload(zero.data(), cells);
      arrival_.upload(nan.data(), cells);
    }

    // Float gains from 4 resident blocks (128 registers); double spills
    // when capped, so it is left uncapped (bench/cuda-notes.md).
    min_blocks_ = co.min_blocks > 0 ? co.min_blocks : (sizeof(Real) == 4 ? 4 : 0);
    rows_ = co.rows > 0 ? co.rows : choose_rows(grid_, prop_.multiProcessorCount, resident_warps_per_sm());
    strips_ = (grid_.nx + gpu::roe3k::kStripWidth - 1) / gpu::roe3k::kStripWidth;
    chunks_ = (grid_.ny + rows_ - 1) / rows_;

    fill_ghosts(state(0), nullptr);
    if (track_maxima_) launch_maxima(nullptr);
    capture_step();
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  ~CudaRoe3Backend() override {
    if (stream_) cudaStreamSynchronize(stream_);
    if (graph_exec_) cudaGraphExecDestroy(graph_exec_);
    if (rate_graph_exec_) cudaGraphExecDestroy(rate_graph_exec_);
    if (tail_graph_exec_) cudaGraphExecDestroy(tail_graph_exec_);
  }

  std::string name() const override { return "cuda-roe3"; }

  double step(double t, double dt_max) override {
    set_limits(t, std::numeric_limits<double>::infinity(), dt_max, 1);
    if (distributed_) {
      // Stage 1's march left this rank's rate of U^n (owned cells); dt needs all ranks'.
      SHALLOWS_CUDA_CHECK(cudaGraphLaunch(rate_graph_exec_, stream_));
      const Roe3Ctrl r = fetch_ctrl();
      if (r.bad) throw not_finite(t);
      double local = 0;
      std::memcpy(&local, &r.rate_bits, sizeof local);  // the bits of a non-negative double (march_kernel)
      const double global = this->reduce_rate(local);
      std::memcpy(&host_in_->rate_bits, &global, sizeof global);
      SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(&ctrl_.get()->rate_bits, &host_in_->rate_bits,
                                          sizeof(unsigned long long), cudaMemcpyHostToDevice, stream_));
    }
    launch_steps(1);
    const Roe3Ctrl c = fetch_ctrl();
    if (c.status != 0) throw not_finite(c.t);
    return c.dt;
  }

  AdvanceResult advance(double t, double target, index_t max_steps) override {
    if (!takes_step(t, target, 0, max_steps)) return {t, 0, 0};
    if (distributed_) return Backend::advance(t, target, max_steps);  // an all-reduce per step
    set_limits(t, target, std::numeric_limits<double>::infinity(), max_steps);
    return gpu::advance_in_batches(
        t, target, max_steps, 256, [&](index_t batch) { launch_steps(batch); }, [&] { return fetch_ctrl(); },
        [&](double at) { return not_finite(at); });
  }

  void read_state(Fields& out) const override {
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    gpu::download_state(grid_, h_[0], hu_[0], hv_[0], out);
    out.hc.resize(hc_.size() / 3);
    for (std::size_t s = 0; s < out.hc.size(); ++s) gpu::download_interior(grid_, hc_[3 * s], out.hc[s]);
  }

  std::vector<double> read_field(StateField which) const override {
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::vector<double> out;
    gpu::download_interior(grid_, state_field(which, h_, hu_, hv_)[0], out);
    return out;
  }

  // Into U^n and both stages, as the constructor starts them; ghosts filled again.
  void load_state(const Fields& in) override {
    const auto cells = static_cast<std::size_t>(grid_.cells());
    check_load_size(fields_sized(in, cells) && scalars_sized(in, hc_.size() / 3, cells), "load_state");
    const auto padded = static_cast<std::size_t>(grid_.padded_size());
    std::vector<Real> buf(padded, Real(0));
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const std::vector<double>* src[3] = {&in.h, &in.hu, &in.hv};
    for (int v = 0; v < 3; ++v) {
      copy_into_interior(grid_, *src[v], buf.data());
      for (int b = 0; b < 3; ++b) (v == 0 ? h_[b] : v == 1 ? hu_[b] : hv_[b]).upload(buf.data(), padded);
    }
    for (std::size_t s = 0; s < in.hc.size(); ++s) {
      copy_into_interior(grid_, in.hc[s], buf.data());
      for (std::size_t b = 0; b < 3; ++b) hc_[3 * s + b].upload(buf.data(), padded);
    }
    this->settle_uploads();
    fill_ghosts(state(0), nullptr);
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void load_maxima(const Maxima& in) override {
    gpu::upload_maxima(track_maxima_, static_cast<std::size_t>(grid_.cells()), in, max_h_, max_speed_, arrival_,
                         stream_);
  }

  // The state (always U^n's buffer after a step) goes to the host through the
  // stager: a D2D copy on stream_, the rest on its own stream. With scalars:
  // a synchronous read (the stager copies h, hu, hv only).
  Snapshot snapshot() override {
    if (!hc_.empty()) return Backend::snapshot();
    return stager_.snapshot(stream_, h_[0].get(), hu_[0].get(), hv_[0].get());
  }

  void read_maxima(Maxima& out) const override {
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    gpu::download_maxima(track_maxima_, static_cast<std::size_t>(grid_.cells()), max_h_, max_speed_, arrival_, out);
  }

  // As CpuGridBackend::volume: rows summed in order, then the rows in order.
  double volume() const override {
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const auto padded = static_cast<std::size_t>(grid_.padded_size());
    std::vector<Real> h(padded);
    h_[0].download(h.data(), padded);
    return layout_volume(GridCells{grid_, {}}, h.data(), static_cast<const Real*>(nullptr));
  }

  // Summed on the device (warp_add_nonzero): exact to round-off, not bit-identical to the CPU.
  double positivity_volume() const override { return gpu::read_scalar(gain_, stream_) * grid_.dx * grid_.dy; }


  // The ghost cells of U^n from the new halos.
  void refresh_ghosts() override {
    fill_ghosts(state(0), nullptr);
    this->wait_for_boxes();
  }

  CudaStats stats() const override {
    CudaStats s = this->base_stats();
    s.kernel = "roe3-march";
    s.chunk_width = gpu::roe3k::kStripWidth;
    s.chunk_rows = rows_;
    s.chunks = strips_ * chunks_;
    s.chunks_computed = s.chunks * steps_launched_;
    // Per RK step: three stencil passes reading h, hu, hv, z and 12 bed
    // values; stage 1 writes the rhs, apply reads U^n and the rhs and writes
    // U1; stages 2 and 3 read U^n and write their stage.
    s.bytes_per_cell_update = double(sizeof(Real)) * (3 * 16 + 3 + 9 + 2 * 6);
    return s;
  }

 private:
  using MarchArgs = gpu::roe3k::MarchArgs<Real>;

  StateArrays<Real> state(int b) const { return {h_[b].get(), hu_[b].get(), hv_[b].get(), z_.get()}; }
  // Halo boxes carry U^n (its buffers whatever the parity).
  gpu::BoxFields<Real> box_reals(int) const override {
    gpu::BoxFields<Real> f{{h_[0].get(), hu_[0].get(), hv_[0].get()}};
    for (std::size_t s = 0; s < hc_.size() / 3; ++s) f.f.push_back(hc_[3 * s].get());
    return f;
  }
  gpu::BoxFields<double> box_doubles(int) const override {
    return gpu::infiltration_box_field(forcing_.infiltrated());
  }

  // The scalars' buffers (three per scalar, each starting as the initial
  // h c), their device pointers, the concentrations the sides and segments
  // bring, and the stage-1 mass fluxes; the forcing gets U^n's buffers.
  void upload_scalars(const Problem& p) {
    const std::vector<std::vector<Real>> hc = make_padded_scalars<Real>(p);
    const ScalarInflow<Real> inflow = scalar_inflow<Real>(p);
    std::vector<Real*> all, forcing;
    for (const std::vector<Real>& initial : hc) {
      for (int b = 0; b < 3; ++b) {
        DeviceArray<Real>& buf = hc_.emplace_back(initial.size());
        buf.upload(initial.data(), initial.size());
        all.push_back(buf.get());
      }
      // ScalarArgs of the forcing: hc[2 s + parity], the state at parity 0.
      forcing.push_back(all[all.size() - 3]);
      forcing.push_back(all[all.size() - 2]);
    }
    hc_ptrs_ = DeviceArray<Real*>(all.size());
    hc_ptrs_.upload(all.data(), all.size());
    forcing_hc_ptrs_ = DeviceArray<Real*>(forcing.size());
    forcing_hc_ptrs_.upload(forcing.data(), forcing.size());
    forcing_.set_scalars(forcing_hc_ptrs_.get(), inflow);
    scalar_side_ = DeviceArray<Real>(inflow.side.size());
    scalar_side_.upload(inflow.side.data(), inflow.side.size());
    scalar_segment_ = DeviceArray<Real>(inflow.segment.size());
    scalar_segment_.upload(inflow.segment.data(), inflow.segment.size());
    for (auto& m : mass_) m = DeviceArray<Real>(static_cast<std::size_t>(grid_.cells()));
  }

  // Problem::segments on the device: their conditions, and the time series
  // of their values (one SeriesView each, n = 0 for a constant one).
  void upload_segments(const std::vector<BoundarySegment>& segments) {
    if (segments.empty()) return;
    const std::vector<SegmentCondition<Real>> now = segments_at<Real>(segments, 0.0);
    segments_ = DeviceArray<SegmentCondition<Real>>(now.size());
    segments_.upload(now.data(), now.size());
    std::vector<double> t, v;
    for (const BoundarySegment& s : segments) {
      t.insert(t.end(), s.value.t.begin(), s.value.t.end());
      v.insert(v.end(), s.value.v.begin(), s.value.v.end());
    }
    segment_t_ = DeviceArray<double>(t.size());
    segment_t_.upload(t.data(), t.size());
    segment_v_ = DeviceArray<double>(v.size());
    segment_v_.upload(v.data(), v.size());
    std::vector<SeriesView> views;
    std::size_t at = 0;
    for (const BoundarySegment& s : segments) {
      views.push_back({segment_t_.get() + at, segment_v_.get() + at, static_cast<int>(s.value.t.size())});
      at += s.value.t.size();
    }
    segment_series_ = DeviceArray<SeriesView>(views.size());
    segment_series_.upload(views.data(), views.size());
  }

  static std::runtime_error not_finite(double t) { return Base::not_finite(t, " (roe3)"); }

  // t: where the device holds the step's start time, at which sides with a
  // time series take their value (nullptr: the constant values).
  void fill_ghosts(const StateArrays<Real>& a, const Roe3Ctrl* ctrl, const double* t = nullptr) const {
    constexpr unsigned threads = 128;
    gpu::roe3k::SideSeries series;
    if (t) {
      series.t = t;
      series.views = side_series_.views();
    }
    const gpu::roe3k::Segments<Real> seg{segments_.get(), segment_series_.get(), static_cast<int>(segments_.size())};
    gpu::roe3k::ghost_we_kernel<Real><<<blocks_for(Grid::ghost * grid_.ny, threads), threads, 0, stream_>>>(
        a, grid_, bc_[0], bc_[1], ctrl, series, seg, physics_);
    SHALLOWS_CUDA_CHECK_LAUNCH("roe3 ghost_we_kernel");
    gpu::roe3k::ghost_sn_kernel<Real>
        <<<blocks_for(Grid::ghost * (grid_.nx + 2 * Grid::ghost), threads), threads, 0, stream_>>>(
            a, grid_, bc_[2], bc_[3], ctrl, series, seg, physics_);
    SHALLOWS_CUDA_CHECK_LAUNCH("roe3 ghost_sn_kernel");
  }

  void launch_maxima(const Roe3Ctrl* ctrl) const {
    constexpr unsigned threads = 256;
    gpu::roe3k::step_maxima_kernel<Real><<<blocks_for(grid_.cells(), threads), threads, 0, stream_>>>(
        state(0), grid_, physics_.h_dry, arrival_threshold_, ctrl, max_h_.get(),
        max_speed_.get(), arrival_.get());
    SHALLOWS_CUDA_CHECK_LAUNCH("roe3 step_maxima_kernel");
  }

  MarchArgs march_args(int src, int dst) const {
    MarchArgs a{};
    a.src = state(src);
    a.un = state(0);
    a.dst = state(dst);
    a.rh = rh_.get();
    a.rhu = rhu_.get();
    a.rhv = rhv_.get();
    a.bed = bed_.get();
    a.g = grid_;
    a.prm = prm_;
    a.rows = rows_;
    a.strips = strips_;
    a.chunks = chunks_;
    a.ctrl = ctrl_.get();
    a.positivity_sum = gain_.get();
    a.owned = owned_;
    if (!hc_.empty()) {
      gpu::roe3k::ScalarArgs<Real>& sc = a.sc;
      sc.hc = hc_ptrs_.get();
      sc.count = static_cast<int>(hc_.size() / 3);
      sc.src = src;
      sc.dst = dst;
      for (int k = 0; k < 4; ++k) {
        sc.mass[k] = mass_[k].get();
        sc.kind[k] = bc_[k].kind;
      }
      sc.side_c = scalar_side_.get();
      sc.segments = segments_.get();
      sc.segment_count = static_cast<int>(segments_.size());
      sc.segment_c = scalar_segment_.get();
    }
    return a;
  }

  // The kernels of one step, recorded once into a graph (they take all that
  // varies from the device's Roe3Ctrl). A rank records two: up to stage 1's
  // march (rate_graph_exec_), and from dt_kernel on, after the all-reduce.
  // A rank with volume sources or structures stops that one before the
  // forcing, whose sources and structures all-reduce on the host, and records
  // the rest (tail_graph_exec_).
  void capture_step() {
    using namespace gpu::roe3k;
    Roe3Ctrl* ctrl = ctrl_.get();
    SHALLOWS_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    begin_kernel<<<1, 1, 0, stream_>>>(ctrl);
    SHALLOWS_CUDA_CHECK_LAUNCH("roe3 begin_kernel");
    if (t0_.size() > 0) {
      forcing_start_kernel<<<1, 1, 0, stream_>>>(ctrl, t0_.get());
      SHALLOWS_CUDA_CHECK_LAUNCH("roe3 forcing_start_kernel");
    }
    // Sides with a time series: every ghost fill of the step at its start time, this one first.
    const double* series_t = boundary_series_ ? t0_.get() : nullptr;
    if (series_t) fill_ghosts(state(0), ctrl, series_t);
    launch_march<0>(march_args(0, 0));
    if (distributed_) {
      end_capture(rate_graph_exec_);
      SHALLOWS_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    }
    dt_kernel<<<1, 1, 0, stream_>>>(ctrl, cfl_, dry_dt_);
    SHALLOWS_CUDA_CHECK_LAUNCH("roe3 dt_kernel");
    if (hc_.empty()) {
      apply_kernel<Real><<<blocks_for(grid_.cells(), 256), 256, 0, stream_>>>(march_args(0, 1));
    } else {
      apply_kernel<Real, true><<<blocks_for(grid_.cells(), 256), 256, 0, stream_>>>(march_args(0, 1));
    }
    SHALLOWS_CUDA_CHECK_LAUNCH("roe3 apply_kernel");
    fill_ghosts(state(1), ctrl, series_t);
    launch_march<1>(march_args(1, 2));
    fill_ghosts(state(2), ctrl, series_t);
    launch_side_rate();  // before stage 3 overwrites U^n
    launch_march<2>(march_args(2, 0));
    if (sides_.kept()) {
      gpu::roe3k::side_add_kernel<Real>
          <<<1, 8, 0, stream_>>>(ctrl, sides_.rate(), side_blocks_, grid_.dx, grid_.dy, sides_.flow());
      SHALLOWS_CUDA_CHECK_LAUNCH("roe3 side_add_kernel");
    }
    if (forcing_.host_reduces()) {
      end_capture(graph_exec_);
      SHALLOWS_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    } else if (forcing_.active()) {
      forcing_.launch(step_clock(), stream_);
    }
    fill_ghosts(state(0), ctrl, series_t);
    end_kernel<<<1, 1, 0, stream_>>>(ctrl);
    SHALLOWS_CUDA_CHECK_LAUNCH("roe3 end_kernel");
    if (track_maxima_) launch_maxima(ctrl);
    end_capture(forcing_.host_reduces() ? tail_graph_exec_ : graph_exec_);
  }

  Roe3Clock<Real> step_clock() const { return {ctrl_.get(), t0_.get(), h_[0].get(), hu_[0].get(), hv_[0].get()}; }

  void end_capture(cudaGraphExec_t& exec) {
    cudaGraph_t graph = nullptr;
    SHALLOWS_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
    const cudaError_t err = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    SHALLOWS_CUDA_CHECK(err);
  }

  // Warps of the march kernel an SM holds at once (registers decide).
  int resident_warps_per_sm() const {
    using namespace gpu::roe3k;
    int blocks = 0;
    const auto query = [&](const void* kernel) {
      SHALLOWS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kThreads, 0));
    };
    switch (min_blocks_) {
      case 3: query(reinterpret_cast<const void*>(march_kernel<Real, 0, 3>)); break;
      case 4: query(reinterpret_cast<const void*>(march_kernel<Real, 0, 4>)); break;
      default: query(reinterpret_cast<const void*>(march_kernel<Real, 0, 0>)); break;
    }
    return std::max(blocks, 1) * kWarps;
  }

  // The three stage inputs' water through the sides, per second (all three buffers hold their stage, ghosts filled).
  void launch_side_rate() const {
    if (!sides_.kept()) return;
    const gpu::roe3k::StageInputs<Real> in{{state(0), state(1), state(2)}};
    const dim3 blocks(static_cast<unsigned>(side_blocks_), 4, 3);
    gpu::roe3k::side_rate_kernel<Real>
        <<<blocks, gpu::forcing::kThreads, 0, stream_>>>(in, bed_.get(), grid_, prm_, owned_, ctrl_.get(),
                                                          sides_.rate());
    SHALLOWS_CUDA_CHECK_LAUNCH("roe3 side_rate_kernel");
  }

  template <int kStage>
  void launch_march(const MarchArgs& a) const {
    using namespace gpu::roe3k;
    const unsigned blocks = blocks_for(strips_ * chunks_, kWarps);
    if (!hc_.empty()) {  // registers uncapped: the scalars' run is not tuned
      march_kernel<Real, kStage, 0, true><<<blocks, kThreads, 0, stream_>>>(a);
      SHALLOWS_CUDA_CHECK_LAUNCH("roe3 march_kernel (scalars)");
      return;
    }
    switch (min_blocks_) {
      case 3: march_kernel<Real, kStage, 3><<<blocks, kThreads, 0, stream_>>>(a); break;
      case 4: march_kernel<Real, kStage, 4><<<blocks, kThreads, 0, stream_>>>(a); break;
      default: march_kernel<Real, kStage, 0><<<blocks, kThreads, 0, stream_>>>(a); break;
    }
    SHALLOWS_CUDA_CHECK_LAUNCH("roe3 march_kernel");
  }

  void launch_steps(index_t n) {
    for (index_t k = 0; k < n; ++k) {
      SHALLOWS_CUDA_CHECK(cudaGraphLaunch(graph_exec_, stream_));
      if (!tail_graph_exec_) continue;
      forcing_.launch(step_clock(), stream_, this->sum_reducer());
      SHALLOWS_CUDA_CHECK(cudaGraphLaunch(tail_graph_exec_, stream_));
    }
    steps_launched_ += n;
  }

  // Starts counting from time t with the limits of one advance()/step().
  void set_limits(double t, double target, double dt_max, index_t max_steps) {
    Roe3Ctrl& c = *host_in_;
    c = fetch_ctrl();  // synchronises; keeps the device's status (a failed run stays failed)
    c.t = t;
    c.steps = 0;
    c.target = target;
    c.dt_max = dt_max;
    c.max_steps = static_cast<long long>(max_steps);
    SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(ctrl_.get(), host_in_, sizeof(Roe3Ctrl), cudaMemcpyHostToDevice, stream_));
  }

  PhysicsParams<Real> physics_;
  roe3::Params<Real> prm_;
  double cfl_;
  double dry_dt_;  // dry_time_step
  bool track_maxima_;
  double arrival_threshold_;
  bool distributed_;
  CellBox owned_;  // Problem::owned_cells
  BoundaryCondition<Real> bc_[4];
  int rows_ = 32;
  int min_blocks_ = 0;
  index_t strips_ = 0, chunks_ = 0;
  cudaGraphExec_t graph_exec_ = nullptr;
  cudaGraphExec_t rate_graph_exec_ = nullptr;  // a rank's step up to its rate (capture_step)
  cudaGraphExec_t tail_graph_exec_ = nullptr;  // a rank's step after its sources, structures (capture_step)
  DeviceArray<Real> h_[3], hu_[3], hv_[3];  // U^n, U1, U2
  DeviceArray<Real> z_, rh_, rhu_, rhv_;
  DeviceArray<roe3::BedPoints<Real>> bed_;
  DeviceArray<double> gain_;  // positivity account (depths; times dx dy on reading)
  DeviceArray<double> max_h_, max_speed_, arrival_;
  bool boundary_series_ = false;
  gpu::forcing::SideSeriesDevice side_series_;  // Forcing::boundary on the device
  DeviceArray<SegmentCondition<Real>> segments_;   // Problem::segments (upload_segments)
  DeviceArray<double> segment_t_, segment_v_;
  DeviceArray<SeriesView> segment_series_;
  DeviceArray<double> t0_;  // with forcing: the start of the step being taken
  // Passive scalars (upload_scalars): h c of scalar s in state b at hc_[3 s + b].
  std::vector<DeviceArray<Real>> hc_;
  DeviceArray<Real*> hc_ptrs_, forcing_hc_ptrs_;
  DeviceArray<Real> scalar_side_, scalar_segment_;
  DeviceArray<Real> mass_[4];  // stage 1's edge mass fluxes (ScalarArgs::mass)
  int side_blocks_ = 0;        // side_rate_kernel's blocks per side
  // Last: destroyed first, after the destructor has synchronised stream_.
  gpu::SnapshotStager<Real> stager_{grid_};
};

} // namespace

std::unique_ptr<CudaBackend> make_cuda_roe3_backend(const Problem& problem, const BackendOptions& options,
                                                    const CudaOptions& cuda) {
  if (problem.precision == Precision::single_precision) {
    return std::make_unique<CudaRoe3Backend<float>>(problem, options, cuda);
  }
  return std::make_unique<CudaRoe3Backend<double>>(problem, options, cuda);
}

} // namespace shallows
