// SPDX-License-Identifier: MIT
#pragma once
// Ensembles through the command line (tests/regression/test_ensemble_runs.cpp
// on the CPU, tests/backend/test_cuda_ensemble.cpp on the GPU): a small case
// with an [ensemble], and the comparison of two output folders file by file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "support/output_files.hpp"

namespace shallows::test_support {

namespace fs = std::filesystem;

// The creation time in output.nc fixed.
inline const std::string kEnsembleEnv = "SOURCE_DATE_EPOCH=1700000000";

// A dam break with rain and a gauge on 24 x 4 cells; the ensemble varies Manning and the rain. Members side by
// side run on 1 thread each (-j 2 -t 2), alone on 2: the bytes do not depend on the thread count.
inline const std::string kGridCase = R"(
name = "dam"
[domain]
nx = 24
ny = 4
x = [0.0, 12.0]
y = [0.0, 2.0]
[bathymetry]
z = "0.05 * x"
[initial]
eta = "x < 4 ? 1.5 : 0"
[boundary]
west = "wall"
east = "open"
[physics]
manning = 0.03
[rain]
rate = 360.0
[time]
end = 2.0
output_every = 1.0
[output]
format = ["netcdf", "vtk", "png", "geotiff"]
gauges = [{ name = "mid", x = 6.0, y = 1.0 }]
[ensemble]
product = { "physics.manning" = [0.01, 0.05], "rain.scale" = [0.0, 2.0] }
thresholds = [0.05, 0.2]
)";

// The files below dir (relative paths) and their bytes, summary.json left out (it holds wall times).
inline std::map<std::string, std::string> files_below(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != "summary.json")
      out[fs::relative(e.path(), dir).string()] = slurp(e.path());
  return out;
}

inline void expect_same_files(const fs::path& a, const fs::path& b) {
  const auto fa = files_below(a), fb = files_below(b);
  ASSERT_FALSE(fa.empty()) << a;
  std::vector<std::string> na, nb;
  for (const auto& kv : fa) na.push_back(kv.first);
  for (const auto& kv : fb) nb.push_back(kv.first);
  ASSERT_EQ(na, nb) << a << " and " << b;
  for (const auto& [name, bytes] : fa) EXPECT_TRUE(bytes == fb.at(name)) << name << " differs: " << a << " " << b;
}

inline fs::path write_case(const fs::path& dir, const std::string& text) {
  const fs::path file = dir / "case.toml";
  std::ofstream(file) << text;
  return file;
}

}  // namespace shallows::test_support
