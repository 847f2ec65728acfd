// SPDX-License-Identifier: MIT
#pragma once
// Whether another process's GPU memory, exported through CUDA IPC, may be
// mapped and written by this process's kernels (halo_kernels.cuh,
// rate_links.cuh): the memory lives on this GPU, or on another one this
// process sees and has peer access to (NVLink or PCIe peer to peer). A GPU
// out of sight or without peer access keeps the host paths.
#include <cuda_runtime.h>

#include <cstring>

namespace shallows::gpu {

// The PCI bus id of the current GPU into bus[32] (false where unknown).
inline bool current_bus_id(char (&bus)[32]) {
  std::memset(bus, 0, sizeof bus);
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetPCIBusId(bus, sizeof bus - 1, device) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return true;
}

inline bool can_reach_gpu(const char (&bus)[32]) {
  char terminated[32];
  std::memcpy(terminated, bus, sizeof terminated);
  terminated[31] = '\0';
  int own = 0, other = 0, access = 0;
  if (cudaGetDevice(&own) != cudaSuccess || cudaDeviceGetByPCIBusId(&other, terminated) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  if (other == own) return true;
  if (cudaDeviceCanAccessPeer(&access, own, other) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return access != 0;
}

} // namespace shallows::gpu
