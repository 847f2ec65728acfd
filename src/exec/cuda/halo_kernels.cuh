// SPDX-License-Identifier: MIT
#pragma once
// Halo rectangles of a distributed run (HaloEndpoint::pack_box) packed into and
// out of one contiguous device buffer, so that a halo crosses to the host in
// one copy: a column strip copied row by row (cudaMemcpy2D) moves a few
// bytes per row and took milliseconds per exchange. Both grid executors
// (first and third order) keep their halo boxes here.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <cstddef>
#include <utility>
#include <vector>

#include "cuda_check.cuh"
#include "device_array.cuh"
#include "peer_access.cuh"
#include "shallows/mesh/structured/grid.hpp"
#include "shallows/solver/backend.hpp"

namespace shallows::gpu {

// The fields a halo carries, of one type: the state h, hu, hv and each
// scalar's h c (Real, padded layout), or the infiltrated depth (double,
// row-major over the interior). The lagged kernel's rhs of a halo cell is
// computed again after the exchange; third order's stages start from U^n.
template <class T>
struct BoxFields {
  static constexpr int kMax = 8;  // fields per launch of box_copy_kernel
  std::vector<T*> f;
  bool padded = true;
};

// The infiltrated depths a halo carries (row-major over the interior): none
// without infiltration (F null).
inline BoxFields<double> infiltration_box_field(double* F) {
  BoxFields<double> f;
  f.padded = false;
  if (F) f.f.push_back(F);
  return f;
}

template <class T>
struct BoxLaunch {
  T* f[BoxFields<T>::kMax];
  int count;
  bool padded;
};

// pack: the fields' box cells into `packed` (field after field, each
// row-major); else the other way.
template <class T, bool pack>
__global__ void box_copy_kernel(Grid g, CellBox box, BoxLaunch<T> fields, T* __restrict__ packed) {
  const index_t bnx = box.nx();
  const index_t cells = box.cells();
  const index_t n = cells * fields.count;
  for (index_t k = blockIdx.x * index_t(blockDim.x) + threadIdx.x; k < n; k += index_t(gridDim.x) * blockDim.x) {
    const auto field = static_cast<int>(k / cells);
    const index_t c = k - field * cells;
    const index_t j = c / bnx;
    const index_t i = box.i0 + (c - j * bnx);
    const index_t at = fields.padded ? g.index(i, box.j0 + j) : (box.j0 + j) * g.nx + i;
    T* f = fields.f[0];
    for (int q = 1; q < fields.count; ++q) f = field == q ? fields.f[q] : f;  // selects: no local-memory indexing
    if (pack) {
      packed[k] = f[at];
    } else {
      f[at] = packed[k];
    }
  }
}

// A rank's halo boxes on the device: one packed buffer per box (the same
// boxes every exchange), made at its first use; the Real fields first, then
// the double ones. A side linked to a peer on the node (GpuLinks::peer_link)
// is packed straight into the peer's receive buffer (CUDA IPC: through
// NVLink between two GPUs, a copy within one GPU shared by two processes),
// and the peer's stream waits for the event recorded after the pack: no
// copy through the host and no host synchronisation.
template <class Real>
class HaloBoxes {
 public:
  HaloBoxes() = default;
  HaloBoxes(const HaloBoxes&) = delete;
  HaloBoxes& operator=(const HaloBoxes&) = delete;
  ~HaloBoxes() {
    close_peers();
    for (Link& l : links_)
      if (l.sent) cudaEventDestroy(l.sent);
  }

  // The peers' buffers and events opened here, closed (the caller has
  // synchronised the stream): before any peer frees what it exported.
  void close_peers() {
    for (Link& l : links_) {
      if (l.peer_recv) cudaIpcCloseMemHandle(l.peer_recv);
      if (l.peer_sent) cudaEventDestroy(l.peer_sent);
      l.peer_recv = nullptr;
      l.peer_sent = nullptr;
    }
  }

  // The doubles start 8-byte aligned after the Reals.
  static std::size_t bytes(const CellBox& box, std::size_t reals, std::size_t doubles) {
    const auto cells = static_cast<std::size_t>(box.cells());
    return (cells * reals * sizeof(Real) + 7) / 8 * 8 + cells * doubles * sizeof(double);
  }
  static std::size_t bytes(const CellBox& box, const BoxFields<Real>& reals, const BoxFields<double>& doubles) {
    return bytes(box, reals.f.size(), doubles.f.size());
  }

  // The box of the fields into `out` (host, bytes(...)); synchronises the stream.
  void pack(const Grid& g, const CellBox& box, const BoxFields<Real>& reals, const BoxFields<double>& doubles,
            std::byte* out, cudaStream_t stream) const {
    std::byte* packed = stage(box, reals, doubles);
    pack_into(g, box, reals, doubles, packed, stream);
    SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(out, packed, bytes(box, reals, doubles), cudaMemcpyDeviceToHost, stream));
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  // The box of the fields into `out` (device, bytes(...)), for an MPI that
  // reads GPU memory; synchronises the stream.
  void pack_on_device(const Grid& g, const CellBox& box, const BoxFields<Real>& reals,
                      const BoxFields<double>& doubles, std::byte* out, cudaStream_t stream) const {
    pack_into(g, box, reals, doubles, out, stream);
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  // `in` (device) into the box of the fields, in stream order.
  void unpack_on_device(const Grid& g, const CellBox& box, const BoxFields<Real>& reals,
                        const BoxFields<double>& doubles, const std::byte* in, cudaStream_t stream) {
    unpack_from(g, box, reals, doubles, const_cast<std::byte*>(in), stream);  // only read in this direction
  }

  // `in` into the box of the fields, in stream order: the copy reads `in`
  // until the stream gets past it.
  void unpack(const Grid& g, const CellBox& box, const BoxFields<Real>& reals, const BoxFields<double>& doubles,
              const std::byte* in, cudaStream_t stream) {
    std::byte* packed = stage(box, reals, doubles);
    SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(packed, in, bytes(box, reals, doubles), cudaMemcpyHostToDevice, stream));
    unpack_from(g, box, reals, doubles, packed, stream);
  }

  // This side's link for its peer: a receive buffer of recv_bytes and the
  // event recorded after each send, as IPC handles (empty where the device
  // or the process cannot export them).
  std::vector<std::byte> link(int side, std::size_t recv_bytes) {
    Link& l = links_[static_cast<std::size_t>(side)];
    LinkBytes out{};
    out.bytes = recv_bytes;
    try {
      if (l.recv.size() != recv_bytes) l.recv = DeviceArray<std::byte>(recv_bytes);
    } catch (const std::exception&) {
      return {};
    }
    if (!l.sent && cudaEventCreateWithFlags(&l.sent, cudaEventDisableTiming | cudaEventInterprocess) != cudaSuccess) {
      l.sent = nullptr;
      cudaGetLastError();
      return {};
    }
    if (!current_bus_id(out.bus) || cudaIpcGetMemHandle(&out.buffer, l.recv.get()) != cudaSuccess ||
        cudaIpcGetEventHandle(&out.sent, l.sent) != cudaSuccess) {
      cudaGetLastError();
      return {};
    }
    std::vector<std::byte> v(sizeof out);
    std::memcpy(v.data(), &out, sizeof out);
    return v;
  }

  // The peer's link on this side, for boxes of send_bytes: false where it
  // cannot be opened here (another node, a GPU out of sight or without peer
  // access: peer_access.cuh) or does not fit.
  bool open(int side, const std::vector<std::byte>& peer, std::size_t send_bytes) {
    Link& l = links_[static_cast<std::size_t>(side)];
    LinkBytes in{};
    if (peer.size() != sizeof in) return false;
    std::memcpy(&in, peer.data(), sizeof in);
    if (in.bytes != send_bytes || !can_reach_gpu(in.bus)) return false;
    if (cudaIpcOpenMemHandle(&l.peer_recv, in.buffer, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
      l.peer_recv = nullptr;
      cudaGetLastError();
      return false;
    }
    if (cudaIpcOpenEventHandle(&l.peer_sent, in.sent) != cudaSuccess) {
      l.peer_sent = nullptr;
      cudaIpcCloseMemHandle(l.peer_recv);
      l.peer_recv = nullptr;
      cudaGetLastError();
      return false;
    }
    return true;
  }

  // The box into the peer's buffer, then this side's event.
  void send(int side, const Grid& g, const CellBox& box, const BoxFields<Real>& reals,
            const BoxFields<double>& doubles, cudaStream_t stream) const {
    const Link& l = links_[static_cast<std::size_t>(side)];
    pack_into(g, box, reals, doubles, static_cast<std::byte*>(l.peer_recv), stream);
    SHALLOWS_CUDA_CHECK(cudaEventRecord(l.sent, stream));
  }

  // After the peer's event: its box out of this side's buffer.
  void receive(int side, const Grid& g, const CellBox& box, const BoxFields<Real>& reals,
               const BoxFields<double>& doubles, cudaStream_t stream) {
    Link& l = links_[static_cast<std::size_t>(side)];
    SHALLOWS_CUDA_CHECK(cudaStreamWaitEvent(stream, l.peer_sent, 0));
    unpack_from(g, box, reals, doubles, l.recv.get(), stream);
  }

 private:
  struct LinkBytes {
    cudaIpcMemHandle_t buffer;
    cudaIpcEventHandle_t sent;
    unsigned long long bytes;
    char bus[32];  // the GPU's PCI bus id
  };
  struct Link {
    DeviceArray<std::byte> recv;  // the peer packs its box here
    cudaEvent_t sent = nullptr;    // recorded after this rank packs into the peer's buffer
    void* peer_recv = nullptr;     // the peer's receive buffer, opened
    cudaEvent_t peer_sent = nullptr;
  };

  // The layout of a packed box, both ways: the Real fields, then the doubles.
  static void pack_into(const Grid& g, const CellBox& box, const BoxFields<Real>& reals,
                        const BoxFields<double>& doubles, std::byte* packed, cudaStream_t stream) {
    copy<Real, true>(g, box, reals, packed, stream);
    copy<double, true>(g, box, doubles, packed + bytes(box, reals.f.size(), 0), stream);
  }

  static void unpack_from(const Grid& g, const CellBox& box, const BoxFields<Real>& reals,
                          const BoxFields<double>& doubles, std::byte* packed, cudaStream_t stream) {
    copy<Real, false>(g, box, reals, packed, stream);
    copy<double, false>(g, box, doubles, packed + bytes(box, reals.f.size(), 0), stream);
  }

  std::byte* stage(const CellBox& box, const BoxFields<Real>& reals, const BoxFields<double>& doubles) const {
    for (const auto& [b, buffer] : stages_)
      if (b.i0 == box.i0 && b.j0 == box.j0 && b.i1 == box.i1 && b.j1 == box.j1) return buffer.get();
    stages_.emplace_back(box, DeviceArray<std::byte>(bytes(box, reals, doubles)));
    return stages_.back().second.get();
  }

  template <class T, bool pack>
  static void copy(const Grid& g, const CellBox& box, const BoxFields<T>& fields, std::byte* packed,
                   cudaStream_t stream) {
    constexpr int kMax = BoxFields<T>::kMax;
    const auto count = static_cast<int>(fields.f.size());
    for (int first = 0; first < count; first += kMax) {
      BoxLaunch<T> l{};
      l.count = std::min(kMax, count - first);
      l.padded = fields.padded;
      for (int q = 0; q < l.count; ++q) l.f[q] = fields.f[static_cast<std::size_t>(first + q)];
      const index_t n = box.cells() * l.count;
      const auto blocks = static_cast<unsigned>(std::min<index_t>((n + 255) / 256, 4096));
      T* out = reinterpret_cast<T*>(packed) + static_cast<index_t>(first) * box.cells();
      box_copy_kernel<T, pack><<<blocks, 256, 0, stream>>>(g, box, l, out);
      SHALLOWS_CUDA_CHECK_LAUNCH("box_copy_kernel");
    }
  }

  mutable std::vector<std::pair<CellBox, DeviceArray<std::byte>>> stages_;
  std::array<Link, 4> links_;  // by side: west, east, south, north
};

// Page-locked host memory for halo buffers (HaloEndpoint::host_buffer): a box
// crosses to and from the GPU in one DMA at full speed.
inline BoxBuffer pinned_host_buffer(std::size_t bytes) {
  void* p = nullptr;
  SHALLOWS_CUDA_CHECK(cudaMallocHost(&p, bytes));
  return BoxBuffer(static_cast<std::byte*>(p), [](std::byte* q) { cudaFreeHost(q); });
}

// GPU memory for halo buffers that a CUDA-aware MPI reads and writes
// (GpuLinks::device_buffer).
inline BoxBuffer device_box_buffer(std::size_t bytes) {
  void* p = nullptr;
  SHALLOWS_CUDA_CHECK(cudaMalloc(&p, bytes));
  return BoxBuffer(static_cast<std::byte*>(p), [](std::byte* q) { cudaFree(q); });
}

} // namespace shallows::gpu
