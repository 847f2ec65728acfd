// SPDX-License-Identifier: MIT
#pragma once
// `shallows bench`: throughput of whole time steps (cell-updates per second)
// on the seed workloads, a printed table and optionally rows appended to a
// results file. Timings never feed a pass/fail test.
#include <sstream>
#include <string>
#include <vector>

#include "shallows/core/config.hpp"

namespace CLI {
class App;
}

namespace shallows::cli {

struct BenchOptions {
  std::string backend = "cpu";  // cpu or cuda
  std::string case_name;        // empty: the standard set of the backend
  std::vector<index_t> sizes;   // cells per side (empty: the case's standard sizes)
  std::vector<std::string> precisions;  // empty: float and double
  std::vector<std::string> kernels{"lagged"};
  int threads = 0;
  double seconds = 2.0;
  int level = 4;       // S000-T1 mesh
  double t_end = 5.0;  // S000-T1 end time
  int dry_skip = 1, compact = 1, rows_per_chunk = 0, min_blocks = 0, windows = 0;
  bool single_steps = false;
  index_t window_steps = 50;
  std::string append, machine = "unnamed machine", commit = "unknown";
  // Mesh cases (s004-t1-mesh, s004-t2-mesh): cell counts in millions, numberings, loop designs.
  std::vector<double> mesh_cells;
  std::vector<std::string> orderings, loops;
  // Under mpirun (S004 cases): halo widths in steps, each timed, and the process grid (0: automatic).
  std::vector<int> halo_steps;
  int ranks_x = 0, ranks_y = 0;
  bool weak = false;  // under mpirun: -n cells per side per rank
};

void add_bench_options(CLI::App& sub, BenchOptions& o);

// Checks a thread count: 1 to 4 x the processors of this machine (more only
// oversubscribes the cores: thousands of threads stall a run). allow_zero: 0
// means all cores.
std::string check_threads(const std::string& value, bool allow_zero);
int bench_command(const BenchOptions& o);

// The mesh workloads (app/bench_mesh.cpp); appends results-file rows to `rows`.
int bench_mesh(const BenchOptions& o, const std::string& case_name, std::ostringstream& rows);

// Today's date, YYYY-MM-DD (UTC), for results rows.
std::string today();

} // namespace shallows::cli
