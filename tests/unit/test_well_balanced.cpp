// SPDX-License-Identifier: MIT
// C-property (S003-T1): a lake at rest over a rough bottom, with and without
// dry islands, stays at rest to round-off after 1000 steps, in both precisions.
#include <gtest/gtest.h>

#include <cmath>

#include "shallows/solver/simulation.hpp"
#include "support/measures.hpp"
#include "support/problems.hpp"

namespace {

using namespace shallows;

using Deviation = test_support::LakeDeviation;

Deviation run_lake(bool islands, Precision precision) {
  const Problem p = test_support::lake_at_rest(islands, precision);
  Simulation sim(p, BackendOptions{"cpu", 2, false, 0.01});
  sim.advance_steps(1000);
  return test_support::lake_deviation(p, sim.state());
}

TEST(WellBalanced, LakeAtRestRandomBottomDouble) {
  const Deviation d = run_lake(false, Precision::double_precision);
  EXPECT_LE(d.eta, 1e-12);
  EXPECT_LE(d.velocity, 1e-12);
}

TEST(WellBalanced, LakeAtRestWithDryIslandsDouble) {
  const Deviation d = run_lake(true, Precision::double_precision);
  EXPECT_LE(d.eta, 1e-12);
  EXPECT_LE(d.velocity, 1e-12);
  EXPECT_EQ(d.island_depth, 0.0);
}

TEST(WellBalanced, LakeAtRestRandomBottomFloat) {
  const Deviation d = run_lake(false, Precision::single_precision);
  EXPECT_LE(d.eta, 1e-5);
  EXPECT_LE(d.velocity, 1e-5);
}

TEST(WellBalanced, LakeAtRestWithDryIslandsFloat) {
  const Deviation d = run_lake(true, Precision::single_precision);
  EXPECT_LE(d.eta, 1e-5);
  EXPECT_LE(d.velocity, 1e-5);
  EXPECT_EQ(d.island_depth, 0.0);
}

TEST(WellBalanced, TheLakeHasIslandsAndRealRelief) {
  // Guards the test problem itself: dry cells exist and the bed is rough.
  const Problem p = test_support::lake_at_rest(true, Precision::double_precision);
  std::size_t dry = 0;
  for (double h : p.h) dry += h == 0;
  EXPECT_GT(dry, 50u);
  double jump = 0;
  for (std::size_t k = 1; k < p.z.size(); ++k) jump = std::max(jump, std::abs(p.z[k] - p.z[k - 1]));
  EXPECT_GT(jump, 0.05);
}

} // namespace
