// SPDX-License-Identifier: MIT
// The positivity account on the GPU: every CUDA executor (grids roe1 in both
// kernel designs, roe3, meshes) sums the same clamp gains as the CPU, to
// round-off (the order of the atomics differs), and the walled box's volume
// changes by that account. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "shallows/exec/cuda_backend.hpp"
#include "shallows/solver/mass_balance.hpp"
#include "shallows/solver/simulation.hpp"
#include "support/positivity.hpp"

#ifndef SHALLOWS_HAVE_CUDA
TEST(GpuPositivity, NotBuilt) { GTEST_SKIP() << "this build has no CUDA backend: GPU tests skipped"; }
#else

namespace {

using namespace shallows;

struct Account {
  double v0, v1, gained;
};

Account run(const Problem& p, const std::string& kind, const std::string& mesh_loop = "auto") {
  BackendOptions o;
  o.kind = kind;
  o.threads = 2;
  o.track_maxima = false;
  o.mesh_loop = mesh_loop;
  Simulation sim(p, o);
  Account a{sim.volume(), 0, 0};
  sim.advance_to(p.t_end);
  a.v1 = sim.volume();
  a.gained = sim.backend().positivity_volume();
  return a;
}

// First order: the GPU's states are the CPU's bit for bit, so its gains are
// the same, summed in another order (float: per lane in float first). Third
// order agrees to round-off only, which a flow at 1000 m/s amplifies.
void expect_same_account(const Problem& p, const std::string& what) {
  const bool single = p.precision == Precision::single_precision;
  const bool exact_states = p.scheme == Scheme::roe1;
  const Account cpu = run(p, "cpu");
  const Account gpu = run(p, "cuda");
  ASSERT_GT(cpu.gained, 0.0) << what;
  const double tolerance = exact_states ? (single ? 1e-5 : 1e-9) : (single ? 5e-2 : 1e-6);
  EXPECT_LE(std::abs(gpu.gained - cpu.gained) / cpu.gained, tolerance) << what;
  const MassBalance b = mass_balance(p, gpu.v0, gpu.v1, gpu.gained);
  EXPECT_TRUE(b.ok) << what << ": residual " << b.relative_residual;
  EXPECT_LE(std::abs(b.relative_residual), single ? 1e-5 : 1e-13) << what;
}

class GpuPositivity : public ::testing::TestWithParam<Precision> {};

TEST_P(GpuPositivity, GridRoe1) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device (or a build without CUDA): GPU test skipped";
  expect_same_account(test_support::fast_box_grid(40, 20, Scheme::roe1, GetParam()), "roe1");
}

// The reference kernel design (one thread per cell) sums its gains too.
TEST_P(GpuPositivity, GridRoe1PlainKernel) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device (or a build without CUDA): GPU test skipped";
  const Problem p = test_support::fast_box_grid(40, 20, Scheme::roe1, GetParam());
  const Account cpu = run(p, "cpu");
  BackendOptions o;
  o.kind = "cuda";
  o.track_maxima = false;
  CudaOptions co;
  co.kernel = "plain";
  const auto b = make_cuda_backend(p, o, co);
  for (double t = 0; t < p.t_end;) t = b->advance(t, p.t_end, 1000).t;
  EXPECT_LE(std::abs(b->positivity_volume() - cpu.gained) / cpu.gained,
            GetParam() == Precision::single_precision ? 1e-5 : 1e-9);
  const MassBalance m = mass_balance(p, cpu.v0, b->volume(), b->positivity_volume());
  EXPECT_TRUE(m.ok) << "residual " << m.relative_residual;
}

TEST_P(GpuPositivity, GridRoe3) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device (or a build without CUDA): GPU test skipped";
  expect_same_account(test_support::fast_box_grid(40, 20, Scheme::roe3, GetParam()), "roe3");
}

TEST_P(GpuPositivity, Mesh) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device (or a build without CUDA): GPU test skipped";
  expect_same_account(test_support::fast_box_mesh(20, 10, GetParam()), "mesh");
}

// A short run of every executor where clamps act, for compute-sanitizer
// (tools/gpu-check.sh runs the CudaSanitizer.* tests): the warp votes and
// atomics of the account.
TEST(CudaSanitizer, PositivityAccountOfEveryExecutor) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device (or a build without CUDA): GPU test skipped";
  for (Precision prec : {Precision::double_precision, Precision::single_precision}) {
    for (const Problem& p : {test_support::fast_box_grid(12, 6, Scheme::roe1, prec),
                             test_support::fast_box_grid(12, 6, Scheme::roe3, prec),
                             test_support::fast_box_mesh(6, 3, prec)}) {
      BackendOptions o;
      o.kind = "cuda";
      const auto b = make_backend(p, o);
      b->advance(0.0, p.t_end, 1 << 30);
      EXPECT_GE(b->positivity_volume(), 0.0);
    }
    BackendOptions o;
    o.kind = "cuda";
    CudaOptions co;
    co.kernel = "plain";
    const auto plain = make_cuda_backend(test_support::fast_box_grid(12, 6, Scheme::roe1, prec), o, co);
    plain->advance(0.0, 0.2, 1 << 30);
    EXPECT_GE(plain->positivity_volume(), 0.0);
  }
}

std::string precision_name(const ::testing::TestParamInfo<Precision>& info) {
  return info.param == Precision::single_precision ? "float" : "double";
}

INSTANTIATE_TEST_SUITE_P(Precisions, GpuPositivity,
                         ::testing::Values(Precision::double_precision, Precision::single_precision),
                         precision_name);

} // namespace

#endif  // SHALLOWS_HAVE_CUDA
