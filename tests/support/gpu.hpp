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
