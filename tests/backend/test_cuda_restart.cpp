// SPDX-License-Identifier: MIT
// Checkpoint and restart on the CUDA executors, through the command line: a
// run killed with SIGKILL after a checkpoint and restarted leaves every output
// file byte for byte as the uninterrupted GPU run does (first order with
// Manning friction, third order, a mesh; float and double). The checkpoint
// pauses the batched device time loop at other steps than the uninterrupted
// run's batches, so these tests also show that batch boundaries do not
// change results. Every test skips where no CUDA device is present.
#include <gtest/gtest.h>

#include "shallows/solver/backend.hpp"
#include "support/gpu.hpp"
#include "support/restart_runs.hpp"

namespace {

using namespace shallows::test_support;

const std::string kCuda = "--backend cuda --set physics.manning=0.02 ";

TEST(CudaRestart, GridRoe1FloatAndDouble) {
  SHALLOWS_REQUIRE_GPU();
  kill_and_restart({"cuda-roe1-double", kGrid, kCuda + "--set time.end=3", 2.2, 1.0});
  kill_and_restart({"cuda-roe1-float", kGrid, kCuda + "--precision float --set time.end=3", 1.6, 0.7});
}

TEST(CudaRestart, GridRoe3FloatAndDouble) {
  SHALLOWS_REQUIRE_GPU();
  kill_and_restart({"cuda-roe3-double", kGrid, kCuda + "--set numerics.scheme=roe3 --set time.end=1", 0.7, 0.3});
  kill_and_restart(
      {"cuda-roe3-float", kGrid, kCuda + "--precision float --set numerics.scheme=roe3 --set time.end=1", 0.6, 0.25});
}

TEST(CudaRestart, MeshFloatAndDouble) {
  SHALLOWS_REQUIRE_GPU();
  kill_and_restart({"cuda-mesh-double", kMesh, kCuda + "--set time.end=6 --set time.output_every=2", 4.5, 3.0});
  kill_and_restart(
      {"cuda-mesh-float", kMesh, kCuda + "--precision float --set time.end=6 --set time.output_every=2", 4.5, 3.0});
}

} // namespace
