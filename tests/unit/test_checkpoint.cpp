// SPDX-License-Identifier: MIT
// Checkpoint files written and read back directly: passive scalars (h c per
// scalar and its initial mass) come back bit for bit, in both precisions.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "shallows/io/checkpoint.hpp"

namespace fs = std::filesystem;
using namespace shallows;

namespace {

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) / ("shallows_test_checkpoint_" + std::string(info->name()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  io::Case make_case(const std::string& precision) const {
    io::Case c = io::parse_case(R"(
[domain]
nx = 4
ny = 3
x = [0, 4]
y = [0, 3]
[initial]
h = 1
[time]
end = 10
[numerics]
precision = ")" + precision + R"("
[[scalar]]
name = "salt"
initial = 35
[[scalar]]
name = "dye"
initial = "x < 2 ? 1 : 0"
)",
                                "case.toml", dir_);
    c.output.dir = dir_;
    return c;
  }

  // A moment of a run: values with more digits than a float holds.
  static io::Checkpoint moment(std::size_t cells) {
    io::Checkpoint k;
    k.t = 2.5;
    k.steps = 17;
    k.frames = 2;
    k.initial_volume = 12;
    for (std::vector<double>* f : {&k.state.h, &k.state.hu, &k.state.hv}) f->assign(cells, 0.0);
    k.state.hc.assign(2, std::vector<double>(cells));
    for (std::size_t c = 0; c < cells; ++c) {
      k.state.h[c] = 1.0 + 0.1 * static_cast<double>(c);
      k.state.hc[0][c] = 35.0 / 3.0 + static_cast<double>(c);
      k.state.hc[1][c] = c % 2 ? 0.0 : 1e-7 / 3.0;
    }
    k.initial_scalar_mass = {420.0 / 7.0, 6.0};
    return k;
  }

  fs::path dir_;
};

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (std::bit_cast<std::uint64_t>(a[k]) != std::bit_cast<std::uint64_t>(b[k])) return false;
  return true;
}

TEST_F(CheckpointTest, ScalarsComeBackBitForBitInDouble) {
  const io::Case c = make_case("double");
  const io::Checkpoint k = moment(12);
  io::write_checkpoint(c, k);
  const io::Checkpoint r = io::read_checkpoint(dir_, c);
  ASSERT_EQ(r.state.hc.size(), 2u);
  EXPECT_TRUE(same_bits(r.state.hc[0], k.state.hc[0]));
  EXPECT_TRUE(same_bits(r.state.hc[1], k.state.hc[1]));
  EXPECT_TRUE(same_bits(r.initial_scalar_mass, k.initial_scalar_mass));
  EXPECT_TRUE(same_bits(r.state.h, k.state.h));
}

TEST_F(CheckpointTest, ScalarsComeBackAsTheFloatRunHeldThem) {
  const io::Case c = make_case("float");
  io::Checkpoint k = moment(12);
  // A float run's state: every value a float.
  for (std::vector<double>& hc : k.state.hc)
    for (double& v : hc) v = static_cast<float>(v);
  io::write_checkpoint(c, k);
  const io::Checkpoint r = io::read_checkpoint(dir_, c);
  ASSERT_EQ(r.state.hc.size(), 2u);
  EXPECT_TRUE(same_bits(r.state.hc[0], k.state.hc[0]));
  EXPECT_TRUE(same_bits(r.state.hc[1], k.state.hc[1]));
  EXPECT_TRUE(same_bits(r.initial_scalar_mass, k.initial_scalar_mass));  // masses in double
}

TEST_F(CheckpointTest, AStateWithoutTheScalarsIsNotWritten) {
  const io::Case c = make_case("double");
  io::Checkpoint k = moment(12);
  k.state.hc.pop_back();
  EXPECT_THROW(io::write_checkpoint(c, k), std::logic_error);
  k = moment(12);
  k.initial_scalar_mass.clear();
  EXPECT_THROW(io::write_checkpoint(c, k), std::logic_error);
}

TEST_F(CheckpointTest, ACheckpointWithScalarsBelongsToItsCaseOnly) {
  const io::Case c = make_case("double");
  io::write_checkpoint(c, moment(12));
  io::Case other = c;
  other.problem.scalars[1].rain = 1;  // the same text, another rain concentration (a --set)
  EXPECT_THROW(io::read_checkpoint(dir_, other), io::InputError);
}

}  // namespace
