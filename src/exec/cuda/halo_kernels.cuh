// SPDX-License-Identifier: MIT
#pragma once
// Halo rectangles of a distributed run (Backend::pack_box) packed into and
// out of one contiguous device buffer, so that a halo crosses to the host in
// one copy: a column strip copied row by row (cudaMemcpy2D) moves a few
// bytes per row and took milliseconds per exchange. Both grid executors
// (first and third order) keep their halo boxes here.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "cuda_check.cuh"
#include "device_array.cuh"
#include "shallows/mesh/structured/grid.hpp"
#include "shallows/solver/backend.hpp"

namespace shallows::cudax {

// The padded fields a halo carries: the state h, hu, hv (the lagged
// kernel's rhs of a halo cell is computed again after the exchange; third
// order's stages start from the state).
template <class Real>
struct BoxFields {
  Real* f[3];
};

// pack: fields' box cells into `packed` (field after field, each row-major);
// else the other way.
template <class Real, bool pack>
__global__ void box_copy_kernel(Grid g, CellBox box, BoxFields<Real> fields, Real* __restrict__ packed) {
  const index_t bnx = box.nx();
  const index_t cells = box.cells();
  const index_t n = cells * 3;
  for (index_t k = blockIdx.x * index_t(blockDim.x) + threadIdx.x; k < n; k += index_t(gridDim.x) * blockDim.x) {
    const auto field = static_cast<int>(k / cells);
    const index_t c = k - field * cells;
    const index_t j = c / bnx;
    const index_t at = g.index(box.i0 + (c - j * bnx), box.j0 + j);
    Real* f = fields.f[0];
    f = field == 1 ? fields.f[1] : f;  // selects: no local-memory indexing of the parameter
    f = field == 2 ? fields.f[2] : f;
    if (pack) {
      packed[k] = f[at];
    } else {
      f[at] = packed[k];
    }
  }
}

// A rank's halo boxes on the device: one packed buffer per box (the same
// boxes every exchange), made at its first use.
template <class Real>
class HaloBoxes {
 public:
  static std::size_t bytes(const CellBox& box) { return 3 * static_cast<std::size_t>(box.cells()) * sizeof(Real); }

  // The box of `fields` into `out` (host, bytes(box)); synchronises the stream.
  void pack(const Grid& g, const CellBox& box, BoxFields<Real> fields, std::byte* out, cudaStream_t stream) const {
    Real* packed = stage(box);
    copy<true>(g, box, fields, packed, stream);
    SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(out, packed, bytes(box), cudaMemcpyDeviceToHost, stream));
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  // `in` into the box of `fields`, in stream order: the copy reads `in`
  // until the stream gets past it.
  void unpack(const Grid& g, const CellBox& box, BoxFields<Real> fields, const std::byte* in, cudaStream_t stream) {
    Real* packed = stage(box);
    SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(packed, in, bytes(box), cudaMemcpyHostToDevice, stream));
    copy<false>(g, box, fields, packed, stream);
  }

 private:
  Real* stage(const CellBox& box) const {
    for (const auto& [b, buffer] : stages_)
      if (b.i0 == box.i0 && b.j0 == box.j0 && b.i1 == box.i1 && b.j1 == box.j1) return buffer.get();
    stages_.emplace_back(box, DeviceArray<Real>(3 * static_cast<std::size_t>(box.cells())));
    return stages_.back().second.get();
  }

  template <bool pack>
  static void copy(const Grid& g, const CellBox& box, BoxFields<Real> fields, Real* packed, cudaStream_t stream) {
    const index_t n = box.cells() * 3;
    const auto blocks = static_cast<unsigned>(std::min<index_t>((n + 255) / 256, 4096));
    box_copy_kernel<Real, pack><<<blocks, 256, 0, stream>>>(g, box, fields, packed);
    SHALLOWS_CUDA_CHECK_LAUNCH("box_copy_kernel");
  }

  mutable std::vector<std::pair<CellBox, DeviceArray<Real>>> stages_;
};

// Page-locked host memory for halo buffers (Backend::host_buffer): a box
// crosses to and from the GPU in one DMA at full speed.
inline Backend::HostBuffer pinned_host_buffer(std::size_t bytes) {
  void* p = nullptr;
  SHALLOWS_CUDA_CHECK(cudaMallocHost(&p, bytes));
  return Backend::HostBuffer(static_cast<std::byte*>(p), [](std::byte* q) { cudaFreeHost(q); });
}

} // namespace shallows::cudax
