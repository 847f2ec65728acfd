// SPDX-License-Identifier: MIT
#include "shallows/exec/mpi/context.hpp"

#include <cstdio>
#include <cstdlib>

#ifdef SHALLOWS_HAVE_MPI
#include <mpi.h>
#endif

namespace shallows::mpi {

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

int rank() {
  if (!initialised()) return 0;
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int size() {
  if (!initialised()) return 1;
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

int node_rank() {
  if (!initialised()) return 0;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int r = 0;
  MPI_Comm_rank(node, &r);
  MPI_Comm_free(&node);
  return r;
}

double max_over_ranks(double value) {
  if (!initialised()) return value;
  double out = value;
  MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

void abort_job(const std::string& message) {
  std::fprintf(stderr, "shallows: error on rank %d of %d: %s\n", rank(), size(), message.c_str());
  std::fflush(stderr);
  if (initialised()) MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

bool built_with_mpi() { return true; }

#else

Session::Session(int&, char**&) {}
Session::~Session() = default;
int rank() { return 0; }
int size() { return 1; }
int node_rank() { return 0; }
double max_over_ranks(double value) { return value; }

void abort_job(const std::string& message) {
  std::fprintf(stderr, "shallows: error: %s\n", message.c_str());
  std::exit(1);
}

bool built_with_mpi() { return false; }

#endif

bool active() { return size() > 1; }

} // namespace shallows::mpi
