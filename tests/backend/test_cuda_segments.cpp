// SPDX-License-Identifier: MIT
// Boundary segments (Problem::segments) on the CUDA grid executors, first
// and third order: agreement with the CPU executor on a basin with level
// (constant and a stage series), open and wall stretches beside the sides'
// own conditions, the water through the sides, and a scalar entering
// through a level segment. Every test skips where no CUDA device is
// present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "shallows/solver/backend.hpp"
#include "support/gpu.hpp"
#include "support/measures.hpp"
#include "support/problems.hpp"

namespace cuda_segment_tests {

using namespace shallows;
using test_support::max_rel_diff;
using test_support::segment;

// A basin 48 x 36 cells of 5 m on a sloping bed, wet on its lower part:
// a tide on part of the west side, an outlet on the east side, a walled
// stretch of the open north side, a constant level on part of the south.
Problem basin(Scheme scheme, Precision precision) {
  Problem p = test_support::make_problem(48, 36, 0, 240, 0, 180,
                                         [](double x, double y) { return -1 + 0.004 * x + 0.002 * y; },
                                         [](double, double) { return 0.2; });
  p.scheme = scheme;
  p.precision = precision;
  p.physics.n_manning = 0.025;
  p.bc(Side::north) = {BoundaryKind::open, 0.0};
  p.segments.push_back(segment(Side::west, 8, 20, BoundaryKind::level, 0.0, TimeSeries{{0, 30, 60}, {0.2, 0.6, 0.4}}));
  p.segments.push_back(segment(Side::east, 3, 9, BoundaryKind::open, 0.0));
  p.segments.push_back(segment(Side::north, 0, 30, BoundaryKind::wall, 0.0));
  p.segments.push_back(segment(Side::south, 10, 14, BoundaryKind::level, 0.35));
  return p;
}

struct Outcome {
  Fields f;
  BoundaryFlow flow;
};

Outcome run(const Problem& p, const std::string& kind, double t_end) {
  BackendOptions o;
  o.kind = kind;
  o.threads = 2;
  o.track_maxima = false;
  auto b = make_backend(p, o);
  EXPECT_EQ(b->advance(0, t_end, 10000000).t, t_end);
  Outcome r;
  b->read_state(r.f);
  r.flow = b->boundary_flow();
  return r;
}

TEST(CudaSegments, AgreeWithTheCpu) {
  SHALLOWS_REQUIRE_GPU();
  for (Scheme scheme : {Scheme::roe1, Scheme::roe3}) {
    const Problem p = basin(scheme, Precision::double_precision);
    const Outcome gpu = run(p, "cuda", 60), cpu = run(p, "cpu", 60);
    const char* name = scheme == Scheme::roe1 ? "roe1" : "roe3";
    EXPECT_LE(max_rel_diff(gpu.f.h, cpu.f.h), 1e-12) << name;
    EXPECT_LE(max_rel_diff(gpu.f.hu, cpu.f.hu), 1e-11) << name;
    EXPECT_LE(max_rel_diff(gpu.f.hv, cpu.f.hv), 1e-11) << name;
    // The sides' account: summed in another order on the GPU, equal to round-off.
    ASSERT_TRUE(gpu.flow.kept()) << name;
    ASSERT_TRUE(cpu.flow.kept()) << name;
    std::printf("  %s: in %.15e / %.15e, out %.15e / %.15e m^3\n", name, gpu.flow.in, cpu.flow.in, gpu.flow.out,
                cpu.flow.out);
    EXPECT_NEAR(gpu.flow.in, cpu.flow.in, 1e-12 * cpu.flow.in) << name;
    EXPECT_NEAR(gpu.flow.out, cpu.flow.out, 1e-12 * cpu.flow.out + 1e-12) << name;
    EXPECT_GT(cpu.flow.in, 0.0) << name;
    EXPECT_GT(cpu.flow.out, 0.0) << name;
  }
}

TEST(CudaSegments, FloatAgreesWithTheCpu) {
  SHALLOWS_REQUIRE_GPU();
  const Problem p = basin(Scheme::roe1, Precision::single_precision);
  const Outcome gpu = run(p, "cuda", 30), cpu = run(p, "cpu", 30);
  EXPECT_LE(max_rel_diff(gpu.f.h, cpu.f.h), 1e-4);
}

// A scalar enters with the tide through the west segment at its own
// concentration; the GPU and the CPU agree, in both schemes.
TEST(CudaSegments, ScalarThroughALevelSegment) {
  SHALLOWS_REQUIRE_GPU();
  for (Scheme scheme : {Scheme::roe1, Scheme::roe3}) {
    Problem p = basin(scheme, Precision::double_precision);
    PassiveScalar salt;
    salt.name = "salt";
    salt.c = {0.5};
    salt.segments = {35.0, 0.0, 0.0, 10.0};
    p.scalars = {salt};
    const Outcome gpu = run(p, "cuda", 60), cpu = run(p, "cpu", 60);
    const char* name = scheme == Scheme::roe1 ? "roe1" : "roe3";
    ASSERT_EQ(gpu.f.hc.size(), 1u) << name;
    EXPECT_LE(max_rel_diff(gpu.f.hc[0], cpu.f.hc[0]), 1e-12) << name;
    EXPECT_GT(*std::max_element(cpu.f.hc[0].begin(), cpu.f.hc[0].end()), 0.5 * 0.6) << name;  // the tide brought salt
  }
}

}  // namespace
