// SPDX-License-Identifier: MIT
#pragma once
// An ensemble as the command line runs it (docs/ensembles.md): every member of
// a case's [ensemble] run by run_case into DIR/members/NNNN/, then the
// ensemble's files rebuilt from all members' results. A rerun skips the
// members whose results are there (their outputs are complete).
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/io/ensemble.hpp"
#include "shallows/solver/run.hpp"

namespace shallows {

struct EnsembleOptions {
  // Each member's run: backend, threads (shared out between jobs), strict. Its progress and summary are off.
  RunOptions run;
  std::vector<std::string> sets;        // the command line's --set, applied before each member's values
  std::filesystem::path output_dir;     // empty: the case's output.dir
  int jobs = 1;                         // members side by side on the CPU, each on threads / jobs threads
  bool progress = true;                 // the ensemble's progress line on stderr
  bool quiet = false;                   // no summary on stdout
  // Where not null: every member's report, in member order (those done before from their results), for a caller
  // that keeps the results in memory (Python's Ensemble).
  std::vector<io::MemberReport>* reports = nullptr;
};

// The case an ensemble's members are read from: a case file, or (where file is empty) a case's TOML text, named
// source_name in messages, whose relative file names resolve against base_dir (Python's cases from dicts); arrays:
// fields given as values per cell (io::FieldArrays), the same in every member; member_arrays[m]: member m's own
// (Python's Ensemble), over `arrays` key by key (none where the vector is shorter).
struct EnsembleCase {
  std::filesystem::path file;
  std::string text, source_name;
  std::filesystem::path base_dir = ".";
  io::FieldArrays arrays;
  std::vector<io::FieldArrays> member_arrays;
};

struct EnsembleSummary {
  std::size_t members = 0;
  std::size_t ran = 0;      // in this call
  std::size_t skipped = 0;  // complete already
  std::size_t failed = 0;
  int stopped_by = 0;       // SIGINT or SIGTERM: the ensemble stopped (no ensemble files written); 0: it ran through
};

// A member's case: the case file, the command line's --set, then the member's values (and its arrays), as
// `shallows run case.toml --member N` reads it.
io::Case load_member_case(const std::filesystem::path& case_file, const io::Ensemble& ensemble, std::size_t member,
                          const std::vector<std::string>& sets);
io::Case load_member_case(const EnsembleCase& source, const io::Ensemble& ensemble, std::size_t member,
                          const std::vector<std::string>& sets);

// DIR/members/NNNN (4 digits or more).
std::filesystem::path member_dir(const std::filesystem::path& dir, std::size_t member);

// Runs the ensemble of case_file (SIGINT and SIGTERM stop it between and inside members: a rerun goes on).
// Throws io::InputError when no member's case can be read.
EnsembleSummary run_ensemble(const std::filesystem::path& case_file, const io::Ensemble& ensemble,
                             const EnsembleOptions& options);
EnsembleSummary run_ensemble(const EnsembleCase& source, const io::Ensemble& ensemble, const EnsembleOptions& options);

// The members with their values, one line each ("--dry-run").
std::string list_members(const io::Ensemble& ensemble);

} // namespace shallows
