// SPDX-License-Identifier: MIT
// Host side of the CUDA executor for unstructured meshes (first order):
// device memory, the per-slot and per-edge layouts, launches, time control.
// The kernels and the designs are described in mesh_kernels.cuh. A step
// runs in the CPU mesh executor's order: the rates, then from the state the
// step starts from the boundary groups' water (boundary_flow.cuh) and the
// scalars' new concentrations, the update, the scalars' h c, the forcing
// over the mesh's cells (forcing_kernels.cuh, the grids' code) and the maxima.
// Without forcing and scalars, blocks of dry cells with dry neighbours are
// left out of a step (dry_blocks.hpp), as on the CPU.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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
#include "mesh_kernels.cuh"
#include "read_back.cuh"
#include "shallows/exec/cuda_backend.hpp"
#include "shallows/exec/host_fields.hpp"
#include "shallows/exec/mesh_fields.hpp"
#include "shallows/solver/capabilities.hpp"
#include "shallows/solver/mass_balance.hpp"
#include "snapshot_stager.cuh"

namespace shallows {
namespace {

using gpu::Ctrl;
using gpu::Launch;
using gpu::mesh::kNoEdge;

// The designs of a step (mesh_kernels.cuh).
enum class MeshLoop {
  cell_slots,   // thread per cell, rhs pass + update pass, slots layout (default)
  cell_shared,  // thread per cell, the CPU's loop body on the mesh's edge arrays (reference)
  edge,         // thread per edge, then a gather per cell, then the update pass
};

const char* loop_name(MeshLoop l) {
  switch (l) {
    case MeshLoop::cell_slots: return "cell loop";
    case MeshLoop::cell_shared: return "cell loop, shared body";
    default: return "edge loop";
  }
}

// Device-memory bytes a cell-update moves in each design: every array
// element read or written once per pass that touches it; the states of
// neighbour cells and the per-edge values a second cell reads again are
// assumed to come from the caches. n cells, e edges of which ei interior,
// `sides` (cell, edge) pairs (2 ei + e - ei), `slots` slots per cell.
//   update pass (every design): read z, h, hu, hv and the rhs, write h,
//                       hu, hv: 10 R
//   slots first pass:   state 4 R, 1 / area R, slot cells 4 B per slot,
//                       normal and length 3 R per side, rhs written 3 R
//   shared first pass:  state 4 R, 1 / area R, cell_edges 16 B, per edge
//                       left, right 8 B and normal, length 3 R, rhs 3 R
//   edge loop:          edge kernel: per edge 8 B + 3 R read, 4 R (+ 3 R
//                       interior) written, states 4 R per cell; gather:
//                       slot edges 4 B per slot, the edge values again,
//                       1 / area R, rhs 3 R
//   maxima (tracked):   max_h, max_speed, arrival read, 24 B (rarely written)
// Triangles (e ~ 1.5 n) in float: slots 120 B, shared 118 B, edge 198 B;
// in double: slots 228 B, shared 208 B, edge 372 B.
double mesh_bytes_per_cell_update(MeshLoop loop, double real, double n, double e, double ei, double sides,
                                  int slots, bool maxima) {
  const double idx = 4;
  double total = 10 * real * n;  // the update pass
  switch (loop) {
    case MeshLoop::cell_slots:
      total += (4 + 1 + 3) * real * n + idx * slots * n + 3 * real * sides;
      break;
    case MeshLoop::cell_shared:
      total += (4 + 1 + 3) * real * n + 4 * idx * n + e * (2 * idx + 3 * real);
      break;
    case MeshLoop::edge: {
      const double edge_values = 4 * real * e + 3 * real * ei;
      total += e * (2 * idx + 3 * real) + 4 * real * n + edge_values;     // edge kernel
      total += idx * slots * n + edge_values + (1 + 3) * real * n;        // gather
      break;
    }
  }
  if (maxima) total += 24 * n;
  return n > 0 ? total / n : 0;
}

// Blocks for a grid-stride kernel of `threads` threads over `items`:
// a few waves of resident blocks, so that few blocks reach the rate's
// atomicMax, but enough that the SMs finish together.
template <class Kernel>
unsigned stride_blocks(Kernel kernel, index_t items, int sms, int threads = gpu::kBlockThreads) {
  int per_sm = 0;
  SHALLOWS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  const index_t waves = 8;
  const index_t cap = static_cast<index_t>(std::max(per_sm, 1)) * sms * waves;
  const index_t needed = (items + threads - 1) / threads;
  return static_cast<unsigned>(std::max<index_t>(1, std::min(needed, cap)));
}

template <class T>
void upload(DeviceArray<T>& d, const std::vector<T>& v) {
  d = DeviceArray<T>(v.size());
  d.upload(v.data(), v.size());
}

unsigned blocks_for(index_t items, int threads) {
  return static_cast<unsigned>(std::max<index_t>(1, (items + threads - 1) / threads));
}

template <class Real>
class CudaMeshExecutor final : public gpu::WithForcing<Real, MeshCells, gpu::ExecutorBase<Ctrl>> {
  using Base = gpu::WithForcing<Real, MeshCells, gpu::ExecutorBase<Ctrl>>;
  using Base::base_stats;
  using Base::ctrl_;
  using Base::fetch_ctrl;
  using Base::forcing_;
  using Base::host_in_;
  using Base::not_finite;
  using Base::open_stream;
  using Base::prop_;
  using Base::settle_uploads;
  using Base::sides_;
  using Base::slot_;
  using Base::steps_launched_;
  using Base::stream_;

 public:
  CudaMeshExecutor(const Problem& p, const BackendOptions& o, MeshLoop loop, int device)
      : Base(device), loop_(loop), track_maxima_(o.track_maxima), cells_(p.mesh ? p.mesh->cells() : 0) {
    HostMesh<Real> hm = make_host_mesh<Real>(p);
    if (hm.cells != cells_) throw std::logic_error("CUDA backend: the mesh changed its cell count");
    edges_ = hm.edges;
    if (cells_ <= 0) throw std::runtime_error("CUDA backend: the mesh has no cells");
    const auto n = static_cast<std::size_t>(cells_);
    const auto ne = static_cast<std::size_t>(edges_);
    slots_ = 3;
    index_t sides = 0, interior = 0;
    for (std::size_t c = 0; c < n; ++c) {
      for (int k = 0; k < 4; ++k) {
        if (hm.cell_edges[4 * c + static_cast<std::size_t>(k)] < 0) continue;
        ++sides;
        if (k == 3) slots_ = 4;
      }
    }
    for (std::size_t e = 0; e < ne; ++e) interior += hm.edge_right[e] >= 0 ? 1 : 0;
    const auto S = static_cast<std::size_t>(slots_);

    // The per-slot arrays, on the host first (this also checks the mesh).
    std::vector<mesh_index> slot_cell, slot_edge;
    std::vector<Real> slot_nx, slot_ny, slot_length;
    if (loop_ == MeshLoop::cell_slots) {
      // Slot k of cell c at k * n + c: the cell across the edge (or the
      // boundary code), the stored normal, the length negated where c is
      // the edge's right cell.
      slot_cell.assign(S * n, kNoEdge);
      slot_nx.assign(S * n, Real(0));
      slot_ny.assign(S * n, Real(0));
      slot_length.assign(S * n, Real(0));
      for (std::size_t c = 0; c < n; ++c) {
        for (std::size_t k = 0; k < S; ++k) {
          const mesh_index e = hm.cell_edges[4 * c + k];
          if (e < 0) continue;
          const auto ke = static_cast<std::size_t>(e);
          const std::size_t o = k * n + c;
          const bool left = edge_side(hm, c, ke);
          slot_cell[o] = left ? hm.edge_right[ke] : hm.edge_left[ke];
          slot_nx[o] = hm.edge_nx[ke];
          slot_ny[o] = hm.edge_ny[ke];
          slot_length[o] = left ? hm.edge_length[ke] : -hm.edge_length[ke];
        }
      }
    }
    if (loop_ == MeshLoop::edge) {
      // Slot k of cell c: e where c is the edge's left cell, ~e where its right.
      slot_edge.assign(S * n, kNoEdge);
      for (std::size_t c = 0; c < n; ++c) {
        for (std::size_t k = 0; k < S; ++k) {
          const mesh_index e = hm.cell_edges[4 * c + k];
          if (e < 0) continue;
          slot_edge[k * n + c] = edge_side(hm, c, static_cast<std::size_t>(e)) ? e : ~e;
        }
      }
    }

    // Device memory, checked before anything is allocated.
    const std::size_t R = sizeof(Real), I = sizeof(mesh_index);
    std::size_t need = 8 * n * R + hm.boundary.size() * sizeof(BoundaryCondition<Real>) + 3 * sizeof(Ctrl);
    switch (loop_) {
      case MeshLoop::cell_slots: need += S * n * (I + 3 * R); break;
      case MeshLoop::cell_shared: need += 4 * n * I + ne * (2 * I + 3 * R); break;
      case MeshLoop::edge: need += ne * (2 * I + 3 * R) + 7 * ne * R + S * n * I; break;
    }
    if (track_maxima_) need += 3 * n * sizeof(double);
    const bool scalars = !p.scalars.empty();
    const bool open_groups = !closed_domain(p);
    // The scalars' concentrations and the boundary groups' water read the mesh's own edge arrays.
    const bool edge_arrays = loop_ != MeshLoop::cell_slots || scalars || open_groups;
    if (edge_arrays && loop_ == MeshLoop::cell_slots) need += ne * (2 * I + 3 * R);
    if (scalars && loop_ != MeshLoop::cell_shared) need += 4 * n * I;
    if (scalars) need += 2 * p.scalars.size() * n * R + ne * R;
    const MeshCells cells_on_host{hm.area.data(), cells_};
    need += gpu::forcing::ForcingDevice<Real, MeshCells>::bytes(p, cells_on_host) +
            (p.forcing.active() ? n * sizeof(double) : 0);
    char what[160];
    std::snprintf(what, sizeof what, "a mesh of %lld cells and %lld edges in %s (%s)", static_cast<long long>(cells_),
                  static_cast<long long>(edges_), sizeof(Real) == 4 ? "float" : "double", loop_name(loop_));
    gpu::require_free_memory(need, what);

    open_stream();

    upload(h_, hm.h);
    upload(hu_, hm.hu);
    upload(hv_, hm.hv);
    upload(z_, hm.z);
    upload(inv_area_, hm.inv_area);
    upload(boundary_, hm.boundary);
    rh_ = DeviceArray<Real>(n);
    rhu_ = DeviceArray<Real>(n);
    rhv_ = DeviceArray<Real>(n);
    ctrl_ = DeviceArray<Ctrl>(3);
    if (edge_arrays) {
      upload(edge_left_, hm.edge_left);
      upload(edge_right_, hm.edge_right);
      upload(edge_nx_, hm.edge_nx);
      upload(edge_ny_, hm.edge_ny);
      upload(edge_length_, hm.edge_length);
    }
    if (loop_ == MeshLoop::cell_shared || scalars) upload(cell_edges_, hm.cell_edges);
    if (loop_ == MeshLoop::cell_slots) {
      upload(slot_cell_, slot_cell);
      upload(slot_nx_, slot_nx);
      upload(slot_ny_, slot_ny);
      upload(slot_length_, slot_length);
    }
    if (loop_ == MeshLoop::edge) {
      upload(slot_edge_, slot_edge);
      for (DeviceArray<Real>* a : {&fl_h_, &fl_hu_, &fl_hv_, &fr_h_, &fr_hu_, &fr_hv_, &f_speed_}) {
        *a = DeviceArray<Real>(ne);
      }
    }
    if (track_maxima_) {
      max_h_ = DeviceArray<double>(n);
      max_speed_ = DeviceArray<double>(n);
      arrival_ = DeviceArray<double>(n);
    }

    params_.h = h_.get();
    params_.hu = hu_.get();
    params_.hv = hv_.get();
    params_.rh = rh_.get();
    params_.rhu = rhu_.get();
    params_.rhv = rhv_.get();
    params_.z = z_.get();
    params_.inv_area = inv_area_.get();
    params_.boundary = boundary_.get();
    params_.cells = cells_;
    params_.edges = edges_;
    // As MeshCpuBackend converts them.
    params_.phys = {static_cast<Real>(p.physics.g), static_cast<Real>(p.physics.h_dry),
               static_cast<Real>(p.physics.n_manning)};
    params_.cfl = p.cfl;
    params_.dry_dt = dry_time_step(p);
    params_.ctrl = ctrl_.get();
    gain_ = DeviceArray<double>(1);
    SHALLOWS_CUDA_CHECK(cudaMemset(gain_.get(), 0, sizeof(double)));
    params_.positivity_sum = gain_.get();
    params_.arrays = {cell_edges_.get(), edge_left_.get(), edge_right_.get(), edge_nx_.get(), edge_ny_.get(),
               edge_length_.get(), inv_area_.get(), z_.get(), boundary_.get()};
    params_.slot_cell = slot_cell_.get();
    params_.slot_nx = slot_nx_.get();
    params_.slot_ny = slot_ny_.get();
    params_.slot_length = slot_length_.get();
    params_.fl_h = fl_h_.get();
    params_.fl_hu = fl_hu_.get();
    params_.fl_hv = fl_hv_.get();
    params_.fr_h = fr_h_.get();
    params_.fr_hu = fr_hu_.get();
    params_.fr_hv = fr_hv_.get();
    params_.f_speed = f_speed_.get();
    params_.slot_edge = slot_edge_.get();
    params_.max_h = max_h_.get();
    params_.max_speed = max_speed_.get();
    params_.arrival = arrival_.get();
    params_.arrival_threshold = o.arrival_threshold;

    const int sms = prop_.multiProcessorCount;
    switch (loop_) {
      case MeshLoop::cell_slots:
        first_blocks_ = slots_ == 3 ? stride_blocks(gpu::mesh::cell_rhs_kernel<Real, 3>, cells_, sms)
                                    : stride_blocks(gpu::mesh::cell_rhs_kernel<Real, 4>, cells_, sms);
        break;
      case MeshLoop::cell_shared:
        first_blocks_ = stride_blocks(gpu::mesh::cell_rhs_kernel<Real, 0>, cells_, sms);
        break;
      case MeshLoop::edge:
        first_blocks_ = blocks_for(edges_, gpu::kBlockThreads);
        gather_blocks_ = slots_ == 3 ? stride_blocks(gpu::mesh::edge_gather_kernel<Real, 3>, cells_, sms)
                                     : stride_blocks(gpu::mesh::edge_gather_kernel<Real, 4>, cells_, sms);
        break;
    }
    update_blocks_ = blocks_for(cells_, gpu::mesh::kUpdateThreads);
    bytes_per_cell_update_ =
        mesh_bytes_per_cell_update(loop_, static_cast<double>(R), static_cast<double>(cells_),
                                   static_cast<double>(edges_), static_cast<double>(interior),
                                   static_cast<double>(sides), slots_, track_maxima_);

    if (p.forcing.active()) {
      upload(area_on_device_, hm.area);
      const MeshCells on_host{hm.area.data(), cells_};  // the structures' ends take their areas from it
      forcing_ = gpu::forcing::ForcingDevice<Real, MeshCells>(p, MeshCells{area_on_device_.get(), cells_}, 0, &on_host);
      forcing_.set_bed(z_.get());  // inactive cells (NaN bed) get no forcing
      // The forcing changes the state after the update: the maxima follow it.
      late_maxima_ = track_maxima_;
    }
    if (scalars) start_scalars(p);
    if (open_groups) start_sides(p, hm);
    if (o.dry_skip && cuda_options(o).dry_skip && skips_dry_cells(p)) start_dry_skip(p, hm);
    if (p.forcing.has_boundary_series()) start_group_series(p, hm);
    update_params_ = params_;
    if (late_maxima_) update_params_.max_h = update_params_.max_speed = update_params_.arrival = nullptr;

    // Host copies for volume(): the CPU's sum, in its order.
    area_ = std::move(hm.area);
    bed_ = hm.z;

    settle_uploads();
    SHALLOWS_CUDA_CHECK(cudaMemsetAsync(ctrl_.get(), 0, 3 * sizeof(Ctrl), stream_));
    if (track_maxima_) {
      SHALLOWS_CUDA_CHECK(cudaMemsetAsync(max_h_.get(), 0, n * sizeof(double), stream_));
      SHALLOWS_CUDA_CHECK(cudaMemsetAsync(max_speed_.get(), 0, n * sizeof(double), stream_));
      // "Never arrived": the host's quiet NaN, so that output files hold the CPU run's bits.
      arrival_.fill_async(std::numeric_limits<double>::quiet_NaN(), stream_);
      gpu::mesh::initial_maxima_kernel<Real><<<update_blocks_, gpu::mesh::kUpdateThreads, 0, stream_>>>(params_, 0.0);
      SHALLOWS_CUDA_CHECK_LAUNCH("mesh initial_maxima_kernel");
    }
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  ~CudaMeshExecutor() override {
    if (stream_) cudaStreamSynchronize(stream_);
  }

  std::string name() const override { return std::string("cuda mesh (") + loop_name(loop_) + ")"; }

  double step(double t, double dt_max) override {
    const Launch a{slot_, 1, t, std::numeric_limits<double>::infinity(), dt_max, std::numeric_limits<long long>::max()};
    const bool skipping = skipping_;
    launch_step(a);
    const Ctrl c = fetch_ctrl();
    if (c.status != 0) throw not_finite(t);
    stepped(1, skipping);
    return c.dt;
  }

  // As CudaExecutor::advance: batches of steps, time control on the device,
  // one synchronisation per batch.
  CudaAdvance advance(double t, double target, index_t max_steps) override {
    if (!takes_step(t, target, 0, max_steps)) return {t, 0, 0};
    index_t counted = 0;  // steps of the batches fetched so far
    return gpu::advance_from_slot(
        t, target, max_steps, &ctrl_.get()[slot_], host_in_, stream_,
        [&] { launch_step(Launch{slot_, 0, 0.0, target, std::numeric_limits<double>::infinity(), max_steps}); },
        [&] {
          const Ctrl c = fetch_ctrl();
          if (c.status == 0) {
            stepped(static_cast<index_t>(c.steps) - counted, skipping_);
            counted = static_cast<index_t>(c.steps);
          }
          return c;
        },
        [&](double at) { return not_finite(at); });
  }

  void read_state(Fields& out) const override {
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const auto n = static_cast<std::size_t>(cells_);
    std::vector<Real> buf(n);
    const auto get = [&](const DeviceArray<Real>& d, std::vector<double>& o) {
      d.download(buf.data(), n);
      o.assign(buf.begin(), buf.end());
    };
    get(h_, out.h);
    get(hu_, out.hu);
    get(hv_, out.hv);
    out.hc.resize(hc_.size());
    for (std::size_t s = 0; s < hc_.size(); ++s) get(hc_[s], out.hc[s]);
  }

  // Into the one state buffer; the control slots start again as in the constructor.
  void load_state(const Fields& in) override {
    const auto n = static_cast<std::size_t>(cells_);
    check_load_size(fields_sized(in, n) && scalars_sized(in, hc_.size(), n), "load_state");
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::vector<Real> buf(n);
    const auto put = [&](const std::vector<double>& v, DeviceArray<Real>& d) {
      for (std::size_t k = 0; k < n; ++k) buf[k] = static_cast<Real>(v[k]);
      d.upload(buf.data(), n);
    };
    put(in.h, h_);
    put(in.hu, hu_);
    put(in.hv, hv_);
    for (std::size_t s = 0; s < hc_.size(); ++s) put(in.hc[s], hc_[s]);
    // Nothing is known of the new state: every block is computed in the next step.
    if (params_.skip.on()) {
      dry_.fill_async(0, stream_);
      list_count_.fill_async(0, stream_);
    }
    settle_uploads();
    slot_ = 0;
    SHALLOWS_CUDA_CHECK(cudaMemsetAsync(ctrl_.get(), 0, 3 * sizeof(Ctrl), stream_));
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void load_maxima(const Maxima& in) override {
    gpu::upload_maxima(track_maxima_, static_cast<std::size_t>(cells_), in, max_h_, max_speed_, arrival_, stream_);
  }

  // The state for output (updated in place, one buffer): a D2D copy on
  // stream_, the rest on the stager's copy stream (snapshot_stager.cuh).
  Snapshot snapshot() override {
    // With scalars: a synchronous read (the stager copies h, hu, hv only).
    if (!hc_.empty()) return Backend::snapshot();
    return stager_.snapshot(stream_, h_.get(), hu_.get(), hv_.get());
  }

  void read_maxima(Maxima& out) const override {
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    gpu::download_maxima(track_maxima_, static_cast<std::size_t>(cells_), max_h_, max_speed_, arrival_, out);
  }

  // MeshCpuBackend::volume on the downloaded depths: blocks of 4096 cells,
  // each summed in cell order, then the blocks in order (the same bits).
  double volume() const override {
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::vector<Real> h(static_cast<std::size_t>(cells_));
    h_.download(h.data(), h.size());
    return layout_volume(MeshCells{area_.data(), cells_}, h.data(), bed_.data());
  }

  // Summed on the device (warp_add_nonzero): exact to round-off, not bit-identical to the CPU.
  double positivity_volume() const override { return gpu::read_scalar(gain_, stream_); }


  double cells_computed() const override {
    if (!params_.skip.on()) return static_cast<double>(cells_) * static_cast<double>(steps_taken_);
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::vector<unsigned long long> per_block(listed_update_blocks_);
    computed_.download(per_block.data(), per_block.size());
    double sum = all_cells_steps_;
    for (unsigned long long c : per_block) sum += static_cast<double>(c);
    return sum;
  }

  CudaStats stats() const override {
    CudaStats s = base_stats();
    s.kernel = std::string("mesh ") + loop_name(loop_);
    s.bytes_per_cell_update = bytes_per_cell_update_;
    return s;
  }

 private:
  using Params = gpu::mesh::MeshParams<Real>;

  // Whether cell c is edge e's left cell (else its right); a mesh whose
  // cell_edges name an edge not of the cell is refused.
  static bool edge_side(const HostMesh<Real>& hm, std::size_t c, std::size_t e) {
    const auto cell = static_cast<mesh_index>(c);
    if (hm.edge_left[e] == cell) return true;
    if (hm.edge_right[e] == cell) return false;
    throw std::runtime_error("CUDA backend: cell " + std::to_string(c) + " lists edge " + std::to_string(e) +
                             ", which is not one of its edges");
  }

  // h c of each scalar from the initial state, their buffers and the
  // concentrations the boundary groups, the rain and the sources bring.
  void start_scalars(const Problem& p) {
    const auto n = static_cast<std::size_t>(cells_);
    std::vector<Real*> hc, conc;
    for (const std::vector<double>& initial : initial_scalars(p)) {
      upload(hc_.emplace_back(), std::vector<Real>(initial.begin(), initial.end()));
      conc_.emplace_back(n);
      hc.insert(hc.end(), 2, hc_.back().get());  // one state buffer: both parities
      conc.push_back(conc_.back().get());
    }
    upload(hc_pointers_, hc);
    upload(conc_pointers_, conc);
    mass_flux_ = DeviceArray<Real>(static_cast<std::size_t>(edges_));
    upload(group_c_, group_concentrations<Real>(p));
    scalars_ = {hc_pointers_.get(), conc_pointers_.get(), static_cast<int>(hc_.size()), mass_flux_.get(),
                group_c_.get(), static_cast<index_t>(p.mesh_boundary.size())};
    forcing_.set_scalars(hc_pointers_.get(), scalar_inflow<Real>(p));
  }

  // The account of the water through the boundary groups that are not
  // walls: their boundary edges, grouped, each group's in edge order.
  void start_sides(const Problem& p, const HostMesh<Real>& hm) {
    const std::size_t groups = p.mesh_boundary.size();
    std::vector<std::vector<mesh_index>> by_group(groups);
    for (index_t e = 0; e < edges_; ++e) {
      const mesh_index r = hm.edge_right[static_cast<std::size_t>(e)];
      if (r >= 0) continue;
      const auto g = static_cast<std::size_t>(boundary_group(r));
      if (p.mesh_boundary[g].kind != BoundaryKind::wall) by_group[g].push_back(static_cast<mesh_index>(e));
    }
    std::vector<mesh_index> open;
    std::vector<index_t> start{0};
    for (const std::vector<mesh_index>& edges : by_group) {
      open.insert(open.end(), edges.begin(), edges.end());
      start.push_back(static_cast<index_t>(open.size()));
    }
    upload(open_edges_, open);
    upload(group_start_, start);
    side_groups_ = static_cast<unsigned>(groups);
    sides_ = gpu::SideAccount(true, 2 * groups, groups);
  }

  // Dry skipping: the block graph and flags on the device (no block dry yet:
  // the first step computes them all), the list of each skipping step's
  // blocks, a count of computed cells per block of listed_update_kernel.
  void start_dry_skip(const Problem& p, const HostMesh<Real>& hm) {
    const DryBlockGraph g = dry_block_graph(cells_, hm.edge_left, hm.edge_right, p.mesh_boundary);
    upload(block_start_, g.start);
    upload(block_neighbours_, g.neighbours);
    upload(block_open_, g.open);
    const auto blocks = static_cast<std::size_t>(g.blocks);
    dry_ = DeviceArray<unsigned char>(blocks);
    needed_ = DeviceArray<unsigned char>(blocks);
    list_ = DeviceArray<unsigned>(blocks);
    list_count_ = DeviceArray<unsigned>(3);
    listed_update_blocks_ = stride_blocks(gpu::mesh::listed_update_kernel<Real>, cells_, prop_.multiProcessorCount,
                                          gpu::mesh::kUpdateThreads);
    computed_ = DeviceArray<unsigned long long>(listed_update_blocks_);
    any_dry_ = DeviceArray<int>(1);
    any_dry_.fill_async(0, stream_);
    dry_.fill_async(0, stream_);
    needed_.fill_async(1, stream_);
    computed_.fill_async(0, stream_);
    params_.skip = {block_start_.get(), block_neighbours_.get(), block_open_.get(), dry_.get(), needed_.get()};
    params_.computed = computed_.get();
    params_.any_dry = any_dry_.get();
    params_.list = list_.get();
    params_.list_count = list_count_.get();
  }

  // The groups' series on the device and the conditions as read, which
  // group_conditions_kernel takes the series' values into.
  void start_group_series(const Problem& p, const HostMesh<Real>& hm) {
    std::vector<SeriesView> views(hm.boundary.size());
    for (std::size_t g = 0; g < views.size() && g < p.forcing.groups.size(); ++g) {
      const TimeSeries& ts = p.forcing.groups[g];
      upload(series_t_.emplace_back(), ts.t);
      upload(series_v_.emplace_back(), ts.v);
      views[g] = {series_t_.back().get(), series_v_.back().get(), static_cast<int>(ts.t.size())};
    }
    upload(group_series_, views);
    upload(constant_boundary_, hm.boundary);
  }

  // One step from slot_ (a no-op on the device once the launch's target or
  // step limit is reached): first pass, then update and maxima.
  // After a batch of steps launched in skipping mode or not: the cells they
  // computed where not skipping; whether some block has been dry, which
  // starts the skipping steps with the next batch (read where the host has
  // synchronised anyway).
  void stepped(index_t steps, bool skipping) {
    steps_taken_ += steps;
    if (!params_.skip.on()) return;
    if (!skipping) all_cells_steps_ += static_cast<double>(cells_) * static_cast<double>(steps);
    if (!skipping_) {
      int any = 0;
      any_dry_.download(&any, 1);
      skipping_ = any != 0;
      // Each skipping step empties the next slot's list; the first finds them empty.
      if (skipping_) list_count_.fill_async(0, stream_);
    }
  }

  // The first pass of the design; kSkip: leave out the blocks not needed.
  template <bool kSkip>
  void launch_first_pass(const Launch& a) {
    constexpr int threads = gpu::kBlockThreads;  // block_max_to assumes it
    switch (loop_) {
      case MeshLoop::cell_slots:
        if (slots_ == 3) {
          gpu::mesh::cell_rhs_kernel<Real, 3, kSkip><<<first_blocks_, threads, 0, stream_>>>(params_, a);
        } else {
          gpu::mesh::cell_rhs_kernel<Real, 4, kSkip><<<first_blocks_, threads, 0, stream_>>>(params_, a);
        }
        SHALLOWS_CUDA_CHECK_LAUNCH("mesh cell_rhs_kernel");
        break;
      case MeshLoop::cell_shared:
        gpu::mesh::cell_rhs_kernel<Real, 0, kSkip><<<first_blocks_, threads, 0, stream_>>>(params_, a);
        SHALLOWS_CUDA_CHECK_LAUNCH("mesh cell_rhs_kernel (shared body)");
        break;
      case MeshLoop::edge:
        gpu::mesh::edge_flux_kernel<Real, kSkip><<<first_blocks_, threads, 0, stream_>>>(params_, a);
        SHALLOWS_CUDA_CHECK_LAUNCH("mesh edge_flux_kernel");
        if (slots_ == 3) {
          gpu::mesh::edge_gather_kernel<Real, 3, kSkip><<<gather_blocks_, threads, 0, stream_>>>(params_, a);
        } else {
          gpu::mesh::edge_gather_kernel<Real, 4, kSkip><<<gather_blocks_, threads, 0, stream_>>>(params_, a);
        }
        SHALLOWS_CUDA_CHECK_LAUNCH("mesh edge_gather_kernel");
        break;
    }
  }

  void launch_step(const Launch& a) {
    if (group_series_.size() > 0) {
      const auto groups = static_cast<int>(group_series_.size());
      gpu::mesh::group_conditions_kernel<Real><<<blocks_for(groups, 64), 64, 0, stream_>>>(
          boundary_.get(), constant_boundary_.get(), group_series_.get(), groups, ctrl_.get(), a);
      SHALLOWS_CUDA_CHECK_LAUNCH("mesh group_conditions_kernel");
    }
    if (skipping_) {
      const index_t blocks = (cells_ + kDryBlockCells - 1) / kDryBlockCells;
      gpu::mesh::decide_blocks_kernel<Real><<<blocks_for(blocks, 256), 256, 0, stream_>>>(params_, a);
      SHALLOWS_CUDA_CHECK_LAUNCH("mesh decide_blocks_kernel");
      launch_first_pass<true>(a);
    } else {
      launch_first_pass<false>(a);
    }
    if (sides_.kept()) {
      gpu::mesh_boundary_rate_kernel<Real><<<side_groups_, gpu::forcing::kThreads, 0, stream_>>>(
          params_.arrays, MeshState<Real>{h_.get(), hu_.get(), hv_.get()}, params_.phys, ctrl_.get(), a,
          open_edges_.get(), group_start_.get(), sides_.rate());
      SHALLOWS_CUDA_CHECK_LAUNCH("mesh_boundary_rate_kernel");
    }
    if (!hc_.empty()) {
      gpu::mesh::scalar_flux_kernel<Real><<<blocks_for(edges_, 256), 256, 0, stream_>>>(params_, scalars_, a);
      SHALLOWS_CUDA_CHECK_LAUNCH("mesh scalar_flux_kernel");
      gpu::mesh::scalar_concentration_kernel<Real><<<blocks_for(cells_, 256), 256, 0, stream_>>>(params_, scalars_, a);
      SHALLOWS_CUDA_CHECK_LAUNCH("mesh scalar_concentration_kernel");
    }
    if (skipping_) {
      gpu::mesh::listed_update_kernel<Real>
          <<<listed_update_blocks_, gpu::mesh::kUpdateThreads, 0, stream_>>>(update_params_, a);
      SHALLOWS_CUDA_CHECK_LAUNCH("mesh listed_update_kernel");
    } else {
      gpu::mesh::update_kernel<Real><<<update_blocks_, gpu::mesh::kUpdateThreads, 0, stream_>>>(update_params_, a);
      SHALLOWS_CUDA_CHECK_LAUNCH("mesh update_kernel");
    }
    const int next = (slot_ + 1) % 3;
    if (!hc_.empty()) {
      gpu::mesh::scalar_store_kernel<Real><<<blocks_for(cells_, 256), 256, 0, stream_>>>(params_, scalars_, next);
      SHALLOWS_CUDA_CHECK_LAUNCH("mesh scalar_store_kernel");
    }
    if (forcing_.active()) {
      forcing_.launch(gpu::StepClock<Real>{ctrl_.get(), a.slot, a.use_t_in, a.t_in, {h_.get(), h_.get()},
                                           {hu_.get(), hu_.get()}, {hv_.get(), hv_.get()}},
                      stream_);
    }
    if (sides_.kept()) sides_.template add<double>(ctrl_.get(), next, stream_);  // the CPU mesh executor's dt, in double
    if (late_maxima_) {
      gpu::mesh::step_maxima_kernel<Real><<<update_blocks_, gpu::mesh::kUpdateThreads, 0, stream_>>>(params_, next);
      SHALLOWS_CUDA_CHECK_LAUNCH("mesh step_maxima_kernel");
    }
    slot_ = next;
    ++steps_launched_;
  }

  MeshLoop loop_;
  bool track_maxima_;
  index_t cells_;  // before stager_, which is made from it
  index_t edges_ = 0;
  int slots_ = 3;
  unsigned first_blocks_ = 1, gather_blocks_ = 1, update_blocks_ = 1;
  double bytes_per_cell_update_ = 0;
  Params params_{};
  Params update_params_{};  // params_, without the maxima where they follow the forcing
  DeviceArray<Real> h_, hu_, hv_, rh_, rhu_, rhv_;  // the state (updated in place) and its rhs
  DeviceArray<Real> z_, inv_area_;
  DeviceArray<BoundaryCondition<Real>> boundary_;
  DeviceArray<double> gain_;  // positivity account (m^3)
  DeviceArray<mesh_index> cell_edges_, edge_left_, edge_right_;
  DeviceArray<Real> edge_nx_, edge_ny_, edge_length_;
  DeviceArray<mesh_index> slot_cell_;
  DeviceArray<Real> slot_nx_, slot_ny_, slot_length_;
  DeviceArray<mesh_index> slot_edge_;
  DeviceArray<Real> fl_h_, fl_hu_, fl_hv_, fr_h_, fr_hu_, fr_hv_, f_speed_;
  DeviceArray<double> max_h_, max_speed_, arrival_;
  // The areas the forcing (forcing_) reads on the device, and the maxima after it.
  DeviceArray<double> area_on_device_;
  bool late_maxima_ = false;
  // Passive scalars: h c and the new concentrations of each, the device
  // arrays of their pointers (hc_pointers_: each twice, MeshScalars), the
  // edges' mass fluxes, the boundary groups' concentrations.
  std::vector<DeviceArray<Real>> hc_, conc_;
  DeviceArray<Real*> hc_pointers_, conc_pointers_;
  DeviceArray<Real> mass_flux_, group_c_;
  gpu::mesh::MeshScalars<Real> scalars_{};
  // The water through the boundary groups that are not walls (sides_): their edges, group by group.
  DeviceArray<mesh_index> open_edges_;
  DeviceArray<index_t> group_start_;
  unsigned side_groups_ = 0;
  // Dry skipping (params_.skip): the block graph, the flags, the cells each update block computed.
  DeviceArray<mesh_index> block_start_, block_neighbours_;
  DeviceArray<unsigned char> block_open_, dry_, needed_;
  DeviceArray<unsigned> list_, list_count_;
  unsigned listed_update_blocks_ = 1;
  DeviceArray<unsigned long long> computed_;
  DeviceArray<int> any_dry_;
  bool skipping_ = false;  // steps leave out the blocks not needed (once any_dry)
  double all_cells_steps_ = 0;  // cells computed by the steps that were not skipping
  index_t steps_taken_ = 0;
  // Boundary groups that follow a time series (Forcing::groups): the series, their views, the conditions as read.
  std::vector<DeviceArray<double>> series_t_, series_v_;
  DeviceArray<SeriesView> group_series_;
  DeviceArray<BoundaryCondition<Real>> constant_boundary_;
  std::vector<double> area_;
  std::vector<Real> bed_;
  // Last: destroyed first, after the destructor has synchronised stream_.
  gpu::SnapshotStager<Real> stager_{cells_};
};

} // namespace

// The cell loop's design: SHALLOWS_CUDA_MESH_KERNEL=slots (the default) or
// shared (the CPU's loop body on the edge arrays: the reference); see
// mesh_kernels.cuh.
std::unique_ptr<Backend> make_cuda_mesh_backend(const Problem& problem, const BackendOptions& options) {
  if (!problem.mesh) throw std::invalid_argument("make_cuda_mesh_backend: the problem has no mesh");
  if (problem.scheme != Scheme::roe1)
    throw std::logic_error("make_cuda_mesh_backend: a scheme other than roe1 (make_backend refuses it first)");
  MeshLoop loop = MeshLoop::cell_slots;
  if (options.mesh_loop == "edge") {
    loop = MeshLoop::edge;
  } else if (options.mesh_loop != "cell" && options.mesh_loop != "auto") {
    throw std::invalid_argument("unknown mesh loop '" + options.mesh_loop + "' (valid: auto, cell, edge)");
  }
  if (loop == MeshLoop::cell_slots) {
    if (const char* k = std::getenv("SHALLOWS_CUDA_MESH_KERNEL"); k && *k) {
      const std::string kernel = k;
      if (kernel == "shared") {
        loop = MeshLoop::cell_shared;
      } else if (kernel != "slots") {
        throw std::invalid_argument("SHALLOWS_CUDA_MESH_KERNEL: unknown cell kernel '" + kernel +
                                    "' (valid: slots, shared)");
      }
    }
  }
  const int device = cuda_options(options).device;
  if (problem.precision == Precision::single_precision)
    return std::make_unique<CudaMeshExecutor<float>>(problem, options, loop, device);
  return std::make_unique<CudaMeshExecutor<double>>(problem, options, loop, device);
}

} // namespace shallows
