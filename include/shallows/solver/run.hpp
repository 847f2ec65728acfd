// SPDX-License-Identifier: MIT
#pragma once
// A whole run as the command line performs it: case -> outputs + summary.json.
#include <string>
#include <vector>

#include "shallows/exec/mpi/distributed_backend.hpp"
#include "shallows/io/case.hpp"
#include "shallows/solver/backend.hpp"

namespace shallows {

struct RunOptions {
  BackendOptions backend;
  bool progress = true;  // progress line on stderr when it is a terminal
  bool quiet = false;    // no final summary on stdout
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
  // Several MPI ranks (exec/mpi): the process grid, the halo, each rank's
  // timings (on rank 0). One rank: ranks = 1 and no timings.
  int ranks = 1;
  int ranks_x = 1, ranks_y = 1;
  int halo_steps = 0;
  index_t halo_cells = 0;
  std::vector<mpi::RankTiming> rank_timings;
};

RunSummary run_case(const io::Case& c, const RunOptions& options);

} // namespace shallows
