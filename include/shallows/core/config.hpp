// SPDX-License-Identifier: MIT
#pragma once
// Host/device qualifiers and basic types shared by every numerics header.
// Numerics headers include only core/ and must compile with g++ and nvcc.
#include <cstdint>

#if defined(__CUDACC__)
#define SHALLOWS_HD __host__ __device__ __forceinline__
#elif defined(__GNUC__)
// Inlined even when large: an edge function called per edge costs its
// argument passing and keeps the loop from optimising across edges.
#define SHALLOWS_HD inline __attribute__((always_inline))
#else
#define SHALLOWS_HD inline
#endif

namespace shallows {

// Cell and edge counts can exceed 2^31 on large domains.
using index_t = std::int64_t;

enum class Precision { single_precision, double_precision };

} // namespace shallows
