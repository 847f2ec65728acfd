// SPDX-License-Identifier: MIT
// Passive scalars on the CUDA grid executors (first and third order):
// agreement with the CPU executor on a dam break with wet/dry fronts, open
// and inflow sides, rain, infiltration and a source all on; a uniform
// concentration kept; without the forcing, the CPU's bits; the batched
// advance against single steps; a restart through read_state / load_state;
// in first order, the scalars' pass after the lagged kernel gives the plain
// kernels' bits.
// Every test skips where no CUDA device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "shallows/physics/scalar_transport.hpp"
#include "shallows/solver/backend.hpp"
#include "support/gpu.hpp"
#include "support/measures.hpp"
#include "support/problems.hpp"

namespace cuda_scalar_tests {

using namespace shallows;
using test_support::bitwise_equal;
using test_support::max_rel_diff;
using test_support::scalar;

BackendOptions options(const std::string& kind) {
  BackendOptions o;
  o.kind = kind;
  o.threads = 2;
  o.track_maxima = false;
  return o;
}

// A dam break onto a dry sloping bank around an inactive island; a river
// enters through the west side, the east side is open; rain with
// Green-Ampt soil and a point source. Three scalars: uniform, a square,
// and one that only the inflows bring.
Problem everything(Precision precision, Scheme scheme) {
  const auto z = [](double x, double y) {
    if (std::hypot(x - 150, y - 90) < 20) return std::numeric_limits<double>::quiet_NaN();
    return 0.004 * x + 0.002 * y;
  };
  Problem p = test_support::make_problem(61, 37, 0, 244, 0, 148, z, [](double x, double) { return x < 80 ? 2.0 : 0.0; });
  p.precision = precision;
  p.scheme = scheme;
  p.physics.n_manning = 0.025;
  p.bc(Side::west) = {BoundaryKind::inflow, 0.5};
  p.bc(Side::east) = {BoundaryKind::open, 0.0};
  p.forcing.rain.rate = TimeSeries::constant(40.0 / 3.6e6);
  p.forcing.infiltration.model = InfiltrationModel::green_ampt;
  p.forcing.infiltration.p0 = {2e-6};
  p.forcing.infiltration.p1 = {0.1};
  p.forcing.infiltration.p2 = {0.3};
  p.forcing.sources.push_back({"well", {static_cast<index_t>(20 * 61 + 10)}, TimeSeries{{0, 20}, {3.0, 0.5}}});
  PassiveScalar uniform = scalar("uniform", {0.8}, 0.8, {0.8});
  uniform.side = {0.8, 0.8, 0.8, 0.8};
  PassiveScalar square = scalar("square", {});
  for (index_t j = 0; j < p.grid.ny; ++j)
    for (index_t i = 0; i < p.grid.nx; ++i) square.c.push_back(i > 5 && i < 15 && j > 10 && j < 25 ? 4.0 : 0.5);
  PassiveScalar brought = scalar("brought", {0.0}, 0.1, {7.0});
  brought.side[static_cast<std::size_t>(Side::west)] = 2.0;
  p.scalars = {uniform, square, brought};
  return p;
}

Fields run(const Problem& p, const std::string& kind, double t_end, bool single_steps = false) {
  auto b = make_backend(p, options(kind));
  if (single_steps) {
    double t = 0;
    while (t < t_end) t += b->step(t, t_end - t);
  } else {
    EXPECT_EQ(b->advance(0, t_end, 10000000).t, t_end);
  }
  Fields f;
  b->read_state(f);
  return f;
}

class CudaScalars : public ::testing::TestWithParam<Scheme> {};

TEST_P(CudaScalars, AgreesWithTheCpuWithEverythingOn) {
  SHALLOWS_REQUIRE_GPU();
  const Problem p = everything(Precision::double_precision, GetParam());
  const Fields gpu = run(p, "cuda", 30), cpu = run(p, "cpu", 30);
  ASSERT_EQ(gpu.hc.size(), 3u);
  EXPECT_LE(max_rel_diff(gpu.h, cpu.h), 1e-12);
  for (std::size_t s = 0; s < 3; ++s) EXPECT_LE(max_rel_diff(gpu.hc[s], cpu.hc[s]), 1e-12) << p.scalars[s].name;
  // Everything brings the uniform scalar's own concentration: it stays uniform.
  for (std::size_t k = 0; k < gpu.h.size(); ++k) {
    if (std::isnan(p.z[k]) || gpu.h[k] <= 0) continue;
    EXPECT_NEAR(concentration(gpu.hc[0][k], gpu.h[k]), 0.8, 1e-13) << k;
  }
}

// Without the forcing (Green-Ampt's log may differ in the last bit between
// CUDA and libm), the GPU gives the CPU's bits: the state and every scalar,
// in both precisions, with wet/dry fronts, an inactive island, inflow and
// open sides.
TEST_P(CudaScalars, WithoutForcingTheScalarsAreTheCpusBits) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision precision : {Precision::double_precision, Precision::single_precision}) {
    Problem p = everything(precision, GetParam());
    p.forcing = {};
    for (PassiveScalar& s : p.scalars) s.sources.clear();
    const Fields gpu = run(p, "cuda", 12), cpu = run(p, "cpu", 12);
    const char* what = precision == Precision::single_precision ? "float" : "double";
    EXPECT_TRUE(bitwise_equal(gpu.h, cpu.h)) << what;
    EXPECT_TRUE(bitwise_equal(gpu.hu, cpu.hu)) << what;
    ASSERT_EQ(gpu.hc.size(), 3u) << what;
    for (std::size_t s = 0; s < 3; ++s) {
      EXPECT_TRUE(bitwise_equal(gpu.hc[s], cpu.hc[s])) << what << " " << p.scalars[s].name;
    }
    EXPECT_GT(max_rel_diff(gpu.hc[1], run(p, "cpu", 0.5).hc[1]), 1e-3) << what;  // the square has moved
  }
}

TEST_P(CudaScalars, FloatAgreesWithTheCpu) {
  SHALLOWS_REQUIRE_GPU();
  const Problem p = everything(Precision::single_precision, GetParam());
  const Fields gpu = run(p, "cuda", 10), cpu = run(p, "cpu", 10);
  for (std::size_t s = 0; s < 3; ++s) EXPECT_LE(max_rel_diff(gpu.hc[s], cpu.hc[s]), 1e-4) << p.scalars[s].name;
}

TEST_P(CudaScalars, BatchedAdvanceEqualsSingleSteps) {
  SHALLOWS_REQUIRE_GPU();
  const Problem p = everything(Precision::double_precision, GetParam());
  const Fields batched = run(p, "cuda", 12), single = run(p, "cuda", 12, true);
  for (std::size_t s = 0; s < 3; ++s) EXPECT_EQ(batched.hc[s], single.hc[s]) << p.scalars[s].name;
}

// A state read out and loaded into a new executor continues with the same bits.
TEST_P(CudaScalars, RestartContinuesBitForBit) {
  SHALLOWS_REQUIRE_GPU();
  Problem p = everything(Precision::double_precision, GetParam());
  p.forcing = {};  // the forcing's own state has its tests (test_cuda_forcing)
  for (PassiveScalar& s : p.scalars) s.sources.clear();  // no source left to bring them
  auto straight = make_backend(p, options("cuda"));
  EXPECT_EQ(straight->advance(0, 5, 10000000).t, 5);
  Fields half;
  straight->read_state(half);
  EXPECT_EQ(straight->advance(5, 12, 10000000).t, 12);
  auto resumed = make_backend(p, options("cuda"));
  resumed->load_state(half);
  EXPECT_EQ(resumed->advance(5, 12, 10000000).t, 12);
  Fields a, b;
  straight->read_state(a);
  resumed->read_state(b);
  for (std::size_t s = 0; s < 3; ++s) EXPECT_EQ(a.hc[s], b.hc[s]) << p.scalars[s].name;
}

#ifdef SHALLOWS_HAVE_CUDA
// First order: the scalars' pass after the lagged kernel gives the plain
// kernels' bits (the state, every scalar, the maxima, the forcing's
// accounts), in both precisions: everything() (rain, Green-Ampt, a source,
// inflow and open sides), rain scaled per cell with initial + constant
// loss, rain from a stack of frames, and no forcing.
TEST(CudaScalarsLagged, TransportsAsThePlainKernels) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision precision : {Precision::double_precision, Precision::single_precision}) {
    for (int variant = 0; variant < 4; ++variant) {
      Problem p = everything(precision, Scheme::roe1);
      const auto cells = static_cast<std::size_t>(p.grid.cells());
      std::string what = precision == Precision::single_precision ? "float" : "double";
      if (variant == 1) {
        what += ", rain scaled per cell, initial + constant";
        p.forcing.rain.scale.resize(cells);
        for (std::size_t c = 0; c < cells; ++c) p.forcing.rain.scale[c] = 0.5 + 0.4 * std::sin(0.05 * double(c));
        p.forcing.infiltration.model = InfiltrationModel::initial_constant;
        p.forcing.infiltration.p0 = {0.002};
        p.forcing.infiltration.p1 = {2e-5};
        p.forcing.infiltration.p2 = {};
      } else if (variant == 2) {
        what += ", rain stack";
        Rain& rain = p.forcing.rain;
        rain.rate = {};
        rain.frame_times = {0.0, 3.3, 7.1};
        rain.frames.resize(3 * cells);
        for (std::size_t k = 0; k < rain.frames.size(); ++k) rain.frames[k] = 1e-5 * (1 + std::sin(0.13 * double(k)));
      } else if (variant == 3) {
        what += ", no forcing";
        p.forcing = {};
        for (PassiveScalar& sc : p.scalars) sc.sources.clear();
      } else {
        what += ", everything";
      }
      BackendOptions o = options("cuda");
      o.track_maxima = true;
      const test_support::KernelPair k = test_support::lagged_and_plain(p, o);
      const auto& [lagged, plain] = k;
      ASSERT_EQ(lagged->stats().kernel, "lagged") << what;
      ASSERT_EQ(plain->stats().kernel, "plain") << what;
      const double t_end = 24;
      const AdvanceResult a = lagged->advance(0.0, t_end, 1 << 30), b = plain->advance(0.0, t_end, 1 << 30);
      EXPECT_EQ(a.steps, b.steps) << what;
      EXPECT_GE(a.steps, 50) << what;
      test_support::expect_same_bits(k, what);
      Fields fa;
      lagged->read_state(fa);
      ASSERT_EQ(fa.hc.size(), 3u) << what;
      // The square has moved, and the inflows brought the third scalar.
      EXPECT_GT(max_rel_diff(fa.hc[1], run(p, "cpu", 0.5).hc[1]), 1e-3) << what;
      EXPECT_GT(*std::max_element(fa.hc[2].begin(), fa.hc[2].end()), 0.0) << what;
      ForcingState sa, sb;
      lagged->read_forcing_state(sa);
      plain->read_forcing_state(sb);
      EXPECT_EQ(sa.infiltration, sb.infiltration) << what;
      EXPECT_EQ(sa.sources, sb.sources) << what;
    }
  }
}
#endif

INSTANTIATE_TEST_SUITE_P(Schemes, CudaScalars, ::testing::Values(Scheme::roe1, Scheme::roe3),
                         [](const ::testing::TestParamInfo<Scheme>& param_info) {
                           return std::string(param_info.param == Scheme::roe1 ? "roe1" : "roe3");
                         });

}  // namespace
