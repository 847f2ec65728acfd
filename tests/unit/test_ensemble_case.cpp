// SPDX-License-Identifier: MIT
// [ensemble]: the three forms, the sampler, the errors, rain.scale.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/io/ensemble.hpp"

using shallows::io::Ensemble;
using shallows::io::InputError;
using shallows::io::parse_case;
using shallows::io::read_ensemble;

namespace {

const std::string base = R"(
[domain]
nx = 4
ny = 2
x = [0.0, 4.0]
y = [0.0, 2.0]
[bathymetry]
z = 0.0
[initial]
h = 1.0
[physics]
manning = 0.03
[rain]
rate = 36.0
[time]
end = 1.0
)";

std::string error_of(const std::string& ensemble) {
  try {
    read_ensemble(base + ensemble, "case.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

} // namespace

TEST(EnsembleCase, NoSectionIsNoEnsemble) { EXPECT_TRUE(read_ensemble(base, "case.toml").empty()); }

TEST(EnsembleCase, MembersListedWithTheirValuesWeightsAndOverrides) {
  const Ensemble e = read_ensemble(base + R"(
[ensemble]
members = [ { "physics.manning" = 0.02 },
            { "physics.manning" = 0.04, "initial.eta" = "x < 5 ? 2.5 : 0", weight = 3 } ]
thresholds = [0.1, 0.5]
)", "case.toml");
  ASSERT_EQ(e.members.size(), 2u);
  EXPECT_EQ(e.form, "members");
  EXPECT_EQ(e.keys, (std::vector<std::string>{"initial.eta", "physics.manning"}));
  EXPECT_EQ(e.members[0].overrides(), (std::vector<std::string>{"physics.manning=0.02"}));
  EXPECT_EQ(e.members[1].overrides(),
            (std::vector<std::string>{"initial.eta=\"x < 5 ? 2.5 : 0\"", "physics.manning=0.04"}));
  EXPECT_EQ(e.members[0].weight, 1.0);
  EXPECT_EQ(e.members[1].weight, 3.0);
  EXPECT_EQ(*e.members[1].find("physics.manning")->number, 0.04);
  EXPECT_EQ(e.members[1].find("initial.eta")->text(), "x < 5 ? 2.5 : 0");
  EXPECT_EQ(e.members[0].find("initial.eta"), nullptr);
  EXPECT_EQ(e.thresholds, (std::vector<double>{0.1, 0.5}));
  EXPECT_EQ(e.percentiles, (std::vector<double>{10, 50, 90}));
}

TEST(EnsembleCase, ProductVariesTheFirstKeyByNameSlowest) {
  const Ensemble e = read_ensemble(base + R"(
[ensemble]
product = { "rain.scale" = [0.5, 1, 2], "physics.manning" = [0.02, 0.04] }
)", "case.toml");
  ASSERT_EQ(e.members.size(), 6u);
  const double manning[] = {0.02, 0.02, 0.02, 0.04, 0.04, 0.04};
  const double scale[] = {0.5, 1, 2, 0.5, 1, 2};
  for (std::size_t m = 0; m < 6; ++m) {
    EXPECT_EQ(*e.members[m].find("physics.manning")->number, manning[m]) << m;
    EXPECT_EQ(*e.members[m].find("rain.scale")->number, scale[m]) << m;
  }
  EXPECT_EQ(e.members[1].overrides(), (std::vector<std::string>{"physics.manning=0.02", "rain.scale=1"}));
}

TEST(EnsembleCase, LatinHypercubeHitsEachStratumOncePerKeyAndRepeatsForASeed) {
  // TOML inline tables stay on one line.
  const std::string text = base + "[ensemble]\nsample = { count = 50, seed = 7, method = \"lhs\", "
                                  "\"physics.manning\" = { uniform = [0.02, 0.06] }, "
                                  "\"rain.scale\" = { uniform = [0.5, 2.0] } }\n";
  const Ensemble e = read_ensemble(text, "case.toml");
  ASSERT_EQ(e.members.size(), 50u);
  for (const auto& [key, a, b] : {std::tuple{"physics.manning", 0.02, 0.06}, std::tuple{"rain.scale", 0.5, 2.0}}) {
    std::set<long> strata;
    for (const auto& m : e.members) {
      const double v = *m.find(key)->number;
      ASSERT_GE(v, a);
      ASSERT_LT(v, b);
      strata.insert(static_cast<long>(std::floor((v - a) / (b - a) * 50)));
    }
    EXPECT_EQ(strata.size(), 50u) << key;
  }
  // The same seed, the same members (to the bit); another seed, others.
  const Ensemble again = read_ensemble(text, "case.toml");
  for (std::size_t m = 0; m < 50; ++m) EXPECT_EQ(again.members[m].overrides(), e.members[m].overrides());
  std::string other = text;
  other.replace(other.find("seed = 7"), 8, "seed = 8");
  EXPECT_NE(read_ensemble(other, "case.toml").members[0].overrides(), e.members[0].overrides());
}

TEST(EnsembleCase, SplitMix64GivesItsPublishedSequence) {
  // splitmix64 from seed 0: the first outputs of the reference implementation (Vigna's splitmix64.c).
  shallows::io::SplitMix64 g(0);
  EXPECT_EQ(g.next(), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(g.next(), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(g.next(), 0x06c45d188009454fULL);
}

TEST(EnsembleCase, RandomSamplesStayInTheirRange) {
  const Ensemble e = read_ensemble(base + R"(
[ensemble]
sample = { count = 20, seed = 3, method = "random", "physics.manning" = { uniform = [0.02, 0.06] } }
)", "case.toml");
  ASSERT_EQ(e.members.size(), 20u);
  for (const auto& m : e.members) {
    EXPECT_GE(*m.find("physics.manning")->number, 0.02);
    EXPECT_LT(*m.find("physics.manning")->number, 0.06);
  }
}

TEST(EnsembleCase, SampledValuesReadBackExactlyThroughSet) {
  const Ensemble e = read_ensemble(base + R"(
[ensemble]
sample = { count = 5, seed = 11, "physics.manning" = { uniform = [0.02, 0.06] } }
)", "case.toml");
  for (const auto& m : e.members) {
    const auto c = parse_case(base, "case.toml", ".", m.overrides());
    EXPECT_EQ(c.problem.physics.n_manning, *m.find("physics.manning")->number);
  }
}

TEST(EnsembleCase, ErrorsNameTheMemberAndTheKey) {
  EXPECT_EQ(error_of("[ensemble]\nmembers = [{ \"physics.manning\" = 0.02 }, { \"physics.maning\" = 0.04 }]\n"),
            "case.toml: [ensemble] members[1]: unknown key 'physics.maning' (did you mean 'physics.manning'?)");
  EXPECT_EQ(error_of("[ensemble]\nproduct = { \"physic.manning\" = [0.02] }\n"),
            "case.toml: [ensemble] product: unknown section 'physic' (did you mean 'physics'?)");
  EXPECT_EQ(error_of("[ensemble]\nsample = { count = 4, \"physics.manning\" = { uniform = [0.06, 0.02] } }\n"),
            "case.toml: [ensemble] sample.physics.manning: uniform = [a, b] needs a < b, found [0.06, 0.02]");
  EXPECT_EQ(error_of("[ensemble]\nsample = { count = 0, \"physics.manning\" = { uniform = [0.02, 0.06] } }\n"),
            "case.toml: [ensemble] sample.count: expected an integer in [1, 100000], found integer 0");
  EXPECT_EQ(error_of("[ensemble]\nmembers = [{ manning = 0.02 }]\n"),
            "case.toml: [ensemble] members[0]: 'manning' is not a case key (keys are --set keys, e.g. "
            "\"physics.manning\")");
  EXPECT_EQ(error_of("[ensemble]\nmembers = [{ \"physics.manning\" = 0.02, weight = 0 }]\n"),
            "case.toml: [ensemble] members[0]: weight must be > 0, found 0");
  EXPECT_EQ(error_of("[ensemble]\nmembers = []\n").substr(0, 41), "case.toml: [ensemble] members: expected a");
  EXPECT_EQ(error_of("[ensemble]\nthresholds = [0.5]\n"),
            "case.toml: [ensemble]: give exactly one of members, product or sample");
  EXPECT_EQ(error_of("[ensemble]\nproduct = { \"rain.scale\" = [1] }\nthresholds = [0.5, 0.1]\n"),
            "case.toml: [ensemble] thresholds: must increase (0.5, then 0.1)");
  EXPECT_EQ(error_of("[ensemble]\nproduct = { \"rain.scale\" = [1] }\nthreshold = [0.5]\n"),
            "case.toml: [ensemble]: unknown key 'threshold' (did you mean 'thresholds'?) (valid: members, "
            "product, sample, thresholds, percentiles)");
}

TEST(EnsembleCase, TheCaseReaderLeavesTheSectionToTheEnsemble) {
  const auto c = parse_case(base + "[ensemble]\nproduct = { \"rain.scale\" = [1, 2] }\n", "case.toml", ".");
  EXPECT_EQ(c.problem.physics.n_manning, 0.03);
}

TEST(EnsembleCase, RainScaleMultipliesTheRates) {
  const auto plain = parse_case(base, "case.toml", ".");
  const auto doubled = parse_case(base, "case.toml", ".", {"rain.scale=2"});
  ASSERT_EQ(doubled.problem.forcing.rain.rate.v.size(), 1u);
  EXPECT_EQ(doubled.problem.forcing.rain.rate.v[0], 2 * plain.problem.forcing.rain.rate.v[0]);
  try {
    parse_case(base, "case.toml", ".", {"rain.scale=-1"});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--set: rain.scale: must be >= 0, found -1");
  }
}

namespace {

// A point source and an inflow segment (a walled west side), constant discharges; scale multiplies each.
const std::string with_sources = base + R"(
[boundary]
west = "wall"
[[boundary.segment]]
side = "west"
from = 0.0
to = 2.0
type = "inflow"
discharge = 0.75
[[source]]
name = "well"
x = 2.5
y = 0.5
discharge = 0.125
[[source]]
x = 3.5
y = 1.5
discharge = -0.5
)";

std::string case_error(const std::string& text, const std::vector<std::string>& sets) {
  try {
    parse_case(text, "case.toml", ".", sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

std::vector<double> discharges(const shallows::io::Case& c) {
  std::vector<double> q;
  for (const auto& s : c.problem.forcing.sources) q.push_back(s.discharge.v.at(0));
  return q;
}

} // namespace

TEST(EnsembleCase, SourceAndSegmentScaleMultiplyTheirDischargePickedByIndexOrName) {
  EXPECT_EQ(discharges(parse_case(with_sources, "case.toml", ".")), (std::vector<double>{0.125, -0.5, 0.75}));
  // The file's sources in order, then the inflow segments.
  const auto scaled = parse_case(with_sources, "case.toml", ".",
                                 {"source[well].scale=2", "source[1].scale=0.5", "boundary.segment[0].scale=4"});
  EXPECT_EQ(discharges(scaled), (std::vector<double>{0.25, -0.25, 3.0}));
  EXPECT_EQ(discharges(parse_case(with_sources, "case.toml", ".", {"source[0].scale=2"})),
            discharges(parse_case(with_sources, "case.toml", ".", {"source[well].scale=2"})));
  // A scale in the file, and a whole entry replaced through its index.
  std::string in_file = with_sources;
  in_file.replace(in_file.find("discharge = 0.125"), 17, "discharge = 0.125\nscale = 3");
  EXPECT_EQ(discharges(parse_case(in_file, "case.toml", "."))[0], 0.375);
  const auto replaced =
      parse_case(with_sources, "case.toml", ".", {"source[1]={ x = 0.5, y = 0.5, discharge = 0.0625 }"});
  EXPECT_EQ(discharges(replaced), (std::vector<double>{0.125, 0.0625, 0.75}));
}

TEST(EnsembleCase, SourceAndSegmentScaleScaleASeries) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("shallows-scale-" +
                                                                               std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "q.csv") << "time,q\n0,1.5\n10,2.5\n";
  }
  std::string text = with_sources;
  text.replace(text.find("discharge = 0.75"), 16, "hydrograph = \"q.csv\"");
  text.replace(text.find("discharge = 0.125"), 17, "discharge = \"q.csv\"");
  const auto c = parse_case(text, "case.toml", dir, {"source[0].scale=2", "boundary.segment[0].scale=0.5"});
  EXPECT_EQ(c.problem.forcing.sources[0].discharge.v, (std::vector<double>{3.0, 5.0}));
  EXPECT_EQ(c.problem.forcing.sources[2].discharge.v, (std::vector<double>{0.75, 1.25}));
  std::filesystem::remove_all(dir);
}

TEST(EnsembleCase, EntryKeysAndScalesAreCheckedWithMessagesNamingThem) {
  EXPECT_EQ(case_error(with_sources, {"source[2].scale=2"}),
            "--set: 'source[2].scale=2': the case has 2 [[source]] (source[0] to source[1])");
  EXPECT_EQ(case_error(with_sources, {"source[pump].scale=2"}),
            "--set: 'source[pump].scale=2': the case has 2 [[source]], none named 'pump' (names: well)");
  EXPECT_EQ(case_error(with_sources, {"source[0].scael=2"}),
            "--set: unknown key 'source[0].scael' (did you mean 'source[0].scale'?)");
  EXPECT_EQ(case_error(with_sources, {"boundary.segment[0].zzzzzz=2"}),
            "--set: unknown key 'boundary.segment[0].zzzzzz' (valid: side, from, to, type, hydrograph, discharge, "
            "scale, eta, concentration)");
  EXPECT_EQ(case_error(with_sources, {"source[0].scale=-1"}), "--set: source[0].scale: must be >= 0, found -1");
  EXPECT_EQ(case_error(with_sources, {"boundary.segment[0].scale=\"big\""}),
            "--set: boundary.segment[0].scale: expected a number, found string \"big\"");
  EXPECT_EQ(case_error(base, {"source[0].scale=2"}),
            "--set: cannot set 'source[0].scale=2': 'source' is not in the case, not an array of tables");
  EXPECT_EQ(case_error(with_sources, {"source[0=2"}),
            "--set: expected name[index] or name[label] in 'source[0=2', found 'source[0'");
  std::string level = with_sources;
  level.replace(level.find("type = \"inflow\"\ndischarge = 0.75"), 32, "type = \"level\"\neta = 1.0");
  EXPECT_EQ(case_error(level, {"boundary.segment[0].scale=2"}),
            "--set: boundary.segment[0].scale: only used by type \"inflow\", not \"level\"");
  // In [ensemble], the keys are checked before any member runs.
  EXPECT_EQ(error_of("[[source]]\nx = 1.0\ny = 1.0\ndischarge = 0.5\n[ensemble]\n"
                     "product = { \"source[0].scael\" = [1, 2] }\n"),
            "case.toml: [ensemble] product: unknown key 'source[0].scael' (did you mean 'source[0].scale'?)");
  EXPECT_EQ(error_of("[[source]]\nx = 1.0\ny = 1.0\ndischarge = 0.5\n[ensemble]\n"
                     "members = [ { \"source[1].scale\" = 2 } ]\n"),
            "case.toml: [ensemble] members[0]: 'source[1].scale=2': the case has 1 [[source]] (source[0] to "
            "source[0])");
}

TEST(EnsembleCase, MemberResultReadsBackAndATruncatedOneIsNotDone) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("shallows-ens-result-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  shallows::io::MemberResult r;
  const double nan = std::nan("");
  r.maxima = {{0.5, nan, 2.0}, {1.0, 0.0, 3.5}, {10.0, nan, 20.0}};
  r.initial_volume = 1.25;
  r.final_volume = 2.5;
  r.mass_balance_residual = nan;
  r.wall_seconds = 0.75;
  r.steps = 123;
  r.fingerprint = 0x0123456789abcdefULL;
  const fs::path file = dir / "0000.done";
  shallows::io::write_member_result(file, r);
  const auto back = shallows::io::read_member_result(file);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->maxima.max_h[0], 0.5);
  EXPECT_TRUE(std::isnan(back->maxima.max_h[1]));
  EXPECT_EQ(back->maxima.max_speed, r.maxima.max_speed);
  EXPECT_EQ(back->maxima.arrival_time[2], 20.0);
  EXPECT_EQ(back->final_volume, 2.5);
  EXPECT_TRUE(std::isnan(back->mass_balance_residual));
  EXPECT_EQ(back->steps, 123);
  EXPECT_EQ(back->fingerprint, r.fingerprint);
  // A file cut short (a copy interrupted) or absent is no result: the member runs again.
  const std::uintmax_t size = fs::file_size(file);
  fs::resize_file(file, size - 1);
  EXPECT_FALSE(shallows::io::read_member_result(file).has_value());
  EXPECT_FALSE(shallows::io::read_member_result(dir / "0001.done").has_value());
  fs::remove_all(dir);
}
