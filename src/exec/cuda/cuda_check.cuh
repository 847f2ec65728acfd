// SPDX-License-Identifier: MIT
#pragma once
// Checked CUDA calls: every runtime call goes through SHALLOWS_CUDA_CHECK, and
// a failure throws with the call, the device and the runtime's message.
#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace shallows::gpu {

// "device 0 (NVIDIA H100 80GB HBM3)", or "device ?" where even that fails.
std::string device_label();

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);

inline void check(cudaError_t err, const char* call, const char* file, int line) {
  if (err != cudaSuccess) throw_cuda_error(err, call, file, line);
}

// Checks free device memory before an allocation of `bytes` for `what`;
// throws with the amount needed and the amount free.
void require_free_memory(std::size_t bytes, const std::string& what);

} // namespace shallows::gpu

#define SHALLOWS_CUDA_CHECK(call) ::shallows::gpu::check((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch-configuration errors show at once, faults in
// the kernel at the next synchronising call (which is checked too).
#define SHALLOWS_CUDA_CHECK_LAUNCH(name) ::shallows::gpu::check(cudaGetLastError(), "launch of " name, __FILE__, __LINE__)
