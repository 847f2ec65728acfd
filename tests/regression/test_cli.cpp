// SPDX-License-Identifier: MIT
// The command line end to end: a run writes its outputs and summary.json;
// bad input stops with a message naming the file and key, a non-zero exit
// code, and leaves existing files alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/cli_runs.hpp"

namespace {

using shallows::test_support::read;
using shallows::test_support::Result;
using shallows::test_support::shell;
using shallows::test_support::summary_number;
using shallows::test_support::temp_dir;

namespace fs = std::filesystem;

const std::string kCase = std::string(SHALLOWS_SOURCE_DIR) + "/cases/s000-t1/case.toml";

TEST(Cli, RunWritesOutputsAndSummary) {
  const fs::path out = temp_dir("run");
  const Result r = shell("run " + kCase + " --output " + out.string() +
                         " --threads 2 --set time.end=0.5 --set time.output_every=0.25 --set 'output.format=[\"vtk\"]'");
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string summary = read(out / "summary.json");
  EXPECT_NE(summary.find("\"cells\": 1000"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"relative_mass_change\""), std::string::npos);
  EXPECT_TRUE(fs::exists(out / "output.pvd"));
  EXPECT_TRUE(fs::exists(out / "gauges.csv"));
  EXPECT_NE(r.output.find("cell-updates/s"), std::string::npos);
}

// Gauges alone read their cells, not the whole state (Backend::read_cells),
// and keep no maxima: the same gauges.csv as a run that also writes VTK.
TEST(Cli, GaugesAloneWriteWhatTheyWriteBesideAFormat) {
  const fs::path alone = temp_dir("gauges-alone"), beside = temp_dir("gauges-beside");
  const std::string run = "run " + kCase + " --threads 2 --set time.end=0.5 --set time.output_every=0.1 ";
  const Result a = shell(run + "--output " + alone.string() + " --set 'output.format=[]'");
  ASSERT_EQ(a.code, 0) << a.output;
  const Result b = shell(run + "--output " + beside.string() + " --set 'output.format=[\"vtk\"]'");
  ASSERT_EQ(b.code, 0) << b.output;
  const std::string rows = read(alone / "gauges.csv");
  EXPECT_EQ(rows, read(beside / "gauges.csv"));
  EXPECT_EQ(std::count(rows.begin(), rows.end(), '\n'), 7) << rows;  // header, t = 0 and five outputs
  EXPECT_FALSE(fs::exists(alone / "output.pvd"));
}

TEST(Cli, SummarySplitsTheWallTimeAndRatesTheStepping) {
  const fs::path out = temp_dir("timing");
  const Result r = shell("run " + kCase + " --output " + out.string() +
                         " --threads 1 --set time.end=0.5 --set time.output_every=0.1 --set 'output.format=[\"vtk\"]'");
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string summary = read(out / "summary.json");
  const double parts[] = {summary_number(summary, "setup_seconds"), summary_number(summary, "stepping_seconds"),
                          summary_number(summary, "output_wait_seconds"), summary_number(summary, "finish_seconds")};
  double sum = 0;
  for (double v : parts) {
    EXPECT_GE(v, 0.0) << summary;
    sum += v;
  }
  EXPECT_NEAR(summary_number(summary, "wall_seconds"), sum, 1e-12 * sum) << summary;
  const double updates = summary_number(summary, "cells") * summary_number(summary, "steps");
  EXPECT_NEAR(summary_number(summary, "cell_updates_per_second"), updates / parts[1], 1e-9 * updates / parts[1]);
}

TEST(Cli, PrecisionAndSetOverridesReachTheRun) {
  const fs::path out = temp_dir("float");
  const Result r = shell("run " + kCase + " -o " + out.string() +
                         " --precision float --set domain.nx=200 --set domain.ny=20 --set time.end=0.1 "
                         "--set time.output_every=0.1 --set 'output.format=[]'");
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string summary = read(out / "summary.json");
  EXPECT_NE(summary.find("\"precision\": \"float\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"cells\": 4000"), std::string::npos) << summary;
}

// [parallel] and --ranks-x, --ranks-y, --halo-steps are for runs under mpirun (tests/mpi/parallel_keys.sh): one
// rank runs as before with them; their values are still checked.
TEST(Cli, ParallelKeysLeaveAOneRankRunAlone) {
  const fs::path out = temp_dir("parallel");
  Result r = shell("run " + kCase + " -o " + out.string() +
                   " --set time.end=0.1 --set 'output.format=[]' --set parallel.ranks_x=2 --set parallel.halo_steps=4"
                   " --ranks-y 3");
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string summary = read(out / "summary.json");
  EXPECT_NE(summary.find("\"ranks\": 1,"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"process_grid\": [1, 1],"), std::string::npos) << summary;
  r = shell("run " + kCase + " -o " + out.string() + " --set parallel.halo_steps=0");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("--set: parallel.halo_steps: must be > 0, found 0"), std::string::npos) << r.output;
}

TEST(Cli, UnknownKeyIsReportedWithSuggestionAndNothingIsLost) {
  const fs::path out = temp_dir("bad");
  { std::ofstream(out / "summary.json") << "previous run"; }
  const Result r = shell("run " + kCase + " -o " + out.string() + " --set physics.gravity=9.8");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find("physics.gravity"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("did you mean 'physics.g'"), std::string::npos) << r.output;
  EXPECT_EQ(read(out / "summary.json"), "previous run");
}

TEST(Cli, BadCaseFileNamesFileAndKey) {
  const fs::path dir = temp_dir("badcase");
  const fs::path file = dir / "neg.toml";
  std::ofstream(file) << "[domain]\nnx = 4\nny = 4\nx = [0, 1]\ny = [0, 1]\n[initial]\nh = -1\n[time]\nend = 1\n";
  const Result r = shell("run " + file.string() + " -o " + (dir / "out").string());
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find("neg.toml"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("initial.h"), std::string::npos) << r.output;
}

// Rain of 1e300 mm/h: the steps shrink below t's rounding. The run stops
// with a message instead of stepping for ever at the same time.
TEST(Cli, StepsThatNoLongerAdvanceTimeStopTheRun) {
  const fs::path dir = temp_dir("stall");
  const fs::path file = dir / "storm.toml";
  std::ofstream(file) << "[domain]\nnx = 10\nny = 10\nx = [0, 10]\ny = [0, 10]\n[initial]\nh = 0.1\n"
                         "[rain]\nrate = 1e300\n[time]\nend = 10\n[output]\nformat = []\n";
  const Result r = shell("run " + file.string() + " -o " + (dir / "out").string() + " -t 1");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("no longer advances t ="), std::string::npos) << r.output;
}

// The walled box of issue 12: a speed beyond physics.max_speed is refused
// with the key and the cell; raised, the run's mass balance holds thanks to
// the positivity account, and --strict turns a missed balance into exit 1.
TEST(Cli, SpeedBoundAndStrictMassBalance) {
  const fs::path dir = temp_dir("speed");
  const fs::path file = dir / "box.toml";
  std::ofstream(file) << "[domain]\nnx = 20\nny = 10\nx = [0, 20]\ny = [0, 10]\n[initial]\nh = 1\nu = 1e30\n"
                         "[time]\nend = 0.2\n[output]\nformat = []\n";
  for (const char* u : {"1e30", "1e10", "1e3"}) {
    const Result r = shell("run " + file.string() + " -o " + (dir / "out").string() + " --set initial.u=" + u);
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_NE(r.output.find("initial.u: initial speed"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("cell (i, j) = (0, 0)"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(dir / "out" / "summary.json"));
  }
  // Raised: the clamps add water (about 3e-7 of the volume), all of it in the account.
  const Result r = shell("run " + file.string() + " -o " + (dir / "out").string() +
                         " --strict --set initial.u=1e3 --set physics.max_speed=1e3");
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string summary = read(dir / "out" / "summary.json");
  EXPECT_NE(summary.find("\"closed_domain\": true"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"mass_balance_ok\": true"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("\"positivity_volume\": 0,"), std::string::npos) << summary;
  EXPECT_NE(r.output.find("mass balance kept"), std::string::npos) << r.output;
  // Float at 1e10 m/s misses the balance by 0.8: a warning, or with --strict exit 1 after summary.json.
  const std::string wild = " --precision float --set initial.u=1e10 --set physics.max_speed=1e10";
  const Result warned = shell("run " + file.string() + " -o " + (dir / "w").string() + wild);
  EXPECT_EQ(warned.code, 0) << warned.output;
  EXPECT_NE(warned.output.find("warning: mass balance missed"), std::string::npos) << warned.output;
  const Result strict = shell("run " + file.string() + " -o " + (dir / "s").string() + wild + " --strict");
  EXPECT_EQ(strict.code, 1) << strict.output;
  EXPECT_NE(strict.output.find("error: mass balance missed"), std::string::npos) << strict.output;
  EXPECT_NE(read(dir / "s" / "summary.json").find("\"mass_balance_ok\": false"), std::string::npos);
}

TEST(Cli, BenchPrintsTheTableAndAppendsItsRows) {
  const fs::path out = temp_dir("bench");
  const fs::path rows = out / "rows.md";
  const Result r = shell("bench -c s004-t1 -n 32 -p double -t 1 -s 0.05 --machine test-machine --append " +
                         rows.string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("| s004-t1 | serial | 1 | double | 32x32 |"), std::string::npos) << r.output;
  const std::string appended = read(rows);
  EXPECT_NE(appended.find("test-machine"), std::string::npos) << appended;
  EXPECT_NE(appended.find("| s004-t1 | serial | 1 | double | 32x32 |"), std::string::npos) << appended;
}

TEST(Cli, BenchHaloStepsNeedMpirun) {
  const Result r = shell("bench -c s004-t1 -n 32 --halo-steps 2");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("--halo-steps and --weak time runs on several ranks: start it under mpirun"),
            std::string::npos)
      << r.output;
  const Result weak = shell("bench -c s004-t1 -n 32 --weak");
  EXPECT_EQ(weak.code, 1);
  EXPECT_NE(weak.output.find("start it under mpirun"), std::string::npos) << weak.output;
}

TEST(Cli, BenchRefusesThirdOrderOnTheCpu) {
  const Result r = shell("bench -c s003-t3");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("CUDA backend only"), std::string::npos) << r.output;
}

TEST(Cli, VersionAndHelp) {
  EXPECT_NE(shell("--version").output.find("shallows"), std::string::npos);
  const Result h = shell("run --help");
  EXPECT_EQ(h.code, 0);
  EXPECT_NE(h.output.find("--precision"), std::string::npos);
}

} // namespace

namespace {

// A thread count outside 1 .. 4 x the processors is refused with a message,
// not a crash (100000 threads) or a stall (thousands on a few cores).
TEST(Cli, ThreadCountIsBounded) {
  for (const char* bad : {"0", "100000", "-2", "two"}) {
    const Result r = shell("run --threads " + std::string(bad) + " --quiet --output " + temp_dir("threads").string());
    EXPECT_NE(r.code, 0) << bad;
    EXPECT_NE(r.output.find("--threads: "), std::string::npos) << bad << ": " << r.output;
  }
  const Result many = shell("run --threads 100000");
  EXPECT_NE(many.output.find("at most 4 x the"), std::string::npos) << many.output;
  const Result zero = shell("bench --threads -1 --seconds 0");
  EXPECT_NE(zero.code, 0);
  EXPECT_NE(zero.output.find("or 0 for all cores"), std::string::npos) << zero.output;
}

} // namespace
