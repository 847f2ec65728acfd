// SPDX-License-Identifier: MIT
#include "shallows/solver/backend.hpp"

#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

#include "shallows/exec/cpu_backend.hpp"
#include "shallows/exec/cuda_backend.hpp"
#include "shallows/exec/mpi/context.hpp"
#include "shallows/exec/mpi/distributed_backend.hpp"
#include "shallows/solver/capabilities.hpp"
#include "shallows/solver/time_step.hpp"

namespace shallows {

Fields Snapshot::take() {
  if (ready_) {
    Fields f = std::move(*ready_);
    ready_.reset();
    return f;
  }
  if (!pending_) throw std::logic_error("Snapshot::take: the snapshot is empty (already taken or moved from)");
  // The pending part is released (its buffers given back) whether take()
  // returns or throws.
  const std::unique_ptr<Pending> pending = std::move(pending_);
  return pending->take();
}

Snapshot Backend::snapshot() {
  Fields f;
  read_state(f);
  return Snapshot(std::move(f));
}

Fields Backend::read_cells(const std::vector<std::size_t>& cells) const {
  Fields all;
  read_state(all);
  if (all.h.empty()) return {};  // a rank other than 0
  return cells_of(all, cells);
}

std::vector<double> Backend::read_field(StateField which) const {
  Fields all;
  read_state(all);
  return std::move(state_field(which, all.h, all.hu, all.hv));
}

AdvanceResult Backend::advance(double t, double target, index_t max_steps) {
  AdvanceResult r{t, 0, 0};
  while (takes_step(r.t, target, r.steps, max_steps)) {
    r.dt = step(r.t, target - r.t);  // no further than the target
    if (!(r.dt > 0)) {
      throw std::runtime_error("time step collapsed to " + std::to_string(r.dt) + " s at t = " + std::to_string(r.t));
    }
    r.t = step_end_time(r.t, r.dt, target);
    ++r.steps;
  }
  return r;
}

bool cuda_available() {
#ifdef SHALLOWS_HAVE_CUDA
  return cuda_device_count() > 0;
#else
  return false;
#endif
}

namespace {

// The executor of one process, on the whole problem or on one rank's block (options.kind: cpu or cuda).
std::unique_ptr<Backend> make_local_backend(const Problem& problem, const BackendOptions& options) {
  if (options.kind == "cpu")
    return problem.on_mesh() ? make_mesh_cpu_backend(problem, options) : make_cpu_backend(problem, options);
#ifdef SHALLOWS_HAVE_CUDA
  if (!cuda_available()) throw std::runtime_error("backend 'cuda': no CUDA device is available");
  return problem.on_mesh() ? make_cuda_mesh_backend(problem, options) : make_cuda_backend(problem, options);
#else
  throw std::runtime_error("backend 'cuda': this build has no CUDA backend");
#endif
}

} // namespace

std::unique_ptr<Backend> make_backend(const Problem& problem, const BackendOptions& requested) {
  if (requested.kind != "cpu" && requested.kind != "cuda" && requested.kind != "auto")
    throw std::runtime_error("unknown backend '" + requested.kind + "' (valid: cpu, cuda, auto)");
  // What runs where is the capability table's: auto takes the GPU where one is present and runs the problem.
  const Place gpu{problem.on_mesh(), true, mpi::active()};
  BackendOptions options = requested;
  if (options.kind == "auto") options.kind = cuda_available() && refusal(problem, gpu).empty() ? "cuda" : "cpu";
  const Place place{problem.on_mesh(), options.kind == "cuda", mpi::active()};
  if (const std::string why = refusal(problem, place); !why.empty()) throw std::runtime_error(why);
  if (!mpi::active()) return make_local_backend(problem, options);
  BackendOptions local = options;
  int extra_halo = 0;
  bool overlap = true;  // halos beside the inner cells (distributed_backend.hpp)
#ifdef SHALLOWS_HAVE_CUDA
  // One GPU per rank: the node's ranks take the node's GPUs in turn. Asked
  // on every rank, GPU or not: collective.
  const mpi::NodeRanks node = mpi::node_ranks();
  const int gpus = cuda_device_count();  // 0 without a device
  // Ranks that share a GPU take turns on it: an exchange beside the inner
  // chunks then waits for the other rank's kernels, which is slower.
  if (options.kind != "cpu" && gpus > 0 && node.size > gpus) overlap = false;
  if (local.cuda_device < 0 && gpus > 0) {
    local.cuda_device = node.rank % gpus;
    static bool noted = false;  // once per process (shallows bench makes one executor per configuration)
    if (options.kind != "cpu" && mpi::rank() == 0 && !noted) {
      const std::string note = mpi::gpu_sharing_note(node.size, gpus, cuda_mps_running());
      if (!note.empty()) std::fprintf(stderr, "shallows: note: %s\n", note.c_str());
      noted = true;
    }
  }
  // GPU ranks: one more halo cell for the lagged kernel, whose rhs of the
  // halo is computed again after each exchange and lacks the outermost ring
  // (the CUDA executor falls back to its plain kernels where a halo is narrower).
  if (options.kind != "cpu" && gpus > 0 && problem.scheme == Scheme::roe1) extra_halo = 1;
#endif
  return mpi::make_distributed_backend(problem, local, make_local_backend, extra_halo, overlap);
}

} // namespace shallows
