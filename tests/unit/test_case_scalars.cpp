// SPDX-License-Identifier: MIT
// Case files with passive scalars: [[scalar]] and the concentrations of the
// water that sides, sources, inflow segments and rain bring, read into
// Problem::scalars and the output settings; the errors a user meets; the
// checkpoint fingerprint sees them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "shallows/io/checkpoint.hpp"
#include "shallows/io/gmsh.hpp"
#include "shallows/mesh/unstructured/generator.hpp"
#include "support/case_fixture.hpp"

using namespace shallows;
using shallows::io::Case;

namespace {

class ScalarCaseTest : public shallows::test_support::CaseFixture {};

// 5 x 3 cells of 2 m, centres x = 1, 3, 5, 7, 9 and y = 11, 13, 15.
const std::string kScalarBase = R"T(
[domain]
nx = 5
ny = 3
x = [0, 10]
y = [10, 16]
[initial]
h = 0.5
[time]
end = 100
)T";

const std::string kSalt = "[[scalar]]\nname = \"salt\"\ninitial = 35\nunits = \"g kg-1\"\n";
const std::string kDye = "[[scalar]]\nname = \"dye\"\ninitial = \"x < 4 ? 1 : 0\"\n";

std::size_t side(Side s) { return static_cast<std::size_t>(s); }

}  // namespace

TEST_F(ScalarCaseTest, NoScalarsNoScalars) {
  const Case c = parse(kScalarBase + "[rain]\nrate = 1\n[[source]]\nx = 1\ny = 11\ndischarge = 1\n");
  EXPECT_TRUE(c.problem.scalars.empty());
  EXPECT_TRUE(c.output.scalars.empty());
}

TEST_F(ScalarCaseTest, InitialFieldsNamesAndUnits) {
  write("dye.asc", "ncols 5\nnrows 3\nxllcorner 0\nyllcorner 10\ncellsize 2\n"
                   "0 0 0 0 4\n0 0 0 3 0\n1 2 0 0 0\n");
  const Case c = parse(kScalarBase + kSalt + kDye + "[[scalar]]\nname = \"tracer_2\"\ninitial = { file = \"dye.asc\" }\n" +
                       "[[scalar]]\nname = \"clean\"\n");
  const auto& s = c.problem.scalars;
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].name, "salt");
  EXPECT_EQ(s[0].c, std::vector<double>{35});  // a number: uniform
  EXPECT_EQ(s[1].name, "dye");
  EXPECT_EQ(s[1].c, (std::vector<double>{1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0}));
  // A raster, first row the northernmost.
  EXPECT_EQ(s[2].c, (std::vector<double>{1, 2, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 4}));
  EXPECT_EQ(s[3].c, std::vector<double>{0});  // no initial: clean water
  ASSERT_EQ(c.output.scalars.size(), 4u);
  EXPECT_EQ(c.output.scalars[0].name, "salt");
  EXPECT_EQ(c.output.scalars[0].units, "g kg-1");
  EXPECT_EQ(c.output.scalars[1].units, "1");
  EXPECT_EQ(c.output.scalars[3].name, "clean");
  for (const PassiveScalar& sc : s) {
    EXPECT_EQ(sc.rain, 0.0);
    EXPECT_TRUE(sc.sources.empty());
    for (double v : sc.side) EXPECT_EQ(v, 0.0);
  }
}

TEST_F(ScalarCaseTest, InactiveCellsGetZero) {
  write("z.asc", "ncols 5\nnrows 3\nxllcorner 0\nyllcorner 10\ncellsize 2\nNODATA_value -9999\n"
                 "0 0 0 0 0\n-9999 0 0 0 0\n0 0 0 0 0\n");
  // The expression is negative where the bed is NODATA: no error there.
  const Case c = parse(kScalarBase + "[bathymetry]\nz = { file = \"z.asc\" }\n[[scalar]]\nname = \"s\"\n"
                               "initial = \"x < 2 && y > 12 && y < 14 ? -1 : 2\"\n");
  const std::vector<double>& v = c.problem.scalars[0].c;
  ASSERT_EQ(v.size(), 15u);
  EXPECT_EQ(v[5], 0.0);
  EXPECT_EQ(v[6], 2.0);
}

TEST_F(ScalarCaseTest, ConcentrationsOfSidesRainSourcesAndSegments) {
  const Case c = parse(kScalarBase + kSalt + kDye + R"(
[boundary]
west = { type = "inflow", discharge = 0.1, concentration = { dye = 2.5 } }
east = { type = "level", eta = 0.5, concentration = { salt = 30, dye = 0 } }
south = "open"
[rain]
rate = 10
concentration = { dye = 0.25 }
[[boundary.segment]]
side = "north"
from = 0
to = 4
type = "inflow"
discharge = 1
concentration = { salt = 1.5 }
[[source]]
x = 5
y = 13
discharge = 0.2
concentration = { dye = 7, salt = 8 }
[[source]]
x = 7
y = 13
discharge = -0.2
)");
  const auto& s = c.problem.scalars;
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].side[side(Side::west)], 0.0);
  EXPECT_EQ(s[1].side[side(Side::west)], 2.5);
  EXPECT_EQ(s[0].side[side(Side::east)], 30.0);
  EXPECT_EQ(s[1].side[side(Side::east)], 0.0);
  EXPECT_EQ(s[0].side[side(Side::south)], 0.0);
  EXPECT_EQ(s[0].rain, 0.0);
  EXPECT_EQ(s[1].rain, 0.25);
  // Forcing::sources order: the point sources, then the segments.
  ASSERT_EQ(c.problem.forcing.sources.size(), 3u);
  EXPECT_EQ(c.problem.forcing.sources[2].name, "segment north 0-4");
  EXPECT_EQ(s[0].sources, (std::vector<double>{8, 0, 1.5}));
  EXPECT_EQ(s[1].sources, (std::vector<double>{7, 0, 0}));
}

TEST_F(ScalarCaseTest, ConcentrationsFromOverrides) {
  const Case c = parse(kScalarBase, {"scalar=[{ name = \"salt\", initial = 3 }]", "rain.rate=1", "rain.concentration.salt=4"});
  ASSERT_EQ(c.problem.scalars.size(), 1u);
  EXPECT_EQ(c.problem.scalars[0].c, std::vector<double>{3});
  EXPECT_EQ(c.problem.scalars[0].rain, 4.0);
}

TEST_F(ScalarCaseTest, ScalarErrorsNameTheKey) {
  EXPECT_EQ(error_of(kScalarBase + "[[scalar]]\ninitial = 1\n"),
            "case.toml: scalar[0].name: missing (the name of the scalar's output variable, e.g. \"salt\")");
  EXPECT_EQ(error_of(kScalarBase + "[[scalar]]\nname = \"2nd\"\n"),
            "case.toml: scalar[0].name: '2nd' is not a valid variable name (a letter, then letters, digits or "
            "underscores)");
  EXPECT_EQ(error_of(kScalarBase + "[[scalar]]\nname = \"salt water\"\n"),
            "case.toml: scalar[0].name: 'salt water' is not a valid variable name (a letter, then letters, digits "
            "or underscores)");
  EXPECT_EQ(error_of(kScalarBase + "[[scalar]]\nname = \"\"\n"),
            "case.toml: scalar[0].name: '' is not a valid variable name (a letter, then letters, digits or "
            "underscores)");
  for (const char* taken : {"h", "eta", "max_h", "velocity", "volume", "x", "time"})
    EXPECT_NE(error_of(kScalarBase + "[[scalar]]\nname = \"" + taken + "\"\n")
                  .find(std::string("case.toml: scalar[0].name: '") + taken +
                        "' is the name of another output variable (taken: time, x, y,"),
              std::string::npos)
        << taken;
  EXPECT_EQ(error_of(kScalarBase + kSalt + kSalt), "case.toml: scalar[1].name: scalar name 'salt' used twice");
  EXPECT_EQ(error_of(kScalarBase + kSalt + "[[scalar]]\nname = \"salt_mass\"\n"),
            "case.toml: scalar[1].name: scalars 'salt' and 'salt_mass' clash in output.nc, where 'salt_mass' is the "
            "mass of the first");
  EXPECT_EQ(error_of(kScalarBase + "[[scalar]]\nname = \"s\"\nunits = \"\"\n"),
            "case.toml: scalar[0].units: empty units (\"1\" for a dimensionless concentration)");
  EXPECT_EQ(error_of(kScalarBase + "[[scalar]]\nname = \"s\"\nunits = 3\n"),
            "case.toml: scalar[0].units: expected a string, found integer 3");
  EXPECT_EQ(error_of(kScalarBase + "[[scalar]]\nname = \"s\"\ninitail = 1\n"),
            "case.toml: unknown key 'scalar[0].initail' (did you mean 'scalar[0].initial'?)");
  EXPECT_EQ(error_of("scalar = 3\n" + kScalarBase),
            "case.toml: scalar: expected an array of tables [[scalar]] with name and initial, found integer 3");
  EXPECT_EQ(error_of("scalar = [3]\n" + kScalarBase),
            "case.toml: scalar[0]: expected a table { name = \"salt\", initial = ..., units = ... }, found integer 3");
}

TEST_F(ScalarCaseTest, InitialConcentrationsMustBeFiniteAndNonNegative) {
  EXPECT_EQ(error_of(kScalarBase + "[[scalar]]\nname = \"s\"\ninitial = -1\nunits = \"kg m-3\"\n"),
            "case.toml: scalar[0].initial: must be in [0, 1e+20] (a concentration, kg m-3), found -1");
  EXPECT_EQ(error_of(kScalarBase + "[[scalar]]\nname = \"s\"\ninitial = 1e300\n"),
            "case.toml: scalar[0].initial: must be in [0, 1e+20] (a concentration, 1), found 1e+300");
  EXPECT_EQ(error_of(kScalarBase + "[[scalar]]\nname = \"s\"\ninitial = \"x > 6 ? -2 : 1\"\n"),
            "case.toml: scalar[0].initial is -2 at cell centre (x, y) = (7, 11): must be in [0, 1e+20] (a concentration, 1)");
  EXPECT_EQ(error_of(kScalarBase + "[[scalar]]\nname = \"s\"\ninitial = \"x > 6 ? 1/0 : 1\"\n"),
            "case.toml: scalar[0].initial is inf at cell centre (x, y) = (7, 11)");
  EXPECT_EQ(error_of(kScalarBase + "[[scalar]]\nname = \"s\"\ninitial = \"q\"\n").substr(0, 59),
            "case.toml: scalar[0].initial: in expression \"q\": Unexpected");
}

TEST_F(ScalarCaseTest, ConcentrationErrorsNameTheKey) {
  EXPECT_EQ(error_of(kScalarBase + kSalt + "[boundary]\nwest = { type = \"inflow\", discharge = 1, concentration = { slat = 1 } }\n"),
            "case.toml: boundary.west.concentration.slat: no [[scalar]] is named 'slat' (did you mean 'salt'?)");
  EXPECT_EQ(error_of(kScalarBase + kSalt + kDye + "[rain]\nrate = 1\nconcentration = { mud = 1 }\n"),
            "case.toml: rain.concentration.mud: no [[scalar]] is named 'mud' (declared: salt, dye)");
  EXPECT_EQ(error_of(kScalarBase + "[rain]\nrate = 1\nconcentration = { salt = 1 }\n"),
            "case.toml: rain.concentration.salt: no [[scalar]] is named 'salt' (the case declares none)");
  EXPECT_EQ(error_of(kScalarBase + kSalt + "[[source]]\nx = 1\ny = 11\ndischarge = 1\nconcentration = { salt = -1 }\n"),
            "case.toml: source[0].concentration.salt: must be in [0, 1e+20] (a concentration), found -1");
  EXPECT_EQ(error_of(kScalarBase + kSalt + "[[source]]\nx = 1\ny = 11\ndischarge = 1\nconcentration = { salt = 1e300 }\n"),
            "case.toml: source[0].concentration.salt: must be in [0, 1e+20] (a concentration), found 1e+300");
  EXPECT_EQ(error_of(kScalarBase + kSalt + "[[source]]\nx = 1\ny = 11\ndischarge = 1\nconcentration = { salt = nan }\n"),
            "case.toml: source[0].concentration.salt: must be a finite number, found nan");
  EXPECT_EQ(error_of(kScalarBase + kSalt + "[[source]]\nx = 1\ny = 11\ndischarge = 1\nconcentration = { salt = \"a\" }\n"),
            "case.toml: source[0].concentration.salt: expected a number, found string \"a\"");
  EXPECT_EQ(error_of(kScalarBase + kSalt +
                     "[[boundary.segment]]\nside = \"west\"\nfrom = 10\nto = 16\ntype = \"inflow\"\ndischarge = 1\n"
                     "concentration = 35\n"),
            "case.toml: boundary.segment[0].concentration: expected a table of concentrations by scalar name (e.g. "
            "{ salt = 35.0 }), found integer 35");
  EXPECT_EQ(error_of(kScalarBase + kSalt + "[boundary]\neast = { type = \"open\", concentration = { salt = 1 } }\n"),
            "case.toml: boundary.east.concentration: only used by types \"inflow\" and \"level\" (water that enters "
            "through the side), not \"open\" (an open side lets out the water inside)");
  EXPECT_EQ(error_of(kScalarBase + kSalt + "[boundary]\neast = { type = \"wall\", concentration = { salt = 1 } }\n"),
            "case.toml: boundary.east.concentration: only used by types \"inflow\" and \"level\" (water that enters "
            "through the side), not \"wall\" (an open side lets out the water inside)");
}

TEST_F(ScalarCaseTest, ThirdOrderAndMeshesRunThem) {
  const io::Case third = parse(kScalarBase + kSalt + "[numerics]\nscheme = \"roe3\"\n");
  EXPECT_EQ(third.problem.scheme, Scheme::roe3);
  EXPECT_EQ(third.problem.scalars.size(), 1u);
  EXPECT_EQ(error_of("scalar = []\n" + kScalarBase + "[numerics]\nscheme = \"roe3\"\n"), "");  // none declared
  RectangleMeshSpec spec;
  spec.x1 = 4;
  spec.y1 = 2;
  spec.nx = 4;
  spec.ny = 2;
  io::write_gmsh(dir_ / "square.msh", rectangle_mesh(spec), false);
  const std::string mesh = "[mesh]\nfile = \"square.msh\"\n[initial]\nh = 1\n[time]\nend = 1\n";
  ASSERT_EQ(error_of(mesh), "");
  const io::Case on_mesh = parse(mesh + kSalt);
  ASSERT_EQ(on_mesh.problem.scalars.size(), 1u);
  EXPECT_TRUE(on_mesh.problem.scalars[0].groups.empty());  // no group brings any: 0
  // A boundary group's concentration, by group.
  const io::Case inflow =
      parse(mesh + kSalt + "[boundary]\nwest = { type = \"inflow\", discharge = 1, concentration = { salt = 1.5 } }\n");
  const std::vector<double>& groups = inflow.problem.scalars[0].groups;
  ASSERT_EQ(groups.size(), inflow.problem.mesh_boundary.size());
  const int west = inflow.problem.mesh->find_boundary("west");
  for (std::size_t g = 0; g < groups.size(); ++g) EXPECT_EQ(groups[g], g == std::size_t(west) ? 1.5 : 0.0) << g;
  // As on a grid: no concentration on a wall or an open group, none of an unknown scalar.
  EXPECT_NE(error_of(mesh + kSalt + "[boundary]\nwest = { type = \"open\", concentration = { salt = 1 } }\n")
                .find("boundary.west.concentration: only used by types"),
            std::string::npos);
  EXPECT_NE(error_of(mesh + kSalt +
                     "[boundary]\nwest = { type = \"inflow\", discharge = 1, concentration = { sand = 1 } }\n")
                .find("no [[scalar]] is named 'sand'"),
            std::string::npos);
}

TEST_F(ScalarCaseTest, FingerprintSeesTheScalars) {
  const std::string text = kScalarBase + kSalt + "[rain]\nrate = 1\n";
  const auto print = [&](const std::vector<std::string>& overrides) {
    return io::case_fingerprint(parse(text, overrides));
  };
  const auto base = print({});
  EXPECT_EQ(print({}), base);
  EXPECT_NE(print({"rain.concentration.salt=1"}), base);
  EXPECT_NE(print({"boundary.west={ type = \"inflow\", discharge = 1, concentration = { salt = 2 } }"}), base);
  EXPECT_NE(print({"source=[{ x = 1, y = 11, discharge = 1, concentration = { salt = 2 } }]"}),
            print({"source=[{ x = 1, y = 11, discharge = 1 }]"}));
  // Changed by hand, the case text kept.
  Case a = parse(text), b = parse(text);
  b.problem.scalars[0].c = {36};
  EXPECT_NE(io::case_fingerprint(a), io::case_fingerprint(b));
  b = a;
  b.problem.scalars[0].name = "salz";
  EXPECT_NE(io::case_fingerprint(a), io::case_fingerprint(b));
  b = a;
  b.output.scalars[0].units = "kg m-3";
  EXPECT_NE(io::case_fingerprint(a), io::case_fingerprint(b));
}
