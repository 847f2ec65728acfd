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

// Runs on several ranks: the report comes with it (Backend::rank_report).
class DistributedBackend : public Backend, public RankReport {
 public:
  const RankReport* rank_report() const override { return this; }
};

using LocalFactory = std::function<std::unique_ptr<Backend>(const Problem&, const BackendOptions&)>;

// Collective: every rank of MPI_COMM_WORLD calls it with the same problem.
// The halo is k x the stencil's reach wide, plus extra_halo cells for an
// executor that keeps more than the state from step to step (the CUDA lagged
// kernel's stored rhs: one cell). overlap: whether the halos travel while
// the next step computes the cells that do not wait for them
// (HaloEndpoint::exchange_in_next_step), unless SHALLOWS_HALO_OVERLAP (on, off) says.
std::unique_ptr<DistributedBackend> make_distributed_backend(const Problem& problem, const BackendOptions& options,
                                                             const LocalFactory& make_local, int extra_halo = 0,
                                                             bool overlap = true);

} // namespace shallows::mpi
