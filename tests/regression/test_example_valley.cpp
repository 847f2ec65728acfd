// SPDX-License-Identifier: MIT
// The valley example (cases/valley) through the command line, at 50 m cells
// and 4000 s so that it takes a second: the forcing brings exactly the
// volumes its time series hold, and behind walls the water is all accounted.
// The DEM is read from its ESRI ASCII twin, so the test runs without GDAL.
#include <gtest/gtest.h>

#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "support/cli_runs.hpp"

namespace valley_tests {

using shallows::test_support::read;
using shallows::test_support::Result;
using shallows::test_support::shell;
using shallows::test_support::summary_number;
using shallows::test_support::temp_dir;

namespace fs = std::filesystem;

const fs::path kCaseDir = fs::path(SHALLOWS_SOURCE_DIR) / "cases" / "valley";

// The reduced run: the case's extent in 40 x 30 cells of 50 m, to t = 4000 s,
// which ends inside a rising limb of the hydrograph and a falling one of the
// hyetograph (so the last step integrates a part of a segment).
constexpr int kNx = 40, kNy = 30;
constexpr double kX0 = 500000.0, kX1 = 502000.0, kY0 = 5200000.0, kY1 = 5201500.0;
constexpr double kEnd = 4000.0;

// (time, value) rows of a case's CSV series: header lines (not starting with
// a digit) and '#' comments skipped.
std::vector<std::pair<double, double>> read_series(const fs::path& file) {
  std::ifstream f(file);
  if (!f) throw std::runtime_error("cannot open " + file.string());
  std::vector<std::pair<double, double>> rows;
  std::string line;
  while (std::getline(f, line)) {
    line = line.substr(0, line.find('#'));
    const std::size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || !(std::isdigit(static_cast<unsigned char>(line[start])) || line[start] == '.'))
      continue;
    const std::size_t comma = line.find(',');
    rows.emplace_back(std::stod(line.substr(0, comma)), std::stod(line.substr(comma + 1)));
  }
  return rows;
}

// Exact integral over [0, t_end] of the series, linear between rows and held
// constant beyond the first and last ones.
double series_integral(const std::vector<std::pair<double, double>>& rows, double t_end) {
  const auto value_at = [&](double t) {
    if (t <= rows.front().first) return rows.front().second;
    for (std::size_t k = 1; k < rows.size(); ++k) {
      const auto [t0, v0] = rows[k - 1];
      const auto [t1, v1] = rows[k];
      if (t <= t1) return v0 + (v1 - v0) * (t - t0) / (t1 - t0);
    }
    return rows.back().second;
  };
  // Trapezoids between 0, every row time inside (0, t_end), and t_end.
  std::vector<double> knots{0.0};
  for (const auto& [t, v] : rows)
    if (t > 0.0 && t < t_end) knots.push_back(t);
  knots.push_back(t_end);
  double sum = 0;
  for (std::size_t k = 1; k < knots.size(); ++k)
    sum += 0.5 * (value_at(knots[k - 1]) + value_at(knots[k])) * (knots[k] - knots[k - 1]);
  return sum;
}

std::string reduced_run(const fs::path& out, const std::string& dem, const std::string& extra = "") {
  char grid[256];
  std::snprintf(grid, sizeof grid,
                " --set domain.nx=%d --set domain.ny=%d --set 'domain.x=[%.1f, %.1f]' --set 'domain.y=[%.1f, %.1f]'",
                kNx, kNy, kX0, kX1, kY0, kY1);
  return "run " + (kCaseDir / "case.toml").string() + " -o " + out.string() + " --threads 1" + grid +
         " --set 'bathymetry.z={file=\"" + dem + "\"}' --set time.end=" + std::to_string(kEnd) +
         " --set time.output_every=" + std::to_string(kEnd) + " --set 'output.format=[]' " + extra;
}

double rain_volume_expected() {
  // mm/h times s -> m: / 1000 / 3600; every cell is active (the DEM has no NODATA).
  const double depth = series_integral(read_series(kCaseDir / "hyetograph.csv"), kEnd) / 3.6e6;
  return depth * (kX1 - kX0) * (kY1 - kY0);
}

double source_volume_expected() { return series_integral(read_series(kCaseDir / "hydrograph.csv"), kEnd); }

TEST(ExampleValley, ForcingBringsTheVolumesOfItsTimeSeries) {
  const fs::path out = temp_dir("volumes");
  const Result r = shell(reduced_run(out, "dem.asc"));
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string summary = read(out / "summary.json");
  EXPECT_EQ(summary_number(summary, "cells"), kNx * kNy) << summary;
  const double source = source_volume_expected();
  const double rain = rain_volume_expected();
  EXPECT_NEAR(summary_number(summary, "source_volume"), source, 1e-9 * source) << summary;
  EXPECT_NEAR(summary_number(summary, "rain_volume"), rain, 1e-9 * rain) << summary;
  EXPECT_GT(summary_number(summary, "infiltration_volume"), 0.0) << summary;
  // The east side lets the water out, and the account of the sides closes the balance.
  EXPECT_NE(summary.find("\"closed_domain\": false"), std::string::npos) << summary;
  EXPECT_GT(summary_number(summary, "boundary_outflow_volume"), 0.0) << summary;
  EXPECT_NE(summary.find("\"mass_balance_ok\": true"), std::string::npos) << summary;
  EXPECT_LT(std::abs(summary_number(summary, "mass_balance_residual")), 1e-10) << summary;
}

TEST(ExampleValley, WalledValleyAccountsForAllItsWater) {
  const fs::path out = temp_dir("walled");
  const Result r = shell(reduced_run(out, "dem.asc", "--set boundary.east=wall --strict"));
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string summary = read(out / "summary.json");
  EXPECT_NE(summary.find("\"closed_domain\": true"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"mass_balance_ok\": true"), std::string::npos) << summary;
  EXPECT_LT(std::abs(summary_number(summary, "mass_balance_residual")), 1e-10) << summary;
  // The same forcing as with the open side, and the soil took some of it.
  const double source = source_volume_expected();
  const double rain = rain_volume_expected();
  EXPECT_NEAR(summary_number(summary, "source_volume"), source, 1e-9 * source) << summary;
  EXPECT_NEAR(summary_number(summary, "rain_volume"), rain, 1e-9 * rain) << summary;
  EXPECT_GT(summary_number(summary, "infiltration_volume"), 0.0) << summary;
}

// The tracer comes with the river only: behind walls and without
// infiltration (which takes it with the water), the valley holds at the end
// exactly the tracer the hydrograph brought, at concentration 1.
TEST(ExampleValley, WalledValleyKeepsTheTracerTheRiverBrings) {
  const fs::path out = temp_dir("tracer");
  const Result r =
      shell(reduced_run(out, "dem.asc", "--set boundary.east=wall --set 'infiltration={model=\"none\"}'"));
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string summary = read(out / "summary.json");
  const double source = source_volume_expected();
  EXPECT_EQ(summary_number(summary, "initial_mass"), 0.0) << summary;
  EXPECT_NEAR(summary_number(summary, "final_mass"), source, 1e-10 * source) << summary;
}

#ifdef SHALLOWS_HAVE_GDAL
// dem.tif and dem.asc hold the same numbers on the same grid (make_valley.py
// writes elevations exact in float32), so the two give the same run.
TEST(ExampleValley, GeoTiffAndAsciiTwinGiveTheSameRun) {
  const fs::path tif = temp_dir("tif");
  const fs::path asc = temp_dir("asc");
  const Result rt = shell(reduced_run(tif, "dem.tif"));
  ASSERT_EQ(rt.code, 0) << rt.output;
  const Result ra = shell(reduced_run(asc, "dem.asc"));
  ASSERT_EQ(ra.code, 0) << ra.output;
  EXPECT_EQ(read(tif / "gauges.csv"), read(asc / "gauges.csv"));
  const std::string st = read(tif / "summary.json");
  const std::string sa = read(asc / "summary.json");
  for (const char* key : {"steps", "initial_volume", "final_volume", "rain_volume", "infiltration_volume",
                          "source_volume"})
    EXPECT_EQ(summary_number(st, key), summary_number(sa, key)) << key;
}
#endif

} // namespace
