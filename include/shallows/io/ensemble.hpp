// SPDX-License-Identifier: MIT
#pragma once
// The [ensemble] section of a case file (docs/ensembles.md): the members of
// a study, each a list of `--set` overrides of the case, and the depths of
// its exceedance maps. A member's case is the case file with the command
// line's --set, then the member's values, applied through the same code path
// as --set (load_case); a member run alone is a plain run of that case.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/solver/ensemble_statistics.hpp"
#include "shallows/solver/fields.hpp"

namespace shallows::io {

// One key of one member.
struct EnsembleValue {
  std::string key;               // a --set key: "physics.manning"
  std::string toml;              // the value as --set takes it: 0.02, "x < 5 ? 2 : 0", { file = "dem.tif" }
  std::optional<double> number;  // a number's value (integers too)
  // For listings and tables: a number in the fewest digits that give it back, a string as it is, else the TOML.
  std::string text() const;
};

struct EnsembleMember {
  std::vector<EnsembleValue> values;  // sorted by key
  double weight = 1;                  // > 0; statistics weigh members by weight / sum of weights
  // The member's overrides, "key=value" as --set takes them.
  std::vector<std::string> overrides() const;
  // The value of key, or null where the member leaves the case's.
  const EnsembleValue* find(std::string_view key) const;
};

struct Ensemble {
  std::string form;               // "members", "product" or "sample"
  std::vector<std::string> keys;  // every key a member sets, sorted
  std::vector<EnsembleMember> members;
  std::vector<double> thresholds{0.1, 0.5, 1.0};   // depths (m) of the exceedance maps, increasing
  std::vector<double> percentiles{10, 50, 90};     // of max depth and max speed, increasing, in [0, 100]
  bool empty() const { return members.empty(); }
};

// [ensemble] of a case file's text; an empty Ensemble when the case has none.
// Every key is checked against the case file's schema as --set checks it
// (values are checked when a member's case is read). Throws InputError naming
// the source, the member and the key: "case.toml: [ensemble] members[3]:
// unknown key 'physics.maning' (did you mean 'physics.manning'?)".
Ensemble read_ensemble(std::string_view toml_text, const std::string& source_name);
Ensemble load_ensemble(const std::filesystem::path& case_file);

// What an ensemble keeps of a member that ran to its end.
struct MemberResult {
  Maxima maxima;  // per cell of the case (max_h, max_speed, arrival_time)
  double initial_volume = 0, final_volume = 0;
  double mass_balance_residual = 0;  // relative; NaN where the balance is not checked
  double wall_seconds = 0;
  long long steps = 0;
  unsigned long long fingerprint = 0;  // of what the member ran (the runner's: its case text, --set, values)
};

// DIR/members/NNNN.done: a member's result, written atomically after its outputs (so its presence says they are
// complete: a rerun of the ensemble skips the member). read_member_result: none where the file is absent or not
// one of these.
void write_member_result(const std::filesystem::path& file, const MemberResult& r);
std::optional<MemberResult> read_member_result(const std::filesystem::path& file);

// A member as the ensemble's tables report it.
struct MemberReport {
  bool ok = false;
  std::string message;  // why it failed
  MemberResult result;  // ok members
};

// The ensemble's own files in dir: ensemble.nc (NetCDF: the members' values and max depth, the statistics over
// the ok members), ensemble.csv (one row per member), and for a grid the exceedance maps of reference.output's
// formats ("geotiff": exceedance_<threshold>m.tif; "png": png/exceedance_<threshold>m.png). reference: a member's
// case (its grid or mesh, bed, gauges); stats: of the ok members, null where none is. docs/ensembles.md.
void write_ensemble_files(const std::filesystem::path& dir, const Case& reference, const Ensemble& ensemble,
                          const std::vector<MemberReport>& members, const EnsembleStatistics* stats);

// The generator of [ensemble] sample: splitmix64 (Steele, Lea and Flood 2014),
// so that a seed gives the same members with any compiler or standard library.
class SplitMix64 {
 public:
  explicit SplitMix64(unsigned long long seed) : state_(seed) {}
  unsigned long long next();
  double unit();                                 // uniform in [0, 1), 53 bits
  unsigned long long below(unsigned long long n);  // uniform in [0, n), n > 0

 private:
  unsigned long long state_;
};

} // namespace shallows::io
