// SPDX-License-Identifier: MIT
// Checkpoint and restart end to end, through the command line: a run killed
// with SIGKILL (or stopped by SIGTERM) and restarted from its checkpoint
// leaves every output file byte for byte as the uninterrupted run does, on
// grids (roe1, roe3) and a mesh, in float and double; damaged or foreign
// checkpoints are refused with a message naming the file.
// Interruptions come at a known simulated time through the test hook of
// signals.hpp (SHALLOWS_TEST_SIGNAL), never from a timer.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "support/output_files.hpp"

namespace {

namespace fs = std::filesystem;
using shallows::test_support::slurp;

struct Result {
  int code;  // exit status, or 128 + signal when a signal ended the process
  std::string output;
};

Result shell(const std::string& env, const std::string& args) {
  const std::string cmd = env + " " + std::string(SHALLOWS_CLI) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), pipe)) out += buf.data();
  const int status = pclose(pipe);
  // sh reports a child killed by signal s as exit status 128 + s.
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("shallows-restart-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

bool is_checkpoint(const fs::path& rel) { return rel.filename().string().rfind("checkpoint.", 0) == 0; }

// summary.json without its wall-clock lines (they differ between any two runs).
std::string summary_without_timing(const fs::path& file) {
  std::ifstream in(file);
  std::string line, out;
  while (std::getline(in, line))
    if (line.find("wall_seconds") == std::string::npos && line.find("cell_updates_per_second") == std::string::npos)
      out += line + '\n';
  return out;
}

// Every output file of the uninterrupted run `a` is in `b` with the same
// bytes, and `b` holds no other file but checkpoints (no leftover .part file).
void expect_same_outputs(const fs::path& a, const fs::path& b) {
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

const std::string kGrid = std::string(SHALLOWS_SOURCE_DIR) + "/cases/s000-t1/case.toml";
const std::string kMesh = std::string(SHALLOWS_SOURCE_DIR) + "/cases/river-bend/case.toml";
// Every output format, a gauge; the creation time in output.nc fixed.
const std::string kEnv = "SOURCE_DATE_EPOCH=1700000000";
const std::string kOutputs =
    " -q -t 2 --set 'output.format=[\"netcdf\",\"vtk\",\"png\"]' --set time.output_every=0.5";

struct Variant {
  const char* name;
  std::string case_file;
  std::string sets;
  double kill_at;  // simulated time of the SIGKILL
  double every;    // checkpoint_every
};

// The uninterrupted run, the same run with checkpoints (identical), then a
// run killed with SIGKILL after a checkpoint and restarted from its folder.
void kill_and_restart(const Variant& v) {
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

TEST(Restart, KilledGridRoe1DoubleContinuesByteForByte) {
  kill_and_restart({"roe1-double", kGrid, "--set time.end=3", 2.2, 1.0});
}

TEST(Restart, KilledGridRoe1FloatContinuesByteForByte) {
  kill_and_restart({"roe1-float", kGrid, "--precision float --set time.end=3 --set physics.manning=0.02", 1.6, 0.7});
}

TEST(Restart, KilledGridRoe3ContinuesByteForByte) {
  kill_and_restart({"roe3-double", kGrid, "--set numerics.scheme=roe3 --set time.end=1", 0.7, 0.3});
  kill_and_restart({"roe3-float", kGrid, "--precision float --set numerics.scheme=roe3 --set time.end=1", 0.6, 0.25});
}

TEST(Restart, KilledMeshRunContinuesByteForByte) {
  kill_and_restart({"mesh-double", kMesh, "--set time.end=6 --set time.output_every=2", 4.5, 3.0});
  kill_and_restart({"mesh-float", kMesh, "--precision float --set time.end=6 --set time.output_every=2", 4.5, 3.0});
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
  const Result r = shell(kEnv, "run " + common + " -o " + run.string() + " --restart " + (run / "checkpoint.shck").string());
  ASSERT_EQ(r.code, 0) << r.output;
  expect_same_outputs(dir / "plain", run);
}

TEST(Restart, SecondSignalExitsAtOnceLeavingTheLastCheckpoint) {
  const auto [dir, common] = stop_with("sigterm2", "15*2@1.2");
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
  static void SetUpTestSuite() {
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

TEST(Restart, BadCheckpointKeysNameTheKey) {
  const fs::path dir = temp_dir("keys");
  const Result r = shell("", "run " + kGrid + " -o " + dir.string() + " --set output.checkpoint_every=-1");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("output.checkpoint_every"), std::string::npos) << r.output;
  const Result missing = shell("", "run " + kGrid + " -o " + dir.string() + " --restart " + (dir / "nothing").string());
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.output.find("no such checkpoint"), std::string::npos) << missing.output;
}

} // namespace
