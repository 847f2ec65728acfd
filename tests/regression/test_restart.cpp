// SPDX-License-Identifier: MIT
// Checkpoint and restart end to end, through the command line: a run killed
// with SIGKILL (or stopped by SIGTERM) and restarted from its checkpoint
// leaves every output file byte for byte as the uninterrupted run does, on
// grids (roe1, roe3) and a mesh, in float and double; damaged or foreign
// checkpoints are refused with a message naming the file.
// Interruptions come at a known simulated time through the test hook of
// signals.hpp (SHALLOWS_TEST_SIGNAL), never from a timer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/restart_runs.hpp"

namespace {

namespace fs = std::filesystem;
using namespace shallows::test_support;

TEST(Restart, KilledGridRoe1DoubleContinuesByteForByte) {
  kill_and_restart({"roe1-double", kGrid, "--set time.end=3", 2.2, 1.0});
}

TEST(Restart, KilledGridRoe1FloatContinuesByteForByte) {
  kill_and_restart({"roe1-float", kGrid, "--precision float --set time.end=3 --set physics.manning=0.02", 1.6, 0.7});
}

TEST(Restart, KilledGridRoe3ContinuesByteForByte) {
  kill_and_restart({"roe3-double", kGrid, "--set numerics.scheme=roe3 --set time.end=0.7", 0.55, 0.3});
  kill_and_restart({"roe3-float", kGrid, "--precision float --set numerics.scheme=roe3 --set time.end=0.7", 0.4, 0.2});
}

// Rain, Green-Ampt soil, a Manning map, a source and a sink, and a side whose
// level follows a CSV series: the infiltration of each cell and the accounts
// travel in the checkpoint, so the restarted run's outputs (the volume
// account in output.nc included) are the uninterrupted run's bytes.
TEST(Restart, KilledGridRunWithForcingContinuesByteForByte) {
  const fs::path dir = temp_dir("forcing-series");
  const fs::path stage = dir / "stage.csv";
  std::ofstream(stage) << "time,eta\n0,1.0\n1,1.5\n3,1.2\n";
  const std::string forcing =
      "--set 'rain.rate=180' "
      "--set 'infiltration={model=\"green_ampt\",conductivity=30,suction=0.1,deficit=0.3}' "
      "--set 'physics.manning=\"x < 5 ? 0.02 : 0.05\"' "
      "--set 'source=[{name=\"well\",x=2.55,y=0.45,discharge=0.05},{name=\"pump\",x=7.5,y=0.5,discharge=-0.02}]' "
      "--set 'boundary.west={type=\"level\",eta=\"" + stage.string() + "\"}'";
  kill_and_restart({"forcing-double", kGrid, forcing + " --set time.end=2", 1.4, 0.7});
  // Third order to 1 s (169 steps; its steps cost several first-order ones): two checkpoints, three outputs.
  kill_and_restart({"forcing-roe3-float", kGrid, forcing + " --set time.end=1 --precision float --set numerics.scheme=roe3",
                    0.6, 0.3});
}

TEST(Restart, KilledMeshRunContinuesByteForByte) {
  kill_and_restart({"mesh-double", kMesh, "--set time.end=6 --set time.output_every=2", 4.5, 3.0});
  kill_and_restart({"mesh-float", kMesh, "--precision float --set time.end=6 --set time.output_every=2", 4.5, 3.0});
  // With rain, Green-Ampt, a Manning map and a source: the forcing state (blocks of cells) and the water
  // through the mesh's boundary groups travel in the checkpoint.
  kill_and_restart({"mesh-forcing", kMesh,
                    "--set time.end=6 --set time.output_every=2 --set rain.rate=120 "
                    "--set 'infiltration={model=\"green_ampt\",conductivity=30,suction=0.1,deficit=0.3}' "
                    "--set 'physics.manning=\"x < 100 ? 0.03 : 0.05\"' "
                    "--set 'source=[{name=\"well\",x=170.0,y=30.0,discharge=0.5}]'",
                    4.5, 3.0});
}

// A run of s000-t1 to t = 3 s stopped by SIGTERM at t = 1.2 s.
struct Stopped {
  fs::path dir;
  std::string common;
};

Stopped stop_with(const std::string& name, const std::string& signal) {
  const fs::path dir = temp_dir(name);
  const std::string common = kGrid + kOutputs + " --set time.end=3 --set output.checkpoint_every=0.5";
  const Result r = shell(kEnv + " SHALLOWS_TEST_SIGNAL=" + signal, "run " + common + " -o " + (dir / "run").string());
  EXPECT_EQ(r.code, 143) << r.output;
  return {dir, common};
}

TEST(Restart, SigtermWritesCheckpointClosesOutputsAndRestartCompletes) {
  const auto [dir, common] = stop_with("sigterm", "15@1.2");
  const fs::path run = dir / "run";
  // Closed validly: the final names, no .part left; the NetCDF file opens.
  EXPECT_TRUE(fs::exists(run / "output.nc"));
  EXPECT_TRUE(fs::exists(run / "gauges.csv"));
  EXPECT_FALSE(fs::exists(run / "output.nc.part"));
  EXPECT_FALSE(fs::exists(run / "summary.json"));
#if defined(SHALLOWS_HAVE_NETCDF)
  int id = -1;
  ASSERT_EQ(nc_open((run / "output.nc").c_str(), NC_NOWRITE, &id), NC_NOERR);
  int dim = 0;
  std::size_t records = 0;
  ASSERT_EQ(nc_inq_unlimdim(id, &dim), NC_NOERR);
  ASSERT_EQ(nc_inq_dimlen(id, dim, &records), NC_NOERR);
  EXPECT_GE(records, 4u);  // frames 0 to 1.5 s at least
  nc_close(id);
#endif
  const Result plain = shell(kEnv, "run " + common + " -o " + (dir / "plain").string());
  ASSERT_EQ(plain.code, 0) << plain.output;
  const Result r =
      shell(kEnv, "run " + common + " -o " + run.string() + " --restart " + (run / "checkpoint.shck").string());
  ASSERT_EQ(r.code, 0) << r.output;
  expect_same_outputs(dir / "plain", run);
}

// One SIGTERM delivered twice at once (GNU timeout signals the process and
// its group) is one request: the checkpoint is written and the outputs closed.
TEST(Restart, RepeatedSignalIsOneStop) {
  const auto [dir, common] = stop_with("sigterm-repeat", "15*2@1.2");
  EXPECT_TRUE(fs::exists(dir / "run" / "output.nc"));
  EXPECT_FALSE(fs::exists(dir / "run" / "output.nc.part"));
  EXPECT_FALSE(fs::exists(dir / "run" / "summary.json"));
  EXPECT_TRUE(fs::exists(dir / "run" / "checkpoint.shck"));
}

TEST(Restart, SecondSignalExitsAtOnceLeavingTheLastCheckpoint) {
  const auto [dir, common] = stop_with("sigterm2", "15*2:1.2@1.2");
  const fs::path run = dir / "run";
  // No checkpoint at the second signal: the one before it (t = 1 s) is the newest.
  ASSERT_TRUE(fs::exists(run / "checkpoint.shck"));
  EXPECT_TRUE(fs::exists(run / "output.nc.part"));
  const Result plain = shell(kEnv, "run " + common + " -o " + (dir / "plain").string());
  ASSERT_EQ(plain.code, 0) << plain.output;
  const Result r = shell(kEnv, "run " + common + " -o " + run.string() + " --restart " + run.string());
  ASSERT_EQ(r.code, 0) << r.output;
  expect_same_outputs(dir / "plain", run);
}

// A finished run's checkpoints, copied and damaged.
class RefusedCheckpoint : public ::testing::Test {
 protected:
  // The run once per process, in the first test (a failure there fails that test, not skips the rest).
  void SetUp() override {
    if (bytes_) return;
    dir_ = new fs::path(temp_dir("refused"));
    const Result r = shell(kEnv, "run " + kGrid + kOutputs + " --set time.end=2 --set output.checkpoint_every=0.3 -o " +
                                     (*dir_ / "run").string());
    ASSERT_EQ(r.code, 0) << r.output;
    ASSERT_TRUE(fs::exists(*dir_ / "run" / "checkpoint.prev.shck"));
    bytes_ = new std::string(slurp(*dir_ / "run" / "checkpoint.shck"));
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete bytes_;
    dir_ = nullptr;
    bytes_ = nullptr;
  }
  // Restarts the case (with extra options) from a file holding `bytes`; expects failure naming the file.
  static std::string refuse(const std::string& bytes, const std::string& extra = "") {
    const fs::path f = *dir_ / "bad.shck";
    std::ofstream(f, std::ios::binary) << bytes;
    const Result r = shell(kEnv, "run " + kGrid + kOutputs + " --set time.end=2 " + extra + " -o " +
                                     (*dir_ / "run").string() + " --restart " + f.string());
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_NE(r.output.find(f.string()), std::string::npos) << r.output;
    return r.output;
  }
  static fs::path* dir_;
  static std::string* bytes_;
};
fs::path* RefusedCheckpoint::dir_ = nullptr;
std::string* RefusedCheckpoint::bytes_ = nullptr;

TEST_F(RefusedCheckpoint, Truncated) {
  EXPECT_NE(refuse(bytes_->substr(0, bytes_->size() / 2)).find("truncated"), std::string::npos);
  EXPECT_NE(refuse(bytes_->substr(0, 20)).find("truncated"), std::string::npos);
}

TEST_F(RefusedCheckpoint, CorruptedPayloadOrHeader) {
  for (std::size_t at : {bytes_->size() - 100, std::size_t{40}}) {
    std::string b = *bytes_;
    b[at] = static_cast<char>(b[at] ^ 0x10);
    EXPECT_NE(refuse(b).find("corrupted"), std::string::npos) << "byte " << at;
  }
}

TEST_F(RefusedCheckpoint, NotACheckpoint) {
  EXPECT_NE(refuse("[domain]\nnx = 10\n").find("not a shallows checkpoint"), std::string::npos);
}

TEST_F(RefusedCheckpoint, OtherCaseOrPrecisionOrScheme) {
  EXPECT_NE(refuse(*bytes_, "--set physics.manning=0.03").find("another case"), std::string::npos);
  EXPECT_NE(refuse(*bytes_, "--precision float").find("double run, this run is float"), std::string::npos);
  EXPECT_NE(refuse(*bytes_, "--set numerics.scheme=roe3").find("roe1 run, this run is roe3"),
            std::string::npos);
  EXPECT_NE(refuse(*bytes_, "--set domain.nx=50").find("cells"), std::string::npos);
}

TEST_F(RefusedCheckpoint, FolderFallsBackToThePreviousWhenTheNewestIsDamaged) {
  const fs::path folder = *dir_ / "fallback";
  fs::create_directories(folder);
  fs::copy_file(*dir_ / "run" / "checkpoint.prev.shck", folder / "checkpoint.prev.shck",
                fs::copy_options::overwrite_existing);
  std::ofstream(folder / "checkpoint.shck", std::ios::binary) << bytes_->substr(0, 100);
  // Outputs to go on with: those of the finished run (renamed back to .part).
  const fs::path out = *dir_ / "fallback-out";
  fs::remove_all(out);
  fs::copy(*dir_ / "run", out, fs::copy_options::recursive);
  const Result r = shell(kEnv, "run " + kGrid + kOutputs + " --set time.end=2 -o " + out.string() + " --restart " +
                                   folder.string());
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("truncated"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("checkpoint.prev.shck"), std::string::npos) << r.output;
}

TEST(Restart, WallClockCheckpointsLeaveOutputsUnchanged) {
  // A checkpoint after every batch of steps: the most pauses a run can take.
  const fs::path dir = temp_dir("wall");
  const std::string common = kGrid + kOutputs + " --set time.end=1";
  const Result plain = shell(kEnv, "run " + common + " -o " + (dir / "plain").string());
  ASSERT_EQ(plain.code, 0) << plain.output;
  const Result wall = shell(kEnv, "run " + common + " --set output.checkpoint_wall=1e-9 -o " + (dir / "wall").string());
  ASSERT_EQ(wall.code, 0) << wall.output;
  EXPECT_TRUE(fs::exists(dir / "wall" / "checkpoint.prev.shck"));
  expect_same_outputs(dir / "plain", dir / "wall");
}

TEST(Restart, BadKeysAndMissingFilesAreNamed) {
  const fs::path dir = temp_dir("keys");
  const Result r = shell("", "run " + kGrid + " -o " + dir.string() + " --set output.checkpoint_every=-1");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("output.checkpoint_every"), std::string::npos) << r.output;
  // Outputs of another folder: refused, not continued with frames missing.
  const fs::path src = temp_dir("keys-src");
  const Result first =
      shell(kEnv, "run " + kGrid + kOutputs + " --set time.end=1 --set output.checkpoint_every=0.4 -o " + src.string());
  ASSERT_EQ(first.code, 0) << first.output;
  const Result elsewhere = shell(kEnv, "run " + kGrid + kOutputs + " --set time.end=1 -o " + dir.string() +
                                           " --restart " + src.string());
  EXPECT_EQ(elsewhere.code, 1);
  EXPECT_NE(elsewhere.output.find("cannot restart"), std::string::npos) << elsewhere.output;
  const Result missing = shell("", "run " + kGrid + " -o " + dir.string() + " --restart " + (dir / "nothing").string());
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.output.find("no such checkpoint"), std::string::npos) << missing.output;
}

} // namespace
