// SPDX-License-Identifier: MIT
// Weirs, walls and breaches read from case files and run on the CPU
// executors, grids and meshes: a wall line keeps two basins at their levels,
// a weir's first step moves C L H^1.5 dt (free) or the Villemonte share of it
// (submerged), a breach lets through its width's share only, a restart in
// the middle of a breach gives the same bytes, and the errors name the
// structure and its key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/io/gmsh.hpp"
#include "shallows/mesh/unstructured/generator.hpp"
#include "shallows/solver/backend.hpp"
#include "support/case_fixture.hpp"
#include "support/cli_runs.hpp"
#include "support/restart_runs.hpp"
#include "support/structure_basins.hpp"

namespace shallows {
namespace {

namespace fs = std::filesystem;

// 40 x 10 cells of 10 m, walled, a flat bed at 0: the water at eta_west west
// of x = 200 m and eta_east east of it.
std::string weir_basins(double eta_west, double eta_east) {
  return "[domain]\nnx = 40\nny = 10\nx = [0.0, 400.0]\ny = [0.0, 100.0]\n[bathymetry]\nz = 0.0\n"
         "[initial]\neta = \"x < 200 ? " +
         std::to_string(eta_west) + " : " + std::to_string(eta_east) + "\"\n[time]\nend = 100\n";
}

// A weir along x = 200 m across the whole width: ten crossings of 10 m.
const std::string kWeir =
    "[[structure]]\nname = \"sill\"\ntype = \"weir\"\npoints = [[200.0, -5.0], [200.0, 105.0]]\ncrest = 1.0\n"
    "coefficient = 1.7\n";

std::unique_ptr<Backend> cpu(const Problem& p) {
  BackendOptions o;
  o.kind = "cpu";
  o.threads = 2;
  return make_backend(p, o);
}

ForcingState accounts(const Backend& b) {
  ForcingState f;
  b.read_forcing_accounts(f);
  return f;
}

class WeirCase : public test_support::CaseFixture {
 protected:
  // m.msh: perturbed triangles over the basins' 400 m x 100 m, 40 x 10 cells' worth.
  void write_basins_mesh() { test_support::write_weir_basins_mesh(dir_ / "m.msh"); }
};

TEST_F(WeirCase, WeirLineCrossesTheFacesBetweenTheCentresItSeparates) {
  const Problem p = parse(weir_basins(2, 0) + kWeir).problem;
  const Structure& s = p.forcing.structures.at(0);
  ASSERT_EQ(s.crossings.size(), 10u);
  for (std::size_t k = 0; k < 10; ++k) {
    const auto j = static_cast<index_t>(k);
    // Walking north, the west is on the left.
    EXPECT_EQ(s.crossings[k].left, j * 40 + 19) << k;
    EXPECT_EQ(s.crossings[k].right, j * 40 + 20) << k;
    EXPECT_EQ(s.crossings[k].length, 10.0);
    EXPECT_EQ(s.crossings[k].crest, 1.0);
    EXPECT_NEAR(s.crossings[k].s, 10.0 * static_cast<double>(k) + 10.0, 1e-5);  // the line moved by 1e-6 m
  }
}

// The cells a line's crossings leave joined, as pieces: a line from side to side cuts the grid in two, even through
// cell centres and with a corner on one.
int pieces_left(const Problem& p, const std::vector<LineCrossing>& cut) {
  const index_t nx = p.grid.nx, n = p.cells();
  std::vector<index_t> parent(static_cast<std::size_t>(n));
  for (index_t c = 0; c < n; ++c) parent[static_cast<std::size_t>(c)] = c;
  const auto root = [&](index_t c) {
    while (parent[static_cast<std::size_t>(c)] != c) c = parent[static_cast<std::size_t>(c)];
    return c;
  };
  const auto is_cut = [&](index_t a, index_t b) {
    for (const LineCrossing& x : cut)
      if (std::minmax(x.left, x.right) == std::minmax(a, b)) return true;
    return false;
  };
  int pieces = static_cast<int>(n);
  for (index_t c = 0; c < n; ++c) {
    for (index_t d : {c + 1, c + nx}) {
      if (d >= n || (d == c + 1 && d % nx == 0) || is_cut(c, d)) continue;
      const index_t a = root(c), b = root(d);
      if (a == b) continue;
      parent[static_cast<std::size_t>(std::max(a, b))] = std::min(a, b);
      --pieces;
    }
  }
  return pieces;
}

TEST_F(WeirCase, LinesThroughCentresAndCornersCutTheGridInTwo) {
  for (const std::string points : {"[[0.0, 0.0], [100.0, 100.0]]", "[[-1.0, 5.0], [45.0, 45.0], [101.0, 15.0]]",
                                   "[[5.0, -1.0], [55.0, 55.0], [55.0, 101.0]]", "[[50.0, -1.0], [50.0, 101.0]]",
                                   "[[-1.0, 35.0], [35.0, 35.0], [35.0, 65.0], [101.0, 65.0]]"}) {
    const Problem p = parse("[domain]\nnx = 10\nny = 10\nx = [0.0, 100.0]\ny = [0.0, 100.0]\n[initial]\nh = 1\n"
                            "[time]\nend = 1\n[[structure]]\nname = \"fence\"\ntype = \"wall\"\npoints = " +
                            points + "\n")
                          .problem;
    EXPECT_EQ(pieces_left(p, p.forcing.structures[0].crossings), 2) << points;
  }
}

// Free flow: the first step moves C L H^1.5 dt, L = 100 m, H = 1 m, from the west (the line's left) to the east.
TEST_F(WeirCase, FreeWeirMovesTheWeirLawsDischarge) {
  const Problem p = parse(weir_basins(2, 0) + kWeir).problem;
  auto b = cpu(p);
  const double v0 = b->volume();
  const double dt = b->step(0, 1.0);
  const ForcingState f = accounts(*b);
  EXPECT_NEAR(f.structure_discharge(0), 1.7 * 100 * 1.0, 1e-9);
  EXPECT_NEAR(f.structure_volume(0), 1.7 * 100 * dt, 1e-9);
  EXPECT_NEAR(b->volume(), v0, 1e-9 * v0);
}

// Submerged: H_up = 1, H_down = 0.5, Villemonte's (1 - 0.5^1.5)^0.385 of the free discharge.
TEST_F(WeirCase, SubmergedWeirTakesVillemontesShare) {
  const Problem p = parse(weir_basins(2, 1.5) + kWeir).problem;
  auto b = cpu(p);
  b->step(0, 1.0);
  const double free = 1.7 * 100 * 1.0, share = std::pow(1 - std::pow(0.5, 1.5), 0.385);
  EXPECT_NEAR(accounts(*b).structure_discharge(0), free * share, 1e-9);
  EXPECT_LT(share, 0.85);
}

// Over a run, the weir's water is what the west lost and the east gained, the whole volume kept to round-off,
// and the discharge never above the free law at the west's starting head.
TEST_F(WeirCase, WeirKeepsTheVolumeOverARun) {
  const Problem p = parse(weir_basins(2, 0) + kWeir).problem;
  auto b = cpu(p);
  const double v0 = b->volume();
  b->advance(0, 60, 1000000);
  const ForcingState f = accounts(*b);
  Fields s;
  b->read_state(s);
  double east = 0;
  for (index_t c = 0; c < p.cells(); ++c)
    if (c % 40 >= 20) east += s.h[static_cast<std::size_t>(c)] * 100;
  EXPECT_NEAR(f.structure_volume(0), east, 1e-9 * v0);
  EXPECT_GT(east, 0.5 * 1.7 * 100 * 60);
  EXPECT_LT(east, 1.7 * 100 * 60);
  EXPECT_NEAR(b->volume(), v0, 1e-12 * v0);
}

// Quasi-steady free flow out of a large basin (A = 20000 m^2) over a low weir (C = 0.1, L = 100 m): the basin's
// level follows dH/dt = -C L H^1.5 / A, so H(T) = (H0^-0.5 + C L T / (2 A))^-2 and the volume over T is
// A (H0 - H(T)); the weir, fed through the scheme's drawdown at the line, within 2 % of it.
TEST_F(WeirCase, QuasiSteadyWeirDrainsABasinByTheWeirLaw) {
  std::string weir = kWeir;
  weir.replace(weir.find("coefficient = 1.7"), 17, "coefficient = 0.1");
  const Problem p = parse(weir_basins(2, 0) + weir).problem;
  auto b = cpu(p);
  b->advance(0, 60, 1000000);
  const double k = 0.1 * 100 / 20000, h_end = std::pow(1 + k * 60 / 2, -2.0), expected = 20000 * (1 - h_end);
  EXPECT_NEAR(accounts(*b).structure_volume(0), expected, 0.02 * expected);
}

// A thin wall along a diagonal staircase: the basins each side stay at rest, at their levels, to round-off.
TEST_F(WeirCase, WallKeepsTwoBasinsAtTheirLevelsOnAGrid) {
  const std::string c =
      "[domain]\nnx = 20\nny = 20\nx = [0.0, 100.0]\ny = [0.0, 100.0]\n[bathymetry]\nz = \"0.01 * x\"\n"
      "[initial]\neta = \"y > x + 3 ? 2 : 1\"\n[time]\nend = 100\n"
      "[[structure]]\nname = \"fence\"\ntype = \"wall\"\npoints = [[-1.0, 2.0], [101.0, 104.0]]\n";
  const Problem p = parse(c).problem;
  auto b = cpu(p);
  b->advance(0, 30, 1000000);
  Fields s;
  b->read_state(s);
  for (index_t k = 0; k < p.cells(); ++k) {
    const auto i = static_cast<std::size_t>(k);
    EXPECT_NEAR(s.h[i] + p.z[i], p.h[i] + p.z[i], 1e-12) << k;
    EXPECT_NEAR(s.hu[i], 0.0, 1e-12) << k;
  }
}

// A dye west of a wall through flowing water: none reaches the east (no mass crosses a wall face); with a weir in its
// place the dye crosses with the water at the west's concentration, its mass kept to round-off.
TEST_F(WeirCase, DyeCrossesAWeirWithItsWaterAndNeverAWall) {
  std::string base = weir_basins(2, 1.5) + "[[scalar]]\nname = \"dye\"\ninitial = \"x < 200 ? 1 : 0\"\n";
  base.replace(base.find("[time]"), 6, "u = 0.5\n[time]");  // the west's water runs at the line
  const auto east_and_total = [&](const std::string& line) {
    const Problem p = parse(base + line).problem;
    auto b = cpu(p);
    b->advance(0, 30, 1000000);
    Fields s;
    b->read_state(s);
    double east = 0, total = 0;
    for (index_t c = 0; c < p.cells(); ++c) {
      const double m = s.hc.at(0)[static_cast<std::size_t>(c)] * 100;
      total += m;
      if (c % 40 >= 20) east += m;
    }
    return std::pair{east, total};
  };
  const auto [east_wall, total_wall] =
      east_and_total("[[structure]]\nname = \"fence\"\ntype = \"wall\"\npoints = [[200.0, -5.0], [200.0, 105.0]]\n");
  EXPECT_EQ(east_wall, 0.0);
  EXPECT_NEAR(total_wall, 2 * 20000, 1e-9 * 40000);  // the wall's face carries no mass either way
  const auto [east_weir, total_weir] = east_and_total(kWeir);
  EXPECT_GT(east_weir, 100.0);
  EXPECT_NEAR(total_weir, 2 * 20000, 1e-9 * 40000);
}

TEST_F(WeirCase, WallKeepsTwoBasinsAtTheirLevelsOnAMesh) {
  RectangleMeshSpec spec;
  spec.x1 = spec.y1 = 100;
  spec.nx = spec.ny = 12;
  spec.perturbation = 0.2;
  io::write_gmsh(dir_ / "m.msh", rectangle_mesh(spec), true);
  const Problem p = parse("[mesh]\nfile = \"m.msh\"\n[bathymetry]\nz = \"0.01 * x\"\n"
                          "[initial]\neta = \"y > x + 3 ? 2 : 1\"\n[time]\nend = 100\n"
                          "[[structure]]\nname = \"fence\"\ntype = \"wall\"\npoints = [[-1.0, 2.0], [101.0, 104.0]]\n")
                        .problem;
  // The line separates the centres above it from those below, every crossed edge cut into two walls.
  const Structure& s = p.forcing.structures.at(0);
  ASSERT_GT(s.crossings.size(), 10u);
  for (const LineCrossing& x : s.crossings) {
    const auto above = [&](index_t c) {
      return p.mesh->cell_y[static_cast<std::size_t>(c)] > p.mesh->cell_x[static_cast<std::size_t>(c)] + 3;
    };
    EXPECT_TRUE(above(x.left) && !above(x.right));
  }
  auto b = cpu(p);
  b->advance(0, 30, 1000000);
  Fields st;
  b->read_state(st);
  for (index_t k = 0; k < p.cells(); ++k) {
    const auto i = static_cast<std::size_t>(k);
    EXPECT_NEAR(st.h[i] + p.z[i], p.h[i] + p.z[i], 1e-12) << k;
  }
}

// A weir on a mesh: the water crosses the line only through it, the volume kept to round-off.
TEST_F(WeirCase, WeirOnAMeshMovesWaterKeepingTheVolume) {
  write_basins_mesh();
  const Problem p = parse("[mesh]\nfile = \"m.msh\"\n[bathymetry]\nz = 0.0\n[initial]\neta = \"x < 200 ? 2 : 0\"\n"
                          "[time]\nend = 100\n" + kWeir)
                        .problem;
  auto b = cpu(p);
  const double v0 = b->volume();
  const double dt = b->step(0, 1.0);
  double length = 0;
  for (const LineCrossing& x : p.forcing.structures[0].crossings) length += x.length;
  // The first step from rest at H = 1 over every crossed edge, from the line's left (west) to its right.
  EXPECT_NEAR(accounts(*b).structure_volume(0), 1.7 * length * dt, 1e-9);
  b->advance(dt, 30, 1000000);
  EXPECT_NEAR(b->volume(), v0, 1e-12 * v0);
  EXPECT_GT(accounts(*b).structure_volume(0), 1000.0);
}

// A breach of a weir whose crest stands above both basins: only its open width passes water, at the weir law
// over its bottom; its width follows the CSV from its start. Width 20 m at the middle of a 100 m line: the two
// crossings at s = 50, 60 (|s - 55| <= 10), L = 20 m, H = 2 - 0.5.
TEST_F(WeirCase, BreachPassesItsWidthsShareFromItsStart) {
  write("w.csv", "time,width\n0,20\n100,40\n");
  const std::string c = weir_basins(2, 0) +
                        "[[structure]]\nname = \"levee\"\ntype = \"weir\"\npoints = [[200.0, -5.0], [200.0, 105.0]]\n"
                        "crest = 3.0\ncoefficient = 1.7\n"
                        "[[structure]]\nname = \"gap\"\ntype = \"breach\"\nline = \"levee\"\nat = [200.0, 50.0]\n"
                        "start = 2.0\nbottom = 0.5\nwidth = \"w.csv\"\n";
  const Problem p = parse(c).problem;
  EXPECT_DOUBLE_EQ(p.forcing.structures[1].spec.at, 55.0);
  auto b = cpu(p);
  double t = 0;
  while (t < 2.0) t += b->step(t, 2.0 - t);  // closed: nothing passes
  EXPECT_EQ(accounts(*b).structure_volume(0), 0.0);
  const double dt = b->step(t, 0.5);
  const ForcingState f = accounts(*b);
  const double q = 1.7 * 20 * std::pow(1.5, 1.5);
  EXPECT_NEAR(f.structure_volume(1), q * dt, 1e-9);
  EXPECT_NEAR(f.structure_volume(0), q * dt, 1e-9);
  EXPECT_NEAR(f.structure_discharge(1), q, 1e-9);
  EXPECT_NEAR(f.structure_width(1), 20 + 20 * dt / 100, 1e-12);
}

// The same on a mesh: the first step passes C H^1.5 dt over the edges within half the width of `at`.
TEST_F(WeirCase, BreachOnAMeshPassesItsEdgesShare) {
  write_basins_mesh();
  write("w.csv", "time,width\n0,30\n");
  const Problem p = parse("[mesh]\nfile = \"m.msh\"\n[bathymetry]\nz = 0.0\n[initial]\neta = \"x < 200 ? 2 : 0\"\n"
                          "[time]\nend = 100\n"
                          "[[structure]]\nname = \"levee\"\ntype = \"weir\"\npoints = [[200.0, -5.0], [200.0, 105.0]]\n"
                          "crest = 3.0\ncoefficient = 1.7\n"
                          "[[structure]]\nname = \"gap\"\ntype = \"breach\"\nline = \"levee\"\nat = [200.0, 50.0]\n"
                          "start = 0.0\nbottom = 0.5\nwidth = \"w.csv\"\n")
                        .problem;
  double open = 0;
  for (const LineCrossing& x : p.forcing.structures[0].crossings)
    if (std::abs(x.s - 55.0) <= 15.0) open += x.length;
  ASSERT_GT(open, 20.0);
  auto b = cpu(p);
  const double dt = b->step(0, 0.5);
  EXPECT_NEAR(accounts(*b).structure_volume(1), 1.7 * open * std::pow(1.5, 1.5) * dt, 1e-9);
  EXPECT_EQ(accounts(*b).structure_volume(0), accounts(*b).structure_volume(1));
}

// Verheij-van der Knaap growth from the trigger: the width after the first step, at the head of 2 m across the
// dry side, is the initial one plus the increment of f1 sqrt(g) dh^1.5 / u_c log10(1 + f2 g tau / u_c / 3600).
TEST_F(WeirCase, TriggeredBreachGrowsByVerheij) {
  const std::string c = weir_basins(2, 0) +
                        "[[structure]]\nname = \"levee\"\ntype = \"weir\"\npoints = [[200.0, -5.0], [200.0, 105.0]]\n"
                        "crest = 3.0\ncoefficient = 1.7\n"
                        "[[structure]]\nname = \"gap\"\ntype = \"breach\"\nline = \"levee\"\nat = [200.0, 50.0]\n"
                        "trigger = { level = 1.5, duration = 0.0 }\nbottom = 0.0\n"
                        "width = { initial = 10.0, final = 10.2, model = \"verheij\" }\n";
  const Problem p = parse(c).problem;
  auto b = cpu(p);
  const double dt = b->step(0, 1.0);
  const double g = p.physics.g, a = 0.04 * g / 0.2 / 3600;
  const double grown = 1.3 * std::sqrt(g) * std::pow(2.0, 1.5) / 0.2 * std::log10(1 + a * dt);
  EXPECT_NEAR(accounts(*b).structure_width(1), 10.0 + grown, 1e-12 * grown);
  EXPECT_GT(grown, 0.01);
  // Never beyond the final width.
  b->advance(dt, 100, 1000000);
  EXPECT_EQ(accounts(*b).structure_width(1), 10.2);
}

// Killed after a checkpoint in the middle of the breach and restarted: the same bytes.
TEST(WeirRuns, KilledBreachRunContinuesByteForByte) {
  test_support::kill_and_restart({"levee-breach", std::string(SHALLOWS_SOURCE_DIR) + "/cases/levee-breach/case.toml",
                                  "--set time.end=60 --set time.output_every=5", 31.3, 10.0});
}

// The example: summary.json and structures.csv hold the breach's width and volume; the balance closes.
TEST(WeirRuns, ExampleWritesTheBreachsWidth) {
  const fs::path dir = test_support::temp_dir("levee-breach");
  const test_support::Result r = test_support::shell(
      "run " + std::string(SHALLOWS_SOURCE_DIR) + "/cases/levee-breach/case.toml -q -o " + dir.string());
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string summary = test_support::slurp(dir / "summary.json");
  EXPECT_NE(summary.find("{\"name\": \"gap\", \"volume\": "), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"width\": 20}"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"mass_balance_ok\": true"), std::string::npos) << summary;
  std::ifstream in(dir / "structures.csv");
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, "time,levee_discharge,levee_volume,gap_discharge,gap_volume,gap_width,fence_discharge,"
                    "fence_volume");
  fs::remove_all(dir);
}

TEST_F(WeirCase, ErrorsNameTheStructureAndTheKey) {
  const std::string base = weir_basins(2, 0);
  const auto weir = [](const std::string& rest) { return "[[structure]]\nname = \"sill\"\ntype = \"weir\"\n" + rest; };
  EXPECT_EQ(error_of(base + weir("points = [[200.0, 5.0]]\ncrest = 1.0\ncoefficient = 1.7\n")),
            "case.toml: structure[0].points: structure 'sill': a line needs at least two points, found 1");
  EXPECT_EQ(error_of(base + weir("points = [[201.0, 12.0], [204.0, 12.0]]\ncrest = 1.0\ncoefficient = 1.7\n")),
            "case.toml: structure[0].points: structure 'sill': the line crosses no face between two active cells "
            "of the grid (it must separate the centres of neighbouring cells)");
  write("bad.csv", "s,crest\n0,1\nten,2\n");
  EXPECT_NE(error_of(base + weir("points = [[200.0, -5.0], [200.0, 105.0]]\ncrest = \"bad.csv\"\n"
                                 "coefficient = 1.7\n"))
                .find("case.toml: structure[0].crest: "),
            std::string::npos);
  EXPECT_EQ(error_of(base + weir("points = [[200.0, -5.0], [200.0, 105.0]]\ncrest = 1.0\n")),
            "case.toml: structure[0].coefficient: structure 'sill': missing: C of Q = C L H^1.5 (m^0.5/s), free flow");
  const std::string sill = weir("points = [[200.0, -5.0], [200.0, 105.0]]\ncrest = 1.0\ncoefficient = 1.7\n");
  const auto breach = [](const std::string& rest) {
    return "[[structure]]\nname = \"gap\"\ntype = \"breach\"\nbottom = 0.0\nwidth = { final = 20.0 }\n" + rest;
  };
  EXPECT_EQ(error_of(base + sill + breach("line = \"dike\"\nat = [200.0, 50.0]\nstart = 0.0\n")),
            "case.toml: structure[1].line: structure 'gap': names no weir: 'dike' (weirs: sill)");
  EXPECT_EQ(error_of(base + sill + breach("line = \"sill\"\nat = [210.0, 50.0]\nstart = 0.0\n")),
            "case.toml: structure[1].at: structure 'gap': (210, 50) is 10 m off the line of weir 'sill' (it must lie "
            "on it, within 0.01 m)");
  EXPECT_EQ(error_of(base + sill + breach("line = \"sill\"\nat = [200.0, 50.0]\n")),
            "case.toml: structure[1].start: structure 'gap': give either 'start' (a time, s) or 'trigger' "
            "({ level = ..., duration = ... })");
  EXPECT_EQ(error_of(base + sill +
                     "[[structure]]\nname = \"gap\"\ntype = \"breach\"\nbottom = 1.0\nwidth = { final = 20.0 }\n"
                     "line = \"sill\"\nat = [200.0, 50.0]\nstart = 0.0\n"),
            "case.toml: structure[1].bottom: structure 'gap': the bottom 1 m is not below the crest of weir 'sill' at "
            "`at` (1 m)");
  EXPECT_EQ(error_of(base + sill + "[[structure]]\nname = \"fence\"\ntype = \"wall\"\n"
                                   "points = [[195.0, 40.0], [205.0, 60.0]]\n"),
            "case.toml: structure[1].points: structure 'fence': its line crosses the face or edge between cells 179 and "
            "180 that structure 'sill' crosses too (one line to a face)");
  EXPECT_EQ(error_of("[numerics]\nscheme = \"roe3\"\n" + base + sill),
            "case.toml: structure[0].type: structure 'sill': weirs and walls run on grids with the first-order "
            "scheme only so far (this case asks for third order, roe3)");
}

}  // namespace
}  // namespace shallows
