// SPDX-License-Identifier: MIT
// The valley example with structures (cases/valley-structures) through the
// command line, to t = 3 h: a road embankment with a bridge and a culvert,
// and a levee that breaches at 1.5 h. The mass balance closes with the
// structures moving water; the breach lets the river into the land behind
// the levee, which stays dry before it opens; the culvert drains what the
// road holds back; the breach's volume is part of its levee's. Label slow
// (about 10 s on two cores).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli_runs.hpp"

namespace valley_structures_tests {

using shallows::test_support::read;
using shallows::test_support::Result;
using shallows::test_support::shell;
using shallows::test_support::summary_number;
using shallows::test_support::temp_dir;

namespace fs = std::filesystem;

constexpr double kBreachOpens = 5400.0;  // the case's start of the breach (s)

// A structure's volume in summary.json's "structures".
double structure_volume(const std::string& summary, const std::string& name) {
  const std::size_t at = summary.find("{\"name\": \"" + name + "\", \"volume\": ");
  return at == std::string::npos ? std::nan("") : summary_number(summary, "volume", at);
}

// One column of a CSV with a header, by name, with the time column beside it.
struct Column {
  std::vector<double> time, value;
};
Column csv_column(const fs::path& file, const std::string& name) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream hs(line);
  for (std::string cell; std::getline(hs, cell, ',');) header.push_back(cell);
  std::size_t col = 0;
  while (col < header.size() && header[col] != name) ++col;
  Column c;
  if (col == header.size()) return c;
  while (std::getline(in, line)) {
    std::vector<double> row;
    std::stringstream rs(line);
    for (std::string cell; std::getline(rs, cell, ',');) row.push_back(std::stod(cell));
    c.time.push_back(row[0]);
    c.value.push_back(row[col]);
  }
  return c;
}

TEST(ExampleValleyStructures, BreachFloodsTheLandBehindTheLeveeAndTheBalanceCloses) {
  const fs::path out = temp_dir("valley-structures");
  const Result r = shell("run " + std::string(SHALLOWS_SOURCE_DIR) + "/cases/valley-structures/case.toml -q -t 2 -o " +
                         out.string() + " --strict --set time.end=10800 --set 'output.format=[]'");
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string summary = read(out / "summary.json");
  EXPECT_NE(summary.find("\"mass_balance_ok\": true"), std::string::npos) << summary;
  EXPECT_LT(std::abs(summary_number(summary, "mass_balance_residual")), 1e-10) << summary;

  // The levee's line runs west to east: its left is the land behind it, so water into it counts negative.
  const double breach = structure_volume(summary, "breach"), levee = structure_volume(summary, "levee");
  EXPECT_LT(breach, -5000.0) << summary;
  EXPECT_LE(levee, breach) << "the breach's water is part of its levee's\n" << summary;
  EXPECT_GT(structure_volume(summary, "culvert"), 500.0) << summary;

  // Behind the levee: no more than the rain's film before the breach, a flood after it.
  const Column polder = csv_column(out / "gauges.csv", "polder_h");
  ASSERT_FALSE(polder.time.empty());
  double before = 0;
  for (std::size_t k = 0; k < polder.time.size(); ++k)
    if (polder.time[k] <= kBreachOpens) before = std::max(before, polder.value[k]);
  EXPECT_LT(before, 0.01);
  EXPECT_GT(polder.value.back(), 0.2);

  // The breach: closed until it opens, then 20 m wide and growing, never beyond 100 m.
  const Column width = csv_column(out / "structures.csv", "breach_width");
  ASSERT_FALSE(width.time.empty());
  for (std::size_t k = 0; k < width.time.size(); ++k) {
    if (width.time[k] < kBreachOpens) {
      EXPECT_EQ(width.value[k], 0.0) << "t = " << width.time[k];
    }
    if (width.time[k] > kBreachOpens) {
      EXPECT_GE(width.value[k], 20.0) << "t = " << width.time[k];
      EXPECT_LE(width.value[k], 100.0) << "t = " << width.time[k];
    }
  }
}

}  // namespace valley_structures_tests
