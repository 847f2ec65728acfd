// SPDX-License-Identifier: MIT
// The seed cases from their case files (cases/), at several mesh levels:
// they run to their end times with no NaN and no negative depth, conserve
// mass to round-off behind walls, keep lakes at rest, and S000-T2 opens its
// dry zone.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "shallows/io/case.hpp"
#include "shallows/solver/simulation.hpp"

namespace {

using namespace shallows;

io::Case load(const std::string& name, std::vector<std::string> sets = {}) {
  return io::load_case(std::string(SHALLOWS_SOURCE_DIR) + "/cases/" + name + "/case.toml", sets);
}

std::vector<std::string> level(int k, int nx0, int ny0) {
  return {"domain.nx=" + std::to_string(nx0 << k), "domain.ny=" + std::to_string(ny0 << k)};
}

std::vector<std::string> walls(std::vector<std::string> sets) {
  for (const char* side : {"west", "east", "south", "north"}) sets.push_back(std::string("boundary.") + side + "=\"wall\"");
  return sets;
}

struct Outcome {
  double min_h = 1e300;
  bool finite = true;
  double relative_mass_change = 0;
  Fields fields;
};

Outcome run_to_end(const Problem& p) {
  Simulation sim(p, BackendOptions{"cpu", 2, false, 0.01});
  const double v0 = sim.volume();
  sim.advance_to(p.t_end);
  Outcome o;
  o.fields = sim.state();
  for (std::size_t k = 0; k < o.fields.h.size(); ++k) {
    o.finite = o.finite && std::isfinite(o.fields.h[k]) && std::isfinite(o.fields.hu[k]) && std::isfinite(o.fields.hv[k]);
    o.min_h = std::min(o.min_h, o.fields.h[k]);
  }
  o.relative_mass_change = std::abs(sim.volume() - v0) / v0;
  EXPECT_EQ(sim.time(), p.t_end);
  return o;
}

class SeedLevels : public ::testing::TestWithParam<int> {};

TEST_P(SeedLevels, S000T1ConservesMassBehindWalls) {
  const io::Case c = load("s000-t1", level(GetParam(), 100, 10));
  const Outcome o = run_to_end(c.problem);
  EXPECT_TRUE(o.finite);
  EXPECT_GE(o.min_h, 0.0);
  EXPECT_LE(o.relative_mass_change, 1e-12);
}

TEST_P(SeedLevels, S000T2KeepsDepthNonNegativeAndOpensDryZone) {
  const io::Case c = load("s000-t2", level(GetParam(), 125, 25));
  const Problem& p = c.problem;
  const Outcome o = run_to_end(p);
  EXPECT_TRUE(o.finite);
  EXPECT_GE(o.min_h, 0.0);
  // The cell column at x = 50/3 has gone dry (vacuum between the two waves).
  const auto i = static_cast<index_t>((50.0 / 3.0 - p.grid.x0) / p.grid.dx);
  for (index_t j = 0; j < p.grid.ny; ++j) {
    EXPECT_LE(o.fields.h[static_cast<std::size_t>(j * p.grid.nx + i)], p.physics.h_dry) << "row " << j;
  }
}

TEST_P(SeedLevels, S000T2ConservesMassBehindWalls) {
  const io::Case c = load("s000-t2", walls(level(GetParam(), 125, 25)));
  const Outcome o = run_to_end(c.problem);
  EXPECT_TRUE(o.finite);
  EXPECT_GE(o.min_h, 0.0);
  EXPECT_LE(o.relative_mass_change, 1e-12);
}

std::string level_name(const ::testing::TestParamInfo<int>& level_info) {
  std::string name = "Q";
  name += std::to_string(level_info.param);
  return name;
}

INSTANTIATE_TEST_SUITE_P(Q, SeedLevels, ::testing::Values(0, 1, 2), level_name);

TEST(SeedCases, S003T1LakesFromRastersStayAtRest) {
  for (const char* name : {"s003-t1", "s003-t1-islands"}) {
    for (const char* precision : {"double", "float"}) {
      const io::Case c = load(name, {std::string("numerics.precision=\"") + precision + "\""});
      const double tol = std::string(precision) == "double" ? 1e-12 : 1e-5;
      const Outcome o = run_to_end(c.problem);
      for (std::size_t k = 0; k < o.fields.h.size(); ++k) {
        if (c.problem.h[k] == 0) {
          ASSERT_EQ(o.fields.h[k], 0.0) << name << " island cell " << k;
          continue;
        }
        ASSERT_LE(std::abs(o.fields.h[k] + c.problem.z[k]), tol) << name << " " << precision << " cell " << k;
        ASSERT_LE(std::abs(o.fields.hu[k]) + std::abs(o.fields.hv[k]), tol) << name << " " << precision;
      }
    }
  }
}

TEST(SeedCases, S004CasesRunWithoutNegativeDepth) {
  for (const char* name : {"s004-t1", "s004-t2"}) {
    const io::Case c = load(name, {"domain.nx=64", "domain.ny=64"});
    const Outcome o = run_to_end(c.problem);
    EXPECT_TRUE(o.finite) << name;
    EXPECT_GE(o.min_h, 0.0) << name;
    EXPECT_LE(o.relative_mass_change, 1e-12) << name;  // both are walled
  }
}

} // namespace
