// SPDX-License-Identifier: MIT
// Manning friction and the functions it rests on: the portable cube root
// (IEEE basic operations only, so that CPU and GPU agree bit for bit) against
// libm, and the semi-implicit factor against its formula.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "shallows/core/math.hpp"
#include "shallows/physics/friction.hpp"

namespace {

using namespace shallows;

template <class Real>
void check_cbrt(double lo_exp, double hi_exp, double ulps) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> e(lo_exp, hi_exp);
  const double eps = std::numeric_limits<Real>::epsilon();
  double worst = 0;
  for (int k = 0; k < 200000; ++k) {
    const auto x = static_cast<Real>(std::pow(10.0, e(rng)));
    if (!(x > 0) || !std::isfinite(x)) continue;
    const double exact = std::cbrt(static_cast<double>(x));  // libm in double: within an ulp of Real
    worst = std::max(worst, std::abs(static_cast<double>(math::cbrt(x)) - exact) / exact);
  }
  EXPECT_LE(worst, ulps * eps) << "worst relative error " << worst;
}

TEST(PortableCbrt, WithinThreeUlpsOverTheWholeRange) {
  check_cbrt<double>(-320, 308, 3);  // subnormals included
  check_cbrt<float>(-44, 38, 3);
}

TEST(PortableCbrt, ExactOnCubes) {
  for (double r : {1.0, 2.0, 3.0, 10.0, 0.5, 0.25, 1024.0}) {
    EXPECT_EQ(math::cbrt(r * r * r), r);
    EXPECT_EQ(math::cbrt(static_cast<float>(r * r * r)), static_cast<float>(r));
  }
}

TEST(Friction, FactorFollowsTheSemiImplicitFormula) {
  PhysicsParams<double> p;
  p.n_manning = 0.03;
  const State<double> q{0.8, 1.2, -0.5};
  const double dt = 0.05;
  const State<double> r = apply_manning(q, dt, p);
  const double speed = std::sqrt(q.hu * q.hu + q.hv * q.hv) / q.h;
  const double factor = 1 / (1 + dt * p.g * p.n_manning * p.n_manning * speed / std::pow(q.h, 4.0 / 3.0));
  EXPECT_NEAR(r.hu, q.hu * factor, 1e-15);
  EXPECT_NEAR(r.hv, q.hv * factor, 1e-15);
  EXPECT_EQ(r.h, q.h);
  // Never reverses the flow, however large the step; nothing without water or without n.
  const State<double> big = apply_manning(q, 1e9, p);
  EXPECT_GE(big.hu, 0.0);
  EXPECT_LE(big.hv, 0.0);
  const State<double> dry = apply_manning(State<double>{p.h_dry / 2, 1.0, 1.0}, dt, p);
  EXPECT_EQ(dry.hu, 1.0);
  p.n_manning = 0;
  EXPECT_EQ(apply_manning(q, dt, p).hu, q.hu);
}

} // namespace
