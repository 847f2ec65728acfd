// SPDX-License-Identifier: MIT
#pragma once
// Owning device allocation (plain cudaMalloc; free memory is checked by the
// caller before it allocates), shared by the CUDA executors.
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "cuda_check.cuh"

namespace shallows {

namespace gpu {
template <class T>
__global__ void fill_kernel(T* p, std::size_t n, T value) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = value;
}
} // namespace gpu

template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t n) : n_(n) {
    if (n_ > 0) SHALLOWS_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&p_), n_ * sizeof(T)));
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept : p_(o.p_), n_(o.n_) {
    o.p_ = nullptr;
    o.n_ = 0;
  }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  ~DeviceArray() {
    if (p_) cudaFree(p_);
  }
  T* get() const { return p_; }
  std::size_t size() const { return n_; }
  // Every element set to value (its bits as the host has them), on stream.
  void fill_async(T value, cudaStream_t stream) {
    if (n_ == 0) return;
    const unsigned blocks = static_cast<unsigned>(n_ / 256 + 1 < 4096 ? n_ / 256 + 1 : 4096);
    gpu::fill_kernel<T><<<blocks, 256, 0, stream>>>(p_, n_, value);
    SHALLOWS_CUDA_CHECK(cudaGetLastError());
  }
  void upload(const T* src, std::size_t n) {
    if (n > 0) SHALLOWS_CUDA_CHECK(cudaMemcpy(p_, src, n * sizeof(T), cudaMemcpyHostToDevice));
  }
  void download(T* dst, std::size_t n) const {
    if (n > 0) SHALLOWS_CUDA_CHECK(cudaMemcpy(dst, p_, n * sizeof(T), cudaMemcpyDeviceToHost));
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

} // namespace shallows
