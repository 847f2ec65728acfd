// SPDX-License-Identifier: MIT
#pragma once
// A whole run as the command line performs it: case -> outputs + summary.json.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/solver/backend.hpp"
#include "shallows/solver/mass_balance.hpp"
#include "shallows/solver/simulation.hpp"

namespace shallows {

struct RunOptions {
  BackendOptions backend;
  bool progress = true;  // progress line on stderr when it is a terminal
  bool quiet = false;    // no final summary on stdout
  // A checkpoint file, or an output folder holding checkpoints, to go on from
  // (the outputs of the interrupted run are continued); empty: a new run.
  std::filesystem::path restart;
  bool strict = false;   // a missed mass balance is an error (after summary.json), not a warning
  // Called after every batch of steps with the time reached and the last dt
  // (a caller's progress display); what it throws ends the run.
  std::function<void(double, double)> on_batch;
  // false: the caller has installed StopSignals (an ensemble of runs side by side); the run still stops on a
  // signal received (StopSignals::received), but neither installs handlers nor runs the test hook.
  bool handle_signals = true;
  // Where given: receives the run's maxima at its end (kept whatever the output formats ask for).
  Maxima* maxima = nullptr;
};

// What became of a passive scalar's mass (its units times m^3, scalar_mass).
struct ScalarSummary {
  std::string name;
  double initial_mass = 0;
  double final_mass = 0;
  double relative_mass_change = 0;  // (final - initial) / initial; final where initial is 0
};

// The water a hydraulic structure moved from its inlet to its outlet over the run (m^3; < 0: the other way).
struct StructureSummary {
  std::string name;
  double volume = 0;
  double width = -1;  // a breach's width at the end (m); < 0: not a breach
  bool line = false;  // a weir, wall or breach: volume from the line's left to its right
};

struct RunSummary {
  std::string case_name;
  std::string backend;
  std::string precision;
  int threads = 0;
  index_t cells = 0;
  index_t steps = 0;
  double t_end = 0;
  // Wall time split: set-up (backend, initial state on the device, output
  // files opened), stepping (inside the time loop, outputs handed over),
  // waiting for the output writer (a full queue, the last frames), and the
  // end (maxima written, files closed). wall_seconds is their sum.
  double setup_seconds = 0;
  double stepping_seconds = 0;
  double output_wait_seconds = 0;
  double finish_seconds = 0;
  double wall_seconds = 0;
  double cell_updates_per_second = 0;  // over stepping_seconds
  double initial_volume = 0;
  double final_volume = 0;
  double relative_mass_change = 0;
  // SIGINT or SIGTERM when the run stopped early on one (a checkpoint was
  // written, outputs closed, no summary.json); 0 when it ran to the end.
  int stopped_by = 0;
  double positivity_volume = 0;  // m^3 the positivity fixes added (Backend::positivity_volume)
  ForcingVolumes forcing;        // m^3 rain, infiltration and sources moved (Backend::forcing_volumes)
  BoundaryFlow boundary;         // m^3 through the sides (Backend::boundary_flow; NaN: not kept)
  MassBalance mass_balance;
  std::vector<ScalarSummary> scalars;  // Problem::scalars order
  std::vector<StructureSummary> structures;  // Problem::forcing.structures order
  // Several MPI ranks (exec/mpi): the process grid, the halo, each rank's
  // timings (on rank 0). One rank: ranks = 1 and no timings.
  int ranks = 1;
  int ranks_x = 1, ranks_y = 1;
  int halo_steps = 0;
  index_t halo_cells = 0;
  std::vector<RankTiming> rank_timings;
};

// The process grid and halo of a run on several MPI ranks into backend: each of ranks_x, ranks_y, halo_steps from
// the command line where given (> 0), else from the case's [parallel] where given (> 0), else left as it is
// (BackendOptions' defaults: halo_steps 1, the process grid chosen from the rank count and the grid).
void set_parallel(BackendOptions& backend, const io::ParallelSettings& command_line,
                  const io::ParallelSettings& from_case);

// Runs the case (SIGINT and SIGTERM handled while it runs: see signals.hpp);
// throws io::InputError for a checkpoint that does not belong to the case.
RunSummary run_case(const io::Case& c, const RunOptions& options);
// The same run by a simulation of c.problem the caller made and keeps (a
// Python session reads its state afterwards): it must not have advanced yet,
// and options.restart must be empty (std::invalid_argument). options.backend
// is not used (the simulation's backend runs); its maxima must be tracked for
// outputs that write them, with c.output.arrival_threshold.
RunSummary run_case(const io::Case& c, const RunOptions& options, Simulation& sim);

} // namespace shallows
