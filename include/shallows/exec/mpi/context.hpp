// SPDX-License-Identifier: MIT
#pragma once
// The MPI job this process belongs to. MPI is initialised only where a
// launcher (mpirun, srun) started the process, so that the same binary runs
// alone as one rank without touching MPI; builds without MPI always run as
// one rank.
#include <cstdint>
#include <string>
#include <vector>

namespace shallows::mpi {

// Initialises MPI for the lifetime of main() when launched by mpirun or srun.
class Session {
 public:
  Session(int& argc, char**& argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
};

bool active();    // MPI initialised and more than one rank
int rank();       // 0 without MPI
int size();       // 1 without MPI

// While one lives, this process runs as a job of its own: rank() 0, size() 1,
// active() false and every collective above a no-op, so that a run inside it
// is a plain one-rank run (an ensemble's members under mpirun, each rank
// taking its own). Process-wide: every thread sees it. The functions below
// marked "of the whole job" still reach every rank.
class Alone {
 public:
  Alone();
  ~Alone();
  Alone(const Alone&) = delete;
  Alone& operator=(const Alone&) = delete;
};

// This rank and the number of ranks of the whole job, Alone or not.
int job_rank();
int job_size();

// Every rank's text, on every rank, in rank order: an all-gather of the whole
// job ({text} without MPI). Collective of the whole job.
std::vector<std::string> gather_text(const std::string& text);
// This rank's index among the ranks of its node (picks the node's GPU), how
// many ranks its node runs, and the world rank of its node's first rank (the
// same on every rank of a node: which ranks share one). {0, 1, 0} without
// MPI. Collective.
struct NodeRanks {
  int rank = 0;
  int size = 1;
  int leader = 0;
};
NodeRanks node_ranks();

// What rank 0 says where a node's ranks outnumber its GPUs (rank r takes GPU
// r mod gpus) and CUDA MPS does not run: the processes sharing a GPU then
// take turns on it. Empty where every rank has a GPU of its own or MPS runs.
std::string gpu_sharing_note(int node_ranks, int gpus, bool mps_running);

// The largest of every rank's value (an all-reduce; the value itself
// without MPI). Collective.
double max_over_ranks(double value);

// Ranks that each read their own inputs must have read the same ones:
// every rank's hash of them to rank 0, which throws std::runtime_error
// naming `what` and the ranks whose hash differs from its own (its
// abort_job then ends the job; the others wait in their next collective).
// Nothing without MPI or on one rank. Collective.
void check_same_on_every_rank(std::uint64_t hash, const std::string& what);

// Ends the whole job: prints "shallows: error on rank R of N: message" and
// calls MPI_Abort, so that no rank waits forever for a failed one.
[[noreturn]] void abort_job(const std::string& message);

// What the MPI library says, at run time, of reading and writing GPU memory
// (CUDA-aware MPI): OpenMPI's MPIX_Query_cuda_support, MPICH's
// MPIX_GPU_query_support; unknown where it has no such query.
enum class GpuMemorySupport { yes, no, unknown };
GpuMemorySupport library_gpu_memory_support();

// Whether halos go to MPI in GPU memory: SHALLOWS_CUDA_AWARE_MPI "auto" (or
// unset) takes the library's yes; "off" never; "on" also where the library
// cannot say (one that can but has no query), and throws, naming the
// variable, where the library says no (MPI would then read GPU memory as
// host memory and crash). Any other value throws, naming it. False without
// MPI.
bool cuda_aware_mpi();

// Whether this build has MPI.
bool built_with_mpi();

} // namespace shallows::mpi
