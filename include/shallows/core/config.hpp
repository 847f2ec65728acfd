// SPDX-License-Identifier: MIT
#pragma once
// Host/device qualifiers and basic types shared by every numerics header.
// Numerics headers include only core/ and must compile with g++ and nvcc.
#include <cstdint>

#if defined(__CUDACC__)
#define SHALLOWS_HD __host__ __device__ __forceinline__
#else
#define SHALLOWS_HD inline
#endif

namespace shallows {

// Cell and edge counts can exceed 2^31 on large domains.
using index_t = std::int64_t;

enum class Precision { single_precision, double_precision };

} // namespace shallows
