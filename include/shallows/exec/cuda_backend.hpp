// SPDX-License-Identifier: MIT
#pragma once
// Declared in every build; defined only where the CUDA backend is compiled
// (SHALLOWS_HAVE_CUDA).
#include <memory>

#include "shallows/solver/backend.hpp"

namespace shallows {

std::unique_ptr<Backend> make_cuda_backend(const Problem& problem, const BackendOptions& options);

// Number of CUDA devices the runtime sees (0 when there is no driver or GPU).
int cuda_device_count();

} // namespace shallows
