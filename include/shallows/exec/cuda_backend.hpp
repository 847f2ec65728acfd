// SPDX-License-Identifier: MIT
#pragma once
// The CUDA executor. Declared in every build; defined only where the CUDA
// backend is compiled (SHALLOWS_HAVE_CUDA), so callers outside the library
// guard their uses with #ifdef SHALLOWS_HAVE_CUDA.
#include <cstddef>
#include <memory>
#include <string>

#include "shallows/solver/backend.hpp"

namespace shallows {

// Choices of the CUDA executor beyond BackendOptions (tuning, comparisons).
struct CudaOptions {
  // lagged: one pass per step that also stores the next step's rhs;
  // plain: thread per cell, rate kernel + update kernel (the reference; taken
  // whatever is asked on several ranks where the halo is too narrow for
  // lagged, with a rank's sources or sides that follow a series, and with
  // boundary segments); auto: plain on small grids
  // in one process, else lagged (the options of a run,
  // cuda_options_from_environment, ask for auto).
  std::string kernel = "lagged";
  bool dry_skip = true;          // skip chunks that are dry with dry neighbours (all but plain)
  bool compact = true;           // with dry_skip: launch warps only for the chunks listed on the device
  int rows = 0;                  // rows per chunk of the lagged and roe3 kernels; 0: chosen from grid and GPU
  int device = 0;                // CUDA device ordinal
  int min_blocks = 0;            // resident blocks per SM to compile for (0: default); lagged: 2, 4, 6; roe3: 3, 4
};

// A run's options: the kernel "auto" and the other defaults, overridden by
// SHALLOWS_CUDA_KERNEL, SHALLOWS_CUDA_DRY_SKIP (0/1), SHALLOWS_CUDA_COMPACT
// (0/1), SHALLOWS_CUDA_ROWS, SHALLOWS_CUDA_DEVICE and
// SHALLOWS_CUDA_MIN_BLOCKS where set.
CudaOptions cuda_options_from_environment();
// Those, on BackendOptions::cuda_device where it names one (a rank's GPU): what every CUDA executor runs on.
CudaOptions cuda_options(const BackendOptions& options);

using CudaAdvance = AdvanceResult;

struct CudaStats {
  std::string device;               // "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)"
  std::string kernel;               // lagged, plain
  int chunk_width = 0;              // columns per chunk (0 for plain)
  int chunk_rows = 0;               // rows per chunk (0 for plain)
  index_t chunks = 0;               // chunks per step
  index_t chunks_computed = 0;      // chunks computed since construction (dry skipping)
  index_t steps = 0;                // steps taken since construction
  double bytes_per_cell_update = 0; // device-memory bytes a computed cell-update must move in this design
};

class CudaBackend : public Backend {
 public:
  // Advances from time t towards target as Simulation::advance_to does (dt
  // clipped so that target is hit exactly), at most max_steps steps. Steps
  // are launched in batches with time control on the device; the host
  // synchronises once per batch (a few dozen bytes), not once per step.
  AdvanceResult advance(double t, double target, index_t max_steps) override = 0;
  virtual CudaStats stats() const = 0;
};

std::unique_ptr<Backend> make_cuda_backend(const Problem& problem, const BackendOptions& options);
std::unique_ptr<CudaBackend> make_cuda_backend(const Problem& problem, const BackendOptions& options,
                                               const CudaOptions& cuda);

// The CUDA executor for unstructured meshes (first order).
std::unique_ptr<Backend> make_cuda_mesh_backend(const Problem& problem, const BackendOptions& options);

// Number of CUDA devices the runtime sees (0 when there is no driver or GPU).
int cuda_device_count();

// Whether a CUDA MPS daemon this process would reach runs: its pipe folder
// named by the environment (CUDA_MPS_PIPE_DIRECTORY) or the default one
// holds the control pipe. Processes sharing a GPU then run side by side.
bool cuda_mps_running();

// Device-to-device copy bandwidth of a buffer of `bytes` bytes, counting
// bytes read plus bytes written, in bytes per second (median of repeats).
double cuda_copy_bandwidth(std::size_t bytes, int device = 0);

} // namespace shallows
