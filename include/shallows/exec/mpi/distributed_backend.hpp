// SPDX-License-Identifier: MIT
#pragma once
// The executor of a run on several MPI ranks: each rank runs an ordinary
// executor (CPU or CUDA) on its block of the grid widened by a halo
// (decomposition.hpp), refreshes the halo from its neighbours every k steps,
// and takes the time step of the whole grid from an all-reduce of the largest
// CFL rate every step. Output fields, maxima and the volume are gathered to
// rank 0 in the one-rank order, so that every output is bit-identical to
// a one-rank run.
#include <functional>
#include <memory>
#include <vector>

#include "shallows/solver/backend.hpp"

namespace shallows::mpi {

// Seconds one rank spent, and what it exchanged.
struct RankTiming {
  int rank = 0;
  double compute = 0;   // its executor's steps, less the all-reduce and the exchange's parts below
  double reduce = 0;    // the all-reduce of the rate (waits for the slowest rank)
  double pack = 0;      // halo rectangles out of and into the executor's state
  double exchange = 0;  // posting the sends and receives
  double wait = 0;      // waiting for the halos to arrive
  index_t steps = 0;
  index_t exchanges = 0;
  double halo_bytes = 0;  // sent per exchange
  int device_sides = 0;   // sides whose halo goes GPU to GPU (CUDA IPC)
  int host_sides = 0;     // sides whose halo goes through host memory (staged from a GPU, or a CPU rank's)
  int mpi_device_sides = 0;  // sides whose halo MPI moves from and to GPU memory (CUDA-aware MPI)
  int device_rate = 0;    // 1: the rate all-reduced by the GPUs (compute then includes it)
  int overlap = 0;        // 1: its executor computes the inner cells while the halos travel
};

class DistributedBackend : public Backend {
 public:
  // Every rank's timings, on rank 0 (empty elsewhere). Collective.
  virtual std::vector<RankTiming> rank_timings() const = 0;
  virtual int ranks_x() const = 0;
  virtual int ranks_y() const = 0;
  virtual index_t halo_cells() const = 0;
};

using LocalFactory = std::function<std::unique_ptr<Backend>(const Problem&, const BackendOptions&)>;

// Collective: every rank of MPI_COMM_WORLD calls it with the same problem.
// The halo is k x the stencil's reach wide, plus extra_halo cells for an
// executor that keeps more than the state from step to step (the CUDA lagged
// kernel's stored rhs: one cell). overlap: whether the halos travel while
// the next step computes the cells that do not wait for them
// (Backend::exchange_in_next_step), unless SHALLOWS_HALO_OVERLAP (on, off) says.
std::unique_ptr<DistributedBackend> make_distributed_backend(const Problem& problem, const BackendOptions& options,
                                                             const LocalFactory& make_local, int extra_halo = 0,
                                                             bool overlap = true);

} // namespace shallows::mpi
