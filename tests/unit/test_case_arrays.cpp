// SPDX-License-Identifier: MIT
// Fields given as values per cell (io::FieldArrays, the Python package's
// arrays): read as the reader reads a raster, their errors naming the key.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "shallows/io/case.hpp"

namespace fs = std::filesystem;
using shallows::io::Case;
using shallows::io::FieldArrays;
using shallows::io::InputError;
using shallows::io::parse_case;

namespace {

// 3 columns, 2 rows; eta 1 over a bed the arrays replace.
const std::string kCase = R"T(
[domain]
nx = 3
ny = 2
x = [0, 3]
y = [0, 2]
[initial]
eta = 1
[time]
end = 1
)T";

Case parse(const FieldArrays& arrays, const std::vector<std::string>& overrides = {}) {
  return parse_case(kCase, "case.toml", fs::current_path(), overrides, arrays);
}

std::string error_of(const FieldArrays& arrays, const std::vector<std::string>& overrides = {}) {
  try {
    parse(arrays, overrides);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST(CaseArrays, BedIsTakenRowMajorFromTheSouthernRowAndTheDepthFollowsIt) {
  const std::vector<double> z{0.0, 0.1, 0.2, 0.5, 0.6, 0.7};  // row 0 (south), then row 1
  const Case c = parse({{"bathymetry.z", z}});
  EXPECT_EQ(c.problem.z, z);
  for (std::size_t k = 0; k < z.size(); ++k) EXPECT_DOUBLE_EQ(c.problem.h[k], 1.0 - z[k]);
}

TEST(CaseArrays, AnArrayTakesThePlaceOfTheKeysValueAndAddsItsSection) {
  const std::vector<double> n{0.01, 0.02, 0.03, 0.04, 0.05, 0.06};
  const Case c = parse({{"physics.manning", n}, {"initial.eta", std::vector<double>(6, 2.0)}});
  EXPECT_EQ(c.problem.forcing.manning, n);
  EXPECT_EQ(c.problem.h, std::vector<double>(6, 2.0));
}

TEST(CaseArrays, NanInTheBedMarksAnInactiveCellAsNodataDoes) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Case c = parse({{"bathymetry.z", {0, 0, nan, 0, 0, 0}}});
  EXPECT_TRUE(std::isnan(c.problem.z[2]));
  EXPECT_EQ(c.problem.h[2], 0.0);
}

TEST(CaseArrays, ErrorsNameTheKey) {
  EXPECT_EQ(error_of({{"bathymetry.z", std::vector<double>(5, 0.0)}}),
            "array: bathymetry.z: an array of 5 values, but the grid has 2 x 3 cells (ny x nx)");
  EXPECT_EQ(error_of({{"physics.g", std::vector<double>(6, 9.81)}}), "array: physics.g: takes a number, not values per cell");
  EXPECT_EQ(error_of({{"physics.manning", {0.01, 0.01, -1, 0.01, 0.01, 0.01}}}),
            "array: physics.manning is -1 at cell centre (x, y) = (2.5, 0.5): must be >= 0 (s/m^(1/3))");
  EXPECT_EQ(error_of({{"physics.manningg", std::vector<double>(6, 0.0)}}),
            "array: unknown key 'physics.manningg' (did you mean 'physics.manning'?)");
  EXPECT_EQ(error_of({{"time.output_every", std::vector<double>(6, 0.0)}}),
            "array: time.output_every: takes a number, not values per cell");
  EXPECT_NE(error_of({{"initial.hu", {0, 0, std::numeric_limits<double>::infinity(), 0, 0, 0}}}).find(
                "initial.hu is inf at cell centre (x, y) = (2.5, 0.5)"),
            std::string::npos);
}

TEST(CaseArrays, AnArrayGivesTheCaseTheSameExpressionGives) {
  const Case by_expression = parse({}, {"bathymetry.z=\"0.1 * x + 0.01 * y\""});
  const Case by_array = parse({{"bathymetry.z", by_expression.problem.z}});
  EXPECT_EQ(by_array.problem.z, by_expression.problem.z);
  EXPECT_EQ(by_array.problem.h, by_expression.problem.h);
}
