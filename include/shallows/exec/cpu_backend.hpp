// SPDX-License-Identifier: MIT
#pragma once
#include <memory>

#include "shallows/solver/backend.hpp"

namespace shallows {

// Serial (threads = 1) or OpenMP executor for Cartesian grids.
std::unique_ptr<Backend> make_cpu_backend(const Problem& problem, const BackendOptions& options);

// Serial or OpenMP executor for unstructured meshes (first order).
std::unique_ptr<Backend> make_mesh_cpu_backend(const Problem& problem, const BackendOptions& options);

} // namespace shallows
