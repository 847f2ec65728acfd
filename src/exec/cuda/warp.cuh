// SPDX-License-Identifier: MIT
#pragma once
// Warp shuffles of the numerical core's value types, shared by the CUDA
// kernels: a march kernel's lane gets its east neighbour's values with
// shfl_down(x, 1) and its west neighbour's with shfl_up(x, 1).
#include <cuda_runtime.h>

#include "shallows/core/state.hpp"
#include "shallows/physics/riemann/roe.hpp"

namespace shallows::gpu {

constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ float shfl_down(float v, int d) { return __shfl_down_sync(kFullMask, v, d); }
__device__ __forceinline__ double shfl_down(double v, int d) { return __shfl_down_sync(kFullMask, v, d); }
__device__ __forceinline__ float shfl_up(float v, int d) { return __shfl_up_sync(kFullMask, v, d); }
__device__ __forceinline__ double shfl_up(double v, int d) { return __shfl_up_sync(kFullMask, v, d); }

// *target += the sum of v over the warp, with one atomic per warp, and none
// where every lane's v is 0: the positivity account (clamp gains are rare,
// so the common path is one vote). Every lane of the warp must call it.
__device__ __forceinline__ void warp_add_nonzero(double* target, double v) {
  if (!__any_sync(kFullMask, v != 0.0)) return;
  for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(kFullMask, v, d);
  if ((threadIdx.x & 31u) == 0) atomicAdd(target, v);
}

// Appends item to list where keep is set, with one atomic on *count per warp:
// the places follow the lanes within a warp, the warps' order is the atomics'
// (it varies from run to run; the lists' users do not depend on it). Every
// lane of the warp must call it.
__device__ __forceinline__ void warp_append(unsigned* list, unsigned* count, bool keep, unsigned item) {
  const unsigned ballot = __ballot_sync(kFullMask, keep);
  if (ballot == 0) return;
  const unsigned lane = threadIdx.x & 31u;
  unsigned base = 0;
  if (lane == 0) base = atomicAdd(count, static_cast<unsigned>(__popc(ballot)));
  base = __shfl_sync(kFullMask, base, 0);
  if (keep) list[base + static_cast<unsigned>(__popc(ballot & ((1u << lane) - 1u)))] = item;
}

template <class Real>
__device__ __forceinline__ State<Real> shfl_down(State<Real> s, int d) {
  return {shfl_down(s.h, d), shfl_down(s.hu, d), shfl_down(s.hv, d)};
}
template <class Real>
__device__ __forceinline__ State<Real> shfl_up(State<Real> s, int d) {
  return {shfl_up(s.h, d), shfl_up(s.hu, d), shfl_up(s.hv, d)};
}
template <class Real>
__device__ __forceinline__ CellPrimitive<Real> shfl_down(const CellPrimitive<Real>& q, int d) {
  return {shfl_down(q.h, d), shfl_down(q.hu, d), shfl_down(q.hv, d),     shfl_down(q.z, d),
          shfl_down(q.u, d), shfl_down(q.v, d),  shfl_down(q.sqrt_h, d), shfl_down(q.c, d)};
}

} // namespace shallows::gpu
