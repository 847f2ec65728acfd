// SPDX-License-Identifier: MIT
// Runs with hydraulic structures on the CPU executors, grids and meshes: a
// pump drains a reservoir at its rate until the reservoir is empty, a
// culvert brings two walled basins to one level, the volume staying to
// round-off in both; the example case's outputs (summary.json,
// structures.csv) and a restart that gives the same bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/solver/backend.hpp"
#include "shallows/solver/mass_balance.hpp"
#include "support/mesh_problems.hpp"
#include "support/problems.hpp"
#include "support/restart_runs.hpp"
#include "support/structure_basins.hpp"

namespace shallows {
namespace {

using test_support::cell_area;
using test_support::cell_near;
using test_support::cell_x;

// The basins (support/structure_basins.hpp): the west one holds eta_west over a flat bed at 0, the east one
// eta_east.
Problem grid_basins(double eta_west, double eta_east) {
  return test_support::grid_basins_problem([=](double x, double) { return x < 55 ? eta_west : eta_east; });
}

Problem mesh_basins(double eta_west, double eta_east) {
  return test_support::mesh_basins_problem([=](double x, double) { return x < 55 ? eta_west : eta_east; });
}

// The water (m^3) west of the ridge, and east of it.
std::pair<double, double> basin_volumes(const Problem& p, const Fields& f) {
  double west = 0, east = 0;
  for (index_t c = 0; c < p.cells(); ++c) {
    const double v = f.h[static_cast<std::size_t>(c)] * cell_area(p, c);
    (cell_x(p, c) < 55 ? west : east) += v;
  }
  return {west, east};
}

// The mean level of the wet cells west and east of the ridge.
std::pair<double, double> basin_levels(const Problem& p, const Fields& f) {
  double w[2] = {0, 0}, a[2] = {0, 0};
  for (index_t c = 0; c < p.cells(); ++c) {
    const auto k = static_cast<std::size_t>(c);
    if (p.z[k] > 1) continue;
    const int side = cell_x(p, c) < 55 ? 0 : 1;
    w[side] += (f.h[k] + p.z[k]) * cell_area(p, c);
    a[side] += cell_area(p, c);
  }
  return {w[0] / a[0], w[1] / a[1]};
}

Structure pump(const Problem& p, double q) {
  Structure s;
  s.name = "station";
  s.spec.kind = StructureKind::pump;
  s.inlet = cell_near(p, 20, 10);
  s.outlet = cell_near(p, 90, 10);
  s.discharge = TimeSeries::constant(q);
  return s;
}

Structure culvert(const Problem& p) {
  Structure s;
  s.name = "culvert";
  s.spec.kind = StructureKind::culvert;
  s.spec.shape = CulvertShape::circular;
  s.spec.width = s.spec.height = 0.8;
  s.spec.length = 15;
  s.spec.n_manning = 0.013;
  s.spec.invert_in = 0.1;
  s.spec.invert_out = 0.0;
  s.inlet = cell_near(p, 45, 10);
  s.outlet = cell_near(p, 65, 10);
  return s;
}

struct Outcome {
  double initial = 0, final = 0, positivity = 0;
  Fields state;
  ForcingState forcing;
};

Outcome advance(const Problem& p, double t_end) {
  BackendOptions o;
  o.kind = "cpu";
  o.threads = 2;
  auto b = make_backend(p, o);
  Outcome r;
  r.initial = b->volume();
  EXPECT_EQ(b->advance(0, t_end, 10000000).t, t_end);
  r.final = b->volume();
  r.positivity = b->positivity_volume();
  b->read_state(r.state);
  b->read_forcing_state(r.forcing);
  return r;
}

class StructureRun : public ::testing::TestWithParam<bool> {  // on a mesh
 protected:
  Problem basins(double eta_west, double eta_east) const {
    return GetParam() ? mesh_basins(eta_west, eta_east) : grid_basins(eta_west, eta_east);
  }
};

// 0.5 m^3/s out of a reservoir of 50 m x 20 m x 1 m = 1000 m^3: after T the
// reservoir holds 1000 - 0.5 T to round-off, the water arriving east of the
// ridge; emptied after 2000 s, the pump moves no more than the reservoir held.
TEST_P(StructureRun, PumpDrainsAReservoirAtItsRateUntilEmpty) {
  Problem p = basins(1.0, 0.0);
  p.forcing.structures.push_back(pump(p, 0.5));
  const Fields start{p.h, p.hu, p.hv, {}};
  const auto [v0, e0] = basin_volumes(p, start);
  ASSERT_EQ(e0, 0.0);
  for (const double t : {100.0, 600.0}) {
    const Outcome r = advance(p, t);
    const auto [west, east] = basin_volumes(p, r.state);
    EXPECT_NEAR(west, v0 - 0.5 * t, 1e-11 * v0) << t;
    EXPECT_NEAR(east, 0.5 * t, 1e-11 * v0) << t;
    EXPECT_NEAR(r.forcing.structures[1], 0.5 * t, 1e-12 * v0);  // the tally's volume
    EXPECT_DOUBLE_EQ(r.forcing.structures[0], 0.5);             // its last discharge
    EXPECT_EQ(r.positivity, 0.0);
    EXPECT_NEAR(r.final, r.initial, 1e-13 * r.initial);
  }
  // Emptied: the tally holds what the reservoir held (the last film the inlet can reach aside).
  const Outcome r = advance(p, 2600);
  const auto [west, east] = basin_volumes(p, r.state);
  EXPECT_NEAR(r.forcing.structures[1] + west, v0, 1e-11 * v0);
  EXPECT_LT(west, 0.05 * v0);
  EXPECT_NEAR(r.final, r.initial, 1e-13 * r.initial);
}

// A culvert under the ridge: the basins at 1.5 m and 0.3 m meet at the level
// that holds their water (equal areas: 0.9 m), the volume kept to round-off.
TEST_P(StructureRun, CulvertBringsTwoBasinsToOneLevelKeepingTheVolume) {
  Problem p = basins(1.5, 0.3);
  p.forcing.structures.push_back(culvert(p));
  const Outcome r = advance(p, 3000);
  const auto [west, east] = basin_levels(p, r.state);
  EXPECT_NEAR(west, east, 2e-3);
  const Fields start{p.h, p.hu, p.hv, {}};
  const auto [w0, e0] = basin_volumes(p, start);
  const auto [w1, e1] = basin_volumes(p, r.state);
  EXPECT_NEAR(r.forcing.structures[1], w0 - w1, 1e-12 * (w0 + e0));  // what left the west went through it
  EXPECT_NEAR(w1 + e1, w0 + e0, 1e-13 * (w0 + e0));
  EXPECT_NEAR(r.final, r.initial, 1e-13 * r.initial);
  EXPECT_NEAR(west, 0.9, 0.01);
  // The mass balance of a run closes with the structures inside.
  const MassBalance b = mass_balance(p, r.initial, r.final, r.positivity);
  EXPECT_TRUE(b.checked && b.ok) << b.relative_residual;
}

// One way: a flap that opens from the inlet only holds the higher eastern water back.
TEST_P(StructureRun, OneWayCulvertHoldsBackwardFlow) {
  Problem p = basins(0.3, 1.5);
  p.forcing.structures.push_back(culvert(p));
  p.forcing.structures[0].spec.one_way = true;
  const Outcome r = advance(p, 200);
  EXPECT_EQ(r.forcing.structures[1], 0.0);
  p.forcing.structures[0].spec.one_way = false;
  EXPECT_LT(advance(p, 200).forcing.structures[1], -1.0);
}

INSTANTIATE_TEST_SUITE_P(GridAndMesh, StructureRun, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Mesh" : "Grid"; });

// The threads do not change a bit.
TEST(StructureRuns, ThreadsGiveTheSameBits) {
  Problem p = grid_basins(1.5, 0.3);
  p.forcing.structures.push_back(culvert(p));
  p.forcing.structures.push_back(pump(p, 0.1));
  std::vector<Fields> out;
  for (const int threads : {1, 2}) {
    BackendOptions o;
    o.kind = "cpu";
    o.threads = threads;
    auto b = make_backend(p, o);
    b->advance(0, 300, 1000000);
    out.emplace_back();
    b->read_state(out.back());
  }
  EXPECT_EQ(out[0].h, out[1].h);
  EXPECT_EQ(out[0].hu, out[1].hu);
}

namespace fs = std::filesystem;
const std::string kExample = std::string(SHALLOWS_SOURCE_DIR) + "/cases/basins-structures/case.toml";

std::vector<std::string> lines_of(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The example: summary.json lists each structure's volume, structures.csv has a row per output time, the
// mass balance closes, and the pump (0.3 m^3/s while the east stands above its level) moved 0.3 T.
TEST(StructureRuns, ExampleCaseWritesItsStructuresAccounts) {
  const fs::path dir = test_support::temp_dir("structures-example");
  const test_support::Result r = test_support::shell("run " + kExample + " -q -o " + dir.string());
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string summary = test_support::slurp(dir / "summary.json");
  EXPECT_NE(summary.find("\"structures\": [\n    {\"name\": \"culvert\", \"volume\": "), std::string::npos) << summary;
  EXPECT_NE(summary.find("{\"name\": \"station\", \"volume\": 180"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"mass_balance_ok\": true"), std::string::npos);
  const std::vector<std::string> rows = lines_of(dir / "structures.csv");
  ASSERT_EQ(rows.size(), 12u);  // the header, t = 0 and every 60 s to 600 s
  EXPECT_EQ(rows[0], "time,culvert_discharge,culvert_volume,station_discharge,station_volume");
  EXPECT_EQ(rows[1], "0,0,0,0,0");
  EXPECT_EQ(rows[11].rfind("600,", 0), 0u);
  fs::remove_all(dir);
}

// The GPU runs every structure (or, without a device, fails for want of one: never refuses them).
TEST(StructureRuns, TheGpuRunsEveryStructure) {
  const fs::path dir = test_support::temp_dir("structures-gpu");
  const std::string breach = std::string(SHALLOWS_SOURCE_DIR) + "/cases/levee-breach/case.toml";
  for (const std::string& c : {kExample, breach}) {
    const test_support::Result r = test_support::shell(
        "run " + c + " -q --set time.end=60 --set 'output.format=[\"vtk\"]' --backend cuda -o " + dir.string());
    EXPECT_TRUE(r.code == 0 || r.output.find("backend 'cuda': ") != std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("pumps, gates and culverts"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("weirs, walls and breaches"), std::string::npos) << r.output;
  }
  fs::remove_all(dir);
}

// Killed after a checkpoint and restarted: the pump's state and the volumes go on, every output the same bytes.
TEST(StructureRuns, KilledRunContinuesByteForByte) {
  test_support::kill_and_restart({"structures", kExample, "--set time.end=20", 12.3, 5.0});
}

}  // namespace
}  // namespace shallows
