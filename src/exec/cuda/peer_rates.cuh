// SPDX-License-Identifier: MIT
#pragma once
// The CFL rate of a distributed run all-reduced GPU to GPU: ranks whose GPUs
// can read each other's memory (one node, CUDA IPC, peer access) skip the
// host round trip of each step (fetch the rate, MPI_Allreduce, write it back,
// launch). Before each step a one-warp kernel publishes the rank's rate in its
// own mailbox and reads every peer's over NVLink; the largest is the one-rank
// rate, so dt keeps its bits.
//
// A mailbox entry is stamped with the launch number: every rank queues the
// same launches (DistributedBackend::advance makes their batches agree), and
// the entries alternate by its parity, so a rank can run at most one launch
// ahead of the slowest, and never overwrites an entry a peer still has to
// read. A peer that does not publish within the timeout (ranks out of step,
// never in a correct run) ends the wait with status kPeerLate instead of a
// hang.
#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "cuda_check.cuh"
#include "device_array.cuh"

namespace shallows::cudax {

struct RateMailbox {
  unsigned long long stamp[2];  // launch number of the entry, by its parity
  unsigned long long rate_bits[2];
};

constexpr int kMaxRatePeers = 32;  // a lane each
constexpr int kPeerLate = 2;       // Ctrl::status: a peer rank did not publish its rate in time

struct RatePeers {
  RateMailbox* box[kMaxRatePeers];
  int count;
};

__device__ inline unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One warp. rate_bits and status are the input slot's (Ctrl): its rate
// (encode_rate: monotone in the rate, kNonFinite the largest) becomes the
// largest over the ranks.
__global__ void peer_rate_kernel(unsigned long long* rate_bits, int* status, RateMailbox* own, RatePeers peers,
                                 unsigned long long stamp, unsigned long long timeout_ns) {
  using SystemWord = cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>;
  const int lane = static_cast<int>(threadIdx.x);
  const int b = static_cast<int>(stamp & 1);
  const unsigned long long mine = *rate_bits;
  if (lane == 0) {
    SystemWord(own->rate_bits[b]).store(mine, cuda::memory_order_relaxed);
    SystemWord(own->stamp[b]).store(stamp, cuda::memory_order_release);
  }
  unsigned long long best = mine;
  int late = 0;
  if (lane < peers.count) {
    RateMailbox* p = peers.box[lane];
    const unsigned long long start = global_ns();
    while (SystemWord(p->stamp[b]).load(cuda::memory_order_acquire) != stamp) {
      if (global_ns() - start > timeout_ns) {
        late = 1;
        break;
      }
      __nanosleep(32);
    }
    if (!late) best = max(best, SystemWord(p->rate_bits[b]).load(cuda::memory_order_relaxed));
  }
  for (int offset = 16; offset > 0; offset >>= 1) best = max(best, __shfl_xor_sync(0xffffffffu, best, offset));
  late = __any_sync(0xffffffffu, late);
  if (lane == 0) {
    *rate_bits = best;
    if (late) *status = kPeerLate;
  }
}

// A rank's side: its mailbox, exported as an IPC handle, and the peers'
// mailboxes opened in this process.
class PeerRateLink {
 public:
  static constexpr std::size_t kRecordBytes = sizeof(cudaIpcMemHandle_t) + sizeof(cudaUUID_t);

  PeerRateLink() = default;
  PeerRateLink(const PeerRateLink&) = delete;
  PeerRateLink& operator=(const PeerRateLink&) = delete;
  ~PeerRateLink() { close(); }

  // This rank's record (the mailbox's IPC handle, then the GPU's UUID);
  // empty where the mailbox cannot be exported.
  std::vector<std::byte> export_mailbox(int device) {
    own_ = DeviceArray<RateMailbox>(1);
    SHALLOWS_CUDA_CHECK(cudaMemset(own_.get(), 0, sizeof(RateMailbox)));
    cudaIpcMemHandle_t handle{};
    if (cudaIpcGetMemHandle(&handle, own_.get()) != cudaSuccess) {
      cudaGetLastError();
      return {};
    }
    cudaDeviceProp prop{};
    SHALLOWS_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    uuid_ = prop.uuid;
    std::vector<std::byte> record(kRecordBytes);
    std::memcpy(record.data(), &handle, sizeof handle);
    std::memcpy(record.data() + sizeof handle, &uuid_, sizeof uuid_);
    return record;
  }

  // Opens the other ranks' mailboxes; false (and nothing kept open) where one
  // cannot be read from this GPU, or sits on this GPU and same_gpu_ok is
  // false (two contexts that time-slice one GPU would spin in turn).
  bool connect(const std::vector<std::vector<std::byte>>& others, bool same_gpu_ok) {
    close();
    if (own_.size() == 0 || others.size() > static_cast<std::size_t>(kMaxRatePeers)) return false;
    for (const std::vector<std::byte>& record : others) {
      cudaIpcMemHandle_t handle{};
      cudaUUID_t uuid{};
      if (record.size() != kRecordBytes) return fail();
      std::memcpy(&handle, record.data(), sizeof handle);
      std::memcpy(&uuid, record.data() + sizeof handle, sizeof uuid);
      if (!same_gpu_ok && std::memcmp(&uuid, &uuid_, sizeof uuid) == 0) return fail();
      void* p = nullptr;
      if (cudaIpcOpenMemHandle(&p, handle, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
        cudaGetLastError();
        return fail();
      }
      peers_.box[peers_.count++] = static_cast<RateMailbox*>(p);
    }
    return true;
  }

  // Queues the exchange of the rate in the slot (rate_bits, status: Ctrl's).
  void launch(unsigned long long* rate_bits, int* status, cudaStream_t stream) {
    peer_rate_kernel<<<1, 32, 0, stream>>>(rate_bits, status, own_.get(), peers_, ++stamp_, kTimeoutNs);
    SHALLOWS_CUDA_CHECK_LAUNCH("peer_rate_kernel");
  }

  // Closes the peers' mailboxes (their owners may free them afterwards).
  void close() {
    for (int i = 0; i < peers_.count; ++i) cudaIpcCloseMemHandle(peers_.box[i]);
    peers_.count = 0;
  }

 private:
  static constexpr unsigned long long kTimeoutNs = 60'000'000'000ull;

  bool fail() {
    close();
    return false;
  }

  DeviceArray<RateMailbox> own_;
  cudaUUID_t uuid_{};
  RatePeers peers_{};
  unsigned long long stamp_ = 0;
};

} // namespace shallows::cudax
