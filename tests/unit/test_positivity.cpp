// SPDX-License-Identifier: MIT
// The positivity account: the water that the depth clamps add (clamp_added_depth,
// in advance_cell and in the SSP-RK3 stages) is what a walled domain's
// volume changes by, to round-off, on grids (roe1, roe3) and meshes.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "shallows/numerics/ssp_rk3.hpp"
#include "shallows/physics/cell_update.hpp"
#include "shallows/solver/mass_balance.hpp"
#include "shallows/solver/simulation.hpp"
#include "support/positivity.hpp"

namespace {

using namespace shallows;

TEST(ClampGain, IsTheDepthTheClampAdds) {
  const PhysicsParams<double> p{9.81, 1e-6, 0.0};
  double gain = -1;
  const State<double> dried = explicit_update(State<double>{0.1, 0.2, 0.0}, State<double>{-1.5, 0.0, 0.0}, 0.1, p, gain);
  EXPECT_EQ(dried.h, 0.0);
  EXPECT_DOUBLE_EQ(gain, 0.05);  // 0.1 - 0.15 = -0.05 clamped to 0
  const State<double> wet = advance_cell(State<double>{0.1, 0.2, 0.0}, State<double>{-0.5, 0.0, 0.0}, 0.1, p, gain);
  EXPECT_DOUBLE_EQ(wet.h, 0.05);
  EXPECT_EQ(gain, 0.0);
}

// One cell, all three stages with rhs given: U^{n+1}'s depth minus that of
// the same stages without clamps (linear in the rhs) is the summed gain.
TEST(ClampGain, SspStagesCarryTheirGainsToTheStepEnd) {
  const PhysicsParams<double> p{9.81, 1e-6, 0.0};
  const double dt = 0.1, rhs[3] = {-2.0, 1.0, -3.0};
  State<double> un{0.1, 0.0, 0.0}, uk = un;
  double h_free = un.h, hk_free = un.h, total = 0;
  for (int k = 0; k < ssp_rk3::stages; ++k) {
    double gain;
    uk = ssp_rk3::stage(k, un, uk, State<double>{rhs[k], 0.0, 0.0}, dt, p, gain);
    total += gain;
    hk_free = ssp_rk3::combine(k, h_free, hk_free + dt * rhs[k]);
  }
  EXPECT_GT(total, 0.0);
  EXPECT_NEAR(uk.h - hk_free, total, 1e-15);
}

class WalledBox : public ::testing::TestWithParam<int> {};

Problem walled_box(int k) {
  const Precision prec = k % 2 == 0 ? Precision::double_precision : Precision::single_precision;
  switch (k / 2) {
    case 0: return test_support::fast_box_grid(20, 10, Scheme::roe1, prec);
    case 1: return test_support::fast_box_grid(20, 10, Scheme::roe3, prec);
    default: return test_support::fast_box_mesh(20, 10, prec);
  }
}

TEST_P(WalledBox, VolumeChangesByThePositivityAccount) {
  const Problem p = walled_box(GetParam());
  Simulation sim(p, BackendOptions{"cpu", 2, false, 0.01});
  const double v0 = sim.volume();
  sim.advance_to(p.t_end);
  const double v1 = sim.volume();
  const double gained = sim.backend().positivity_volume();
  const bool single = p.precision == Precision::single_precision;
  // The clamps act, and in double they matter: without the account the
  // balance would miss by 1e-7 or more (in float that is below round-off).
  EXPECT_GT(gained, 0.0);
  if (!single) {
    EXPECT_GT(std::abs(v1 - v0) / v0, 1e-8) << "clamps too weak for the test to mean anything";
  }
  const MassBalance b = mass_balance(p, v0, v1, gained);
  EXPECT_TRUE(b.closed);
  EXPECT_TRUE(b.ok) << "residual " << b.relative_residual;
  EXPECT_LE(std::abs(b.relative_residual), single ? 1e-5 : 1e-13);
}

std::string box_name(const ::testing::TestParamInfo<int>& info) {
  static const char* const kinds[] = {"roe1", "roe3", "mesh"};
  return std::string(kinds[info.param / 2]) + (info.param % 2 == 0 ? "_double" : "_float");
}

INSTANTIATE_TEST_SUITE_P(GridsAndMeshes, WalledBox, ::testing::Range(0, 6), box_name);

TEST(MassBalance, AppliesBehindWallsOnly) {
  Problem p = test_support::fast_box_grid(8, 4, Scheme::roe1, Precision::double_precision);
  EXPECT_TRUE(mass_balance(p, 10, 10 + 1e-12, 0).ok);
  const MassBalance miss = mass_balance(p, 10, 11, 0.5);
  EXPECT_FALSE(miss.ok);
  EXPECT_DOUBLE_EQ(miss.relative_residual, 0.5 / 11);
  EXPECT_NE(mass_balance_message(miss).find("tolerance 1e-10"), std::string::npos);
  EXPECT_TRUE(miss.checked);
  // No account (several MPI ranks): still a closed domain, the balance not checked.
  const MassBalance unaccounted = mass_balance(p, 10, 11, std::nan(""));
  EXPECT_TRUE(unaccounted.closed);
  EXPECT_FALSE(unaccounted.checked);
  EXPECT_TRUE(unaccounted.ok);
  p.bc(Side::east).kind = BoundaryKind::open;
  const MassBalance open = mass_balance(p, 10, 11, 0.5);
  EXPECT_FALSE(open.closed);
  EXPECT_FALSE(open.checked);
  EXPECT_TRUE(open.ok);
}

} // namespace
