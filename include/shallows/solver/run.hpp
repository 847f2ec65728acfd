// SPDX-License-Identifier: MIT
#pragma once
// A whole run as the command line performs it: case -> outputs + summary.json.
#include <string>

#include "shallows/io/case.hpp"
#include "shallows/solver/backend.hpp"
#include "shallows/solver/mass_balance.hpp"

namespace shallows {

struct RunOptions {
  BackendOptions backend;
  bool progress = true;  // progress line on stderr when it is a terminal
  bool quiet = false;    // no final summary on stdout
  bool strict = false;   // a missed mass balance is an error (after summary.json), not a warning
};

struct RunSummary {
  std::string case_name;
  std::string backend;
  std::string precision;
  int threads = 0;
  index_t cells = 0;
  index_t steps = 0;
  double t_end = 0;
  double wall_seconds = 0;
  double cell_updates_per_second = 0;
  double initial_volume = 0;
  double final_volume = 0;
  double relative_mass_change = 0;
  double positivity_volume = 0;  // m^3 the positivity fixes added (Backend::positivity_volume)
  MassBalance mass_balance;
};

RunSummary run_case(const io::Case& c, const RunOptions& options);

} // namespace shallows
