// SPDX-License-Identifier: MIT
// The distributed executor (distributed_backend.hpp). A halo exchange has two
// phases with non-blocking sends and receives: west/east over the owned rows,
// then south/north over the whole local width, halo columns included, so
// that the corner cells come from the diagonal neighbours through the
// west/east halos of the south/north ones (four messages instead of eight).
#include "shallows/exec/mpi/distributed_backend.hpp"

#include <stdexcept>

#ifdef SHALLOWS_HAVE_MPI
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <limits>
#include <cstddef>
#include <string>
#include <utility>

#include "shallows/exec/host_fields.hpp"
#include "shallows/exec/mpi/context.hpp"
#include "shallows/exec/mpi/decomposition.hpp"
#include "shallows/solver/mass_balance.hpp"
#endif

namespace shallows::mpi {

#ifdef SHALLOWS_HAVE_MPI
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

class Distributed final : public DistributedBackend {
 public:
  Distributed(const Problem& p, const BackendOptions& o, const LocalFactory& make_local, int extra_halo,
              bool overlap_by_default)
      : global_(p.grid), closed_(closed_domain(p)), rank_(mpi::rank()), size_(mpi::size()) {
    if (p.on_mesh()) throw std::logic_error("make_distributed_backend: a mesh (make_backend refuses it first)");
    if (o.halo_steps < 1) throw std::runtime_error("--halo-steps / parallel.halo_steps must be at least 1");
    pg_ = choose_process_grid(size_, p.grid.nx, p.grid.ny, o.ranks_x, o.ranks_y);
    k_ = o.halo_steps;
    radius_ = stencil_radius(p.scheme);
    halo_ = index_t(k_) * radius_ + extra_halo;
    const char* overlap = std::getenv("SHALLOWS_HALO_OVERLAP");
    if (overlap != nullptr && std::string(overlap) != "on" && std::string(overlap) != "off")
      throw std::runtime_error("SHALLOWS_HALO_OVERLAP must be on or off, not '" + std::string(overlap) + "'");
    overlap_ = overlap == nullptr ? overlap_by_default : std::string(overlap) == "on";
    for (int r = 0; r < size_; ++r) blocks_.push_back(make_block(pg_, r, p.grid.nx, p.grid.ny, halo_));
    const Block& b = blocks_[static_cast<std::size_t>(rank_)];
    local_ = make_local(local_problem(p, b), o);
    halo_box_ = local_->halo();
    if (halo_box_ == nullptr)
      throw std::logic_error("executor '" + local_->name() + "' has no halo boxes (make_backend refuses it first)");
    links_ = local_->gpu_links();
    local_->set_rate_reducer([this](double rate) {
      const auto start = Clock::now();
      double global = 0;
      MPI_Allreduce(&rate, &global, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      timing_.reduce += seconds_since(start);
      return global;
    });
    local_->set_sum_reducer([this](std::vector<double>& v) {
      const auto start = Clock::now();
      MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      timing_.reduce += seconds_since(start);
    });
    // The rank whose account of each source counts: the owner of its first cell (forcing_volumes).
    for (const VolumeSource& s : p.forcing.sources) {
      const index_t c = s.cells.empty() ? 0 : s.cells.front();
      source_owner_.push_back(owner_of(c % p.grid.nx, c / p.grid.nx));
    }
    plan_exchange(b, o.mpi_gpu_memory);
    timing_.rank = rank_;
  }

  // The processes' mappings of each other's GPU memory are closed on every
  // rank before any rank frees its own (freeing memory another process still
  // maps is undefined in CUDA). Not while an exception unwinds: a failing
  // rank ends the job (abort_job) and must not wait here for the others.
  ~Distributed() override {
    if (!links_anywhere_ || std::uncaught_exceptions() > 0) return;
    try {
      if (links_) links_->close_links();
    } catch (const std::exception&) {
      // A device error here leaves the mappings to the process's end.
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  Distributed(const Distributed&) = delete;
  Distributed& operator=(const Distributed&) = delete;

  std::string name() const override { return local_->name() + "+mpi"; }

  // With the rate all-reduced by the GPUs, the steps between two exchanges
  // go to the executor at once (one host synchronisation); else step by step.
  AdvanceResult advance(double t, double target, index_t max_steps) override {
    if (!timing_.device_rate) return Backend::advance(t, target, max_steps);
    AdvanceResult r{t, 0, 0};
    while (r.t < target && r.steps < max_steps) {
      const auto start = Clock::now();
      const double before = exchange_parts();
      if (since_exchange_ == k_) start_exchange();
      const index_t n = std::min<index_t>(k_ - since_exchange_, max_steps - r.steps);
      const AdvanceResult a = local_->advance(r.t, target, n);
      timing_.compute += seconds_since(start) - (exchange_parts() - before);
      r.t = a.t;
      r.dt = a.dt;
      r.steps += a.steps;
      since_exchange_ += static_cast<int>(a.steps);
      timing_.steps += a.steps;
      if (a.steps == 0) break;
    }
    return r;
  }

  double step(double t, double dt_max) override {
    const auto start = Clock::now();
    const double before = exchange_parts() + timing_.reduce;
    if (since_exchange_ == k_) start_exchange();
    const double dt = local_->step(t, dt_max);
    timing_.compute += seconds_since(start) - (exchange_parts() + timing_.reduce - before);
    ++timing_.steps;
    ++since_exchange_;
    return dt;
  }

  void read_state(Fields& out) const override {
    Fields local;
    local_->read_state(local);
    out.h = gather(local.h);
    out.hu = gather(local.hu);
    out.hv = gather(local.hv);
    out.hc.clear();
    for (const std::vector<double>& hc : local.hc) out.hc.push_back(gather(hc));
  }

  void read_maxima(Maxima& out) const override {
    Maxima local;
    local_->read_maxima(local);
    if (local.max_h.empty()) return;  // maxima not tracked (the same on every rank)
    out.max_h = gather(local.max_h);
    out.max_speed = gather(local.max_speed);
    out.arrival_time = gather(local.arrival_time);
  }

  // The one-rank sum: rows in order, each in column order, on rank 0.
  double volume() const override {
    Fields local;
    local_->read_state(local);
    const std::vector<double> h = gather(local.h);
    double total = 0;
    if (rank_ == 0) {
      for (index_t j = 0; j < global_.ny; ++j) {
        double row = 0;
        for (index_t i = 0; i < global_.nx; ++i) row += h[static_cast<std::size_t>(j * global_.nx + i)];
        total += row;
      }
      total = total * global_.dx * global_.dy;  // the one-rank order of the products
    }
    MPI_Bcast(&total, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return total;
  }

  // Checkpoints run on one rank only (run_case refuses them before this).
  void load_state(const Fields&) override { throw std::runtime_error("restarts run on one MPI rank only"); }
  void load_maxima(const Maxima&) override { throw std::runtime_error("restarts run on one MPI rank only"); }

  // The executors count their owned cells' clamps; the ranks' totals are
  // added in rank order. One rank adds each row's gains to its total step by
  // step, so that where the clamps fall in more than one block the sum
  // differs from it by round-off; where they fall in one, it is its bits.
  // NaN where an executor keeps no account on a rank. Collective.
  double positivity_volume() const override {
    const std::vector<double> all = gather_parts({local_->positivity_volume()}, [](const Block&) { return 1; });
    double total = 0;
    for (double v : all) total += v;
    MPI_Bcast(&total, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return total;
  }

  // The executors account the sides of their blocks that are sides of the
  // domain, along their owned cells (ForcingState::boundary); each side's in
  // and out are added in rank order, so that a side that lies in one block
  // (the west and east sides with ranks_y = 1, the south and north with
  // ranks_x = 1) has the one-rank bits, and a side split over blocks the
  // one-rank value to round-off. NaN behind walls, as on one rank, and where
  // an executor keeps no account on a rank. Collective but behind walls.
  BoundaryFlow boundary_flow() const override {
    if (closed_) return {};
    ForcingState mine;
    local_->read_forcing_accounts(mine);
    std::vector<double> part = mine.boundary;
    if (part.size() != 8) part.assign(8, std::numeric_limits<double>::quiet_NaN());
    const std::vector<double> all = gather_parts(part, [](const Block&) { return 8; });
    double sides[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (std::size_t k = 0; k < all.size(); ++k) sides[k % 8] += all[k];
    const BoundaryFlow f = BoundaryFlow::of_pairs(sides, 4);
    double v[2] = {f.in, f.out};
    MPI_Bcast(v, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return {v[0], v[1]};
  }

  // The executors account their owned cells by row (ForcingState): the
  // parts of each global row are added in rank order, so that with one rank
  // per row (ranks_x = 1) every row, and the volumes, are the one-rank bits;
  // a source is counted by the rank that owns its first cell. Collective;
  // every rank gets rank 0's.
  ForcingVolumes forcing_volumes() const override {
    ForcingState mine;
    local_->read_forcing_accounts(mine);
    const Block& b = blocks_[static_cast<std::size_t>(rank_)];
    const CellBox o = b.owned_in_local();
    std::vector<double> part;
    for (const std::vector<double>* rows : {&mine.rain_rows, &mine.infiltration_rows}) {
      for (index_t j = o.j0; j < o.j1; ++j) part.push_back(rows->empty() ? 0.0 : (*rows)[static_cast<std::size_t>(j)]);
    }
    for (double s : mine.sources) part.push_back(s);
    const std::vector<double> all = gather_parts(part, [&](const Block& r) {
      return 2 * static_cast<std::size_t>(r.owned.j1 - r.owned.j0) + source_owner_.size();
    });
    double v[3] = {0, 0, 0};
    if (rank_ == 0) {
      ForcingState total;
      total.rain_rows.assign(static_cast<std::size_t>(global_.ny), 0.0);
      total.infiltration_rows.assign(static_cast<std::size_t>(global_.ny), 0.0);
      total.sources.assign(source_owner_.size(), 0.0);
      std::size_t k = 0;
      for (const Block& r : blocks_) {
        for (std::vector<double>* rows : {&total.rain_rows, &total.infiltration_rows}) {
          for (index_t j = r.owned.j0; j < r.owned.j1; ++j) (*rows)[static_cast<std::size_t>(j)] += all[k++];
        }
        for (std::size_t s = 0; s < source_owner_.size(); ++s, ++k)
          if (source_owner_[s] == r.rank) total.sources[s] = all[k];
      }
      const ForcingVolumes f = total.volumes(global_.dx * global_.dy);
      v[0] = f.rain;
      v[1] = f.infiltration;
      v[2] = f.sources;
    }
    MPI_Bcast(v, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return {v[0], v[1], v[2]};
  }

  // The structures' tallies: every rank runs all the structures on the
  // replica of their cells (StructureReplica) and keeps the one-rank ones.
  // The other accounts are a rank's own, which forcing_volumes and
  // boundary_flow add over the ranks.
  void read_forcing_accounts(ForcingState& out) const override {
    ForcingState mine;
    local_->read_forcing_accounts(mine);
    out = {};
    out.structures = std::move(mine.structures);
  }

  std::vector<RankTiming> rank_timings() const override {
    constexpr int n = 14;
    const double mine[n] = {double(timing_.rank), timing_.compute, timing_.reduce, timing_.pack, timing_.exchange,
                            timing_.wait, double(timing_.steps), double(timing_.exchanges), timing_.halo_bytes,
                            double(timing_.device_sides), double(timing_.host_sides),
                            double(timing_.mpi_device_sides), double(timing_.device_rate), double(timing_.overlap)};
    std::vector<double> all(rank_ == 0 ? static_cast<std::size_t>(n * size_) : 0);
    MPI_Gather(mine, n, MPI_DOUBLE, all.data(), n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    std::vector<RankTiming> out;
    for (int r = 0; rank_ == 0 && r < size_; ++r) {
      const double* v = all.data() + r * n;
      out.push_back({int(v[0]), v[1], v[2], v[3], v[4], v[5], index_t(v[6]), index_t(v[7]), v[8], int(v[9]),
                     int(v[10]), int(v[11]), int(v[12]), int(v[13])});
    }
    return out;
  }

  int ranks_x() const override { return pg_.px; }
  int ranks_y() const override { return pg_.py; }
  index_t halo_cells() const override { return halo_; }

 private:
  struct Transfer {
    int peer = -1;
    int send_tag = 0, recv_tag = 0;
    CellBox send, recv;  // local coordinates
    std::size_t send_bytes = 0, recv_bytes = 0;
    bool device = false;  // GPU to GPU (GpuLinks::peer_link); the message is then empty
    bool mpi_device = false;  // the buffers in GPU memory, which MPI reads and writes (CUDA-aware MPI)
    BoxBuffer send_buf{nullptr, nullptr}, recv_buf{nullptr, nullptr};
  };

  // gpu_memory: BackendOptions::mpi_gpu_memory.
  void plan_exchange(const Block& b, int gpu_memory) {
    // Phase 0: west, east; phase 1: south, north. The tag is the side the message travels towards.
    const ExchangeBoxes boxes = exchange_boxes(b, halo_);
    for (int s = 0; s < 4; ++s) {
      Transfer& t = transfers_[static_cast<std::size_t>(s)];
      t.peer = b.neighbour[s];
      if (t.peer < 0) continue;
      t.send_tag = s;
      t.recv_tag = s ^ 1;  // from the neighbour on side s, travelling the other way
      t.send = boxes.send[static_cast<std::size_t>(s)];
      t.recv = boxes.recv[static_cast<std::size_t>(s)];
      t.send_bytes = halo_box_->box_bytes(t.send);
      t.recv_bytes = halo_box_->box_bytes(t.recv);
      t.send_buf = halo_box_->host_buffer(t.send_bytes);
      t.recv_buf = halo_box_->host_buffer(t.recv_bytes);
      timing_.halo_bytes += double(t.send_bytes);
    }
    inner_ = inner_cells(b, radius_);
    link_devices(gpu_memory);
  }

  // Links between GPUs (CUDA IPC), where the executors can make them and
  // SHALLOWS_GPU_LINKS is not "off": halos GPU to GPU between neighbours on
  // one node, and the rate all-reduced by the GPUs when every rank runs on
  // one node with a GPU of its own. Collective.
  void link_devices(int gpu_memory) {
    const char* links = std::getenv("SHALLOWS_GPU_LINKS");
    const bool off = links != nullptr && std::string(links) == "off";
    const int node = node_ranks().leader;  // the same on every rank of this node
    link_halos(node, off);
    halos_in_device_memory(gpu_memory);
    for (const Transfer& t : transfers_) {  // each side's path, once decided
      if (t.peer < 0) continue;
      int& sides = t.device ? timing_.device_sides : t.mpi_device ? timing_.mpi_device_sides : timing_.host_sides;
      ++sides;
    }
    link_rate(node, off);
    int mine = timing_.device_sides > 0 || timing_.device_rate ? 1 : 0, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    links_anywhere_ = any != 0;
  }

  static constexpr std::size_t kLinkBytes = 256;
  struct Offer {
    int node = -1;  // the world rank that leads the node
    int size = 0;   // link bytes; 0: none
    std::byte link[kLinkBytes];
  };

  static Offer offer(int node, const std::vector<std::byte>& link) {
    Offer o{};
    o.node = node;
    if (link.empty() || link.size() > kLinkBytes) return o;
    o.size = int(link.size());
    std::copy(link.begin(), link.end(), o.link);
    return o;
  }

  // A side goes GPU to GPU where both ends opened each other's link; both
  // ends of a side decide alike.
  void link_halos(int node, bool off) {
    std::array<Offer, 4> mine{}, theirs{};
    std::array<int, 4> opened{}, peer_opened{};
    const auto swap = [&](auto& out, auto& in, int bytes) {
      std::array<MPI_Request, 8> requests;
      int n = 0;
      for (std::size_t s = 0; s < 4; ++s) {
        const Transfer& t = transfers_[s];
        if (t.peer < 0) continue;
        MPI_Irecv(&in[s], bytes, MPI_BYTE, t.peer, t.recv_tag, MPI_COMM_WORLD, &requests[std::size_t(n++)]);
        MPI_Isend(&out[s], bytes, MPI_BYTE, t.peer, t.send_tag, MPI_COMM_WORLD, &requests[std::size_t(n++)]);
      }
      MPI_Waitall(n, requests.data(), MPI_STATUSES_IGNORE);
    };
    for (std::size_t s = 0; s < 4; ++s) {
      const Transfer& t = transfers_[s];
      mine[s] = offer(node, t.peer < 0 || off || !links_ ? std::vector<std::byte>{} : links_->peer_link(int(s), t.recv));
    }
    swap(mine, theirs, int(sizeof(Offer)));
    for (std::size_t s = 0; s < 4; ++s) {
      const Transfer& t = transfers_[s];
      const Offer& o = theirs[s];
      if (t.peer < 0 || mine[s].size == 0 || o.size == 0 || o.node != node) continue;
      opened[s] = links_->open_peer(int(s), t.send, std::vector<std::byte>(o.link, o.link + o.size)) ? 1 : 0;
    }
    swap(opened, peer_opened, int(sizeof(int)));
    for (std::size_t s = 0; s < 4; ++s) {
      Transfer& t = transfers_[s];
      t.device = t.peer >= 0 && opened[s] && peer_opened[s];
      if (t.device) {
        t.send_buf.reset();
        t.recv_buf.reset();
      }
    }
  }

  // The sides left to MPI hand it buffers in GPU memory where MPI reads
  // and writes it (CUDA-aware MPI) and the executor has a GPU: no copies
  // through the host. Each end decides for itself; MPI matches a message in
  // GPU memory with one in host memory. Only a rank with a GPU asks
  // (SHALLOWS_CUDA_AWARE_MPI, the library).
  void halos_in_device_memory(int gpu_memory) {
    if (gpu_memory == 0 || !links_) return;
    if (gpu_memory < 0 && !cuda_aware_mpi()) return;
    for (Transfer& t : transfers_) {
      if (t.peer < 0 || t.device) continue;
      t.send_buf = links_->device_buffer(t.send_bytes);
      t.recv_buf = links_->device_buffer(t.recv_bytes);
      t.mpi_device = true;
    }
  }

  // The rate all-reduced by the GPUs where every rank opened every other's
  // mailbox.
  void link_rate(int node, bool off) {
    const Offer o = offer(node, off || !links_ ? std::vector<std::byte>{} : links_->rate_link(size_));
    std::vector<Offer> all(static_cast<std::size_t>(size_));
    MPI_Allgather(&o, int(sizeof o), MPI_BYTE, all.data(), int(sizeof o), MPI_BYTE, MPI_COMM_WORLD);
    int ok = 1;
    std::vector<std::vector<std::byte>> links;
    for (const Offer& a : all) {
      if (a.node != node || a.size == 0) ok = 0;
      links.emplace_back(a.link, a.link + a.size);
    }
    if (ok) ok = links_->open_rate_links(rank_, links) ? 1 : 0;
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all_ok == 0) return;
    links_->start_rate_links();
    timing_.device_rate = 1;
  }

  // The pack, exchange and wait seconds so far (what a step's time less them computed).
  double exchange_parts() const { return timing_.pack + timing_.exchange + timing_.wait; }

  // The exchange before the next step: run beside the step's inner cells
  // where the executor can split its step (exchange_in_next_step), else now.
  void start_exchange() {
    since_exchange_ = 0;
    ++timing_.exchanges;
    if (!overlap_) return exchange();
    timing_.overlap = halo_box_->exchange_in_next_step(inner_, [this] { exchange(); }) ? 1 : 0;
  }

  void exchange() {
    for (int phase = 0; phase < 2; ++phase) {
      std::array<MPI_Request, 4> requests;
      int n = 0;
      auto start = Clock::now();
      for (int s = 2 * phase; s < 2 * phase + 2; ++s) {
        Transfer& t = transfers_[static_cast<std::size_t>(s)];
        if (t.peer < 0) continue;
        if (t.device) {
          links_->send_box_to_peer(s, t.send);
        } else if (t.mpi_device) {
          links_->pack_box_device(t.send, t.send_buf.get());
        } else {
          halo_box_->pack_box(t.send, t.send_buf.get());
        }
      }
      timing_.pack += seconds_since(start);
      start = Clock::now();
      // GPU to GPU, the message only says that the box is on its way (its event recorded).
      for (int s = 2 * phase; s < 2 * phase + 2; ++s) {
        Transfer& t = transfers_[static_cast<std::size_t>(s)];
        if (t.peer < 0) continue;
        MPI_Irecv(t.recv_buf.get(), t.device ? 0 : static_cast<int>(t.recv_bytes), MPI_BYTE, t.peer, t.recv_tag,
                  MPI_COMM_WORLD, &requests[static_cast<std::size_t>(n++)]);
        MPI_Isend(t.send_buf.get(), t.device ? 0 : static_cast<int>(t.send_bytes), MPI_BYTE, t.peer, t.send_tag,
                  MPI_COMM_WORLD, &requests[static_cast<std::size_t>(n++)]);
      }
      timing_.exchange += seconds_since(start);
      start = Clock::now();
      MPI_Waitall(n, requests.data(), MPI_STATUSES_IGNORE);
      timing_.wait += seconds_since(start);
      start = Clock::now();
      for (int s = 2 * phase; s < 2 * phase + 2; ++s) {
        Transfer& t = transfers_[static_cast<std::size_t>(s)];
        if (t.peer < 0) continue;
        if (t.device) {
          links_->receive_box_from_peer(s, t.recv);
        } else if (t.mpi_device) {
          links_->unpack_box_device(t.recv, t.recv_buf.get());
        } else {
          halo_box_->unpack_box(t.recv, t.recv_buf.get());
        }
      }
      timing_.pack += seconds_since(start);
    }
    halo_box_->refresh_ghosts();
  }

  // A field of the local grid: its owned cells to rank 0, placed there in the
  // global grid (empty on the other ranks). Collective.
  std::vector<double> gather(const std::vector<double>& local) const {
    const Block& b = blocks_[static_cast<std::size_t>(rank_)];
    const CellBox o = b.owned_in_local();
    const index_t local_nx = b.local.nx();
    std::vector<double> mine;
    mine.reserve(static_cast<std::size_t>(o.cells()));
    for (index_t j = o.j0; j < o.j1; ++j) {
      for (index_t i = o.i0; i < o.i1; ++i) mine.push_back(local[static_cast<std::size_t>(j * local_nx + i)]);
    }
    const std::vector<double> all =
        gather_parts(mine, [](const Block& r) { return static_cast<std::size_t>(r.owned.cells()); });
    std::vector<double> out;
    if (rank_ != 0) return out;
    out.resize(static_cast<std::size_t>(global_.cells()));
    std::size_t k = 0;
    for (const Block& r : blocks_) {
      for (index_t j = r.owned.j0; j < r.owned.j1; ++j) {
        for (index_t i = r.owned.i0; i < r.owned.i1; ++i) out[static_cast<std::size_t>(j * global_.nx + i)] = all[k++];
      }
    }
    return out;
  }

  // Every rank's values, concatenated in rank order on rank 0 (empty
  // elsewhere); count(block): how many a rank's block sends, which rank 0
  // knows without asking. Collective.
  template <class Count>
  std::vector<double> gather_parts(const std::vector<double>& mine, Count&& count) const {
    const int n = static_cast<int>(mine.size());
    if (n != static_cast<int>(count(blocks_[static_cast<std::size_t>(rank_)])))
      throw std::logic_error("gather_parts: a rank's part is not the size its block gives");
    std::vector<int> counts, displs;
    std::vector<double> all;
    if (rank_ == 0) {
      int offset = 0;
      for (const Block& b : blocks_) {
        counts.push_back(static_cast<int>(count(b)));
        displs.push_back(offset);
        offset += counts.back();
      }
      all.resize(static_cast<std::size_t>(offset));
    }
    MPI_Gatherv(mine.data(), n, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0,
                MPI_COMM_WORLD);
    return all;
  }

  // The rank whose block owns global cell (i, j).
  int owner_of(index_t i, index_t j) const {
    for (const Block& b : blocks_)
      if (i >= b.owned.i0 && i < b.owned.i1 && j >= b.owned.j0 && j < b.owned.j1) return b.rank;
    return 0;
  }

  Grid global_;
  bool closed_;  // closed_domain: no water crosses the sides
  int rank_, size_;
  ProcessGrid pg_;
  int k_ = 1;
  int radius_ = 1;  // stencil_radius
  index_t halo_ = 1;
  bool overlap_ = true;  // SHALLOWS_HALO_OVERLAP
  CellBox inner_;        // local cells an exchange can run beside (start_exchange)
  std::vector<Block> blocks_;
  std::array<Transfer, 4> transfers_;
  std::unique_ptr<Backend> local_;
  HaloEndpoint* halo_box_ = nullptr;  // local_'s
  GpuLinks* links_ = nullptr;         // local_'s; null without a GPU
  std::vector<int> source_owner_;  // per Forcing::sources entry
  int since_exchange_ = 0;  // the initial local state is exact, halo included
  bool links_anywhere_ = false;  // a rank maps another's GPU memory (link_devices)
  mutable RankTiming timing_;
};

} // namespace

std::unique_ptr<DistributedBackend> make_distributed_backend(const Problem& problem, const BackendOptions& options,
                                                             const LocalFactory& make_local, int extra_halo,
                                                             bool overlap) {
  return std::make_unique<Distributed>(problem, options, make_local, extra_halo, overlap);
}

#else

std::unique_ptr<DistributedBackend> make_distributed_backend(const Problem&, const BackendOptions&,
                                                             const LocalFactory&, int, bool) {
  throw std::runtime_error("this build has no MPI");
}

#endif

} // namespace shallows::mpi
