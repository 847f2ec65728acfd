// SPDX-License-Identifier: MIT
#pragma once
// The GPU tests skip where no CUDA device is present (or the build has no
// CUDA backend); tools/gpu-check.sh checks that they do run on a GPU machine.
#include <gtest/gtest.h>

#include "shallows/solver/backend.hpp"

#define SHALLOWS_REQUIRE_GPU()                                                                        \
  do {                                                                                                \
    if (!shallows::cuda_available())                                                                  \
      GTEST_SKIP() << "no CUDA device (or a build without CUDA): GPU test skipped";                   \
  } while (0)

#ifdef SHALLOWS_HAVE_CUDA
#include <memory>

#include "shallows/exec/cuda_backend.hpp"

namespace shallows::test_support {

// A first-order problem on the CUDA executor twice: on its default (lagged)
// kernel and on the plain kernels, the reference the lagged one is held to.
struct KernelPair {
  std::unique_ptr<CudaBackend> lagged, plain;
};

inline KernelPair lagged_and_plain(const Problem& p, const BackendOptions& o) {
  CudaOptions plain_kernels;
  plain_kernels.kernel = "plain";
  return {make_cuda_backend(p, o, CudaOptions{}), make_cuda_backend(p, o, plain_kernels)};
}

}  // namespace shallows::test_support
#endif
