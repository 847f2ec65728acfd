// SPDX-License-Identifier: MIT
// Wet/dry fronts on sloping beds: water released into a V-shaped valley runs
// up and down slopes of 1:20, 1:5 and 1:1; mass is conserved to round-off
// (no depth is ever clamped), depth stays non-negative, and a lake at rest in
// the valley keeps its dry banks dry.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "shallows/solver/simulation.hpp"
#include "support/problems.hpp"

namespace {

using namespace shallows;

Problem valley(double slope, double eta0, double half_width, Precision precision) {
  auto z = [slope](double x, double) { return slope * std::abs(x - 10); };
  auto eta = [eta0, half_width](double x, double) { return std::abs(x - 10) < half_width ? eta0 : -1e9; };
  Problem p = test_support::make_problem(400, 2, 0, 20, 0, 0.1, z, eta);
  p.precision = precision;
  p.t_end = 20;
  return p;
}

class Slopes : public ::testing::TestWithParam<double> {};

TEST_P(Slopes, DamBreakInValleyConservesMassAndStaysPositive) {
  const Problem p = valley(GetParam(), 1.5, 1.0, Precision::double_precision);
  Simulation sim(p, BackendOptions{"cpu", 1, false, 0.01});
  const double v0 = sim.volume();
  double min_h = 0;
  while (sim.time() < p.t_end) {
    sim.advance_to(std::min(p.t_end, sim.time() + 1.0));
    for (double h : sim.state().h) min_h = std::min(min_h, h);
  }
  EXPECT_GE(min_h, 0.0);
  EXPECT_LE(std::abs(sim.volume() - v0) / v0, 1e-12) << "slope " << GetParam();
}

TEST_P(Slopes, LakeAtRestKeepsDryBanksDry) {
  const Problem p = valley(GetParam(), 0.3, 1e9, Precision::double_precision);
  Simulation sim(p, BackendOptions{"cpu", 1, false, 0.01});
  sim.advance_steps(500);
  const Fields f = sim.state();
  std::size_t dry = 0;
  for (std::size_t k = 0; k < f.h.size(); ++k) {
    if (p.h[k] == 0) {
      ++dry;
      ASSERT_EQ(f.h[k], 0.0) << "bank cell " << k << " got water";
    } else {
      ASSERT_LE(std::abs(f.h[k] + p.z[k] - 0.3), 1e-12);
      ASSERT_LE(std::abs(f.hu[k]), 1e-12);
    }
  }
  EXPECT_GT(dry, 100u);
}

INSTANTIATE_TEST_SUITE_P(Valley, Slopes, ::testing::Values(0.05, 0.2, 1.0));

// A river enters a channel that holds a film of 0.1 mm: the inflow side's
// ghost is no shallower than the discharge's critical depth (inflow_depth),
// so the water comes in at about the critical speed, not at q / h = 5 km/s,
// and 20 s take a few hundred steps, not 10^5. The volume grows by q L t.
TEST(ThinLayers, InflowSideFillsAFilmAtABoundedSpeed) {
  Problem p = test_support::make_problem(50, 3, 0, 50, 0, 3, [](double, double) { return 0.0; },
                                         [](double, double) { return 1e-4; });
  const double q = 0.5;  // m^2/s
  p.bc(Side::west) = {BoundaryKind::inflow, q};
  p.precision = Precision::double_precision;
  p.t_end = 20;
  Simulation sim(p, BackendOptions{"cpu", 1, false, 0.01});
  const double v0 = sim.volume();
  sim.advance_to(p.t_end);
  EXPECT_LT(sim.steps(), 1000);
  const Fields f = sim.state();
  double fastest = 0;
  for (std::size_t k = 0; k < f.h.size(); ++k) {
    if (f.h[k] > p.physics.h_dry) fastest = std::max(fastest, std::hypot(f.hu[k], f.hv[k]) / f.h[k]);
  }
  const double critical_speed = std::sqrt(9.81 * std::cbrt(q * q / 9.81));  // 1.7 m/s
  EXPECT_LT(fastest, 3 * critical_speed);
  EXPECT_GT(f.h[static_cast<std::size_t>(p.grid.nx + 5)], 0.1) << "the river has not come in";
  EXPECT_NEAR(sim.volume() - v0, q * 3 * p.t_end, 0.05 * q * 3 * p.t_end);
}

} // namespace
