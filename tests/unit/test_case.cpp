// SPDX-License-Identifier: MIT
// Case files: schema, fields at cell centres, rasters, overrides, messages.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "shallows/exec/mpi/context.hpp"
#include "shallows/exec/mpi/decomposition.hpp"
#include "shallows/io/case.hpp"
#include "shallows/io/raster.hpp"
#include "shallows/solver/run.hpp"

#include "support/case_fixture.hpp"

namespace fs = std::filesystem;
using shallows::BoundaryKind;
using shallows::Precision;
using shallows::Side;
using shallows::io::Case;
using shallows::io::InputError;
using shallows::io::load_case;
using shallows::io::parse_case;

namespace {

class CaseTest : public shallows::test_support::CaseFixture {
 protected:
  std::string raster_error(const std::string& name, const std::string& text) const {
    const fs::path p = write(name, text);
    try {
      shallows::io::read_ascii_raster(p);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
};

// A minimal valid case; tests append or substitute sections.
const std::string kDomain = R"T(
[domain]
nx = 4
ny = 3
x = [0, 4]
y = [10, 16]
)T";
const std::string kTime = R"T(
[time]
end = 10
)T";
const std::string kBase = kDomain + "[initial]\neta = 1\n" + kTime;

std::size_t at(const Case& c, int i, int j) { return static_cast<std::size_t>(j * c.problem.grid.nx + i); }

} // namespace

// ------------------------------------------------------------------ fields

TEST_F(CaseTest, GridFromDomain) {
  const Case c = parse(kBase);
  const auto& g = c.problem.grid;
  EXPECT_EQ(g.nx, 4);
  EXPECT_EQ(g.ny, 3);
  EXPECT_DOUBLE_EQ(g.x0, 0.0);
  EXPECT_DOUBLE_EQ(g.y0, 10.0);
  EXPECT_DOUBLE_EQ(g.dx, 1.0);
  EXPECT_DOUBLE_EQ(g.dy, 2.0);
  EXPECT_EQ(c.name, "case");
  EXPECT_EQ(c.source, "case.toml");
  EXPECT_EQ(c.problem.z.size(), 12u);
  EXPECT_EQ(c.problem.h.size(), 12u);
  EXPECT_EQ(c.problem.hu.size(), 12u);
  EXPECT_EQ(c.problem.hv.size(), 12u);
  // Defaults.
  for (int s = 0; s < 4; ++s) EXPECT_EQ(c.problem.boundary[s].kind, BoundaryKind::wall);
  EXPECT_DOUBLE_EQ(c.problem.physics.g, 9.81);
  EXPECT_DOUBLE_EQ(c.problem.physics.n_manning, 0.0);
  EXPECT_DOUBLE_EQ(c.problem.physics.h_dry, 1e-6);
  EXPECT_DOUBLE_EQ(c.problem.cfl, 0.9);
  EXPECT_EQ(c.problem.precision, Precision::double_precision);
  EXPECT_DOUBLE_EQ(c.problem.t_end, 10.0);
  EXPECT_EQ(c.problem.output_times, std::vector<double>{10.0});
  EXPECT_EQ(c.output.dir, fs::path("output"));
  EXPECT_EQ(c.output.formats, std::vector<std::string>{"netcdf"});
  EXPECT_DOUBLE_EQ(c.output.arrival_threshold, 0.01);
  for (double z : c.problem.z) EXPECT_EQ(z, 0.0);  // no [bathymetry]: flat bed at 0
  for (double h : c.problem.h) EXPECT_EQ(h, 1.0);
}

TEST_F(CaseTest, ExpressionsEvaluatedAtCellCentres) {
  const Case c = parse(kDomain + R"T(
[bathymetry]
z = "0.1 * x + 0.01 * y"
[initial]
eta = "x < 2 ? 2 : 0"
u = "y"
v = -0.5
)T" + kTime);
  const auto& p = c.problem;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 4; ++i) {
      const double x = 0.5 + i;            // centres: dx = 1 from 0
      const double y = 10.0 + 1.0 + 2 * j;  // dy = 2 from 10
      const double z = 0.1 * x + 0.01 * y;
      const double h = x < 2 ? 2 - z : 0.0;
      SCOPED_TRACE("i=" + std::to_string(i) + " j=" + std::to_string(j));
      EXPECT_DOUBLE_EQ(p.z[at(c, i, j)], z);
      EXPECT_DOUBLE_EQ(p.h[at(c, i, j)], h);
      EXPECT_DOUBLE_EQ(p.hu[at(c, i, j)], h * y);
      EXPECT_DOUBLE_EQ(p.hv[at(c, i, j)], h * -0.5);
    }
  // Dry cells carry no discharge.
  EXPECT_EQ(p.h[at(c, 3, 0)], 0.0);
  EXPECT_EQ(p.hu[at(c, 3, 0)], 0.0);
}

// roe3 on a grid: expressions give cell averages (3 x 3 Gauss points, exact
// to degree 5); numbers and the lake at rest stay exact; roe1 keeps centres.
TEST_F(CaseTest, ThirdOrderExpressionsAreCellAverages) {
  const std::string text = kDomain + R"T(
[bathymetry]
z = "x^2 + x * y^3"
[initial]
eta = 20000
hu = "y^4"
hv = 0.5
[numerics]
scheme = "roe3"
)T" + kTime;
  const Case c3 = parse(text);
  const Case c1 = parse(text, {"numerics.scheme=\"roe1\""});
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 4; ++i) {
      const double x = 0.5 + i, y = 11.0 + 2 * j;  // centres; dx = 1, dy = 2
      // Averages over [x - 1/2, x + 1/2] x [y - 1, y + 1]: mean(x^2) = x^2 + 1/12,
      // mean(y^3) = y^3 + y, mean(y^4) = y^4 + 2 y^2 + 1/5.
      const double z = x * x + 1.0 / 12 + x * (y * y * y + y);
      SCOPED_TRACE("i=" + std::to_string(i) + " j=" + std::to_string(j));
      EXPECT_NEAR(c3.problem.z[at(c3, i, j)], z, 1e-12 * std::abs(z));
      EXPECT_EQ(c3.problem.h[at(c3, i, j)], 20000 - c3.problem.z[at(c3, i, j)]);  // a number: exact
      EXPECT_NEAR(c3.problem.hu[at(c3, i, j)], std::pow(y, 4) + 2 * y * y + 0.2, 1e-12 * std::pow(y, 4));
      EXPECT_EQ(c3.problem.hv[at(c3, i, j)], 0.5);
      EXPECT_EQ(c1.problem.z[at(c1, i, j)], x * x + x * y * y * y);
      EXPECT_EQ(c1.problem.hu[at(c1, i, j)], std::pow(y, 4));
    }
}

TEST_F(CaseTest, ExpressionBuiltinsAndConstants) {
  const Case c = parse(kDomain + R"T(
[bathymetry]
z = "min(x, 2) + max(y, 0) * 0 + abs(-1) + sqrt(4) + exp(0) + cos(0) + sin(0) + pi + e"
[initial]
h = "(x > 1 && y < 12) || x > 3 ? 1 : 0"
hu = "x >= 3 ? 0.25 : 0"
hv = "x != 0.5 ? 0 : 2"
)T" + kTime);
  const auto& p = c.problem;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 4; ++i) {
      const double x = 0.5 + i, y = 11.0 + 2 * j;
      EXPECT_DOUBLE_EQ(p.z[at(c, i, j)], std::min(x, 2.0) + 1 + 2 + 1 + 1 + std::numbers::pi + std::numbers::e);
      const double h = ((x > 1 && y < 12) || x > 3) ? 1 : 0;
      EXPECT_EQ(p.h[at(c, i, j)], h);
      EXPECT_EQ(p.hu[at(c, i, j)], h > 0 && x >= 3 ? 0.25 : 0.0);
      EXPECT_EQ(p.hv[at(c, i, j)], h > 0 && x == 0.5 ? 2.0 : 0.0);
    }
  EXPECT_EQ(p.h[at(c, 1, 0)], 1.0);
  EXPECT_EQ(p.h[at(c, 1, 1)], 0.0);
  EXPECT_EQ(p.h[at(c, 3, 2)], 1.0);
  EXPECT_EQ(p.hu[at(c, 3, 2)], 0.25);
}

TEST_F(CaseTest, LargeGridExpressionMatchesSerial) {
  // Large enough to take the threaded path.
  const Case c = parse(R"T(
[domain]
nx = 300
ny = 200
x = [-3, 3]
y = [0, 4]
[bathymetry]
z = "sin(x) * cos(y)"
[initial]
eta = 2
)T" + kTime);
  const auto& g = c.problem.grid;
  for (int j = 0; j < 200; j += 7)
    for (int i = 0; i < 300; i += 11)
      EXPECT_DOUBLE_EQ(c.problem.z[at(c, i, j)], std::sin(g.x_center(i)) * std::cos(g.y_center(j)));
}

// ------------------------------------------------------------------ rasters

TEST_F(CaseTest, RasterReadAndFlipped) {
  const fs::path p = write("r.asc",
                           "NCOLS 3\n"
                           "nrows 2\n"
                           "XllCenter 100.5\n"
                           "yllcorner 200\n"
                           "cellsize 1\n"
                           "nodata_value -9999\n"
                           "1 2 3\n"       // north row
                           "4 -9999 6\r\n");  // south row, CRLF
  const auto r = shallows::io::read_ascii_raster(p);
  EXPECT_EQ(r.ncols, 3);
  EXPECT_EQ(r.nrows, 2);
  EXPECT_DOUBLE_EQ(r.x0, 100.0);
  EXPECT_DOUBLE_EQ(r.y0, 200.0);
  EXPECT_DOUBLE_EQ(r.cellsize, 1.0);
  ASSERT_TRUE(r.nodata.has_value());
  EXPECT_DOUBLE_EQ(*r.nodata, -9999.0);
  ASSERT_EQ(r.values.size(), 6u);
  // j = 0 is the south row (last in the file).
  EXPECT_EQ(r.at(0, 0), 4.0);
  EXPECT_TRUE(std::isnan(r.at(1, 0)));
  EXPECT_EQ(r.at(2, 0), 6.0);
  EXPECT_EQ(r.at(0, 1), 1.0);
  EXPECT_EQ(r.at(1, 1), 2.0);
  EXPECT_EQ(r.at(2, 1), 3.0);
}

TEST_F(CaseTest, RasterWithoutNodataAndWrappedRows) {
  const fs::path p = write("w.asc", "ncols 4\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 2.5\n1 2 3\n4 5\n6 7 8\n");
  const auto r = shallows::io::read_ascii_raster(p);
  EXPECT_FALSE(r.nodata.has_value());
  EXPECT_EQ(r.at(0, 1), 1.0);
  EXPECT_EQ(r.at(3, 1), 4.0);
  EXPECT_EQ(r.at(0, 0), 5.0);
  EXPECT_EQ(r.at(3, 0), 8.0);
}

TEST_F(CaseTest, DomainTakenFromRaster) {
  write("dem.asc",
        "ncols 3\nnrows 2\nxllcorner 10\nyllcorner 20\ncellsize 5\nNODATA_value -1\n"
        "1.0 2.0 -1\n"
        "3.5 4.0 5.0\n");
  const Case c = parse(R"T(
[bathymetry]
z = { file = "dem.asc" }
[initial]
eta = 4.5
u = 1
)T" + kTime);
  const auto& p = c.problem;
  const auto& g = p.grid;
  EXPECT_EQ(g.nx, 3);
  EXPECT_EQ(g.ny, 2);
  EXPECT_DOUBLE_EQ(g.x0, 10.0);
  EXPECT_DOUBLE_EQ(g.y0, 20.0);
  EXPECT_DOUBLE_EQ(g.dx, 5.0);
  EXPECT_DOUBLE_EQ(g.dy, 5.0);
  const std::vector<double> z_south{3.5, 4.0, 5.0};
  for (int i = 0; i < 3; ++i) EXPECT_EQ(p.z[at(c, i, 0)], z_south[i]);
  EXPECT_EQ(p.z[at(c, 0, 1)], 1.0);
  EXPECT_EQ(p.z[at(c, 1, 1)], 2.0);
  EXPECT_TRUE(std::isnan(p.z[at(c, 2, 1)]));  // NODATA: inactive
  EXPECT_DOUBLE_EQ(p.h[at(c, 0, 0)], 1.0);
  EXPECT_DOUBLE_EQ(p.h[at(c, 1, 0)], 0.5);
  EXPECT_DOUBLE_EQ(p.h[at(c, 2, 0)], 0.0);
  EXPECT_DOUBLE_EQ(p.h[at(c, 0, 1)], 3.5);
  EXPECT_DOUBLE_EQ(p.hu[at(c, 0, 1)], 3.5);
  EXPECT_EQ(p.h[at(c, 2, 1)], 0.0);
  EXPECT_EQ(p.hu[at(c, 2, 1)], 0.0);
  EXPECT_EQ(p.hv[at(c, 2, 1)], 0.0);
}

TEST_F(CaseTest, InitialFromRasterAndDomainWithRaster) {
  write("z.asc", "ncols 4\nnrows 3\nxllcorner 0\nyllcorner 0\ncellsize 1\n0 0 0 0\n0 0 0 0\n1 1 1 1\n");
  write("h.asc", "ncols 4\nnrows 3\nxllcorner 0\nyllcorner 0\ncellsize 1\n1 2 3 4\n5 6 7 8\n9 10 11 12\n");
  const Case c = parse(kDomain + R"T(
[bathymetry]
z = { file = "z.asc" }
[initial]
h = { file = "h.asc" }
)T" + kTime);
  // Domain extent wins; values map by index.
  EXPECT_DOUBLE_EQ(c.problem.grid.y0, 10.0);
  EXPECT_EQ(c.problem.z[at(c, 0, 0)], 1.0);
  EXPECT_EQ(c.problem.z[at(c, 0, 2)], 0.0);
  EXPECT_EQ(c.problem.h[at(c, 0, 0)], 9.0);
  EXPECT_EQ(c.problem.h[at(c, 3, 0)], 12.0);
  EXPECT_EQ(c.problem.h[at(c, 0, 2)], 1.0);
  EXPECT_EQ(c.problem.h[at(c, 2, 1)], 7.0);
}

TEST_F(CaseTest, RasterSizeMismatchNamesFileAndLine) {
  write("dem.asc", "ncols 5\nnrows 3\nxllcorner 0\nyllcorner 0\ncellsize 1\n"
                       "1 1 1 1 1\n1 1 1 1 1\n1 1 1 1 1\n");
  const std::string e = error_of(kDomain + "[bathymetry]\nz = { file = \"dem.asc\" }\n[initial]\neta = 1\n" + kTime);
  EXPECT_NE(e.find("case.toml: bathymetry.z:"), std::string::npos) << e;
  EXPECT_NE(e.find((dir_ / "dem.asc").string() + ":1: ncols = 5 does not match the grid (nx = 4)"),
            std::string::npos)
      << e;
}

TEST_F(CaseTest, RasterErrorsNameFileAndLine) {
  const std::string head = "ncols 3\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 1\n";
  std::string e = raster_error("bad.asc", head + "1 2 3\n4 x5 6\n");
  EXPECT_NE(e.find("bad.asc:7: not a finite number: 'x5'"), std::string::npos) << e;

  e = raster_error("short.asc", head + "1 2 3\n4 5\n");
  EXPECT_NE(e.find("short.asc:7: expected 3 values in this row (ncols), found 2"), std::string::npos) << e;

  e = raster_error("rows.asc", head + "1 2 3\n4 5 6\n7 8 9\n");
  EXPECT_NE(e.find("rows.asc:8: too many rows: expected nrows = 2, found 3"), std::string::npos) << e;

  e = raster_error("few.asc", head + "1 2 3\n");
  EXPECT_NE(e.find("few.asc:6: too few rows"), std::string::npos) << e;

  e = raster_error("nocs.asc", "ncols 3\nnrows 2\nxllcorner 0\nyllcorner 0\n1 2 3\n4 5 6\n");
  EXPECT_NE(e.find("nocs.asc:5: missing header key 'cellsize'"), std::string::npos) << e;

  e = raster_error("key.asc", "ncols 3\nnrows 2\nxllcorner 0\nyllcorner 0\ncelsize 1\n1 2 3\n4 5 6\n");
  EXPECT_NE(e.find("key.asc:5: unknown header key 'celsize'"), std::string::npos) << e;

  e = raster_error("ncols.asc", "ncols 3.5\nnrows 2\n");
  EXPECT_NE(e.find("ncols.asc:1: ncols must be a positive integer"), std::string::npos) << e;

  e = raster_error("nan.asc", head + "1 2 3\n4 nan 6\n");
  EXPECT_NE(e.find("nan.asc:7: not a finite number: 'nan'"), std::string::npos) << e;

  // A header promising 10^10 values over a few bytes: "too few", not an 80 GB
  // allocation first (fuzz/corpus/raster/huge-header.asc).
  e = raster_error("huge.asc", "ncols 100000\nnrows 100000\nxllcorner 0\nyllcorner 0\ncellsize 1\n1 2 3\n");
  EXPECT_NE(e.find("huge.asc:6: too few values: expected ncols * nrows = 10000000000"), std::string::npos) << e;

  // Dimensions whose product overflows 64 bits: refused by size, before the
  // product is formed (found by the raster fuzzer under UBSan).
  e = raster_error("overflow.asc", "ncols 2\nnrows 8888888888888888888\nxllcorner 0\nyllcorner 0\ncellsize 1\n1 2\n");
  EXPECT_NE(e.find("overflow.asc:2: raster too large (2 x 8888888888888888888)"), std::string::npos) << e;

  try {
    shallows::io::read_ascii_raster(dir_ / "missing.asc");
    FAIL() << "no error";
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("missing.asc: cannot open raster file"), std::string::npos) << err.what();
  }
}

TEST_F(CaseTest, BadRasterInCaseNamesKeyFileAndLine) {
  write("dem.asc", "ncols 2\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 1\n1 2\n3 oops\n");
  std::string e = error_of("[bathymetry]\nz = { file = \"dem.asc\" }\n[initial]\neta = 1\n" + kTime);
  EXPECT_NE(e.find("case.toml: bathymetry.z: "), std::string::npos) << e;
  EXPECT_NE(e.find("dem.asc:7: not a finite number: 'oops'"), std::string::npos) << e;

  e = error_of("[bathymetry]\nz = { file = \"nowhere.asc\" }\n[initial]\neta = 1\n" + kTime);
  EXPECT_NE(e.find("case.toml: bathymetry.z: "), std::string::npos) << e;
  EXPECT_NE(e.find("nowhere.asc: cannot open raster file"), std::string::npos) << e;
}

TEST_F(CaseTest, NodataInActiveCellOfInitialField) {
  write("eta.asc", "ncols 4\nnrows 3\nxllcorner 0\nyllcorner 0\ncellsize 1\nnodata_value -9\n"
                   "1 1 1 1\n1 1 -9 1\n1 1 1 1\n");
  const std::string e = error_of(kDomain + "[initial]\neta = { file = \"eta.asc\" }\n" + kTime);
  EXPECT_NE(e.find("case.toml: initial.eta is nan at cell centre (x, y) = (2.5, 13)"), std::string::npos) << e;
}

TEST_F(CaseTest, LoadCaseResolvesRastersAgainstCaseFolder) {
  fs::create_directories(dir_ / "sub");
  write("sub/dem.asc", "ncols 2\nnrows 1\nxllcorner 0\nyllcorner 0\ncellsize 1\n0.25 0.5\n");
  const fs::path file = write("sub/my_run.toml", "[bathymetry]\nz = { file = \"dem.asc\" }\n[initial]\nh = 1\n" + kTime);
  const Case c = load_case(file);
  EXPECT_EQ(c.name, "my_run");
  EXPECT_EQ(c.source, file.string());
  EXPECT_EQ(c.problem.z, (std::vector<double>{0.25, 0.5}));

  const Case named = load_case(write("named.toml", "name = \"flood 1\"\n" + kBase));
  EXPECT_EQ(named.name, "flood 1");
}

// ------------------------------------------------------------------ sections

TEST_F(CaseTest, BoundariesPhysicsNumericsOutput) {
  const Case c = parse(kBase + R"T(
[boundary]
west = { type = "inflow", discharge = 1.5 }
east = "open"
south = { type = "level", eta = 0.75 }
north = { type = "wall" }
[physics]
g = 10
manning = 0.03
dry_tolerance = 1e-4
[numerics]
scheme = "roe1"
cfl = 0.45
precision = "float"
[output]
dir = "runs/a"
format = ["vtk", "png"]
arrival_threshold = 0.05
gauges = [{ name = "a", x = 0.0, y = 10.0 }, { name = "b", x = 4, y = 16 }]
)T");
  const auto& p = c.problem;
  EXPECT_EQ(p.bc(Side::west).kind, BoundaryKind::inflow);
  EXPECT_DOUBLE_EQ(p.bc(Side::west).value, 1.5);
  EXPECT_EQ(p.bc(Side::east).kind, BoundaryKind::open);
  EXPECT_EQ(p.bc(Side::south).kind, BoundaryKind::level);
  EXPECT_DOUBLE_EQ(p.bc(Side::south).value, 0.75);
  EXPECT_EQ(p.bc(Side::north).kind, BoundaryKind::wall);
  EXPECT_DOUBLE_EQ(p.physics.g, 10.0);
  EXPECT_DOUBLE_EQ(p.physics.n_manning, 0.03);
  EXPECT_DOUBLE_EQ(p.physics.h_dry, 1e-4);
  EXPECT_DOUBLE_EQ(p.cfl, 0.45);
  EXPECT_EQ(p.precision, Precision::single_precision);
  EXPECT_EQ(c.output.dir, fs::path("runs/a"));
  EXPECT_EQ(c.output.formats, (std::vector<std::string>{"vtk", "png"}));
  EXPECT_DOUBLE_EQ(c.output.arrival_threshold, 0.05);
  ASSERT_EQ(c.output.gauges.size(), 2u);
  EXPECT_EQ(c.output.gauges[0].name, "a");
  EXPECT_DOUBLE_EQ(c.output.gauges[0].x, 0.0);
  EXPECT_DOUBLE_EQ(c.output.gauges[1].x, 4.0);
  EXPECT_DOUBLE_EQ(c.output.gauges[1].y, 16.0);
}

TEST_F(CaseTest, OutputTimes) {
  using shallows::output_times_every;
  EXPECT_EQ(output_times_every(1.0, 6.0), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(output_times_every(2.5, 6.0), (std::vector<double>{2.5, 5.0, 6.0}));
  const auto t = output_times_every(0.1, 0.3);  // 3 * 0.1 > 0.3 in binary: no extra time
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0], 0.1);
  EXPECT_EQ(t[1], 2 * 0.1);
  EXPECT_EQ(t[2], 0.3);
  const auto u = output_times_every(0.1, 1.0);
  ASSERT_EQ(u.size(), 10u);
  EXPECT_EQ(u[6], 7 * 0.1);  // a product, not a running sum
  EXPECT_EQ(u.back(), 1.0);
  EXPECT_EQ(output_times_every(10.0, 6.0), std::vector<double>{6.0});

  Case c = parse(kDomain + "[initial]\neta = 1\n[time]\nend = 6\noutput_every = 1.5\n");
  EXPECT_EQ(c.problem.output_times, (std::vector<double>{1.5, 3.0, 4.5, 6.0}));
  c = parse(kDomain + "[initial]\neta = 1\n[time]\nend = 6\noutput_times = [0.5, 2]\n");
  EXPECT_EQ(c.problem.output_times, (std::vector<double>{0.5, 2.0, 6.0}));
  c = parse(kDomain + "[initial]\neta = 1\n[time]\nend = 6\noutput_times = [1, 6.0]\n");
  EXPECT_EQ(c.problem.output_times, (std::vector<double>{1.0, 6.0}));

  std::string e = error_of(kDomain + "[initial]\neta = 1\n[time]\nend = 6\noutput_times = [2, 1]\n");
  EXPECT_NE(e.find("case.toml: time.output_times[1]: times must be increasing"), std::string::npos) << e;
  e = error_of(kDomain + "[initial]\neta = 1\n[time]\nend = 6\noutput_times = [7]\n");
  EXPECT_NE(e.find("case.toml: time.output_times[0]: must be in (0, time.end = 6]"), std::string::npos) << e;
  e = error_of(kDomain + "[initial]\neta = 1\n[time]\nend = 6\noutput_every = 1\noutput_times = [1]\n");
  EXPECT_NE(e.find("not both"), std::string::npos) << e;
  e = error_of(kDomain + "[initial]\neta = 1\n[time]\noutput_every = 1\n");
  EXPECT_NE(e.find("case.toml: time.end: missing"), std::string::npos) << e;
  e = error_of(kDomain + "[initial]\neta = 1\n[time]\nend = -1\n");
  EXPECT_NE(e.find("case.toml: time.end: must be > 0"), std::string::npos) << e;
}

TEST_F(CaseTest, DefaultCaseParses) {
  const Case c = parse_case(shallows::io::default_case_toml(), "<built-in>", fs::current_path());
  const auto& p = c.problem;
  EXPECT_EQ(c.name, "default");
  EXPECT_EQ(c.source, "<built-in>");
  EXPECT_EQ(p.grid.nx, 200);
  EXPECT_EQ(p.grid.ny, 100);
  EXPECT_DOUBLE_EQ(p.grid.dx, 0.2);
  EXPECT_DOUBLE_EQ(p.grid.dy, 0.2);
  int wet = 0, dry = 0;
  for (std::size_t k = 0; k < p.h.size(); ++k) {
    ASSERT_TRUE(std::isfinite(p.z[k]));
    (p.h[k] > 0 ? wet : dry)++;
  }
  EXPECT_GT(wet, 0);
  EXPECT_GT(dry, 0);
  EXPECT_EQ(wet, 40 * 100);  // x < 8: 40 columns
  // Reservoir surface at 2 m.
  EXPECT_DOUBLE_EQ(p.h[at(c, 0, 50)] + p.z[at(c, 0, 50)], 2.0);
  // Bed rises towards +x and has a hill near (24, 10).
  EXPECT_GT(p.z[at(c, 199, 0)], p.z[at(c, 0, 0)]);
  EXPECT_GT(p.z[at(c, 120, 50)], p.z[at(c, 150, 50)]);
  EXPECT_EQ(p.bc(Side::west).kind, BoundaryKind::wall);
  EXPECT_EQ(p.bc(Side::east).kind, BoundaryKind::open);
  EXPECT_EQ(p.bc(Side::south).kind, BoundaryKind::wall);
  EXPECT_EQ(p.bc(Side::north).kind, BoundaryKind::wall);
  EXPECT_DOUBLE_EQ(p.physics.n_manning, 0.02);
  EXPECT_DOUBLE_EQ(p.t_end, 6.0);
  EXPECT_EQ(p.output_times, (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(c.output.formats, (std::vector<std::string>{"netcdf", "vtk", "png"}));
  EXPECT_EQ(c.output.gauges.size(), 2u);
}

// ------------------------------------------------------------------ overrides

TEST_F(CaseTest, OverridesApplied) {
  const Case c = parse(kBase + "[physics]\nmanning = 0.01\n",
                       {"physics.manning=0.05", "numerics.precision=float", "time.output_every=2.5",
                        "boundary.east=open", "boundary.west={ type = \"inflow\", discharge = 3 }",
                        "bathymetry.z=0.1*x", "output.format=vtk", "output.dir = out dir/x", "name=renamed",
                        "domain.nx=8"});
  const auto& p = c.problem;
  EXPECT_DOUBLE_EQ(p.physics.n_manning, 0.05);
  EXPECT_EQ(p.precision, Precision::single_precision);
  EXPECT_EQ(p.output_times, (std::vector<double>{2.5, 5.0, 7.5, 10.0}));
  EXPECT_EQ(p.bc(Side::east).kind, BoundaryKind::open);
  EXPECT_EQ(p.bc(Side::west).kind, BoundaryKind::inflow);
  EXPECT_DOUBLE_EQ(p.bc(Side::west).value, 3.0);
  EXPECT_EQ(p.grid.nx, 8);
  EXPECT_DOUBLE_EQ(p.grid.dx, 0.5);
  EXPECT_DOUBLE_EQ(p.z[at(c, 1, 0)], 0.1 * 0.75);
  EXPECT_EQ(c.output.formats, std::vector<std::string>{"vtk"});
  EXPECT_EQ(c.output.dir, fs::path("out dir/x"));
  EXPECT_EQ(c.name, "renamed");
}

TEST_F(CaseTest, OverrideErrorsNameSet) {
  EXPECT_EQ(error_of(kBase, {"physics.gravity=9"}), "--set: unknown key 'physics.gravity' (did you mean 'physics.g'?)");
  EXPECT_EQ(error_of(kBase, {"physic.g=9"}), "--set: unknown section 'physic' (did you mean 'physics'?)");
  std::string e = error_of(kBase, {"numerics.cfl=2"});
  EXPECT_EQ(e, "--set: numerics.cfl: must be in (0, 1], found 2");
  e = error_of(kBase, {"physics.g"});
  EXPECT_NE(e.find("--set: expected section.key=value"), std::string::npos) << e;
  // Values from the file are still reported against the file.
  e = error_of(kBase + "[numerics]\ncfl = 3\n", {"physics.g=9"});
  EXPECT_EQ(e, "case.toml: numerics.cfl: must be in (0, 1], found 3");
}

// ------------------------------------------------------------------ [parallel]

TEST_F(CaseTest, ParallelSectionParses) {
  const Case c = parse(kBase + "[parallel]\nranks_x = 2\nranks_y = 1\nhalo_steps = 4\n");
  EXPECT_EQ(c.parallel.ranks_x, 2);
  EXPECT_EQ(c.parallel.ranks_y, 1);
  EXPECT_EQ(c.parallel.halo_steps, 4);
  // Each key is optional; 0 stands for "not given".
  const Case none = parse(kBase);
  EXPECT_EQ(none.parallel.ranks_x, 0);
  EXPECT_EQ(none.parallel.ranks_y, 0);
  EXPECT_EQ(none.parallel.halo_steps, 0);
  const Case some = parse(kBase + "[parallel]\nhalo_steps = 64\n");
  EXPECT_EQ(some.parallel.ranks_x, 0);
  EXPECT_EQ(some.parallel.halo_steps, 64);
  EXPECT_EQ(parse(kBase + "[parallel]\n").parallel.halo_steps, 0);
}

TEST_F(CaseTest, ParallelValuesArePositiveIntegers) {
  for (const std::string key : {"ranks_x", "ranks_y", "halo_steps"}) {
    const auto error = [&](const std::string& value) {
      return error_of(kBase + "[parallel]\n" + key + " = " + value + "\n");
    };
    EXPECT_EQ(error("0"), "case.toml: parallel." + key + ": must be > 0, found 0");
    EXPECT_EQ(error("-1"), "case.toml: parallel." + key + ": must be > 0, found -1");
    EXPECT_EQ(error("2.5"), "case.toml: parallel." + key + ": expected an integer, found float 2.5");
    EXPECT_EQ(error("\"two\""), "case.toml: parallel." + key + ": expected an integer, found string \"two\"");
    EXPECT_EQ(error("1"), "");
  }
  // The command line's bounds: --halo-steps 1..64, --ranks-x and --ranks-y 1..65536.
  EXPECT_EQ(error_of(kBase + "[parallel]\nhalo_steps = 65\n"),
            "case.toml: parallel.halo_steps: too large: 65 (at most 64)");
  EXPECT_EQ(error_of(kBase + "[parallel]\nranks_x = 65537\n"),
            "case.toml: parallel.ranks_x: too large: 65537 (at most 65536)");
  EXPECT_EQ(error_of(kBase + "[parallel]\nranks_y = 10000000000\n"),
            "case.toml: parallel.ranks_y: too large: 10000000000 (at most 65536)");
  EXPECT_EQ(error_of("parallel = 2\n" + kBase), "case.toml: parallel: expected a table, found integer 2");
}

TEST_F(CaseTest, ParallelUnknownKeySuggestsClosest) {
  EXPECT_EQ(error_of(kBase + "[parallel]\nrank_x = 2\n"),
            "case.toml: unknown key 'parallel.rank_x' (did you mean 'parallel.ranks_x'?)");
  EXPECT_EQ(error_of(kBase + "[parallel]\nhalo_step = 2\n"),
            "case.toml: unknown key 'parallel.halo_step' (did you mean 'parallel.halo_steps'?)");
  EXPECT_EQ(error_of(kBase + "[parallel]\nzzzzzzzzzzzzzz = 2\n"),
            "case.toml: unknown key 'parallel.zzzzzzzzzzzzzz' (valid: ranks_x, ranks_y, halo_steps)");
  EXPECT_EQ(error_of(kBase + "[paralel]\nranks_x = 2\n"),
            "case.toml: unknown section 'paralel' (did you mean 'parallel'?)");
  EXPECT_EQ(error_of(kBase, {"parallel.halo_step=3"}),
            "--set: unknown key 'parallel.halo_step' (did you mean 'parallel.halo_steps'?)");
}

TEST_F(CaseTest, ParallelSetOverrides) {
  EXPECT_EQ(parse(kBase, {"parallel.halo_steps=3"}).parallel.halo_steps, 3);
  const Case c = parse(kBase + "[parallel]\nranks_x = 2\nhalo_steps = 4\n", {"parallel.halo_steps=3"});
  EXPECT_EQ(c.parallel.halo_steps, 3);
  EXPECT_EQ(c.parallel.ranks_x, 2);
  EXPECT_EQ(error_of(kBase, {"parallel.ranks_y=0"}), "--set: parallel.ranks_y: must be > 0, found 0");
  EXPECT_EQ(error_of(kBase, {"parallel.halo_steps=two"}),
            "--set: parallel.halo_steps: expected an integer, found string \"two\"");
  // Values from the file are still reported against the file.
  EXPECT_EQ(error_of(kBase + "[parallel]\nranks_x = 0\n", {"parallel.halo_steps=3"}),
            "case.toml: parallel.ranks_x: must be > 0, found 0");
}

// What app/main.cpp does with --ranks-x, --ranks-y, --halo-steps (0: not given) and the case's [parallel].
TEST(ParallelSettings, CommandLineBeatsTheCaseKeyByKey) {
  using shallows::BackendOptions;
  using shallows::io::ParallelSettings;
  const auto merged = [](const ParallelSettings& command_line, const ParallelSettings& from_case) {
    BackendOptions o;
    shallows::set_parallel(o, command_line, from_case);
    return o;
  };
  // Neither: today's defaults (halo_steps 1, the process grid chosen from the rank count).
  BackendOptions o = merged({}, {});
  EXPECT_EQ(o.halo_steps, 1);
  EXPECT_EQ(o.ranks_x, 0);
  EXPECT_EQ(o.ranks_y, 0);
  // The case alone.
  o = merged({}, {2, 1, 4});
  EXPECT_EQ(o.ranks_x, 2);
  EXPECT_EQ(o.ranks_y, 1);
  EXPECT_EQ(o.halo_steps, 4);
  // The command line alone.
  o = merged({1, 2, 3}, {});
  EXPECT_EQ(o.ranks_x, 1);
  EXPECT_EQ(o.ranks_y, 2);
  EXPECT_EQ(o.halo_steps, 3);
  // Both: the command line wins where given, the case fills in the rest.
  o = merged({4, 0, 0}, {2, 1, 4});
  EXPECT_EQ(o.ranks_x, 4);
  EXPECT_EQ(o.ranks_y, 1);
  EXPECT_EQ(o.halo_steps, 4);
  o = merged({0, 0, 2}, {2, 1, 4});
  EXPECT_EQ(o.ranks_x, 2);
  EXPECT_EQ(o.ranks_y, 1);
  EXPECT_EQ(o.halo_steps, 2);
}

// The process grid from ranks_x / ranks_y; the refusals name both places they can come from.
TEST(ParallelSettings, ProcessGridFromRanksXAndYAndErrorsNamingTheOptionAndTheCaseKey) {
  const auto message = [](int ranks, int ranks_x, int ranks_y) {
    try {
      shallows::mpi::choose_process_grid(ranks, 100, 100, ranks_x, ranks_y);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(4, 3, 2),
            "--ranks-x / parallel.ranks_x 3 x --ranks-y / parallel.ranks_y 2 is not the job's 4 ranks");
  EXPECT_EQ(message(4, 3, 0), "--ranks-x / parallel.ranks_x 3 does not divide the job's 4 ranks");
  EXPECT_EQ(message(4, 0, 3), "--ranks-y / parallel.ranks_y 3 does not divide the job's 4 ranks");
  EXPECT_EQ(message(4, 2, 2), "no error");
  // One given fixes the other; neither: the factor pair with the shortest cut ((px - 1) ny + (py - 1) nx).
  const auto grid = [](int ranks, int ranks_x, int ranks_y, shallows::index_t nx, shallows::index_t ny) {
    const shallows::mpi::ProcessGrid g = shallows::mpi::choose_process_grid(ranks, nx, ny, ranks_x, ranks_y);
    return std::pair{g.px, g.py};
  };
  EXPECT_EQ(grid(6, 2, 0, 100, 100), std::pair(2, 3));
  EXPECT_EQ(grid(6, 0, 2, 100, 100), std::pair(3, 2));
  EXPECT_EQ(grid(4, 0, 0, 100, 10), std::pair(4, 1));
  EXPECT_EQ(grid(4, 0, 0, 10, 100), std::pair(1, 4));
}

// Ranks take GPU node_rank mod gpus: rank 0 says so where some share one and MPS does not run.
TEST(ParallelSettings, GpuSharingNoteOnlyWhereRanksOutnumberGpusWithoutMps) {
  using shallows::mpi::gpu_sharing_note;
  EXPECT_EQ(gpu_sharing_note(2, 2, false), "");
  EXPECT_EQ(gpu_sharing_note(1, 4, false), "");
  EXPECT_EQ(gpu_sharing_note(3, 2, true), "");
  EXPECT_EQ(gpu_sharing_note(4, 0, false), "");  // no GPU: nothing shared
  const std::string one = gpu_sharing_note(2, 1, false);
  EXPECT_EQ(one.rfind("2 ranks share 1 GPU on this node and CUDA MPS does not run", 0), 0u) << one;
  EXPECT_NE(one.find("docs/mpi.md"), std::string::npos);
  EXPECT_EQ(gpu_sharing_note(8, 4, false).rfind("8 ranks share 4 GPUs", 0), 0u);
}

// ------------------------------------------------------------------ errors

TEST_F(CaseTest, UnknownKeySuggestsClosest) {
  EXPECT_EQ(error_of(kBase + "[physics]\ngravity = 9.81\n"),
            "case.toml: unknown key 'physics.gravity' (did you mean 'physics.g'?)");
  EXPECT_EQ(error_of(kBase + "[numerics]\ncfk = 0.5\n"),
            "case.toml: unknown key 'numerics.cfk' (did you mean 'numerics.cfl'?)");
  EXPECT_EQ(error_of(kBase + "[phsyics]\ng = 9.81\n"),
            "case.toml: unknown section 'phsyics' (did you mean 'physics'?)");
  EXPECT_EQ(error_of(kBase + "[boundary]\nwest = { type = \"inflow\", dischage = 1 }\n"),
            "case.toml: unknown key 'boundary.west.dischage' (did you mean 'boundary.west.discharge'?)");
  EXPECT_EQ(error_of(kBase + "[output]\ngauges = [{ nam = \"a\", x = 1, y = 11 }]\n"),
            "case.toml: unknown key 'output.gauges[0].nam' (did you mean 'output.gauges[0].name'?)");
  const std::string e = error_of(kBase + "[output]\nzzzzzzzzzzzzzzzzzzz = 1\n");
  EXPECT_EQ(e, "case.toml: unknown key 'output.zzzzzzzzzzzzzzzzzzz' (valid: dir, format, gauges, arrival_threshold, "
               "precision, checkpoint_every, checkpoint_wall)");
  EXPECT_NE(e.find("unknown key"), std::string::npos) << e;
}

TEST_F(CaseTest, WrongTypes) {
  std::string e = error_of("[domain]\nnx = \"200\"\nny = 3\nx = [0, 1]\ny = [0, 1]\n[initial]\nh = 1\n" + kTime);
  EXPECT_EQ(e, "case.toml: domain.nx: expected an integer, found string \"200\"");
  e = error_of("[domain]\nnx = 2.5\nny = 3\nx = [0, 1]\ny = [0, 1]\n[initial]\nh = 1\n" + kTime);
  EXPECT_EQ(e, "case.toml: domain.nx: expected an integer, found float 2.5");
  e = error_of(kBase + "[physics]\ng = \"9.81\"\n");
  EXPECT_EQ(e, "case.toml: physics.g: expected a number, found string \"9.81\"");
  e = error_of(kBase + "[numerics]\ncfl = true\n");
  EXPECT_EQ(e, "case.toml: numerics.cfl: expected a number, found boolean true");
  e = error_of(kBase + "physics = 3\n");
  EXPECT_NE(e.find("unknown key"), std::string::npos) << e;  // after [time], 'physics' is time.physics
  e = error_of("physics = 3\n" + kBase);
  EXPECT_EQ(e, "case.toml: physics: expected a table, found integer 3");
  e = error_of(kDomain + "[initial]\neta = [1]\n" + kTime);
  EXPECT_EQ(e, "case.toml: initial.eta: expected an expression string, a number or { file = \"...\" }, found array");
  e = error_of(kBase + "[boundary]\nwest = 1\n");
  EXPECT_NE(e.find("case.toml: boundary.west: expected \"wall\", \"open\" or a table"), std::string::npos) << e;
  e = error_of(kBase + "[output]\nformat = [\"vtk\", \"pdf\"]\n");
  EXPECT_NE(e.find("case.toml: output.format[1]: unknown format 'pdf'"), std::string::npos) << e;
  e = error_of(kBase + "[output]\ngauges = { name = \"a\" }\n");
  EXPECT_NE(e.find("case.toml: output.gauges: expected an array of tables"), std::string::npos) << e;
}

TEST_F(CaseTest, TomlSyntaxErrorHasLineAndColumn) {
  const std::string e = error_of("[domain]\nnx = 4\nny = = 3\n");
  EXPECT_EQ(e.rfind("case.toml:3:", 0), 0u) << e;
  EXPECT_NE(e.find("TOML syntax error"), std::string::npos) << e;
}

TEST_F(CaseTest, NegativeDepthNamesKeyAndCell) {
  const std::string e = error_of(kDomain + "[initial]\nh = \"x - 2\"\n" + kTime);
  EXPECT_EQ(e, "case.toml: initial.h is negative (-1.5) at cell centre (x, y) = (0.5, 11)");
}

TEST_F(CaseTest, NonFiniteNamesKeyAndCell) {
  std::string e = error_of(kDomain + "[initial]\neta = \"sqrt(x - 1)\"\n" + kTime);
  EXPECT_EQ(e, "case.toml: initial.eta is nan at cell centre (x, y) = (0.5, 11)");
  e = error_of(kDomain + "[bathymetry]\nz = \"y > 14 ? 1/0 : 0\"\n[initial]\neta = 1\n" + kTime);
  EXPECT_EQ(e, "case.toml: bathymetry.z is inf at cell centre (x, y) = (0.5, 15)");
  e = error_of(kDomain + "[initial]\neta = 1\nu = \"x > 3 ? sqrt(-1) : 0\"\n" + kTime);
  EXPECT_EQ(e, "case.toml: initial.u is nan at cell centre (x, y) = (3.5, 11)");
  e = error_of(kBase + "[physics]\nmanning = nan\n");
  EXPECT_EQ(e, "case.toml: physics.manning: must be a finite number, found nan");
}

TEST_F(CaseTest, RangeChecks) {
  EXPECT_EQ(error_of(kBase + "[numerics]\ncfl = 1.5\n"), "case.toml: numerics.cfl: must be in (0, 1], found 1.5");
  EXPECT_EQ(error_of(kBase + "[numerics]\ncfl = 0\n"), "case.toml: numerics.cfl: must be in (0, 1], found 0");
  EXPECT_NO_THROW(parse(kBase + "[numerics]\ncfl = 1\n"));
  EXPECT_EQ(error_of(kBase + "[physics]\ng = 0\n"), "case.toml: physics.g: must be > 0 (m/s^2), found 0");
  EXPECT_NE(error_of(kBase + "[physics]\nmanning = -0.1\n").find("physics.manning: must be >= 0"), std::string::npos);
  EXPECT_NE(error_of(kBase + "[numerics]\nscheme = \"weno\"\n").find("numerics.scheme: unknown scheme 'weno' (valid: roe1, roe3)"),
            std::string::npos);
  EXPECT_NE(error_of(kBase + "[numerics]\nprecision = \"half\"\n").find("(valid: double, float)"), std::string::npos);
  EXPECT_NE(error_of("[domain]\nnx = 0\nny = 3\nx = [0, 1]\ny = [0, 1]\n[initial]\nh = 1\n" + kTime)
                .find("case.toml: domain.nx: must be > 0"),
            std::string::npos);
  EXPECT_NE(error_of("[domain]\nnx = 2\nny = 3\nx = [1, 0]\ny = [0, 1]\n[initial]\nh = 1\n" + kTime)
                .find("case.toml: domain.x: max must be greater than min"),
            std::string::npos);
}

TEST_F(CaseTest, MissingFile) {
  try {
    load_case(dir_ / "no_such_case.toml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), (dir_ / "no_such_case.toml").string() +
                                         ": cannot open case file (No such file or directory)");
  }
}

TEST_F(CaseTest, MissingAndConflictingSections) {
  EXPECT_NE(error_of("[initial]\nh = 1\n" + kTime).find("case.toml: missing section [domain]"), std::string::npos);
  EXPECT_NE(error_of(kDomain + kTime).find("case.toml: missing section [initial]"), std::string::npos);
  EXPECT_NE(error_of(kDomain + "[initial]\nh = 1\n").find("case.toml: missing section [time]"), std::string::npos);
  EXPECT_NE(error_of(kDomain + "[initial]\nh = 1\neta = 1\n" + kTime).find("either eta or h, not both"),
            std::string::npos);
  EXPECT_NE(error_of(kDomain + "[initial]\nhu = 1\n" + kTime).find("missing eta"), std::string::npos);
  EXPECT_NE(error_of(kDomain + "[initial]\nh = 1\nhu = 1\nv = 2\n" + kTime).find("either hu/hv"), std::string::npos);
}

TEST_F(CaseTest, ExpressionSyntaxErrorNamesKey) {
  const std::string e = error_of(kDomain + "[bathymetry]\nz = \"x +* 2\"\n[initial]\neta = 1\n" + kTime);
  EXPECT_EQ(e.rfind("case.toml: bathymetry.z: in expression \"x +* 2\": ", 0), 0u) << e;
  const std::string u = error_of(kDomain + "[bathymetry]\nz = \"t + 1\"\n[initial]\neta = 1\n" + kTime);
  EXPECT_EQ(u.rfind("case.toml: bathymetry.z: in expression \"t + 1\": ", 0), 0u) << u;
  // A lone = would assign to x (every cell 2): refused; ==, <=, >=, != compare.
  const std::string a = error_of(kDomain + "[initial]\neta = \"x=5 ? 2 : 0.5\"\n" + kTime);
  EXPECT_EQ(a.rfind("case.toml: initial.eta: in expression \"x=5 ? 2 : 0.5\": '=' at position 2 would assign", 0), 0u)
      << a;
  EXPECT_EQ(error_of(kDomain + "[initial]\neta = \"x==5 || x<=1 || x>=9 || x!=3 ? 2 : 0.5\"\n" + kTime), "");
}

// An inflow side feeds wet cells only (its ghost takes the depth inside):
// where every cell along it starts dry, the case says so; not where one is wet.
TEST_F(CaseTest, InflowSideAlongDryCellsIsNoted) {
  const std::string side = "[boundary]\nwest = { type = \"inflow\", discharge = 0.1 }\n";
  const Case dry = parse(kDomain + "[initial]\nh = 0\n" + side + kTime);
  ASSERT_EQ(dry.notes.size(), 1u);
  EXPECT_EQ(dry.notes[0].rfind("boundary.west: an inflow boundary brings water only into wet cells", 0), 0u)
      << dry.notes[0];
  EXPECT_NE(dry.notes[0].find("[[boundary.segment]] of type \"inflow\""), std::string::npos) << dry.notes[0];
  EXPECT_TRUE(parse(kDomain + "[initial]\nh = \"y < 13 ? 0.5 : 0\"\n" + side + kTime).notes.empty());
  EXPECT_TRUE(parse(kDomain + "[initial]\nh = 0\n" + kTime).notes.empty());
}

TEST_F(CaseTest, CoordinatesBeyondAnyMapAreRefused) {
  const std::string far = "[domain]\nnx = 4\nny = 4\nx = [-1.7e308, 1.7e308]\ny = [0, 1]\n[initial]\nh = 1\n" + kTime;
  EXPECT_NE(error_of(far).find("case.toml: domain: the grid spans x = [-1.7e+308, inf]"), std::string::npos)
      << error_of(far);
  const std::string wide = "[domain]\nnx = 4\nny = 4\nx = [0, 1e13]\ny = [0, 1]\n[initial]\nh = 1\n" + kTime;
  EXPECT_NE(error_of(wide).find("within +-1e12 m"), std::string::npos) << error_of(wide);
}

TEST_F(CaseTest, BoundaryErrors) {
  EXPECT_NE(error_of(kBase + "[boundary]\nwest = \"inflow\"\n").find("boundary.west: an inflow boundary needs its discharge"),
            std::string::npos);
  EXPECT_NE(error_of(kBase + "[boundary]\nnorth = { type = \"level\" }\n").find("boundary.north: type \"level\" needs 'eta'"),
            std::string::npos);
  EXPECT_NE(error_of(kBase + "[boundary]\nnorth = \"wal\"\n").find("unknown boundary type 'wal' (did you mean 'wall'?"),
            std::string::npos);
  EXPECT_NE(error_of(kBase + "[boundary]\neast = { type = \"open\", eta = 1 }\n").find("boundary.east.eta: only used by type \"level\""),
            std::string::npos);
}

TEST_F(CaseTest, GaugeOutsideDomainNamesGauge) {
  EXPECT_EQ(error_of(kBase + "[output]\ngauges = [{ name = \"in\", x = 1, y = 11 }, { name = \"far\", x = 5, y = 11 }]\n"),
            "case.toml: output.gauges[1]: gauge 'far' at (5, 11) is outside the domain [0, 4] x [10, 16]");
  EXPECT_NE(error_of(kBase + "[output]\ngauges = [{ name = \"a\", x = 1, y = 11 }, { name = \"a\", x = 2, y = 11 }]\n")
                .find("used twice"),
            std::string::npos);
  EXPECT_EQ(error_of(kBase + "[output]\ngauges = [{ name = \"a,b\", x = 1, y = 11 }]\n"),
            "case.toml: output.gauges[0].name: gauge name 'a,b' may not contain commas, quotes or line breaks");
  const Case c = parse(kBase + "[output]\ngauges = [{ x = 1, y = 11 }, { x = 2, y = 12 }]\n");
  ASSERT_EQ(c.output.gauges.size(), 2u);
  EXPECT_EQ(c.output.gauges[0].name, "g1");
  EXPECT_EQ(c.output.gauges[1].name, "g2");
}

TEST_F(CaseTest, OutputPrecisionFollowsTheRunUnlessGiven) {
  EXPECT_EQ(parse(kBase).output.precision, Precision::double_precision);
  EXPECT_EQ(parse(kBase + "[numerics]\nprecision = \"float\"\n").output.precision, Precision::single_precision);
  EXPECT_EQ(parse(kBase + "[output]\nprecision = \"float\"\n").output.precision, Precision::single_precision);
  EXPECT_EQ(parse(kBase + "[numerics]\nprecision = \"float\"\n[output]\nprecision = \"double\"\n").output.precision,
            Precision::double_precision);
  EXPECT_EQ(error_of(kBase + "[output]\nprecision = \"half\"\n"),
            "case.toml: output.precision: unknown precision 'half' (valid: float, double)");
}

// ------------------------------------------------------------------ speed bounds

// The walled box of issue 12 (h = 1): u = 1e30, 1e10 and 1e3 m/s are input
// errors naming the key, the cell and its centre.
TEST_F(CaseTest, InitialSpeedBeyondMaxSpeedNamesKeyAndCell) {
  for (const char* u : {"1e30", "1e10", "1e3"}) {
    const std::string e = error_of(kDomain + "[initial]\nh = 1\nu = " + u + "\n" + kTime);
    EXPECT_EQ(e.rfind("case.toml: initial.u: initial speed ", 0), 0u) << e;
    EXPECT_NE(e.find("at cell (i, j) = (0, 0), centre (x, y) = (0.5, 11), exceeds physics.max_speed = 100 m/s"),
              std::string::npos)
        << e;
  }
  // The fastest cell is named, through the component that carries its speed.
  std::string e = error_of(kDomain + "[initial]\nh = 2\nhu = \"x > 3 ? 0 : 1\"\nhv = \"x > 3 ? 300 : 0\"\n" + kTime);
  EXPECT_EQ(e, "case.toml: initial.hv: initial speed 150 m/s at cell (i, j) = (3, 0), centre (x, y) = (3.5, 11), "
               "exceeds physics.max_speed = 100 m/s (raise physics.max_speed if the flow is meant to be that fast)");
  // Dry cells carry no speed; the bound can be raised; it must be positive.
  EXPECT_EQ(error_of(kDomain + "[initial]\nh = \"x < 1 ? 0 : 1\"\nu = \"x < 1 ? 1e9 : 10\"\n" + kTime), "");
  EXPECT_EQ(error_of(kDomain + "[initial]\nh = 1\nu = 1e3\n" + kTime + "[physics]\nmax_speed = 1e3\n"), "");
  e = error_of(kBase + "[physics]\nmax_speed = 0\n");
  EXPECT_EQ(e, "case.toml: physics.max_speed: must be > 0 (m/s), found 0");
}

TEST_F(CaseTest, InflowDischargeBeyondCriticalAtMaxSpeedNamesBoundaryKey) {
  const std::string e =
      error_of(kBase + "[boundary]\nwest = { type = \"inflow\", discharge = 1e10 }\n", {"physics.max_speed=10"});
  EXPECT_EQ(e.rfind("case.toml: boundary.west.discharge: discharge 1e+10 m^2/s exceeds max_speed^3 / g = 101.9", 0), 0u)
      << e;
  EXPECT_EQ(error_of(kBase + "[boundary]\nwest = { type = \"inflow\", discharge = 1e10 }\n"
                     "[physics]\nmax_speed = 1e4\n"),
            "");
}
