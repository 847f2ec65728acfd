// SPDX-License-Identifier: MIT
// A run that starts dry: with no wave speed anywhere the CFL rule gives no
// step length, and a step then lasted the whole output interval, so rain or
// a source put all its water down at once and nothing moved. The step is
// bounded by the still-water CFL step of 1 m depth (time_step.hpp) until the
// first water moves: on grids (roe1, roe3, float, double) and on a mesh.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include "shallows/io/case.hpp"
#include "shallows/solver/backend.hpp"
#include "shallows/solver/time_step.hpp"

namespace shallows {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Rain on a dry slope that drains through an open east side: 50 cells of 2 m.
constexpr const char* kDrySlope = R"toml(
[domain]
nx = 50
ny = 1
x = [0.0, 100.0]
y = [0.0, 2.0]

[bathymetry]
z = "0.01 * (100 - x)"

[initial]
h = 0

[boundary]
east = "open"

[rain]
rate = 100.0

[time]
end = 600.0

[output]
format = []
)toml";

Problem dry_slope(const std::string& scheme, const std::string& precision) {
  return io::parse_case(kDrySlope, "dry-slope.toml", ".",
                        {"numerics.scheme=\"" + scheme + "\"", "numerics.precision=\"" + precision + "\""})
      .problem;
}

TEST(DryStart, StepIsTheStillWaterCflStepOfOneMetre) {
  const Problem p = dry_slope("roe1", "double");
  // 1/dx + 1/dy = 1 per m; sqrt(9.81 m/s^2 * 1 m).
  EXPECT_DOUBLE_EQ(dry_time_step(p), 0.9 / std::sqrt(9.81));
  EXPECT_EQ(cfl_time_step(0.0, 0.9, 0.25, 10.0), 0.25);
  EXPECT_EQ(cfl_time_step(0.0, 0.9, 0.25, 0.1), 0.1);   // the cap still wins
  EXPECT_EQ(cfl_time_step(3.0, 0.9, 0.25, 10.0), 0.3);  // wet: the CFL step, however long
}

class DrySlope : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(DrySlope, RainRunsOffInStepsAndLeavesThroughTheOpenSide) {
  const Problem p = dry_slope(GetParam().first, GetParam().second);
  auto b = make_backend(p, BackendOptions{});
  const double dt0 = b->step(0.0, kInf);
  EXPECT_EQ(dt0, dry_time_step(p));  // every cell dry: the bound, not the whole run
  const AdvanceResult r = b->advance(dt0, p.t_end, 1 << 20);
  EXPECT_EQ(r.t, p.t_end);
  EXPECT_GT(r.steps, 100);  // was 1 step
  // 100 mm/h on 200 m^2 for 600 s is 3.33 m^3: most of it ran off the 1% slope.
  const double rained = 0.1 / 3600 * 200 * 600;
  EXPECT_NEAR(b->forcing_volumes().rain, rained, 1e-9 * rained);
  EXPECT_LT(b->volume(), 0.6 * rained);
}

INSTANTIATE_TEST_SUITE_P(Grids, DrySlope,
                         ::testing::Values(std::pair{"roe1", "double"}, std::pair{"roe1", "float"},
                                           std::pair{"roe3", "double"}, std::pair{"roe3", "float"}));

// A dry mesh under rain: the same bound, from the largest perimeter / (2 area) of its cells.
TEST(DryStart, MeshStepIsBoundedToo) {
  // The river-bend mesh, dry, walled all round (its inflow would give the boundary edges a wave speed).
  const std::filesystem::path dir = std::filesystem::path(SHALLOWS_SOURCE_DIR) / "cases" / "river-bend";
  const io::Case c = io::parse_case(R"toml(
[mesh]
file = "river-bend.msh"
[bathymetry]
z = "-0.001 * (x + y)"
[initial]
h = 0
[rain]
rate = 50.0
[time]
end = 60.0
[output]
format = []
)toml",
                                    "dry-bend.toml", dir);
  const Problem& p = c.problem;
  ASSERT_TRUE(p.on_mesh());
  auto b = make_backend(p, BackendOptions{});
  const double dt = b->step(0.0, kInf);
  EXPECT_EQ(dt, dry_time_step(p));
  EXPECT_GT(dt, 0);
  EXPECT_LT(dt, 100);
}

} // namespace
} // namespace shallows
