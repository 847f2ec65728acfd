// SPDX-License-Identifier: MIT
// Case files with forcing (seed 004): CSV time series, rain (NetCDF stacks
// included), infiltration, a Manning map, point sources and inflow segments
// along a side; their units, the cells they reach, and the errors a user meets.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/io/gmsh.hpp"
#include "shallows/io/time_series.hpp"
#include "shallows/mesh/unstructured/generator.hpp"
#include "shallows/mesh/unstructured/locate.hpp"
#include "support/rain_stack_file.hpp"

#include "support/case_fixture.hpp"

namespace fs = std::filesystem;
using namespace shallows;
using shallows::io::Case;
using shallows::io::InputError;

namespace {

class ForcingCaseTest : public shallows::test_support::CaseFixture {};

std::string series_error(std::string_view text) {
  try {
    io::parse_time_series(text, "q.csv", 1.0, "discharge (m^3/s)");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// An odd grid: 5 x 3 cells of 2 m, centres x = 1, 3, 5, 7, 9 and y = 11, 13, 15.
const std::string kForcingDomain = R"T(
[domain]
nx = 5
ny = 3
x = [0, 10]
y = [10, 16]
)T";
const std::string kForcingBase = kForcingDomain + "[initial]\nh = 0.5\n[time]\nend = 1200\n";

// The same grid's bed with two inactive cells: (i, j) = (0, 1) on the west
// side and (2, 0) on the south side. First row: the northernmost.
const std::string kHoles = R"(ncols 5
nrows 3
xllcorner 0
yllcorner 10
cellsize 2
NODATA_value -9999
0 0 0 0 0
-9999 0 0 0 0
0 0 -9999 0 0
)";

constexpr double kMmPerHour = 1.0 / 3.6e6;  // m/s

std::vector<index_t> cells_of(const Case& c, std::size_t source) { return c.problem.forcing.sources[source].cells; }

bool has(const std::string& message, const std::string& part) { return message.find(part) != std::string::npos; }

} // namespace

// ------------------------------------------------------------------ time series

TEST(TimeSeries, ReadsRowsWithHeaderCommentsAndSpaces) {
  const TimeSeries s = io::parse_time_series(
      "\xEF\xBB\xBFtime (s), rate (mm/h)\n# a storm\n\n0,0\n  600 ,  36  # peak\r\n1200,+1.5e1\n", "rain.csv",
      kMmPerHour, "rain rate (mm/h)");
  EXPECT_EQ(s.t, (std::vector<double>{0, 600, 1200}));
  ASSERT_EQ(s.v.size(), 3u);
  EXPECT_EQ(s.v[0], 0.0);
  EXPECT_DOUBLE_EQ(s.v[1], 1e-5);  // 36 mm/h
  EXPECT_DOUBLE_EQ(s.v[2], 15 * kMmPerHour);
}

TEST(TimeSeries, OneRowIsAConstant) {
  const TimeSeries s = io::parse_time_series("t,Q\n0,2.5\n", "q.csv", 1.0, "discharge (m^3/s)");
  EXPECT_EQ(s.t, std::vector<double>{0});
  EXPECT_EQ(s.v, std::vector<double>{2.5});
}

TEST(TimeSeries, ErrorsNameTheFileAndLine) {
  EXPECT_EQ(series_error("t,Q\n0,1\n10,2\n10,3\n"), "q.csv:4: times must increase strictly, found 10 s after 10 s");
  EXPECT_EQ(series_error("0,1\n5,x\n"), "q.csv:2: discharge (m^3/s) 'x' is not a number");
  EXPECT_EQ(series_error("0,1\nfive,2\n"), "q.csv:2: time 'five' is not a number");
  EXPECT_EQ(series_error("0,1\n5,nan\n"), "q.csv:2: discharge (m^3/s) must be finite, found 'nan'");
  EXPECT_EQ(series_error("inf,1\n"), "q.csv:1: time must be finite, found 'inf'");
  EXPECT_EQ(series_error("0;1\n"), "q.csv:1: expected two columns time,value separated by a comma, found '0;1'");
  EXPECT_EQ(series_error("0,1,2\n"), "q.csv:1: expected two columns time,value separated by a comma, found '0,1,2'");
  EXPECT_EQ(series_error("# nothing\ntime,Q\n\n"),
            "q.csv: no rows (expected lines time,value with time in s and discharge (m^3/s))");
  // A line of words after the first row is no header.
  EXPECT_EQ(series_error("0,1\ntime,Q\n"), "q.csv:2: time 'time' is not a number");
}

TEST_F(ForcingCaseTest, TimeSeriesFileThatCannotBeOpened) {
  try {
    io::read_time_series(dir_ / "missing.csv", 1.0, "discharge (m^3/s)");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_TRUE(has(e.what(), (dir_ / "missing.csv").string() + ": cannot open time series file")) << e.what();
  }
}

// ------------------------------------------------------------------ rain

TEST_F(ForcingCaseTest, NoForcingKeysNoForcing) {
  const Case c = parse(kForcingBase);
  EXPECT_FALSE(c.problem.forcing.active());
}

TEST_F(ForcingCaseTest, ConstantRainInMillimetresPerHour) {
  const Case c = parse(kForcingBase + "[rain]\nrate = 36\n");
  const Rain& r = c.problem.forcing.rain;
  ASSERT_EQ(r.rate.t.size(), 1u);
  EXPECT_DOUBLE_EQ(r.rate.v[0], 1e-5);
  EXPECT_TRUE(r.scale.empty());
  EXPECT_TRUE(c.problem.forcing.active());
}

TEST_F(ForcingCaseTest, RainHyetographFromCsv) {
  write("storm.csv", "time,rate\n0,0\n600,36\n1200,0\n");
  const Case c = parse(kForcingBase + "[rain]\nrate = { series = \"storm.csv\" }\n");
  const Rain& r = c.problem.forcing.rain;
  EXPECT_EQ(r.rate.t, (std::vector<double>{0, 600, 1200}));
  ASSERT_EQ(r.rate.v.size(), 3u);
  EXPECT_DOUBLE_EQ(r.rate.v[1], 1e-5);
  EXPECT_TRUE(r.scale.empty());
}

// A side whose condition follows a CSV series: its values, the run's length, and the speed bound on every value.
TEST_F(ForcingCaseTest, BoundarySeriesFromCsv) {
  write("tide.csv", "time,eta\n0,1.0\n1200,1.5\n");
  write("short.csv", "time,eta\n0,1.0\n600,1.5\n");
  write("q.csv", "time,q\n0,1\n600,200000\n1200,1\n");
  const Case c = parse(kForcingBase + "[boundary]\neast = { type = \"level\", eta = \"tide.csv\" }\n");
  const TimeSeries& tide = c.problem.forcing.boundary[static_cast<int>(Side::east)];
  EXPECT_EQ(tide.v, (std::vector<double>{1.0, 1.5}));
  EXPECT_EQ(c.problem.bc(Side::east).value, 1.0);
  EXPECT_NE(error_of(kForcingBase + "[boundary]\neast = { type = \"level\", eta = \"short.csv\" }\n")
                .find("boundary.east.eta: the run lasts until 1200 s but the series ends at 600 s"),
            std::string::npos);
  EXPECT_NE(error_of(kForcingBase + "[boundary]\nwest = { type = \"inflow\", discharge = \"q.csv\" }\n")
                .find("boundary.west.discharge: discharge 200000 m^2/s at t = 600 s exceeds max_speed^3 / g"),
            std::string::npos);
}

TEST_F(ForcingCaseTest, RainFieldGivesPerCellRates) {
  const Case c = parse(kForcingBase + "[rain]\nrate = \"3.6 * x\"\n");
  const Rain& r = c.problem.forcing.rain;
  EXPECT_EQ(r.rate.t, std::vector<double>{0});
  EXPECT_EQ(r.rate.v, std::vector<double>{1.0});
  ASSERT_EQ(r.scale.size(), 15u);
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 5; ++i) EXPECT_DOUBLE_EQ(r.scale[static_cast<std::size_t>(j * 5 + i)], (1 + 2 * i) * 1e-6);
}

TEST_F(ForcingCaseTest, RainRasterGivesPerCellRates) {
  write("rain.asc", "ncols 5\nnrows 3\nxllcorner 0\nyllcorner 10\ncellsize 2\n"
                    "0 0 0 0 72\n0 0 0 0 0\n36 0 0 0 0\n");
  const Case c = parse(kForcingBase + "[rain]\nrate = { file = \"rain.asc\" }\n");
  const Rain& r = c.problem.forcing.rain;
  ASSERT_EQ(r.scale.size(), 15u);
  EXPECT_DOUBLE_EQ(r.scale[0], 1e-5);   // south-west
  EXPECT_DOUBLE_EQ(r.scale[14], 2e-5);  // north-east
  EXPECT_EQ(r.scale[7], 0.0);
  EXPECT_EQ(r.rate.v, std::vector<double>{1.0});
}

TEST_F(ForcingCaseTest, RainErrors) {
  EXPECT_EQ(error_of(kForcingBase + "[rain]\nrate = -1\n"), "case.toml: rain.rate: must be >= 0 (mm/h), found -1");
  EXPECT_EQ(error_of(kForcingBase + "[rain]\nrate = \"x - 2\"\n"),
            "case.toml: rain.rate is -1 at cell centre (x, y) = (1, 11): must be >= 0 (mm/h)");
  EXPECT_TRUE(has(error_of(kForcingBase + "[rain]\n"), "case.toml: rain.rate: missing (mm/h"));
  EXPECT_EQ(error_of(kForcingBase + "[rain]\nrates = 3\n"), "case.toml: unknown key 'rain.rates' (did you mean 'rain.rate'?)");
  EXPECT_EQ(error_of(kForcingBase + "[rain]\nrate = { hyetograph = \"a.csv\" }\n"),
            "case.toml: rain.rate: table needs 'series' (a CSV hyetograph) or 'file' (a raster of rates)");
  EXPECT_EQ(error_of(kForcingBase + "[rain]\nrate = { series = \"a.csv\", file = \"b.asc\" }\n"),
            "case.toml: rain.rate: give either series (a CSV hyetograph) or file (a raster of rates), not both");

  write("short.csv", "0,10\n600,5\n");
  EXPECT_EQ(error_of(kForcingBase + "[rain]\nrate = { series = \"short.csv\" }\n"),
            "case.toml: rain.rate.series: the run lasts until 1200 s but " + (dir_ / "short.csv").string() +
                " ends at 600 s");
  // One row: a constant, whatever the run's length.
  write("one.csv", "0,10\n");
  EXPECT_EQ(error_of(kForcingBase + "[rain]\nrate = { series = \"one.csv\" }\n"), "");
  // A series may start after t = 0.
  write("late.csv", "300,10\n1200,5\n");
  EXPECT_EQ(error_of(kForcingBase + "[rain]\nrate = { series = \"late.csv\" }\n"), "");

  write("negative.csv", "0,10\n600,-5\n1200,0\n");
  EXPECT_EQ(error_of(kForcingBase + "[rain]\nrate = { series = \"negative.csv\" }\n"),
            "case.toml: rain.rate.series: " + (dir_ / "negative.csv").string() +
                ": rain rate (mm/h) is negative at t = 600 s (rain rates must be >= 0)");
  write("bad.csv", "0,10\n600,ten\n");
  EXPECT_EQ(error_of(kForcingBase + "[rain]\nrate = { series = \"bad.csv\" }\n"),
            "case.toml: rain.rate.series: " + (dir_ / "bad.csv").string() +
                ":2: rain rate (mm/h) 'ten' is not a number");
}

TEST_F(ForcingCaseTest, RainFromAnOverride) {
  const Case c = parse(kForcingBase, {"rain.rate=36"});
  EXPECT_DOUBLE_EQ(c.problem.forcing.rain.rate.v.at(0), 1e-5);
  EXPECT_EQ(error_of(kForcingBase, {"rain.rate=-3"}), "--set: rain.rate: must be >= 0 (mm/h), found -3");
}

// ------------------------------------------------------------------ rain stacks (NetCDF)

namespace {

using test_support::StackFile;
#if defined(SHALLOWS_HAVE_NETCDF)
using test_support::write_stack;
#endif

const std::string kStack = "[rain]\nrate = { file = \"radar.nc\", variable = \"rr\" }\n";

}  // namespace

#if defined(SHALLOWS_HAVE_NETCDF)

// Frames in mm/h (no units attribute), times in minutes since a date taken
// as the run's start; the frames the run [0, 1200 s] uses are kept: from the
// last at or before 0 to the last before the end. Rows north first in the
// file, south first in the frames.
TEST_F(ForcingCaseTest, RainStackGivesFramesInMetresPerSecondFromTheRunsStart) {
  StackFile s;
  s.times = {-5, 0, 10, 20, 30};
  s.time_units = "minutes since 2024-06-01 00:00:00";
  write_stack(dir_ / "radar.nc", s);
  const Case c = parse(kForcingBase + kStack);
  const Rain& r = c.problem.forcing.rain;
  EXPECT_TRUE(c.problem.forcing.active());
  EXPECT_TRUE(r.rate.empty());
  EXPECT_TRUE(r.scale.empty());
  EXPECT_EQ(r.frame_times, (std::vector<double>{0, 600}));
  ASSERT_EQ(r.frames.size(), 2u * 15u);
  for (std::size_t k = 0; k < 2; ++k)
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t i = 0; i < 5; ++i)
        EXPECT_EQ(r.frames[k * 15 + j * 5 + i], static_cast<double>(s.value(k + 1, i, 2 - j)) * kMmPerHour)
            << "frame " << k << ", cell " << i << ", " << j;
}

TEST_F(ForcingCaseTest, RainStackHonoursUnitsAndATimeVariableNamedInTheCase) {
  StackFile s;
  s.time_name = "t";
  s.times = {-0.5, 0.25};
  s.time_units = "hours";
  s.y = {11, 13, 15};  // south first
  for (const auto& [units, to_mps] : std::vector<std::pair<std::string, double>>{
           {"mm h-1", kMmPerHour}, {"mm/hr", kMmPerHour}, {"m s-1", 1.0}, {"kg m-2 s-1", 1e-3}}) {
    s.units = units;
    write_stack(dir_ / "radar.nc", s);
    const Case c = parse(kForcingBase + "[rain]\nrate = { file = \"radar.nc\", variable = \"rr\", time = \"t\" }\n");
    const Rain& r = c.problem.forcing.rain;
    EXPECT_EQ(r.frame_times, (std::vector<double>{-1800, 900})) << units;
    ASSERT_EQ(r.frames.size(), 30u) << units;
    EXPECT_EQ(r.frames[15 + 2 * 5 + 4], static_cast<double>(s.value(1, 4, 2)) * to_mps) << units;
  }
}

// A fill value where the bed is NODATA is no error; inactive cells get 0.
TEST_F(ForcingCaseTest, RainStackLeavesInactiveCellsDry) {
  write("holes.asc", kHoles);
  StackFile s;
  s.fill = -9999.0f;
  s.value = [](std::size_t, std::size_t c, std::size_t r) { return c == 0 && r == 1 ? -9999.0f : 36.0f; };
  write_stack(dir_ / "radar.nc", s);
  const Case c = parse(kForcingBase + "[bathymetry]\nz = { file = \"holes.asc\" }\n" + kStack);
  const Rain& r = c.problem.forcing.rain;
  ASSERT_EQ(r.frames.size(), 30u);
  EXPECT_EQ(r.frames[5], 0.0);  // (0, 1)
  EXPECT_EQ(r.frames[2], 0.0);  // (2, 0)
  EXPECT_DOUBLE_EQ(r.frames[15 + 6], 1e-5);
}

// Packed rates (shorts times scale_factor plus add_offset) with a fill value.
TEST_F(ForcingCaseTest, PackedRainStackIsUnpacked) {
  write("holes.asc", kHoles);
  StackFile s;
  s.scale_factor = 0.5;
  s.add_offset = 1.0;
  s.fill = -1.0f;
  s.value = [](std::size_t k, std::size_t c, std::size_t r) {
    return c == 0 && r == 1 ? -1.0f : static_cast<float>(10 * k + c + 4 * r);
  };
  write_stack(dir_ / "radar.nc", s);
  const Case c = parse(kForcingBase + "[bathymetry]\nz = { file = \"holes.asc\" }\n" + kStack);
  const Rain& r = c.problem.forcing.rain;
  ASSERT_EQ(r.frames.size(), 30u);
  EXPECT_EQ(r.frames[5], 0.0);  // the fill value, in the inactive cell (0, 1)
  for (std::size_t k = 0; k < 2; ++k)
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t i = 0; i < 5; ++i) {
        if ((i == 0 && j == 1) || (i == 2 && j == 0)) continue;
        const double raw = double(10 * k + i + 4 * (2 - j));
        EXPECT_EQ(r.frames[k * 15 + j * 5 + i], (raw * 0.5 + 1.0) * kMmPerHour) << k << " " << i << " " << j;
      }
}

// A coarser stack that covers the domain is resampled, as rasters are: here
// each 2 m cell lies in one 6 m cell of the stack.
TEST_F(ForcingCaseTest, CoarserRainStackIsResampledOntoTheGrid) {
  StackFile s;
  s.x = {3, 9};
  s.y = {13, 19};
  s.value = [](std::size_t k, std::size_t c, std::size_t r) { return static_cast<float>(1 + k + 2 * c + 4 * r); };
  write_stack(dir_ / "radar.nc", s);
  for (const char* method : {"", ", resample = \"nearest\""}) {
    const Case c = parse(kForcingBase + "[rain]\nrate = { file = \"radar.nc\", variable = \"rr\"" + method + " }\n");
    const Rain& r = c.problem.forcing.rain;
    ASSERT_EQ(r.frames.size(), 30u);
    for (std::size_t k = 0; k < 2; ++k)
      for (std::size_t j = 0; j < 3; ++j)
        for (std::size_t i = 0; i < 5; ++i)
          EXPECT_DOUBLE_EQ(r.frames[k * 15 + j * 5 + i], double(1 + k + 2 * (i < 3 ? 0 : 1)) * kMmPerHour) << method;
  }
}

TEST_F(ForcingCaseTest, RainStackErrorsNameTheFileTheFrameAndTheCell) {
  const std::string file = (dir_ / "radar.nc").string();
  const std::string at = "case.toml: rain.rate: " + file + ": ";
  const auto error_with = [&](const StackFile& s, const std::string& rain = kStack) {
    write_stack(dir_ / "radar.nc", s);
    return error_of(kForcingBase + rain);
  };
  StackFile s;
  EXPECT_EQ(error_with(s, "[rain]\nrate = { file = \"radar.nc\", variable = \"rain\" }\n"),
            at + "no variable 'rain' (variables: time, y, x, rr)");
  EXPECT_EQ(error_with(s, "[rain]\nrate = { file = \"radar.nc\", time = \"time\" }\n"),
            "case.toml: rain.rate: a NetCDF stack needs 'variable' (the name of its rain-rate variable)");
  EXPECT_EQ(error_with(s, "[rain]\nrate = { file = \"radar.nc\", variable = \"rr\", time = \"t\" }\n"),
            at + "no variable 't' (the time of each frame of 'rr'; variables: time, y, x, rr)");

  StackFile shifted;
  shifted.x = {2, 4, 6, 8, 10};
  EXPECT_EQ(error_with(shifted),
            at + "the stack's grid (5 x 3 cells of 2 x 2 m over [1, 11] x [10, 16]) and the run's (5 x 3 cells of "
                 "2 x 2 m over [0, 10] x [10, 16]) differ: at the grid's resolution a stack must have the grid's "
                 "cells (at another it is resampled)");
  StackFile small;  // 6 m cells over [2, 14] x [10, 22]
  small.x = {5, 11};
  small.y = {13, 19};
  EXPECT_TRUE(has(error_with(small), "differ, and the stack does not cover the domain"));

  StackFile gap;
  gap.fill = -1.0f;
  gap.value = [](std::size_t k, std::size_t c, std::size_t r) { return k == 1 && c == 1 && r == 1 ? -1.0f : 2.0f; };
  EXPECT_EQ(error_with(gap),
            at + "'rr' has no value (a fill value or NaN) at cell centre (x, y) = (3, 13) in the frame at t = 600 s "
                 "(an active cell)");
  StackFile nan;
  nan.value = [](std::size_t k, std::size_t c, std::size_t r) {
    return k == 0 && c == 4 && r == 0 ? std::numeric_limits<float>::quiet_NaN() : 2.0f;
  };
  EXPECT_EQ(error_with(nan),
            at + "'rr' has no value (a fill value or NaN) at cell centre (x, y) = (9, 15) in the frame at t = 0 s "
                 "(an active cell)");
  StackFile negative;
  negative.units = "m/s";
  negative.value = [](std::size_t, std::size_t c, std::size_t r) { return c == 0 && r == 2 ? -2.0f : 0.0f; };
  EXPECT_EQ(error_with(negative),
            at + "'rr' is -2 m/s at cell centre (x, y) = (1, 11) in the frame at t = 0 s: rain rates must be >= 0");

  StackFile huge;
  huge.value = [](std::size_t k, std::size_t c, std::size_t r) {
    return k == 1 && c == 2 && r == 0 ? std::numeric_limits<float>::infinity() : 2.0f;
  };
  EXPECT_EQ(error_with(huge),
            at + "'rr' is inf mm/h at cell centre (x, y) = (5, 15) in the frame at t = 600 s: rain rates must be finite");

  StackFile late;
  late.times = {60, 600};
  EXPECT_EQ(error_with(late),
            at + "the first frame of 'rr' is at t = 60 s, after the run's start (t = 0): the stack must begin at "
                 "or before it");
  StackFile inches;
  inches.units = "in/h";
  EXPECT_EQ(error_with(inches), at + "variable 'rr' has units 'in/h' (known: mm/h, mm h-1, mm/hr, mm hr-1, mm/s, "
                                     "mm s-1, m/s, m s-1, kg m-2 s-1; none: mm/h)");
  StackFile weeks;
  weeks.time_units = "weeks since 2024-01-01";
  EXPECT_TRUE(has(error_with(weeks), at + "time variable 'time' has units 'weeks since 2024-01-01' (known: s,"));
  StackFile backwards;
  backwards.times = {0, 600, 300};
  EXPECT_EQ(error_with(backwards), at + "the times of 'time' must increase strictly, found 300 s after 600 s");
  StackFile uneven;
  uneven.x = {1, 3, 5, 7, 10};
  EXPECT_TRUE(has(error_with(uneven), at + "'x' is not evenly spaced"));

  EXPECT_TRUE(has(error_of(kForcingBase + "[rain]\nrate = { file = \"none.nc\", variable = \"rr\" }\n"),
                  "case.toml: rain.rate: " + (dir_ / "none.nc").string() + ": cannot open as NetCDF"));
  EXPECT_EQ(error_of(kForcingBase + "[rain]\nrate = { file = \"radar.nc\", variable = \"rr\", series = \"a.csv\" }\n"),
            "case.toml: rain.rate: give either series (a CSV hyetograph) or variable (a NetCDF stack), not both");
}

#else

TEST_F(ForcingCaseTest, RainStackNeedsABuildWithNetCdf) {
  EXPECT_EQ(error_of(kForcingBase + kStack), "case.toml: rain.rate: " + (dir_ / "radar.nc").string() +
                                          ": a NetCDF rain stack needs a build with NetCDF (libnetcdf-dev); this "
                                          "build has none");
}

#endif

// ------------------------------------------------------------------ infiltration

TEST_F(ForcingCaseTest, GreenAmptNumbersAreUniformParameters) {
  const Case c = parse(kForcingBase + R"(
[infiltration]
model = "green_ampt"
conductivity = 36    # mm/h
suction = 0.11       # m
deficit = 0.3
)");
  const Infiltration& inf = c.problem.forcing.infiltration;
  EXPECT_EQ(inf.model, InfiltrationModel::green_ampt);
  ASSERT_EQ(inf.p0.size(), 1u);
  EXPECT_DOUBLE_EQ(inf.p0[0], 1e-5);
  EXPECT_EQ(inf.p1, std::vector<double>{0.11});
  EXPECT_EQ(inf.p2, std::vector<double>{0.3});
}

TEST_F(ForcingCaseTest, GreenAmptFieldsArePerCell) {
  const Case c = parse(kForcingBase + R"(
[infiltration]
model = "green_ampt"
conductivity = "x < 5 ? 3.6 : 36"
suction = 0.2
deficit = "(y - 10) / 10"
)");
  const Infiltration& inf = c.problem.forcing.infiltration;
  ASSERT_EQ(inf.p0.size(), 15u);
  ASSERT_EQ(inf.p2.size(), 15u);
  EXPECT_EQ(inf.p1.size(), 1u);
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 5; ++i) {
      const auto k = static_cast<std::size_t>(j * 5 + i);
      EXPECT_DOUBLE_EQ(inf.p0[k], i < 2 ? 1e-6 : 1e-5);
      EXPECT_NEAR(inf.p2[k], (1 + 2 * j) / 10.0, 1e-15);
    }
}

TEST_F(ForcingCaseTest, InitialAndConstantLoss) {
  const Case c = parse(kForcingBase + "[infiltration]\nmodel = \"initial_constant\"\ninitial_loss = 5\nloss_rate = 3.6\n");
  const Infiltration& inf = c.problem.forcing.infiltration;
  EXPECT_EQ(inf.model, InfiltrationModel::initial_constant);
  ASSERT_EQ(inf.p0.size(), 1u);
  EXPECT_DOUBLE_EQ(inf.p0[0], 0.005);  // 5 mm
  ASSERT_EQ(inf.p1.size(), 1u);
  EXPECT_DOUBLE_EQ(inf.p1[0], 1e-6);   // 3.6 mm/h
  EXPECT_EQ(inf.p2, std::vector<double>{0.0});
}

TEST_F(ForcingCaseTest, NoInfiltrationModel) {
  const Case c = parse(kForcingBase + "[infiltration]\nmodel = \"none\"\n");
  EXPECT_EQ(c.problem.forcing.infiltration.model, InfiltrationModel::none);
  EXPECT_FALSE(c.problem.forcing.active());
}

TEST_F(ForcingCaseTest, InfiltrationErrors) {
  const std::string ga = kForcingBase + "[infiltration]\nmodel = \"green_ampt\"\n";
  EXPECT_EQ(error_of(ga + "suction = 0.1\ndeficit = 0.3\n"),
            "case.toml: infiltration.conductivity: missing: model \"green_ampt\" needs the saturated hydraulic "
            "conductivity Ks (mm/h)");
  EXPECT_TRUE(has(error_of(ga + "conductivity = 1\ndeficit = 0.3\n"),
                  "case.toml: infiltration.suction: missing: model \"green_ampt\" needs"));
  EXPECT_EQ(error_of(ga + "conductivity = -1\nsuction = 0.1\ndeficit = 0.3\n"),
            "case.toml: infiltration.conductivity: must be >= 0 (mm/h), found -1");
  EXPECT_EQ(error_of(ga + "conductivity = 1\nsuction = 0.1\ndeficit = 1.5\n"),
            "case.toml: infiltration.deficit: must be in [0, 1] (dimensionless), found 1.5");
  EXPECT_EQ(error_of(ga + "conductivity = 1\nsuction = \"x - 3\"\ndeficit = 0.3\n"),
            "case.toml: infiltration.suction is -2 at cell centre (x, y) = (1, 11): must be >= 0 (m)");
  EXPECT_EQ(error_of(ga + "conductivity = 1\nsuction = 0.1\ndeficit = 0.3\nloss_rate = 2\n"),
            "case.toml: infiltration.loss_rate: only used by model \"initial_constant\", not \"green_ampt\"");
  EXPECT_EQ(error_of(ga + "conductivity = 1\nsuction = 0.1\ndeficit = 0.3\nconductivty = 2\n"),
            "case.toml: unknown key 'infiltration.conductivty' (did you mean 'infiltration.conductivity'?)");
  EXPECT_EQ(error_of(kForcingBase + "[infiltration]\nmodel = \"none\"\nsuction = 0.1\n"),
            "case.toml: infiltration.suction: only used by model \"green_ampt\", not \"none\"");
  const std::string horton = error_of(kForcingBase + "[infiltration]\nmodel = \"horton\"\n");
  EXPECT_TRUE(has(horton, "case.toml: infiltration.model: unknown model 'horton'")) << horton;
  EXPECT_TRUE(has(horton, "valid: green_ampt, initial_constant, none")) << horton;
  EXPECT_EQ(error_of(kForcingBase + "[infiltration]\nconductivity = 1\n"),
            "case.toml: infiltration.model: missing (green_ampt, initial_constant or none)");
  EXPECT_EQ(error_of(kForcingBase + "[infiltration]\nmodel = \"initial_constant\"\ninitial_loss = 5\n"),
            "case.toml: infiltration.loss_rate: missing: model \"initial_constant\" needs the constant loss rate "
            "(mm/h)");
}

// ------------------------------------------------------------------ Manning

TEST_F(ForcingCaseTest, ManningNumberKeepsTheSchemesFriction) {
  const Case c = parse(kForcingBase + "[physics]\nmanning = 0.03\n");
  EXPECT_DOUBLE_EQ(c.problem.physics.n_manning, 0.03);
  EXPECT_TRUE(c.problem.forcing.manning.empty());
}

TEST_F(ForcingCaseTest, ManningExpressionIsAMap) {
  const Case c = parse(kForcingBase + "[physics]\nmanning = \"x < 4 ? 0.03 : 0.01 * (y - 10)\"\n");
  const Problem& p = c.problem;
  EXPECT_EQ(p.physics.n_manning, 0.0);  // the map's friction comes from the forcing
  ASSERT_EQ(p.forcing.manning.size(), 15u);
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 5; ++i) {
      const double x = 1 + 2 * i, y = 11 + 2 * j;
      EXPECT_DOUBLE_EQ(p.forcing.manning[static_cast<std::size_t>(j * 5 + i)], x < 4 ? 0.03 : 0.01 * (y - 10));
    }
  EXPECT_TRUE(p.forcing.active());
}

TEST_F(ForcingCaseTest, ManningRasterIsAMapAndInactiveCellsGetZero) {
  write("z.asc", kHoles);
  write("n.asc", "ncols 5\nnrows 3\nxllcorner 0\nyllcorner 10\ncellsize 2\nNODATA_value -9999\n"
                 "0.05 0.05 0.05 0.05 0.05\n-9999 0.04 0.04 0.04 0.04\n0.03 0.03 -9999 0.03 0.03\n");
  const Case c = parse(kForcingBase + "[bathymetry]\nz = { file = \"z.asc\" }\n[physics]\nmanning = { file = \"n.asc\" }\n");
  const auto& n = c.problem.forcing.manning;
  ASSERT_EQ(n.size(), 15u);
  EXPECT_EQ(n[0], 0.03);
  EXPECT_EQ(n[2], 0.0);  // inactive, NODATA
  EXPECT_EQ(n[5], 0.0);  // inactive, NODATA
  EXPECT_EQ(n[6], 0.04);
  EXPECT_EQ(n[14], 0.05);
}

TEST_F(ForcingCaseTest, ManningErrors) {
  EXPECT_EQ(error_of(kForcingBase + "[physics]\nmanning = \"0.05 - 0.01 * x\"\n"),
            "case.toml: physics.manning is -0.02 at cell centre (x, y) = (7, 11): must be >= 0 (s/m^(1/3))");
  EXPECT_EQ(error_of(kForcingBase + "[physics]\nmanning = \"x > 8 ? 1/0 : 0.03\"\n"),
            "case.toml: physics.manning is inf at cell centre (x, y) = (9, 11)");
  EXPECT_EQ(error_of(kForcingBase + "[physics]\nmanning = -0.1\n"),
            "case.toml: physics.manning: must be >= 0 (s/m^(1/3)), found -0.1");
  write("n.asc", "ncols 5\nnrows 3\nxllcorner 0\nyllcorner 10\ncellsize 2\nNODATA_value -9999\n"
                 "0.05 0.05 0.05 0.05 0.05\n0.04 0.04 -9999 0.04 0.04\n0.03 0.03 0.03 0.03 0.03\n");
  EXPECT_EQ(error_of(kForcingBase + "[physics]\nmanning = { file = \"n.asc\" }\n"),
            "case.toml: physics.manning is nan at cell centre (x, y) = (5, 13) (NODATA in an active cell)");
}

// ------------------------------------------------------------------ point sources

TEST_F(ForcingCaseTest, SourcesFindTheCellThatHoldsThePoint) {
  write("q.csv", "t,Q\n0,0\n600,2\n1200,0\n");
  const Case c = parse(kForcingBase + R"(
[[source]]
name = "well"
x = 5.5
y = 13.2
discharge = -0.25
[[source]]
x = 10
y = 16
discharge = "q.csv"
[[source]]
x = 0
y = 12
discharge = 1
)");
  const auto& s = c.problem.forcing.sources;
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].name, "source 'well'");
  EXPECT_EQ(s[0].cells, std::vector<index_t>{1 * 5 + 2});  // (i, j) = (2, 1)
  EXPECT_EQ(s[0].discharge.v, std::vector<double>{-0.25});  // a sink
  EXPECT_EQ(s[1].name, "source 2");
  EXPECT_EQ(s[1].cells, std::vector<index_t>{14});  // the north-east corner belongs to the last cell
  EXPECT_EQ(s[1].discharge.t, (std::vector<double>{0, 600, 1200}));
  EXPECT_EQ(s[1].discharge.v, (std::vector<double>{0, 2, 0}));
  EXPECT_EQ(s[2].cells, std::vector<index_t>{5});  // y = 12: an edge goes to the cell north of it
  EXPECT_TRUE(c.problem.forcing.active());
}

TEST_F(ForcingCaseTest, SourcesFromAnOverride) {
  const Case c = parse(kForcingBase, {"source=[{ name = \"pump\", x = 3, y = 11, discharge = -0.1 }]"});
  ASSERT_EQ(c.problem.forcing.sources.size(), 1u);
  EXPECT_EQ(c.problem.forcing.sources[0].name, "source 'pump'");
  EXPECT_EQ(c.problem.forcing.sources[0].cells, std::vector<index_t>{1});
}

TEST_F(ForcingCaseTest, SourceErrors) {
  EXPECT_EQ(error_of(kForcingBase + "[[source]]\nname = \"well\"\nx = 11\ny = 12\ndischarge = 1\n"),
            "case.toml: source[0]: source 'well' at (11, 12) is outside the domain [0, 10] x [10, 16]");
  write("z.asc", kHoles);
  EXPECT_EQ(error_of(kForcingBase + "[bathymetry]\nz = { file = \"z.asc\" }\n[[source]]\nx = 1\ny = 13\ndischarge = 1\n"),
            "case.toml: source[0]: source 1 at (1, 13) lies in the inactive cell (i, j) = (0, 1) (bathymetry.z is "
            "NODATA there)");
  EXPECT_EQ(error_of(kForcingBase + "[[source]]\nx = 1\ny = 13\n"),
            "case.toml: source[0]: source 1 needs its discharge (m^3/s, a number or a CSV file \"q.csv\")");
  EXPECT_EQ(error_of(kForcingBase + "[[source]]\nx = 1\ndischarge = 1\n"),
            "case.toml: source[0]: source 1 needs both x and y (m)");
  EXPECT_EQ(error_of(kForcingBase + "[[source]]\nname = \"a\"\nx = 1\ny = 13\ndischarge = 1\n"
                             "[[source]]\nname = \"a\"\nx = 3\ny = 13\ndischarge = 1\n"),
            "case.toml: source[1].name: source name 'a' used twice");
  EXPECT_EQ(error_of(kForcingBase + "[[source]]\nx = 1\ny = 13\ndischarge = 1\nzzzzzzz = 2\n"),
            "case.toml: unknown key 'source[0].zzzzzzz' (valid: name, x, y, discharge, scale, concentration)");
  EXPECT_EQ(error_of(kForcingBase + "[[source]]\nx = 1\ny = 13\ndischarge = [1, 2]\n"),
            "case.toml: source[0].discharge: expected a number (m^3/s) or a CSV file name, found array");
  write("short.csv", "0,1\n600,2\n");
  EXPECT_EQ(error_of(kForcingBase + "[[source]]\nx = 1\ny = 13\ndischarge = \"short.csv\"\n"),
            "case.toml: source[0].discharge: the run lasts until 1200 s but " + (dir_ / "short.csv").string() +
                " ends at 600 s");
  EXPECT_TRUE(has(error_of(kForcingBase + "[[source]]\nx = 1\ny = 13\ndischarge = \"none.csv\"\n"),
                  "case.toml: source[0].discharge: " + (dir_ / "none.csv").string() +
                      ": cannot open time series file"));
  EXPECT_EQ(error_of("source = 3\n" + kForcingBase),
            "case.toml: source: expected an array of tables [[source]] with x, y and discharge, found integer 3");
  // More than critical flow at max_speed carries out through the cell's perimeter (8 m): 1e300 m^3/s used to end
  // the run non-finite a step later, naming no source. At max_speed = 10 m/s the bound is 1000 / 9.81 x 8 m.
  const std::string big = error_of(kForcingBase + "[[source]]\nname = \"big\"\nx = 1\ny = 13\ndischarge = 1e300\n");
  EXPECT_TRUE(has(big, "case.toml: source[0].discharge: source 'big': discharge 1e+300 m^3/s exceeds ")) << big;
  EXPECT_TRUE(has(big, "through the perimeter of its cells (8 m; raise physics.max_speed")) << big;
  write("flood.csv", "0,1\n600,900\n1200,1\n");
  const std::string series =
      error_of(kForcingBase + "[[source]]\nx = 1\ny = 13\ndischarge = \"flood.csv\"\n", {"physics.max_speed=10"});
  EXPECT_TRUE(has(series, "case.toml: source[0].discharge: source 1: discharge 900 m^3/s at t = 600 s exceeds 815.49"))
      << series;
  EXPECT_TRUE(has(error_of(kForcingBase + "[[source]]\nx = 1\ny = 13\ndischarge = -900\n", {"physics.max_speed=10"}),
                  "discharge -900 m^3/s exceeds"));
  EXPECT_EQ(error_of(kForcingBase + "[[source]]\nx = 1\ny = 13\ndischarge = -800\n", {"physics.max_speed=10"}), "");
}

// ------------------------------------------------------------------ inflow segments

TEST_F(ForcingCaseTest, SegmentsTakeTheCellsOfTheSideWhoseCentresLieInTheRange) {
  write("hydrograph.csv", "time,Q\n0,0\n300,5\n1200,1\n");
  const Case c = parse(kForcingBase + R"(
[[boundary.segment]]
side = "west"
from = 10
to = 16
type = "inflow"
hydrograph = "hydrograph.csv"
[[boundary.segment]]
side = "south"
from = 3      # centres 3, 5, 7: the ends count
to = 7
type = "inflow"
discharge = 2
[[boundary.segment]]
side = "east"
from = 12
to = 16
type = "inflow"
discharge = 0.5
[[boundary.segment]]
side = "north"
from = 8.5
to = 10
type = "inflow"
discharge = 0
)");
  const auto& s = c.problem.forcing.sources;
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].name, "segment west 10-16");
  EXPECT_EQ(cells_of(c, 0), (std::vector<index_t>{0, 5, 10}));
  EXPECT_EQ(s[0].discharge.t, (std::vector<double>{0, 300, 1200}));
  EXPECT_EQ(s[0].discharge.v, (std::vector<double>{0, 5, 1}));
  EXPECT_EQ(s[1].name, "segment south 3-7");
  EXPECT_EQ(cells_of(c, 1), (std::vector<index_t>{1, 2, 3}));
  EXPECT_EQ(s[1].discharge.v, std::vector<double>{2});
  EXPECT_EQ(cells_of(c, 2), (std::vector<index_t>{9, 14}));
  EXPECT_EQ(s[3].name, "segment north 8.5-10");
  EXPECT_EQ(cells_of(c, 3), std::vector<index_t>{14});
  // The existing sides' keys keep working beside the segments.
  for (int k = 0; k < 4; ++k) EXPECT_EQ(c.problem.boundary[static_cast<std::size_t>(k)].kind, BoundaryKind::wall);
}

// Level, open and wall segments: a condition of their own on the side's
// cells in [from, to] (Problem::segments), beside inflow segments (sources).
TEST_F(ForcingCaseTest, LevelOpenAndWallSegments) {
  write("tide.csv", "time,eta\n0,1.0\n600,1.5\n1200,1.2\n");
  const Case c = parse(kForcingBase + R"(
[boundary]
east = "open"
[[scalar]]
name = "salt"
[[boundary.segment]]
side = "west"
from = 10
to = 14
type = "level"
eta = "tide.csv"
concentration = { salt = 35 }
[[boundary.segment]]
side = "east"
from = 12
to = 16
type = "wall"
[[boundary.segment]]
side = "south"
from = 3
to = 7
type = "inflow"
discharge = 2
[[boundary.segment]]
side = "north"
from = 0
to = 4
type = "open"
[[boundary.segment]]
side = "north"
from = 5
to = 10
type = "level"
eta = 0.75
)");
  const auto& g = c.problem.segments;
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g[0].name, "segment west 10-14");
  EXPECT_EQ(g[0].where.side, Side::west);
  EXPECT_EQ(g[0].where.begin, 0);  // centres at y = 11, 13
  EXPECT_EQ(g[0].where.end, 2);
  EXPECT_EQ(g[0].where.bc.kind, BoundaryKind::level);
  EXPECT_EQ(g[0].where.bc.value, 1.0);
  EXPECT_EQ(g[0].value.v, (std::vector<double>{1.0, 1.5, 1.2}));
  EXPECT_EQ(g[1].where.bc.kind, BoundaryKind::wall);
  EXPECT_EQ(g[1].where.begin, 1);
  EXPECT_EQ(g[1].where.end, 3);
  EXPECT_EQ(g[2].where.bc.kind, BoundaryKind::open);
  EXPECT_EQ(g[2].where.begin, 0);  // centres at x = 1, 3
  EXPECT_EQ(g[2].where.end, 2);
  EXPECT_EQ(g[3].where.bc.kind, BoundaryKind::level);
  EXPECT_EQ(g[3].where.bc.value, 0.75);
  EXPECT_TRUE(g[3].value.empty());
  EXPECT_EQ(c.problem.forcing.sources.size(), 1u);
  EXPECT_EQ(c.problem.scalars[0].segments, (std::vector<double>{35, 0, 0, 0}));
  EXPECT_EQ(c.problem.scalars[0].sources, std::vector<double>{0});

  const auto segment = [](const std::string& side, double from, double to, const std::string& rest) {
    return "[[boundary.segment]]\nside = \"" + side + "\"\nfrom = " + std::to_string(from) +
           "\nto = " + std::to_string(to) + "\n" + rest;
  };
  EXPECT_EQ(error_of(kForcingBase + segment("west", 10, 16, "type = \"level\"\n")),
            "case.toml: boundary.segment[0]: a level segment needs eta (free-surface elevation, m: a number or a CSV "
            "time series)");
  EXPECT_EQ(error_of(kForcingBase + segment("west", 10, 16, "type = \"open\"\neta = 1\n")),
            "case.toml: boundary.segment[0].eta: only used by type \"level\", not \"open\"");
  EXPECT_EQ(error_of(kForcingBase + segment("west", 10, 16, "type = \"wall\"\ndischarge = 1\n")),
            "case.toml: boundary.segment[0].discharge: only used by type \"inflow\", not \"wall\"");
  EXPECT_EQ(error_of(kForcingBase + segment("west", 10, 16, "type = \"inflow\"\ndischarge = 1\neta = 2\n")),
            "case.toml: boundary.segment[0].eta: only used by type \"level\", not \"inflow\"");
  EXPECT_EQ(error_of(kForcingBase + segment("west", 10, 13, "type = \"open\"\n") +
                     segment("west", 12, 16, "type = \"level\"\neta = 1\n")),
            "case.toml: boundary.segment[1]: segment west 12-16 overlaps segment west 10-13 (boundary.segment[0])");
  EXPECT_EQ(error_of(kForcingBase + "[[scalar]]\nname = \"salt\"\n" +
                     segment("west", 10, 16, "type = \"open\"\nconcentration = { salt = 1 }\n")),
            "case.toml: boundary.segment[0].concentration: only used by types \"inflow\" and \"level\" (water that "
            "enters), not \"open\"");
  write("short.csv", "0,1\n600,2\n");
  EXPECT_EQ(error_of(kForcingBase + segment("west", 10, 16, "type = \"level\"\neta = \"short.csv\"\n")),
            "case.toml: boundary.segment[0].eta: the run lasts until 1200 s but " + (dir_ / "short.csv").string() +
                " ends at 600 s");
}

TEST_F(ForcingCaseTest, SegmentsSkipInactiveCellsAndFollowPointSources) {
  write("z.asc", kHoles);
  const Case c = parse(kForcingBase + R"(
[bathymetry]
z = { file = "z.asc" }
[boundary]
east = "open"
[[boundary.segment]]
side = "west"
from = 10
to = 16
type = "inflow"
discharge = 1
[[boundary.segment]]
side = "south"
from = 2
to = 8
type = "inflow"
discharge = 1
[[source]]
x = 9
y = 15
discharge = 1
)");
  const auto& s = c.problem.forcing.sources;
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].name, "source 1");  // sources first, then segments: the order executors apply them in
  EXPECT_EQ(cells_of(c, 1), (std::vector<index_t>{0, 10}));
  EXPECT_EQ(cells_of(c, 2), (std::vector<index_t>{1, 3}));
  EXPECT_EQ(c.problem.bc(Side::east).kind, BoundaryKind::open);
}

TEST_F(ForcingCaseTest, SegmentErrors) {
  const auto segment = [](const std::string& side, double from, double to, const std::string& rest) {
    return "[[boundary.segment]]\nside = \"" + side + "\"\nfrom = " + std::to_string(from) +
           "\nto = " + std::to_string(to) + "\n" + rest;
  };
  const std::string inflow = "type = \"inflow\"\ndischarge = 1\n";

  EXPECT_EQ(error_of(kForcingBase + segment("west", 10, 13, inflow) + segment("east", 10, 13, inflow) +
                     segment("west", 12, 16, inflow)),
            "case.toml: boundary.segment[2]: segment west 12-16 overlaps segment west 10-13 (boundary.segment[0])");
  // Ends that meet on a cell centre share that cell.
  EXPECT_EQ(error_of(kForcingBase + segment("south", 0, 3, inflow) + segment("south", 3, 10, inflow)),
            "case.toml: boundary.segment[1]: segment south 3-10 overlaps segment south 0-3 (boundary.segment[0])");
  EXPECT_EQ(error_of(kForcingBase + segment("south", 0, 4, inflow) + segment("south", 4, 10, inflow)), "");
  // Its three cells' perimeter, 24 m, bounds the discharge as for a point source (SourceErrors).
  const std::string fast =
      error_of(kForcingBase + segment("west", 10, 16, "type = \"inflow\"\ndischarge = 3000\n"), {"physics.max_speed=10"});
  EXPECT_TRUE(has(fast, "case.toml: boundary.segment[0].discharge: segment west 10-16: discharge 3000 m^3/s exceeds"))
      << fast;
  EXPECT_EQ(
      error_of(kForcingBase + segment("west", 10, 16, "type = \"inflow\"\ndischarge = 2000\n"), {"physics.max_speed=10"}), "");

  EXPECT_EQ(error_of(kForcingBase + "[boundary]\nwest = \"open\"\n" + segment("west", 10, 16, inflow)),
            "case.toml: boundary.segment[0]: an inflow segment brings its water in as a source along a walled side; "
            "make the side a wall (boundary.west is \"open\")");
  EXPECT_EQ(error_of(kForcingBase + segment("west", 10, 16, "type = \"outflow\"\ndischarge = 1\n")),
            "case.toml: boundary.segment[0].type: unknown segment type 'outflow' (did you mean 'inflow'? valid: inflow, "
            "level, open, wall)");
  EXPECT_EQ(error_of(kForcingBase + segment("west", 10, 16, "type = \"inflow\"\ndischarge = -1\n")),
            "case.toml: boundary.segment[0].discharge: must be >= 0 (m^3/s into the domain), found -1 (a [[source]] "
            "with a negative discharge takes water out)");
  write("q.csv", "0,1\n600,-0.5\n1200,1\n");
  EXPECT_EQ(error_of(kForcingBase + segment("west", 10, 16, "type = \"inflow\"\nhydrograph = \"q.csv\"\n")),
            "case.toml: boundary.segment[0].hydrograph: " + (dir_ / "q.csv").string() +
                ": discharge (m^3/s) is negative at t = 600 s (an inflow segment only brings water in; a [[source]] "
                "with a negative discharge takes it out)");
  EXPECT_EQ(error_of(kForcingBase + segment("west", 10, 16, "type = \"inflow\"\n")),
            "case.toml: boundary.segment[0]: an inflow segment needs hydrograph = \"q.csv\" or discharge = Q (total "
            "m^3/s into the domain)");
  EXPECT_EQ(error_of(kForcingBase + segment("west", 10, 16, "type = \"inflow\"\ndischarge = 1\nhydrograph = \"q.csv\"\n")),
            "case.toml: boundary.segment[0]: give either hydrograph (a CSV file) or discharge (m^3/s), not both");
  EXPECT_EQ(error_of(kForcingBase + segment("west", 16, 10, inflow)),
            "case.toml: boundary.segment[0]: from must be less than to, found from = 16, to = 10");
  EXPECT_EQ(error_of(kForcingBase + segment("west", 11.5, 12.5, inflow)),
            "case.toml: boundary.segment[0]: segment west 11.5-12.5: no cell of the west side has its centre "
            "in y = [11.5, 12.5] (centres at y = 11 + 2 k, k = 0..2)");
  write("z.asc", kHoles);
  EXPECT_TRUE(has(error_of(kForcingBase + "[bathymetry]\nz = { file = \"z.asc\" }\n" + segment("west", 12, 14, inflow)),
                  "case.toml: boundary.segment[0]: segment west 12-14: every cell of the west side in it is inactive"));
  EXPECT_EQ(error_of(kForcingBase + "[[boundary.segment]]\nside = \"north\"\nfrom = 1\n" + inflow),
            "case.toml: boundary.segment[0]: needs from and to (x along the north side, m)");
  EXPECT_EQ(error_of(kForcingBase + segment("up", 10, 16, inflow)),
            "case.toml: boundary.segment[0].side: unknown side 'up' (valid: west, east, south, north)");
  EXPECT_EQ(error_of(kForcingBase + segment("west", 10, 16, "discharge = 1\n")),
            "case.toml: boundary.segment[0].type: missing (inflow, level, open or wall)");
  EXPECT_EQ(error_of(kForcingBase + segment("west", 10, 16, inflow + "zzzzzzzzzz = 2\n")),
            "case.toml: unknown key 'boundary.segment[0].zzzzzzzzzz' (valid: side, from, to, type, hydrograph, "
            "discharge, scale, eta, concentration)");
  EXPECT_EQ(error_of(kForcingBase + "[boundary]\nsegment = 3\n"),
            "case.toml: boundary.segment: expected an array of tables [[boundary.segment]] with side, from, to, type, "
            "found integer 3");
}

// ------------------------------------------------------------------ meshes

TEST_F(ForcingCaseTest, MeshesTakeTheForcingAtTheirCells) {
  RectangleMeshSpec spec;
  spec.x1 = 4;
  spec.y1 = 2;
  spec.nx = 4;
  spec.ny = 2;
  spec.shuffle = true;
  io::write_gmsh(dir_ / "m.msh", rectangle_mesh(spec), true);
  const std::string mesh = "[mesh]\nfile = \"m.msh\"\n[initial]\nh = 1\n[time]\nend = 1\n";
  const Problem p = parse(mesh +
                          "[rain]\nrate = \"x < 2 ? 36 : 72\"\n"
                          "[infiltration]\nmodel = \"green_ampt\"\nconductivity = \"y < 1 ? 3.6 : 7.2\"\n"
                          "suction = 0.1\ndeficit = 0.3\n"
                          "[physics]\nmanning = \"x < 1 ? 0.05 : 0.02\"\n"
                          "[[source]]\nname = \"well\"\nx = 3.3\ny = 0.6\ndischarge = 0.5\n")
                        .problem;
  const UnstructuredMesh& m = *p.mesh;
  const auto cells = static_cast<std::size_t>(m.cells());
  ASSERT_EQ(p.forcing.rain.scale.size(), cells);
  ASSERT_EQ(p.forcing.infiltration.p0.size(), cells);
  ASSERT_EQ(p.forcing.manning.size(), cells);
  EXPECT_EQ(p.physics.n_manning, 0.0);  // the map's friction comes with the forcing
  for (std::size_t c = 0; c < cells; ++c) {
    EXPECT_DOUBLE_EQ(p.forcing.rain.scale[c], (m.cell_x[c] < 2 ? 36 : 72) / 3.6e6);
    EXPECT_DOUBLE_EQ(p.forcing.infiltration.p0[c], (m.cell_y[c] < 1 ? 3.6 : 7.2) / 3.6e6);
    EXPECT_DOUBLE_EQ(p.forcing.manning[c], m.cell_x[c] < 1 ? 0.05 : 0.02);
  }
  // The source is in the cell that holds (3.3, 0.6).
  ASSERT_EQ(p.forcing.sources.size(), 1u);
  ASSERT_EQ(p.forcing.sources[0].cells.size(), 1u);
  const auto c = static_cast<std::size_t>(p.forcing.sources[0].cells[0]);
  EXPECT_TRUE(cell_contains(m, c, 3.3, 0.6));
  EXPECT_GT(m.cell_x[c], 3.0);
  EXPECT_LT(m.cell_y[c], 1.0);

  EXPECT_EQ(error_of(mesh + "[[source]]\nx = 5\ny = 1\ndischarge = 1\n"),
            "case.toml: source[0]: source 1 at (5, 1) is outside the mesh " + (dir_ / "m.msh").string() +
                " (in no cell; bounding box [0, 4] x [0, 2])");
  EXPECT_EQ(error_of(mesh + "[[boundary.segment]]\nside = \"west\"\nfrom = 0\nto = 1\ntype = \"inflow\"\n"
                            "discharge = 1\n"),
            "case.toml: boundary.segment: boundary segments run on Cartesian grids; on a mesh, give the stretch a "
            "physical line group of its own in the mesh file and its condition under [boundary] (this case runs on a "
            "mesh, [mesh])");
  EXPECT_DOUBLE_EQ(parse(mesh + "[physics]\nmanning = 0.03\n").problem.physics.n_manning, 0.03);
}
