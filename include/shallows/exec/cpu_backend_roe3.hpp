// SPDX-License-Identifier: MIT
#pragma once
#include <memory>

#include "shallows/solver/backend.hpp"

namespace shallows {

// Serial (threads = 1) or OpenMP executor of the third-order scheme (seed 003:
// compact reconstruction, SSP-RK3) on Cartesian grids; problem.scheme is not
// consulted. Bit-identical results for any thread count.
std::unique_ptr<Backend> make_cpu_roe3_backend(const Problem& problem, const BackendOptions& options);

} // namespace shallows
