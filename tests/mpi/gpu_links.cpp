// SPDX-License-Identifier: MIT
// The distributed executor's side of the links between GPUs (halos GPU to
// GPU, the rate all-reduced by the GPUs), run on the CPU: an executor that
// offers the links and emulates them with MPI (a box sent to the peer
// travels as a message of its own; the "GPU" all-reduce is an MPI one inside
// the step). What is tested is what the distributed executor does with them:
// both ends of a side agree on its path, the links' empty messages, the
// steps queued between two exchanges (Distributed::advance), the rank
// timings that say which paths ran, and the state bit for bit against one
// rank, with every rank offering the links or one refusing them. Also the
// halos handed to MPI in "GPU memory" (host memory here) where MPI reads it
// (BackendOptions::mpi_gpu_memory = 1 stands for a CUDA-aware MPI).
#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "shallows/exec/cpu_backend.hpp"
#include "shallows/exec/mpi/context.hpp"
#include "shallows/exec/mpi/distributed_backend.hpp"
#include "shallows/io/case.hpp"

namespace shallows {
namespace {

class LinkEmulator final : public Backend, public HaloEndpoint, public GpuLinks {
 public:
  LinkEmulator(std::unique_ptr<Backend> inner, bool offer, bool device_memory = false)
      : inner_(std::move(inner)), offer_(offer), device_memory_(device_memory) {
    inner_->set_rate_reducer([this](double rate) {
      if (!gpu_rate_) return reduce_rate(rate);
      double all = 0;
      MPI_Allreduce(&rate, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      ++gpu_reductions_;
      return all;
    });
    inner_->set_sum_reducer([this](std::vector<double>& v) {
      if (sum_reducer()) sum_reducer()(v);
    });
  }

  std::string name() const override { return inner_->name() + "+links"; }
  double step(double t, double dt_max) override { return inner_->step(t, dt_max); }
  AdvanceResult advance(double t, double target, index_t max_steps) override {
    ++advances_;
    return inner_->advance(t, target, max_steps);
  }
  void read_state(Fields& out) const override { inner_->read_state(out); }
  void read_maxima(Maxima& out) const override { inner_->read_maxima(out); }
  void load_state(const Fields& in) override { inner_->load_state(in); }
  void load_maxima(const Maxima& in) override { inner_->load_maxima(in); }
  double volume() const override { return inner_->volume(); }
  double positivity_volume() const override { return inner_->positivity_volume(); }
  ForcingVolumes forcing_volumes() const override { return inner_->forcing_volumes(); }
  void read_forcing_state(ForcingState& out) const override { inner_->read_forcing_state(out); }
  void load_forcing_state(const ForcingState& in) override { inner_->load_forcing_state(in); }
  HaloEndpoint* halo() override { return this; }
  // An executor with GPU memory has links; the emulator's are those it offers or its GPU-memory boxes.
  GpuLinks* gpu_links() override { return offer_ || device_memory_ ? this : nullptr; }
  std::size_t box_bytes(const CellBox& box) const override { return inner()->box_bytes(box); }
  void pack_box(const CellBox& box, std::byte* out) const override { inner()->pack_box(box, out); }
  void unpack_box(const CellBox& box, const std::byte* in) override { inner()->unpack_box(box, in); }
  void refresh_ghosts() override { inner()->refresh_ghosts(); }

  BoxBuffer device_buffer(std::size_t bytes) const override { return inner()->host_buffer(bytes); }
  void pack_box_device(const CellBox& box, std::byte* out) const override {
    ++device_packs_;
    inner()->pack_box(box, out);
  }
  void unpack_box_device(const CellBox& box, const std::byte* in) override {
    ++device_unpacks_;
    inner()->unpack_box(box, in);
  }

  std::vector<std::byte> peer_link(int, const CellBox&) override { return offer_ ? rank_bytes() : std::vector<std::byte>{}; }

  bool open_peer(int side, const CellBox&, const std::vector<std::byte>& link) override {
    if (link.size() != sizeof(int)) return false;
    std::memcpy(&peer_[static_cast<std::size_t>(side)], link.data(), sizeof(int));
    return true;
  }

  // The box goes before the distributed executor's empty message, with a tag of its own.
  void send_box_to_peer(int side, const CellBox& box) override {
    auto& buf = sent_[static_cast<std::size_t>(side)];
    buf.resize(box_bytes(box));
    inner()->pack_box(box, buf.data());
    MPI_Isend(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, peer_[static_cast<std::size_t>(side)], 100 + side,
              MPI_COMM_WORLD, &requests_[static_cast<std::size_t>(side)]);
    ++boxes_sent_;
  }

  void receive_box_from_peer(int side, const CellBox& box) override {
    std::vector<std::byte> in(box_bytes(box));
    MPI_Recv(in.data(), static_cast<int>(in.size()), MPI_BYTE, peer_[static_cast<std::size_t>(side)], 100 + (side ^ 1),
             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    inner()->unpack_box(box, in.data());
    MPI_Wait(&requests_[static_cast<std::size_t>(side)], MPI_STATUS_IGNORE);
  }

  std::vector<std::byte> rate_link(int) override { return offer_ ? rank_bytes() : std::vector<std::byte>{}; }
  bool open_rate_links(int, const std::vector<std::vector<std::byte>>& links) override {
    for (const auto& l : links)
      if (l.size() != sizeof(int)) return false;
    return true;
  }
  void start_rate_links() override { gpu_rate_ = true; }
  void close_links() override {}

  int boxes_sent_ = 0;
  long gpu_reductions_ = 0;
  int advances_ = 0;
  mutable int device_packs_ = 0;
  int device_unpacks_ = 0;

 private:
  static std::vector<std::byte> rank_bytes() {
    const int r = mpi::rank();
    std::vector<std::byte> v(sizeof r);
    std::memcpy(v.data(), &r, sizeof r);
    return v;
  }

  HaloEndpoint* inner() const { return inner_->halo(); }

  std::unique_ptr<Backend> inner_;
  bool offer_;
  bool device_memory_;
  bool gpu_rate_ = false;
  std::array<int, 4> peer_{-1, -1, -1, -1};
  std::array<std::vector<std::byte>, 4> sent_;
  std::array<MPI_Request, 4> requests_{MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
};

// The gathered state against one rank's, bit for bit.
void expect_same_state(const Fields& f, const Fields& ref, const char* label) {
  ASSERT_EQ(f.h.size(), ref.h.size()) << label;
  for (std::size_t c = 0; c < ref.h.size(); ++c) {
    if (f.h[c] != ref.h[c] || f.hu[c] != ref.hu[c] || f.hv[c] != ref.hv[c]) {
      ADD_FAILURE() << "cell " << c << " differs from one rank (" << label << ")";
      break;
    }
  }
}

// S000-T2 (a dam break over a bump that leaves dry land) on every rank with
// links offered where offers(rank), stepped by advance() in uneven batches,
// against one rank bit for bit.
void run_with_links(bool (*offers)(int), const char* label) {
  const Problem p = io::load_case(std::string(SHALLOWS_SOURCE_DIR) + "/cases/s000-t2/case.toml", {}).problem;
  BackendOptions o;
  o.threads = 1;
  o.halo_steps = 3;
  o.mpi_gpu_memory = 0;  // the sides without a link through host buffers, whatever MPI can
  LinkEmulator* mine = nullptr;
  const std::unique_ptr<mpi::DistributedBackend> d = mpi::make_distributed_backend(
      p, o, [&](const Problem& local, const BackendOptions& lo) {
        auto e = std::make_unique<LinkEmulator>(make_cpu_backend(local, lo), offers(mpi::rank()));
        mine = e.get();
        return e;
      });
  double t = 0;
  index_t steps = 0;
  for (index_t batch : {1, 5, 2, 7, 11, 4}) {
    const AdvanceResult r = d->advance(t, p.t_end, batch);
    t = r.t;
    steps += r.steps;
  }
  ASSERT_EQ(steps, 30) << label;
  Fields f;
  d->read_state(f);
  const std::vector<RankTiming> timings = d->rank_timings();

  // What this rank's executor saw: boxes sent only with links, the rate
  // all-reduced in the executor on every step once all ranks have them, and
  // the steps queued an exchange's worth at a time.
  int all_offer = 1;
  for (int r = 0; r < mpi::size(); ++r) all_offer = all_offer && offers(r);
  if (all_offer) {
    EXPECT_EQ(mine->gpu_reductions_, 30) << label;
    EXPECT_GT(mine->advances_, 0) << label;
  } else {
    EXPECT_EQ(mine->gpu_reductions_, 0) << label;
    EXPECT_EQ(mine->advances_, 0) << label;
  }
  if (!offers(mpi::rank())) {
    EXPECT_EQ(mine->boxes_sent_, 0) << label;
  }

  if (mpi::rank() != 0) return;
  ASSERT_EQ(timings.size(), static_cast<std::size_t>(mpi::size()));
  for (const RankTiming& rt : timings) {
    EXPECT_EQ(rt.device_rate, all_offer) << label << ", rank " << rt.rank;
    EXPECT_GT(rt.device_sides + rt.host_sides, 0) << label << ", rank " << rt.rank;
    if (!offers(rt.rank)) {
      EXPECT_EQ(rt.device_sides, 0) << label << ", rank " << rt.rank;
    }
    if (all_offer) {
      EXPECT_EQ(rt.host_sides, 0) << label << ", rank " << rt.rank;
    }
    EXPECT_EQ(rt.steps, 30) << label;
  }
  const std::unique_ptr<Backend> one = make_cpu_backend(p, o);
  const AdvanceResult r = one->advance(0, p.t_end, 30);
  EXPECT_EQ(r.t, t) << label;
  Fields ref;
  one->read_state(ref);
  expect_same_state(f, ref, label);
}

TEST(MpiGpuLinks, EveryRankOfferingThemStepsAsOneRank) {
  run_with_links([](int) { return true; }, "every rank offers the links");
}

TEST(MpiGpuLinks, ARankRefusingThemLeavesItsSidesAndTheRateToTheHost) {
  run_with_links([](int rank) { return rank != 1; }, "rank 1 refuses the links");
}

// The message of what `call` throws names the variable.
template <class Call>
void expect_refused_naming_the_variable(Call&& call, const char* what) {
  try {
    call();
    ADD_FAILURE() << what << " accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("SHALLOWS_CUDA_AWARE_MPI"), std::string::npos) << e.what();
  }
}

// SHALLOWS_CUDA_AWARE_MPI: auto (or unset) takes the library's answer; off
// never; on also where the library cannot answer, refused where it says no
// (Debian's OpenMPI: not CUDA-aware); anything else refused, the message
// naming the variable.
TEST(MpiCudaAware, TheVariableDecidesOrAsksTheLibrary) {
  const mpi::GpuMemorySupport library = mpi::library_gpu_memory_support();
  setenv("SHALLOWS_CUDA_AWARE_MPI", "auto", 1);
  EXPECT_EQ(mpi::cuda_aware_mpi(), library == mpi::GpuMemorySupport::yes);
  setenv("SHALLOWS_CUDA_AWARE_MPI", "off", 1);
  EXPECT_FALSE(mpi::cuda_aware_mpi());
  setenv("SHALLOWS_CUDA_AWARE_MPI", "on", 1);
  if (library == mpi::GpuMemorySupport::no) {
    expect_refused_naming_the_variable([] { mpi::cuda_aware_mpi(); }, "=on where the library says no");
  } else {
    EXPECT_TRUE(mpi::cuda_aware_mpi());
  }
  setenv("SHALLOWS_CUDA_AWARE_MPI", "yes", 1);
  expect_refused_naming_the_variable([] { mpi::cuda_aware_mpi(); }, "SHALLOWS_CUDA_AWARE_MPI=yes");
  unsetenv("SHALLOWS_CUDA_AWARE_MPI");
  EXPECT_EQ(mpi::cuda_aware_mpi(), library == mpi::GpuMemorySupport::yes);
}

// Where MPI reads GPU memory (`option`: BackendOptions::mpi_gpu_memory;
// -1: SHALLOWS_CUDA_AWARE_MPI=`mode` decides), every side without a GPU link
// hands MPI the executor's device buffers (pack_box_device,
// unpack_box_device); an executor without a GPU, or MPI that cannot, keeps
// host buffers. The state bit for bit against one rank.
void run_with_device_memory(bool device_memory, int option, const char* mode, const char* label) {
  const Problem p = io::load_case(std::string(SHALLOWS_SOURCE_DIR) + "/cases/s000-t2/case.toml", {}).problem;
  BackendOptions o;
  o.threads = 1;
  o.halo_steps = 2;
  o.mpi_gpu_memory = option;
  LinkEmulator* mine = nullptr;
  setenv("SHALLOWS_CUDA_AWARE_MPI", mode, 1);
  std::unique_ptr<mpi::DistributedBackend> d = mpi::make_distributed_backend(
      p, o, [&](const Problem& local, const BackendOptions& lo) {
        auto e = std::make_unique<LinkEmulator>(make_cpu_backend(local, lo), false, device_memory);
        mine = e.get();
        return e;
      });
  unsetenv("SHALLOWS_CUDA_AWARE_MPI");
  double t = 0;
  for (int s = 0; s < 25; ++s) t += d->step(t, 1e9);
  Fields f;
  d->read_state(f);
  const std::vector<RankTiming> timings = d->rank_timings();
  const bool used = device_memory && option == 1;
  if (used) {
    EXPECT_GT(mine->device_packs_, 0) << label;
    EXPECT_EQ(mine->device_packs_, mine->device_unpacks_) << label;
  } else {
    EXPECT_EQ(mine->device_packs_ + mine->device_unpacks_, 0) << label;
  }
  if (mpi::rank() != 0) return;
  for (const RankTiming& rt : timings) {
    EXPECT_EQ(rt.device_sides, 0) << label;
    EXPECT_GT(rt.host_sides + rt.mpi_device_sides, 0) << label << ", rank " << rt.rank;
    EXPECT_EQ(used ? rt.host_sides : rt.mpi_device_sides, 0) << label << ", rank " << rt.rank;
  }
  const std::unique_ptr<Backend> one = make_cpu_backend(p, o);
  double t1 = 0;
  for (int s = 0; s < 25; ++s) t1 += one->step(t1, 1e9);
  EXPECT_EQ(t1, t) << label;
  Fields ref;
  one->read_state(ref);
  expect_same_state(f, ref, label);
}

TEST(MpiCudaAware, HalosTravelInGpuMemoryWhereMpiReadsIt) {
  run_with_device_memory(true, 1, "auto", "CUDA-aware MPI, an executor with GPU memory");
}

TEST(MpiCudaAware, HostMemoryWithoutItOrWithoutAGpu) {
  run_with_device_memory(true, -1, "off", "SHALLOWS_CUDA_AWARE_MPI=off");
  run_with_device_memory(true, 0, "auto", "MPI without GPU memory");
  run_with_device_memory(false, 1, "auto", "an executor without GPU memory");
}

} // namespace
} // namespace shallows
