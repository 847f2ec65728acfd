// SPDX-License-Identifier: MIT
// Ensembles through the command line: each member's folder holds the bytes of
// that member run alone (--member N), on a grid and a mesh, with members side
// by side on threads; on a mesh, ensemble.nc carries the UGRID topology; a
// resumed ensemble writes the bytes of an uninterrupted one; a failing member
// is reported and the others go on.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "support/cli_runs.hpp"
#include "support/ensemble_runs.hpp"
#include "support/output_files.hpp"

namespace {

using shallows::test_support::read;
using shallows::test_support::Result;
using shallows::test_support::shell;
using shallows::test_support::slurp;
using shallows::test_support::split;
using shallows::test_support::temp_dir;
using shallows::test_support::expect_same_files;
using shallows::test_support::kEnsembleEnv;
using shallows::test_support::kGridCase;
using shallows::test_support::write_case;

namespace fs = std::filesystem;

} // namespace

TEST(EnsembleRuns, DryRunListsTheMembersAsSetOptions) {
  const fs::path dir = temp_dir("ens-dry");
  const fs::path file = write_case(dir, kGridCase);
  const Result r = shell("run " + file.string() + " --dry-run");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output, "4 members (product)\n"
                      "member 0000: --set 'physics.manning=0.01' --set 'rain.scale=0.0'\n"
                      "member 0001: --set 'physics.manning=0.01' --set 'rain.scale=2.0'\n"
                      "member 0002: --set 'physics.manning=0.05' --set 'rain.scale=0.0'\n"
                      "member 0003: --set 'physics.manning=0.05' --set 'rain.scale=2.0'\n");
  EXPECT_FALSE(fs::exists(dir / "output"));
}

TEST(EnsembleRuns, GridMembersAreTheBytesOfEachMemberRunAloneWithMembersOnTwoThreads) {
  const fs::path dir = temp_dir("ens-grid");
  const fs::path file = write_case(dir, kGridCase);
  const Result r = shell(kEnsembleEnv, "run " + file.string() + " -o " + (dir / "ens").string() + " -j 2 -t 2 -q");
  ASSERT_EQ(r.code, 0) << r.output;
  for (int m = 0; m < 4; ++m) {
    const fs::path alone = dir / ("alone" + std::to_string(m));
    const Result a =
        shell(kEnsembleEnv, "run " + file.string() + " --member " + std::to_string(m) + " -o " + alone.string() + " -q -t 2");
    ASSERT_EQ(a.code, 0) << a.output;
    char name[8];
    std::snprintf(name, sizeof name, "%04d", m);
    expect_same_files(dir / "ens" / "members" / name, alone);
    EXPECT_TRUE(fs::exists(dir / "ens" / "members" / (std::string(name) + ".done")));
  }
  for (const char* f : {"ensemble.nc", "ensemble.csv", "exceedance_0.05m.tif", "exceedance_0.2m.tif",
                        "png/exceedance_0.05m.png", "png/exceedance_0.2m.png"})
    EXPECT_TRUE(fs::exists(dir / "ens" / f)) << f;
  // ensemble.csv: a row per member, its values, status ok and the gauge's peak depth.
  const std::vector<std::string> rows = split(read(dir / "ens" / "ensemble.csv"), '\n');
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0], "member,physics.manning,rain.scale,weight,status,initial_volume,final_volume,"
                     "mass_balance_residual,wall_seconds,steps,peak_depth_mid");
  EXPECT_EQ(rows[2].rfind("1,0.01,2,1,ok,", 0), 0u) << rows[2];
  for (std::size_t k = 1; k < 5; ++k) EXPECT_EQ(split(rows[k], ',')[4], "ok") << rows[k];
}

TEST(EnsembleRuns, MeshMembersAreTheBytesOfEachMemberRunAlone) {
  const fs::path dir = temp_dir("ens-mesh");
  const fs::path mesh = fs::path(SHALLOWS_SOURCE_DIR) / "tests" / "data" / "gmsh" / "plate-22.msh";
  const fs::path file = write_case(dir, "[mesh]\nfile = \"" + mesh.string() + R"("
[bathymetry]
z = 0.0
[initial]
eta = "x < 0.5 ? 0.3 : 0.1"
[boundary]
left = "wall"
right = "open"
walls = "wall"
pier = "wall"
[physics]
manning = 0.02
[time]
end = 0.5
output_every = 0.25
[output]
format = ["netcdf", "vtk"]
[ensemble]
members = [ { "physics.manning" = 0.01 }, { "initial.eta" = "x < 0.8 ? 0.4 : 0.1", weight = 2 } ]
)");
  const Result r = shell(kEnsembleEnv, "run " + file.string() + " -o " + (dir / "ens").string() + " -q");
  ASSERT_EQ(r.code, 0) << r.output;
  for (int m = 0; m < 2; ++m) {
    const fs::path alone = dir / ("alone" + std::to_string(m));
    const Result a =
        shell(kEnsembleEnv, "run " + file.string() + " --member " + std::to_string(m) + " -o " + alone.string() + " -q");
    ASSERT_EQ(a.code, 0) << a.output;
    expect_same_files(dir / "ens" / "members" / ("000" + std::to_string(m)), alone);
  }
  EXPECT_TRUE(fs::exists(dir / "ens" / "ensemble.nc"));
  const std::vector<std::string> rows = split(read(dir / "ens" / "ensemble.csv"), '\n');
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], "member,initial.eta,physics.manning,weight,status,initial_volume,final_volume,"
                     "mass_balance_residual,wall_seconds,steps");
  EXPECT_EQ(rows[1].rfind("0,,0.01,1,ok,", 0), 0u) << rows[1];
  EXPECT_EQ(rows[2].rfind("1,x < 0.8 ? 0.4 : 0.1,,2,ok,", 0), 0u) << rows[2];
#if defined(SHALLOWS_HAVE_NETCDF)
  // ensemble.nc carries the mesh's UGRID topology, the same as a member's output.nc, and ties its fields to it.
  using shallows::test_support::nc_ok;
  using shallows::test_support::nc_text;
  int ens = 0, member = 0;
  nc_ok(nc_open((dir / "ens" / "ensemble.nc").c_str(), NC_NOWRITE, &ens));
  nc_ok(nc_open((dir / "ens" / "members" / "0000" / "output.nc").c_str(), NC_NOWRITE, &member));
  const auto var = [](int nc, const char* name) {
    int v = -1;
    EXPECT_EQ(nc_inq_varid(nc, name, &v), NC_NOERR) << name;
    return v;
  };
  const auto length = [](int nc, const char* name) {
    int d = -1;
    std::size_t n = 0;
    EXPECT_EQ(nc_inq_dimid(nc, name, &d), NC_NOERR) << name;
    nc_inq_dimlen(nc, d, &n);
    return n;
  };
  EXPECT_EQ(nc_text(ens, NC_GLOBAL, "Conventions"), "CF-1.8 UGRID-1.0");
  for (const char* attribute : {"cf_role", "node_coordinates", "face_node_connectivity", "face_coordinates"})
    EXPECT_EQ(nc_text(ens, var(ens, "mesh"), attribute), nc_text(member, var(member, "mesh"), attribute)) << attribute;
  const std::size_t nodes = length(member, "nMesh_node"), faces = length(member, "nMesh_face");
  ASSERT_GT(faces, 0u);
  EXPECT_EQ(length(ens, "nMesh_node"), nodes);
  EXPECT_EQ(length(ens, "nMesh_face"), faces);
  std::vector<int> ens_nodes(4 * faces), member_nodes(4 * faces);
  nc_ok(nc_get_var_int(ens, var(ens, "mesh_face_nodes"), ens_nodes.data()));
  nc_ok(nc_get_var_int(member, var(member, "mesh_face_nodes"), member_nodes.data()));
  EXPECT_EQ(ens_nodes, member_nodes);
  for (const char* name : {"mesh_node_x", "mesh_node_y", "mesh_face_x", "mesh_face_area", "mesh_face_tag"}) {
    const std::size_t n = std::string(name).rfind("mesh_node", 0) == 0 ? nodes : faces;
    std::vector<double> a(n), b(n);
    nc_ok(nc_get_var_double(ens, var(ens, name), a.data()));
    nc_ok(nc_get_var_double(member, var(member, name), b.data()));
    EXPECT_EQ(a, b) << name;
  }
  for (const char* name : {"max_depth", "exceedance", "max_depth_mean"}) {
    EXPECT_EQ(nc_text(ens, var(ens, name), "mesh"), "mesh") << name;
    EXPECT_EQ(nc_text(ens, var(ens, name), "location"), "face") << name;
  }
  nc_close(member);
  nc_close(ens);
#endif
}

TEST(EnsembleRuns, ResumedEnsembleWritesTheBytesOfAnUninterruptedOne) {
  const fs::path dir = temp_dir("ens-resume");
  const fs::path file = write_case(dir, kGridCase);
  const std::string run = "run " + file.string() + " -q -t 1 -o ";
  ASSERT_EQ(shell(kEnsembleEnv, run + (dir / "whole").string()).code, 0);
  // Interrupted by SIGINT inside a member (simulated time 1 s of the first member to get there).
  const Result stopped = shell(kEnsembleEnv + " SHALLOWS_TEST_SIGNAL=2@1.0", run + (dir / "resumed").string());
  EXPECT_EQ(stopped.code, 130) << stopped.output;
  EXPECT_NE(stopped.output.find("run the same command again to go on"), std::string::npos) << stopped.output;
  EXPECT_FALSE(fs::exists(dir / "resumed" / "ensemble.nc"));
  EXPECT_FALSE(fs::exists(dir / "resumed" / "members" / "0000.done"));
  // A member that had ended before the interruption, as a longer ensemble would leave it.
  fs::create_directories(dir / "resumed" / "members");
  fs::copy_file(dir / "whole" / "members" / "0002.done", dir / "resumed" / "members" / "0002.done");
  fs::copy(dir / "whole" / "members" / "0002", dir / "resumed" / "members" / "0002", fs::copy_options::recursive);
  const Result resumed = shell(kEnsembleEnv, "run " + file.string() + " -t 1 -o " + (dir / "resumed").string());
  ASSERT_EQ(resumed.code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("4 members, 3 run now, 1 done before, 0 failed"), std::string::npos)
      << resumed.output;
  EXPECT_TRUE(slurp(dir / "whole" / "ensemble.nc") == slurp(dir / "resumed" / "ensemble.nc"));
  for (const char* m : {"0000", "0001", "0002", "0003"})
    expect_same_files(dir / "whole" / "members" / m, dir / "resumed" / "members" / m);
  // A rerun of a complete ensemble runs nothing and rebuilds the same file.
  const Result again = shell(kEnsembleEnv, "run " + file.string() + " -t 1 -o " + (dir / "resumed").string());
  EXPECT_NE(again.output.find("4 members, 0 run now, 4 done before"), std::string::npos) << again.output;
  EXPECT_TRUE(slurp(dir / "whole" / "ensemble.nc") == slurp(dir / "resumed" / "ensemble.nc"));
}

TEST(EnsembleRuns, AFailingMemberIsReportedAndTheOthersGoOn) {
  const fs::path dir = temp_dir("ens-fail");
  std::string text = kGridCase;
  text.replace(text.find("product = "), text.find("thresholds") - text.find("product = "),
               "members = [ { \"physics.manning\" = 0.02 }, { \"bathymetry.z\" = { file = \"missing.asc\" } }, "
               "{ \"physics.manning\" = 0.04 } ]\n");
  const fs::path file = write_case(dir, text);
  const Result r = shell(kEnsembleEnv, "run " + file.string() + " -q -t 1 -o " + (dir / "out").string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("member 1 failed: "), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(dir / "out" / "members" / "0000.done"));
  EXPECT_FALSE(fs::exists(dir / "out" / "members" / "0001.done"));
  EXPECT_TRUE(fs::exists(dir / "out" / "members" / "0002.done"));
  const std::vector<std::string> rows = split(read(dir / "out" / "ensemble.csv"), '\n');
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].rfind("member,bathymetry.z,physics.manning,weight,status,", 0), 0u) << rows[0];
  EXPECT_EQ(rows[1].rfind("0,,0.02,1,ok,", 0), 0u) << rows[1];
  EXPECT_NE(rows[2].find(",1,failed: "), std::string::npos) << rows[2];
  EXPECT_NE(rows[2].find("missing.asc"), std::string::npos) << rows[2];
  EXPECT_EQ(rows[3].rfind("2,,0.04,1,ok,", 0), 0u) << rows[3];
}

TEST(EnsembleRuns, BadKeysStopTheEnsembleBeforeAnyMemberRuns) {
  const fs::path dir = temp_dir("ens-bad");
  std::string text = kGridCase;
  text.replace(text.find("\"rain.scale\" = [0.0"), 12, "\"rain.scal\"");
  const fs::path file = write_case(dir, text);
  const Result r = shell("run " + file.string() + " -o " + (dir / "out").string());
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.output, "shallows: error: " + file.string() +
                          ": [ensemble] product: unknown key 'rain.scal' (did you mean 'rain.scale'?)\n");
  EXPECT_FALSE(fs::exists(dir / "out"));
  const fs::path plain = dir / "plain.toml";
  std::ofstream(plain) << kGridCase.substr(0, kGridCase.find("[ensemble]"));
  const Result m = shell("run " + plain.string() + " --member 0");
  EXPECT_EQ(m.code, 1);
  EXPECT_EQ(m.output, "shallows: error: " + plain.string() +
                          ": --member and --dry-run need an [ensemble] section (docs/ensembles.md)\n");
  const fs::path good = write_case(dir, kGridCase);
  const Result out_of_range = shell("run " + good.string() + " --member 4");
  EXPECT_EQ(out_of_range.output, "shallows: error: --member 4: the ensemble has 4 members (0 to 3)\n");
}

// A source and an inflow segment scaled by 2 from [ensemble]: the bytes of the case written with the doubled
// discharges (scale 2 on a constant is exact), and their keys in ensemble.csv.
TEST(EnsembleRuns, ScaledSourceAndSegmentAreTheBytesOfTheDoubledDischarges) {
  const fs::path dir = temp_dir("ens-scale");
  std::string plain = kGridCase.substr(0, kGridCase.find("[ensemble]"));
  plain.replace(plain.find("[physics]"), 0,
                "[[boundary.segment]]\nside = \"west\"\nfrom = 0.5\nto = 1.5\ntype = \"inflow\"\ndischarge = 0.375\n"
                "[[source]]\nname = \"spring\"\nx = 8.2\ny = 1.3\ndischarge = 0.125\n");
  const std::string ensemble =
      plain + "[ensemble]\nmembers = [ { \"source[spring].scale\" = 2.0, \"boundary.segment[0].scale\" = 2.0 },"
              " { \"source[0].scale\" = 0.5 } ]\n";
  std::string doubled = plain;
  doubled.replace(doubled.find("discharge = 0.375"), 17, "discharge = 0.75");
  doubled.replace(doubled.find("discharge = 0.125"), 17, "discharge = 0.25");
  const fs::path ens_dir = dir / "ens", twice_dir = dir / "twice";
  fs::create_directories(ens_dir);
  fs::create_directories(twice_dir);
  const fs::path ens_file = write_case(ens_dir, ensemble), twice_file = write_case(twice_dir, doubled);
  const Result r = shell(kEnsembleEnv, "run " + ens_file.string() + " -q -t 1 -o " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.output;
  const Result t = shell(kEnsembleEnv, "run " + twice_file.string() + " -q -t 1 -o " + (dir / "plain").string());
  ASSERT_EQ(t.code, 0) << t.output;
  expect_same_files(dir / "out" / "members" / "0000", dir / "plain");
  const std::vector<std::string> rows = split(read(dir / "out" / "ensemble.csv"), '\n');
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].rfind("member,boundary.segment[0].scale,source[0].scale,source[spring].scale,weight,status,", 0),
            0u)
      << rows[0];
  EXPECT_EQ(rows[1].rfind("0,2,,2,1,ok,", 0), 0u) << rows[1];
  EXPECT_EQ(rows[2].rfind("1,,0.5,,1,ok,", 0), 0u) << rows[2];
  // A bad value fails its member alone, the message naming the key.
  std::string bad = ensemble;
  bad.replace(bad.find("\"source[0].scale\" = 0.5"), 23, "\"source[0].scale\" = -1.0");
  const fs::path bad_file = write_case(dir, bad);
  const Result b = shell(kEnsembleEnv, "run " + bad_file.string() + " -q -t 1 -o " + (dir / "bad").string());
  EXPECT_EQ(b.code, 2) << b.output;
  EXPECT_NE(b.output.find("member 1 failed: --set: source[0].scale: must be >= 0, found -1"), std::string::npos)
      << b.output;
}

#if defined(SHALLOWS_HAVE_NETCDF)
// The example cases/valley-ensemble (64 members) at 100 m cells for its first quarter hour, the DEM from its ESRI
// ASCII twin: ensemble.nc's exceedance is the fraction of its max_depth members above each threshold.
TEST(EnsembleRuns, ValleyEnsembleExceedanceCountsTheMembersAboveEachThreshold) {
  using shallows::test_support::nc_ok;
  const fs::path dir = temp_dir("ens-valley");
  const fs::path file = fs::path(SHALLOWS_SOURCE_DIR) / "cases" / "valley-ensemble" / "case.toml";
  const Result r = shell(kEnsembleEnv, "run " + file.string() + " -q -t 2 -o " + (dir / "out").string() +
                                   " --set domain.nx=20 --set domain.ny=15 --set time.end=900"
                                   " --set time.output_every=900 --set 'output.format=[\"netcdf\"]'"
                                   " --set 'bathymetry.z={ file = \"../valley/dem.asc\", resample = \"average\" }'");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(split(read(dir / "out" / "ensemble.csv"), '\n').size(), 65u);
  int nc = 0;
  nc_ok(nc_open((dir / "out" / "ensemble.nc").c_str(), NC_NOWRITE, &nc));
  const auto values = [&](const char* name, std::size_t n) {
    int var = 0;
    nc_ok(nc_inq_varid(nc, name, &var));
    std::vector<double> v(n);
    nc_ok(nc_get_var_double(nc, var, v.data()));
    return v;
  };
  const std::size_t cells = 20 * 15, members = 64;
  const std::vector<double> depth = values("max_depth", members * cells);
  const std::vector<double> exceedance = values("exceedance", 3 * cells);
  const std::vector<double> river = values("boundary.segment[0].scale", members);
  const std::vector<double> manning = values("physics.manning", members);
  const std::vector<double> rain = values("rain.scale", members);
  nc_close(nc);
  // The product, its first key by name slowest.
  const double rivers[] = {0.5, 0.75, 1.0, 1.25}, mannings[] = {0.03, 0.045, 0.06, 0.08}, rains[] = {0.5, 1, 1.5, 2};
  for (std::size_t m = 0; m < members; ++m) {
    EXPECT_EQ(river[m], rivers[m / 16]) << m;
    EXPECT_EQ(manning[m], mannings[m / 4 % 4]) << m;
    EXPECT_EQ(rain[m], rains[m % 4]) << m;
  }
  const double thresholds[] = {0.1, 0.5, 1.0};
  std::size_t wet_somewhere = 0;
  for (std::size_t t = 0; t < 3; ++t)
    for (std::size_t c = 0; c < cells; ++c) {
      std::size_t above = 0;
      for (std::size_t m = 0; m < members; ++m) above += depth[m * cells + c] > thresholds[t] ? 1 : 0;
      ASSERT_EQ(exceedance[t * cells + c], static_cast<double>(above) / 64.0) << t << " " << c;
      wet_somewhere += t == 0 && above > 0 ? 1 : 0;
    }
  EXPECT_GT(wet_somewhere, 0u);  // the river at least
}
#endif
