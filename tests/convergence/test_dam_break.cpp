// SPDX-License-Identifier: MIT
// 1D dam breaks in a walled channel, along x and along y, against their
// exact solutions: Ritter (dry bed) and Stoker (wet bed). The L1 error of h
// must fall under a bound and decrease at the measured order under
// refinement (first order in smooth parts; about 0.7-1 with a front).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "shallows/solver/simulation.hpp"
#include "support/exact.hpp"
#include "support/problems.hpp"

namespace {

using namespace shallows;

constexpr double kLength = 40, kDam = 20, kTime = 2, kHl = 1, g = 9.81;

// L1 error of h along the channel, sum |h - h_exact| dx (m^2).
double dam_break_error(index_t n, double h_right, bool along_y) {
  auto eta = [h_right, along_y](double x, double y) { return (along_y ? y : x) < kDam ? kHl : h_right; };
  Problem p = along_y ? test_support::make_problem(2, n, 0, 2 * kLength / double(n), 0, kLength, [](double, double) { return 0.0; }, eta)
                      : test_support::make_problem(n, 2, 0, kLength, 0, 2 * kLength / double(n), [](double, double) { return 0.0; }, eta);
  p.physics.h_dry = 1e-8;
  p.t_end = kTime;
  Simulation sim(p, BackendOptions{"cpu", 2, false, 0.01});
  sim.advance_to(kTime);
  const Fields f = sim.state();
  const double d = kLength / double(n);
  double error = 0;
  for (index_t k = 0; k < n; ++k) {
    const double s = (double(k) + 0.5) * d;
    const double xi = (s - kDam) / kTime;
    const double exact = h_right > 0 ? test_support::stoker_depth(xi, kHl, h_right, g) : test_support::ritter_depth(xi, kHl, g);
    const auto cell = static_cast<std::size_t>(along_y ? k * 2 : k);  // column 0 or row 0
    error += std::abs(f.h[cell] - exact) * d;
  }
  return error;
}

void check_convergence(double h_right, bool along_y, double finest_bound, double min_order) {
  const index_t sizes[] = {200, 400, 800, 1600};
  double previous = 0;
  for (index_t n : sizes) {
    const double e = dam_break_error(n, h_right, along_y);
    std::printf("  %s %s n=%4lld L1(h)=%.4e", h_right > 0 ? "Stoker" : "Ritter", along_y ? "y" : "x",
                static_cast<long long>(n), e);
    if (previous > 0) {
      const double order = std::log2(previous / e);
      std::printf("  order %.2f", order);
      EXPECT_GE(order, min_order) << "n = " << n;
    }
    std::printf("\n");
    previous = e;
  }
  EXPECT_LT(previous, finest_bound);
}

TEST(DamBreak, RitterAlongX) { check_convergence(0.0, false, 0.06, 0.65); }
TEST(DamBreak, RitterAlongY) { check_convergence(0.0, true, 0.06, 0.65); }
TEST(DamBreak, StokerAlongX) { check_convergence(0.2, false, 0.05, 0.7); }
TEST(DamBreak, StokerAlongY) { check_convergence(0.2, true, 0.05, 0.7); }

TEST(DamBreak, StokerMiddleStateIsConsistent) {
  // Guards the exact solution: Rankine-Hugoniot mass balance at the shock.
  const auto s = test_support::stoker_state(1.0, 0.2, g);
  EXPECT_NEAR(s.shock_speed * (s.h_middle - 0.2), s.h_middle * s.u_middle, 1e-12);
  EXPECT_GT(s.h_middle, 0.2);
  EXPECT_LT(s.h_middle, 1.0);
}

TEST(DamBreak, AlongXAndAlongYAgreeExactly) {
  EXPECT_EQ(dam_break_error(200, 0.2, false), dam_break_error(200, 0.2, true));
}

} // namespace
