// SPDX-License-Identifier: MIT
#pragma once
// The all-reduce of a distributed run's CFL rate done by the GPUs themselves
// (GpuLinks::rate_link), for ranks of one node that each have a GPU of their
// own: every rank maps every other rank's mailbox (CUDA IPC), and after each
// step a one-warp kernel posts the rank's rate into the others' mailboxes
// and waits for theirs. The largest replaces the slot's rate before the next
// step decides dt from it, so the host need not fetch, all-reduce and write
// back the rate every step: a rank queues the steps between two halo
// exchanges and synchronises once, as one GPU does per batch.
//
// A mailbox holds, per sender, (rate bits, sequence number) in two halves
// used in turn by the step's parity: a rank can run at most one step ahead
// of another (it needs the other's rate of each step), so a half is read
// before its sender writes it again. The bits go first, then a system-wide
// fence, then the sequence number the reader waits for.
#include <cuda_runtime.h>

#include <cstring>
#include <string>
#include <vector>

#include "cuda_check.cuh"
#include "device_array.cuh"
#include "peer_access.cuh"

namespace shallows::gpu {

// A peer that does not post within this long ends the run with a message
// instead of a hang (rank 0 may write large outputs meanwhile).
constexpr unsigned long long kRateWaitNs = 3600ull * 1000000000ull;

struct RateLinkArgs {
  unsigned long long* const* boxes;  // every rank's mailbox, mapped here (this rank's own at its index)
  unsigned long long* seq;           // steps reduced so far (this rank's counter)
  int* timed_out;                    // set when a peer did not post in time
  int rank, ranks;
};

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One warp: lane p posts this rank's rate to rank p and waits for rank p's.
// The largest rate bits (non-negative Reals, or kNonFinite) go into *rate.
// static: every CUDA executor includes this header (executor_base.cuh), each its own copy.
static __global__ void __launch_bounds__(32) rate_allreduce_kernel(unsigned long long* rate, const RateLinkArgs a) {
  const int lane = static_cast<int>(threadIdx.x);
  const unsigned long long seq = *a.seq + 1;
  const unsigned long long mine = *rate;
  const int half = static_cast<int>(seq & 1);
  unsigned long long best = mine;
  const bool peer = lane < a.ranks && lane != a.rank;
  if (peer) {
    volatile unsigned long long* out = a.boxes[lane] + 2 * (half * a.ranks + a.rank);
    out[0] = mine;
    __threadfence_system();
    out[1] = seq;
    volatile unsigned long long* in = a.boxes[a.rank] + 2 * (half * a.ranks + lane);
    const unsigned long long start = global_ns();
    while (in[1] != seq) {
      if (global_ns() - start > kRateWaitNs) {
        *a.timed_out = 1;
        break;
      }
    }
    __threadfence_system();
    const unsigned long long theirs = in[0];
    best = theirs > best ? theirs : best;
  }
  for (int d = 16; d > 0; d >>= 1) {
    const unsigned long long o = __shfl_xor_sync(0xffffffffu, best, d);
    best = o > best ? o : best;
  }
  __syncwarp();
  if (lane == 0) {
    *rate = *a.timed_out ? ~0ull : best;  // kNonFinite: the next step stops
    *a.seq = seq;
  }
}

class RateLinks {
 public:
  static constexpr int kMaxRanks = 32;  // one warp

  RateLinks() = default;
  RateLinks(const RateLinks&) = delete;
  RateLinks& operator=(const RateLinks&) = delete;
  ~RateLinks() { close(); }

  // The other ranks' mailboxes, closed (the caller has synchronised the
  // stream): before any rank frees what it exported.
  void close() {
    for (void*& p : opened_) {
      if (p) cudaIpcCloseMemHandle(p);
      p = nullptr;
    }
  }

  // This rank's mailbox for `ranks` ranks, exported, with the GPU's PCI bus
  // id (empty where it cannot be exported or the ranks are too many).
  std::vector<std::byte> link(int ranks) {
    if (ranks < 2 || ranks > kMaxRanks) return {};
    LinkBytes out{};
    try {
      box_ = DeviceArray<unsigned long long>(4 * static_cast<std::size_t>(ranks));
      SHALLOWS_CUDA_CHECK(cudaMemset(box_.get(), 0, 4 * static_cast<std::size_t>(ranks) * sizeof(unsigned long long)));
    } catch (const std::exception&) {
      return {};
    }
    if (!current_bus_id(out.bus) || cudaIpcGetMemHandle(&out.box, box_.get()) != cudaSuccess) {
      cudaGetLastError();
      return {};
    }
    std::vector<std::byte> v(sizeof out);
    std::memcpy(v.data(), &out, sizeof out);
    return v;
  }

  // Every rank's link (this rank's at `rank`): false where a mailbox cannot
  // be mapped here (a GPU out of sight or without peer access:
  // peer_access.cuh), or where two ranks share a GPU without CUDA MPS (their
  // processes would take turns on it, and a rank's wait would spin through
  // the other's turn).
  bool open(int rank, const std::vector<std::vector<std::byte>>& links, bool mps) {
    const auto n = static_cast<int>(links.size());
    std::vector<LinkBytes> in(links.size());
    for (int r = 0; r < n; ++r) {
      if (links[static_cast<std::size_t>(r)].size() != sizeof(LinkBytes)) return false;
      std::memcpy(&in[static_cast<std::size_t>(r)], links[static_cast<std::size_t>(r)].data(), sizeof(LinkBytes));
    }
    for (int r = 0; r < n && !mps; ++r)
      if (r != rank && std::string(in[static_cast<std::size_t>(r)].bus) == in[static_cast<std::size_t>(rank)].bus)
        return false;
    opened_.assign(links.size(), nullptr);
    std::vector<unsigned long long*> boxes(links.size(), nullptr);
    for (int r = 0; r < n; ++r) {
      if (r == rank) {
        boxes[static_cast<std::size_t>(r)] = box_.get();
        continue;
      }
      void* p = nullptr;
      if (!can_reach_gpu(in[static_cast<std::size_t>(r)].bus)) return false;
      if (cudaIpcOpenMemHandle(&p, in[static_cast<std::size_t>(r)].box, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
        cudaGetLastError();
        return false;
      }
      opened_[static_cast<std::size_t>(r)] = p;
      boxes[static_cast<std::size_t>(r)] = static_cast<unsigned long long*>(p);
    }
    boxes_ = DeviceArray<unsigned long long*>(boxes.size());
    boxes_.upload(boxes.data(), boxes.size());
    seq_ = DeviceArray<unsigned long long>(1);
    timed_out_ = DeviceArray<int>(1);
    SHALLOWS_CUDA_CHECK(cudaMemset(seq_.get(), 0, sizeof(unsigned long long)));
    SHALLOWS_CUDA_CHECK(cudaMemset(timed_out_.get(), 0, sizeof(int)));
    args_ = {boxes_.get(), seq_.get(), timed_out_.get(), rank, n};
    return true;
  }

  // The all-reduce of *rate (a control slot's rate bits) on stream.
  void launch(unsigned long long* rate, cudaStream_t stream) const {
    rate_allreduce_kernel<<<1, 32, 0, stream>>>(rate, args_);
    SHALLOWS_CUDA_CHECK_LAUNCH("rate_allreduce_kernel");
  }

  // Whether a peer failed to post in time (reads the device; synchronising).
  bool timed_out() const {
    int v = 0;
    timed_out_.download(&v, 1);
    return v != 0;
  }

 private:
  struct LinkBytes {
    cudaIpcMemHandle_t box;
    char bus[32];
  };
  DeviceArray<unsigned long long> box_;  // [half][sender]{bits, seq}
  DeviceArray<unsigned long long*> boxes_;
  DeviceArray<unsigned long long> seq_;
  DeviceArray<int> timed_out_;
  std::vector<void*> opened_;
  RateLinkArgs args_{};
};

} // namespace shallows::gpu
