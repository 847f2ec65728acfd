// SPDX-License-Identifier: MIT
#pragma once
// Runs of the command line for the restart tests (tests/regression/test_restart.cpp
// on the CPU, tests/backend/test_cuda_restart.cpp on the GPU): a run killed
// after a checkpoint and restarted, compared file by file with the
// uninterrupted run.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "support/cli_runs.hpp"
#include "support/output_files.hpp"

namespace shallows::test_support {

namespace fs = std::filesystem;

inline bool is_checkpoint(const fs::path& rel) { return rel.filename().string().rfind("checkpoint.", 0) == 0; }

// summary.json without its wall-clock lines (they differ between any two runs).
inline std::string summary_without_timing(const fs::path& file) {
  std::ifstream in(file);
  std::string line, out;
  while (std::getline(in, line))
    if (line.find("_seconds\"") == std::string::npos && line.find("cell_updates_per_second") == std::string::npos)
      out += line + '\n';
  return out;
}

// Every output file of the uninterrupted run `a` is in `b` with the same
// bytes, and `b` holds no other file but checkpoints (no leftover .part file).
inline void expect_same_outputs(const fs::path& a, const fs::path& b) {
  std::set<fs::path> in_a, in_b;
  for (const auto& e : fs::recursive_directory_iterator(a))
    if (e.is_regular_file() && !is_checkpoint(e.path())) in_a.insert(fs::relative(e.path(), a));
  for (const auto& e : fs::recursive_directory_iterator(b))
    if (e.is_regular_file() && !is_checkpoint(e.path())) in_b.insert(fs::relative(e.path(), b));
  EXPECT_EQ(in_a, in_b);
  ASSERT_GT(in_a.size(), 3u);
  for (const fs::path& rel : in_a) {
    if (rel == "summary.json") {
      EXPECT_EQ(summary_without_timing(a / rel), summary_without_timing(b / rel));
      continue;
    }
    EXPECT_TRUE(slurp(a / rel) == slurp(b / rel)) << rel << " differs";
  }
}

inline const std::string kGrid = std::string(SHALLOWS_SOURCE_DIR) + "/cases/s000-t1/case.toml";
inline const std::string kMesh = std::string(SHALLOWS_SOURCE_DIR) + "/cases/river-bend/case.toml";
// Every output format this build writes, a gauge; the creation time in output.nc fixed.
inline const std::string kEnv = "SOURCE_DATE_EPOCH=1700000000";
inline const std::string kFormats = std::string("[\"vtk\"")
#if defined(SHALLOWS_HAVE_NETCDF)
                                    + ",\"netcdf\""
#endif
#if defined(SHALLOWS_HAVE_PNG)
                                    + ",\"png\""
#endif
                                    + "]";
inline const std::string kOutputs = " -q -t 2 --set 'output.format=" + kFormats + "' --set time.output_every=0.5";

struct Variant {
  const char* name;
  std::string case_file;
  std::string sets;
  double kill_at;  // simulated time of the SIGKILL
  double every;    // checkpoint_every
};

// The uninterrupted run, the same run with checkpoints (identical), then a
// run killed with SIGKILL after a checkpoint and restarted from its folder.
inline void kill_and_restart(const Variant& v) {
  const fs::path dir = temp_dir(v.name);
  const std::string common = v.case_file + kOutputs + " " + v.sets;
  const std::string ckpt = " --set output.checkpoint_every=" + std::to_string(v.every);
  const Result plain = shell(kEnv, "run " + common + " -o " + (dir / "plain").string());
  ASSERT_EQ(plain.code, 0) << plain.output;

  const Result with = shell(kEnv, "run " + common + ckpt + " -o " + (dir / "with").string());
  ASSERT_EQ(with.code, 0) << with.output;
  expect_same_outputs(dir / "plain", dir / "with");

  const fs::path killed = dir / "killed";
  const Result k = shell(kEnv + " SHALLOWS_TEST_SIGNAL=9@" + std::to_string(v.kill_at),
                         "run " + common + ckpt + " -o " + killed.string());
  ASSERT_EQ(k.code, 128 + 9) << k.output;
  ASSERT_TRUE(fs::exists(killed / "checkpoint.shck"));
  EXPECT_FALSE(fs::exists(killed / "summary.json"));
  const Result r = shell(kEnv, "run " + common + ckpt + " -o " + killed.string() + " --restart " + killed.string());
  ASSERT_EQ(r.code, 0) << r.output;
  expect_same_outputs(dir / "plain", killed);
}

} // namespace shallows::test_support
