// SPDX-License-Identifier: MIT
#pragma once
// A backend owns the state of one run on one device (CPU threads or a GPU)
// and advances it; the simulation loop above it only decides time targets.
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "shallows/core/config.hpp"
#include "shallows/solver/fields.hpp"
#include "shallows/solver/problem.hpp"

namespace shallows {

struct BackendOptions {
  std::string kind = "cpu";     // cpu, cuda or auto
  int threads = 0;              // CPU threads; 0: OpenMP's default
  bool track_maxima = true;     // max depth, max speed and arrival time, every step
  double arrival_threshold = 0.01;
  // Meshes: cell (each cell evaluates its edges), edge (each edge once, then a gather per cell), or auto: the
  // faster where measured, edge on the CPU, cell on the GPU. Both give the same results.
  std::string mesh_loop = "auto";
  // Leave blocks of dry cells with dry neighbours out of a step where the executor can and the problem allows
  // (skips_dry_cells): the same results, faster on partly dry domains. Off: every cell every step.
  bool dry_skip = true;
  // Runs on several MPI ranks (grids): steps between halo exchanges (the halo
  // is halo_steps x the stencil's reach wide), and the process grid (0: chosen
  // from the rank count and the grid's aspect ratio).
  int halo_steps = 1;
  int ranks_x = 0;
  int ranks_y = 0;
  int cuda_device = -1;  // -1: SHALLOWS_CUDA_DEVICE, else 0; a rank of a distributed run takes its node rank's GPU
  // Halos handed to MPI in GPU memory (CUDA-aware MPI) by executors that have it: 1 yes, 0 no, -1:
  // SHALLOWS_CUDA_AWARE_MPI and the MPI library decide (mpi::cuda_aware_mpi).
  int mpi_gpu_memory = -1;
};

// Where a run of steps ended.
struct AdvanceResult {
  double t = 0;       // time reached
  index_t steps = 0;  // steps taken
  double dt = 0;      // the last step's dt
};

// The state of a backend at one moment, on its way to the host. Move-only;
// take() may be called on another thread than the one that made it. A GPU
// backend hands out a Snapshot whose copy to the host is still under way
// (the time loop goes on meanwhile); take() waits for it. A Snapshot holds
// resources of its backend (host buffers, a CUDA stream): the backend must
// outlive it.
class Snapshot {
 public:
  // The part of a snapshot that is not on the host yet. Its destructor gives
  // back whatever the snapshot held, whether or not take() ran.
  class Pending {
   public:
    virtual ~Pending() = default;
    // Blocks until the data are on the host; called at most once.
    virtual Fields take() = 0;
  };

  Snapshot() = default;  // empty: valid() is false
  explicit Snapshot(Fields ready) : ready_(std::move(ready)) {}
  explicit Snapshot(std::unique_ptr<Pending> pending) : pending_(std::move(pending)) {}
  // A moved-from snapshot is empty.
  Snapshot(Snapshot&& o) noexcept : ready_(std::move(o.ready_)), pending_(std::move(o.pending_)) { o.ready_.reset(); }
  Snapshot& operator=(Snapshot&& o) noexcept {
    if (this != &o) {
      ready_ = std::move(o.ready_);
      o.ready_.reset();
      pending_ = std::move(o.pending_);
    }
    return *this;
  }
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;
  ~Snapshot() = default;

  // Whether take() can still be called.
  bool valid() const { return ready_.has_value() || pending_ != nullptr; }
  // The fields (interior cells, double), once: blocks until they are on the
  // host, then leaves the snapshot empty and its buffers released. Throws
  // std::logic_error on an empty snapshot, or the backend's error.
  Fields take();

 private:
  std::optional<Fields> ready_;
  std::unique_ptr<Pending> pending_;
};

// Host or device memory for halo boxes; its deleter gives it back as it was taken.
using BoxBuffer = std::unique_ptr<std::byte[], void (*)(std::byte*)>;

// A grid executor's side of a halo exchange between ranks (exec/mpi).
class HaloEndpoint {
 public:
  virtual ~HaloEndpoint() = default;
  // A rectangle of the current state to or from a buffer of box_bytes(box)
  // bytes: h, hu, hv and each scalar's h c in the run's precision, then,
  // with infiltration, each cell's infiltrated depth in double (each
  // row-major). Everything a cell carries from step to step travels, so that
  // a halo cell steps as its owner does. After the last unpack_box of an
  // exchange, refresh_ghosts() fills the boundary ghost cells again from the
  // new state.
  virtual std::size_t box_bytes(const CellBox& box) const = 0;
  virtual void pack_box(const CellBox& box, std::byte* out) const = 0;
  virtual void unpack_box(const CellBox& box, const std::byte* in) = 0;
  virtual void refresh_ghosts() = 0;
  // A halo exchange that travels while the next step computes what does not
  // wait for it: `exchange` (the MPI calls, and this executor's pack_box,
  // unpack_box and refresh_ghosts) runs on the calling thread during the
  // next step() or advance(), which first computes the cells of `inner`
  // (local cells whose stencil reads no cell the exchange writes), then the
  // rest once `exchange` has returned. The bits are those of exchange()
  // before the step. Returns whether the executor does so; the default, for
  // executors that cannot split a step, calls exchange() at once (false).
  virtual bool exchange_in_next_step(const CellBox& inner, std::function<void()> exchange) {
    (void)inner;
    exchange();
    return false;
  }
  // Host memory for the boxes: a GPU executor's is page-locked, so that a
  // box crosses to and from the GPU in one DMA at full speed.
  virtual BoxBuffer host_buffer(std::size_t bytes) const {
    return BoxBuffer(new std::byte[bytes], [](std::byte* p) { delete[] p; });
  }
};

// A GPU executor's halo boxes in GPU memory, and its links to the GPUs of
// the other processes of its node.
class GpuLinks {
 public:
  virtual ~GpuLinks() = default;
  // For an MPI that reads and writes GPU memory (CUDA-aware): a buffer
  // there, and HaloEndpoint's pack_box / unpack_box with such a buffer.
  // pack_box_device returns once the box is in the buffer, which MPI reads
  // next; unpack_box_device reads `in` in stream order, until refresh_ghosts.
  virtual BoxBuffer device_buffer(std::size_t bytes) const = 0;
  virtual void pack_box_device(const CellBox& box, std::byte* out) const = 0;
  virtual void unpack_box_device(const CellBox& box, const std::byte* in) = 0;
  // Halo boxes that go from GPU to GPU (CUDA IPC) instead of through the
  // host. The link of a side (0-3: west, east, south, north) is what the
  // peer on that side needs to write the box it sends into this executor
  // (opaque bytes; empty: this executor cannot), made for the box it
  // receives; open_peer opens the peer's link for the box sent on that side
  // (false: it cannot). Per exchange, send_box_to_peer packs a box straight
  // into the peer's buffer and marks it sent, and receive_box_from_peer,
  // called once the peer's send_box_to_peer has returned (a message says
  // so), unpacks what the peer sent; both in stream order, without waiting
  // on the host. The caller keeps a step between two sends on a side: its
  // rate's all-reduce (by MPI or by the GPUs) waits for every rank's
  // unpacks, so that a buffer is unpacked before the peer writes it again.
  virtual std::vector<std::byte> peer_link(int side, const CellBox& recv) = 0;
  virtual bool open_peer(int side, const CellBox& send, const std::vector<std::byte>& link) = 0;
  virtual void send_box_to_peer(int side, const CellBox& box) = 0;
  virtual void receive_box_from_peer(int side, const CellBox& box) = 0;
  // The CFL rate's all-reduce done by the GPUs of one node, one GPU per rank
  // (CUDA IPC): rate_link is this executor's mailbox for a job of `ranks`
  // (opaque bytes; empty: it cannot), open_rate_links maps every rank's
  // (false: it cannot), and start_rate_links, called on every rank once all
  // have opened them, makes each step all-reduce its rate on the device:
  // advance() then queues its steps with no host round trip per step.
  virtual std::vector<std::byte> rate_link(int ranks) = 0;
  virtual bool open_rate_links(int rank, const std::vector<std::vector<std::byte>>& links) = 0;
  virtual void start_rate_links() = 0;
  // Closes what this executor mapped of other processes' memory (the links
  // above), after its last step: every rank does so before any frees what it
  // exported (the caller's barrier between).
  virtual void close_links() = 0;
};

// Seconds one rank of a distributed run spent, and what it exchanged.
struct RankTiming {
  int rank = 0;
  double compute = 0;   // its executor's steps, less the all-reduce and the exchange's parts below
  double reduce = 0;    // the all-reduce of the rate (waits for the slowest rank)
  double pack = 0;      // halo rectangles out of and into the executor's state
  double exchange = 0;  // posting the sends and receives
  double wait = 0;      // waiting for the halos to arrive
  index_t steps = 0;
  index_t exchanges = 0;
  double halo_bytes = 0;  // sent per exchange
  int device_sides = 0;   // sides whose halo goes GPU to GPU (CUDA IPC)
  int host_sides = 0;     // sides whose halo goes through host memory (staged from a GPU, or a CPU rank's)
  int mpi_device_sides = 0;  // sides whose halo MPI moves from and to GPU memory (CUDA-aware MPI)
  int device_rate = 0;    // 1: the rate all-reduced by the GPUs (compute then includes it)
  int overlap = 0;        // 1: its executor computes the inner cells while the halos travel
};

// How a run on several ranks split its grid, and what each rank spent (the run's summary).
class RankReport {
 public:
  virtual ~RankReport() = default;
  // Every rank's timings, on rank 0 (empty elsewhere). Collective.
  virtual std::vector<RankTiming> rank_timings() const = 0;
  virtual int ranks_x() const = 0;
  virtual int ranks_y() const = 0;
  virtual index_t halo_cells() const = 0;
};

enum class StateField { h, hu, hv };

// The one of h, hu, hv that `which` names: fields of a Fields or an executor's arrays alike.
template <class T>
T& state_field(StateField which, T& h, T& hu, T& hv) {
  return which == StateField::h ? h : which == StateField::hu ? hu : hv;
}

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // One step from time t: dt = min(CFL step of seed 000 eq. 8, dt_max).
  // Returns the dt taken; throws if the solution is no longer finite.
  virtual double step(double t, double dt_max) = 0;
  // Steps from t towards target, at most max_steps, the last one clipped to
  // land on target exactly. The default calls step(); a GPU backend keeps
  // the time control on the device and synchronises once per batch.
  virtual AdvanceResult advance(double t, double target, index_t max_steps);
  virtual void read_state(Fields& out) const = 0;
  // The current state, for output while the run goes on: the caller may
  // step on at once and take() the fields later, on any thread. The default
  // reads the state synchronously (read_state); the CUDA executor copies it
  // on a stream of its own into pinned host buffers (two: a third snapshot
  // waits until one of two outstanding ones is taken or destroyed, so a
  // thread must not hold two untaken snapshots and ask for a third).
  virtual Snapshot snapshot();
  // The state of the listed interior cells, in that order (h[k] is that of
  // cells[k]): what gauges alone need of an output. The default picks them
  // from read_state (so it is collective where read_state is: on several
  // ranks rank 0 gets them, the others nothing); the CUDA grid executor
  // copies those cells alone.
  virtual Fields read_cells(const std::vector<std::size_t>& cells) const;
  // One of h, hu and hv of the current state, as read_state gives it: what a
  // script that reads one array needs (an 8192^2 grid's three fields are
  // 1.6 GB in double). The default picks it from read_state; the CUDA grid
  // executors copy that field alone.
  virtual std::vector<double> read_field(StateField which) const;
  virtual void read_maxima(Maxima& out) const = 0;
  // A state and maxima read before (read_state, read_maxima) put back, for a
  // restart: the state is stored in the run's precision, so a value read out
  // and loaded again has the same bits, and the steps that follow are those of
  // the run that was read. Sizes must match (interior cells); load_maxima is
  // a no-op when maxima are not tracked.
  virtual void load_state(const Fields& in) = 0;
  virtual void load_maxima(const Maxima& in) = 0;
  // Water volume sum(h) dx dy over active cells, summed in a fixed order.
  virtual double volume() const = 0;
  // Water the positivity fixes (the depth clamps of advance_cell and of the
  // SSP-RK3 stages, clamp_added_depth) added to the active cells since the start,
  // in m^3; a closed domain's volume changes by exactly this, to round-off.
  // A rank's executor counts its owned cells (Problem::owned).
  virtual double positivity_volume() const = 0;
  // The forcing (Problem::forcing, applied after each step): the volumes it
  // moved since the start, and what it carries from step to step, read out
  // and put back for restarts (sizes must match). The defaults serve
  // executors without forcing (make_backend refuses a problem with forcing
  // for them).
  virtual ForcingVolumes forcing_volumes() const { return {}; }
  // Water that crossed the sides of a grid (or a mesh's boundary) since the
  // start (boundary_flux.hpp); NaN (the default) where no account is kept. A
  // rank's executor counts the sides of its block that are sides of the
  // domain, along its owned cells (owned_side_cells).
  virtual BoundaryFlow boundary_flow() const { return {}; }
  virtual void read_forcing_state(ForcingState& out) const { out = {}; }
  // The same without the per-cell state (ForcingState::infiltration): what a
  // distributed run sums at each output.
  virtual void read_forcing_accounts(ForcingState& out) const {
    read_forcing_state(out);
    out.infiltration.clear();
  }
  virtual void load_forcing_state(const ForcingState& in) { (void)in; }
  // Cell-updates computed since the start: cells times steps, less the cells dry skipping left out
  // (BackendOptions::dry_skip); -1 where the executor does not count them.
  virtual double cells_computed() const { return -1; }

  // Distributed runs (exec/mpi). The reducer turns this executor's largest
  // CFL rate into the largest of all ranks (an all-reduce); step() calls it
  // once per step, where dt is decided, after its own finiteness check.
  void set_rate_reducer(std::function<double(double)> reducer) { rate_reducer_ = std::move(reducer); }
  // The sum over all ranks, element by element, of a vector in place (an
  // all-reduce), for the forcing: a source spread over several cells (an
  // inflow segment) needs the depths of its cells on other ranks.
  using SumReducer = std::function<void(std::vector<double>&)>;
  void set_sum_reducer(SumReducer reducer) { sum_reducer_ = std::move(reducer); }
  // What a run on several ranks needs beyond stepping, where the executor has it (nullptr: it has not; the
  // capability table keeps such executors off several ranks): its halo boxes, its GPU links, its report.
  virtual HaloEndpoint* halo() { return nullptr; }
  virtual GpuLinks* gpu_links() { return nullptr; }
  virtual const RankReport* rank_report() const { return nullptr; }

 protected:
  double reduce_rate(double rate) const { return rate_reducer_ ? rate_reducer_(rate) : rate; }
  // Empty in one process.
  const SumReducer& sum_reducer() const { return sum_reducer_; }

 private:
  std::function<double(double)> rate_reducer_;
  SumReducer sum_reducer_;
};

// For executors' load_state and load_maxima: throws std::invalid_argument
// naming the call when the given fields do not match the problem's cells.
inline void check_load_size(bool sizes_match, const char* what) {
  if (!sizes_match) throw std::invalid_argument(std::string("Backend::") + what + ": sizes do not match the problem");
}

// Whether f holds n values in each field.
inline bool fields_sized(const Fields& f, std::size_t n) {
  return f.h.size() == n && f.hu.size() == n && f.hv.size() == n;
}
// Whether f holds `scalars` scalar fields of n values each.
inline bool scalars_sized(const Fields& f, std::size_t scalars, std::size_t n) {
  if (f.hc.size() != scalars) return false;
  for (const auto& v : f.hc)
    if (v.size() != n) return false;
  return true;
}
inline bool maxima_sized(const Maxima& m, std::size_t n) {
  return m.max_h.size() == n && m.max_speed.size() == n && m.arrival_time.size() == n;
}

// A CPU executor's load_maxima: the maxima into its host arrays, sizes checked.
inline void copy_maxima(const Maxima& in, std::vector<double>& max_h, std::vector<double>& max_speed,
                        std::vector<double>& arrival) {
  check_load_size(maxima_sized(in, max_h.size()), "load_maxima");
  max_h = in.max_h;
  max_speed = in.max_speed;
  arrival = in.arrival_time;
}

std::unique_ptr<Backend> make_backend(const Problem& problem, const BackendOptions& options);

// Whether this build has the CUDA backend and a usable GPU is present.
bool cuda_available();

} // namespace shallows
