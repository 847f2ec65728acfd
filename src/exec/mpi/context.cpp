// SPDX-License-Identifier: MIT
#include "shallows/exec/mpi/context.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef SHALLOWS_HAVE_MPI
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // OpenMPI's extensions: MPIX_Query_cuda_support
#endif
#endif

namespace shallows::mpi {

namespace {
std::atomic<int> alone_scopes{0};
bool alone() { return alone_scopes.load() > 0; }
} // namespace

Alone::Alone() { ++alone_scopes; }
Alone::~Alone() { --alone_scopes; }

#ifdef SHALLOWS_HAVE_MPI
namespace {

bool launched_by_mpi() {
  // OpenMPI's mpirun, PMIx (srun, OpenMPI 5), PMI-1/2 (srun, MPICH's hydra).
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"}) {
    if (std::getenv(v)) return true;
  }
  return false;
}

bool initialised() {
  int flag = 0;
  MPI_Initialized(&flag);
  int finalised = 0;
  MPI_Finalized(&finalised);
  return flag && !finalised;
}

} // namespace

Session::Session(int& argc, char**& argv) {
  if (!launched_by_mpi()) return;
  // Only the main thread calls MPI (OpenMP threads and the output thread never do).
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
}

Session::~Session() {
  if (initialised()) MPI_Finalize();
}

int job_rank() {
  if (!initialised()) return 0;
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int job_size() {
  if (!initialised()) return 1;
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

int rank() { return alone() ? 0 : job_rank(); }
int size() { return alone() ? 1 : job_size(); }

std::vector<std::string> gather_text(const std::string& text) {
  if (!initialised()) return {text};
  const int n = job_size();
  const int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(n)), offsets(static_cast<std::size_t>(n));
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::size_t total = 0;
  for (int r = 0; r < n; ++r) {
    offsets[static_cast<std::size_t>(r)] = static_cast<int>(total);
    total += static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)]);
  }
  std::string all(total, '\0');
  MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                 MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int r = 0; r < n; ++r)
    out.push_back(all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                             static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)])));
  return out;
}

NodeRanks node_ranks() {
  if (!initialised() || alone()) return {};
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  NodeRanks out;
  MPI_Comm_rank(node, &out.rank);
  MPI_Comm_size(node, &out.size);
  MPI_Comm_rank(MPI_COMM_WORLD, &out.leader);
  MPI_Bcast(&out.leader, 1, MPI_INT, 0, node);
  MPI_Comm_free(&node);
  return out;
}

double max_over_ranks(double value) {
  if (!initialised() || alone()) return value;
  double out = value;
  MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

void check_same_on_every_rank(std::uint64_t hash, const std::string& what) {
  if (!initialised() || size() < 2) return;
  std::vector<std::uint64_t> all(static_cast<std::size_t>(rank() == 0 ? size() : 0));
  MPI_Gather(&hash, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  std::string differ;
  for (std::size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0]) differ += (differ.empty() ? "" : ", ") + std::to_string(r);
  if (!differ.empty()) {
    throw std::runtime_error("the ranks do not run the same " + what + ": rank(s) " + differ +
                             " read other inputs or options than rank 0 (each rank reads the case file, its "
                             "rasters and series itself: give every rank the same files and options)");
  }
}

void abort_job(const std::string& message) {
  std::fprintf(stderr, "shallows: error on rank %d of %d: %s\n", job_rank(), job_size(), message.c_str());
  std::fflush(stderr);
  if (initialised()) MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

// OpenMPI answers at run time whatever its headers' MPIX_CUDA_AWARE_SUPPORT
// says: a binary built against one OpenMPI runs with another of the same
// interface.
GpuMemorySupport library_gpu_memory_support() {
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
  return MPIX_Query_cuda_support() == 1 ? GpuMemorySupport::yes : GpuMemorySupport::no;
#elif defined(MPIX_GPU_SUPPORT_CUDA)
  int supported = 0;
  if (MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &supported) != MPI_SUCCESS) return GpuMemorySupport::unknown;
  return supported == 1 ? GpuMemorySupport::yes : GpuMemorySupport::no;
#else
  return GpuMemorySupport::unknown;
#endif
}

bool cuda_aware_mpi() {
  const char* v = std::getenv("SHALLOWS_CUDA_AWARE_MPI");
  const std::string mode = v == nullptr ? "auto" : v;
  if (mode != "auto" && mode != "on" && mode != "off") {
    throw std::runtime_error("SHALLOWS_CUDA_AWARE_MPI is '" + mode +
                             "': it must be auto (ask the MPI library), on or off");
  }
  if (mode == "off") return false;
  const GpuMemorySupport library = library_gpu_memory_support();
  if (mode == "on" && library == GpuMemorySupport::no) {
    throw std::runtime_error("SHALLOWS_CUDA_AWARE_MPI is 'on', but this MPI library says it cannot read GPU memory "
                             "(it is not CUDA-aware): unset the variable, or use an MPI built with CUDA support");
  }
  return library == GpuMemorySupport::yes || mode == "on";
}

bool built_with_mpi() { return true; }

#else

Session::Session(int&, char**&) {}
Session::~Session() = default;
int rank() { return 0; }
int size() { return 1; }
int job_rank() { return 0; }
int job_size() { return 1; }
std::vector<std::string> gather_text(const std::string& text) { return {text}; }
void check_same_on_every_rank(std::uint64_t, const std::string&) {}
NodeRanks node_ranks() { return {}; }
double max_over_ranks(double value) { return value; }

void abort_job(const std::string& message) {
  std::fprintf(stderr, "shallows: error: %s\n", message.c_str());
  std::exit(1);
}

GpuMemorySupport library_gpu_memory_support() { return GpuMemorySupport::unknown; }
bool cuda_aware_mpi() { return false; }

bool built_with_mpi() { return false; }

#endif

bool active() { return size() > 1; }

std::string gpu_sharing_note(int node_ranks, int gpus, bool mps_running) {
  if (gpus < 1 || node_ranks <= gpus || mps_running) return {};
  return std::to_string(node_ranks) + " ranks share " + std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs") +
         " on this node and CUDA MPS does not run, so the ranks on a GPU take turns on it (measured on an H100 at "
         "halo_steps = 4: 2 ranks reach 82-89% of one rank's speed, 96% under MPS); docs/mpi.md, \"Several ranks "
         "on one GPU\", says how to start MPS";
}

} // namespace shallows::mpi
