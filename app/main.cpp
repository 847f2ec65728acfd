// SPDX-License-Identifier: MIT
// The shallows command line: `run` (the work is in the library), `bench`
// (app/bench.cpp, app/bench_mesh.cpp) and `mesh` (a generated rectangle mesh
// written as Gmsh MSH 4.1).
#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench.hpp"
#include "shallows/exec/mpi/context.hpp"
#include "shallows/io/case.hpp"
#include "shallows/io/gmsh.hpp"
#include "shallows/mesh/unstructured/generator.hpp"
#include "shallows/solver/capabilities.hpp"
#include "shallows/io/ensemble.hpp"
#include "shallows/solver/run.hpp"
#include "shallows/solver/run_ensemble.hpp"

namespace {

struct RunCommand {
  std::string case_file, output_dir, precision, backend = "cpu", restart;
  int threads = 0;
  int member = -1;  // --member N: that member of [ensemble] alone
  int jobs = 1;
  bool quiet = false, strict = false, dry_run = false;
  std::vector<std::string> sets;
  shallows::io::ParallelSettings parallel;  // 0: not given (the case's [parallel], else the defaults, decide)
};

int run_command(const RunCommand& r) {
  using namespace shallows;
  std::vector<std::string> sets = r.sets;
  if (!r.precision.empty()) sets.push_back("numerics.precision=\"" + r.precision + "\"");
  // An [ensemble] is checked whole before anything runs; --member N runs one member as a plain run.
  const io::Ensemble ensemble = r.case_file.empty() ? io::Ensemble{} : io::load_ensemble(r.case_file);
  if (ensemble.empty() && (r.member >= 0 || r.dry_run))
    throw io::InputError((r.case_file.empty() ? std::string("<built-in>") : r.case_file) +
                         ": --member and --dry-run need an [ensemble] section (docs/ensembles.md)");
  if (r.dry_run) {
    if (mpi::rank() == 0) std::fputs(list_members(ensemble).c_str(), stdout);
    return 0;
  }
  if (!ensemble.empty() && r.member < 0) {
    EnsembleOptions options;
    options.run.backend.kind = r.backend;
    options.run.backend.threads = r.threads;
    options.run.strict = r.strict;
    options.run.restart = r.restart;
    options.sets = sets;
    options.output_dir = r.output_dir;
    options.jobs = r.jobs;
    options.quiet = r.quiet;
    const EnsembleSummary s = run_ensemble(r.case_file, ensemble, options);
    if (s.stopped_by != 0) return 128 + s.stopped_by;
    return s.failed > 0 ? 2 : 0;  // 2: some members failed (ensemble.csv says which and why)
  }
  io::Case c = r.case_file.empty() ? io::parse_case(io::default_case_toml(), "<built-in>", ".", sets)
               : r.member >= 0     ? load_member_case(r.case_file, ensemble, static_cast<std::size_t>(r.member), sets)
                                   : io::load_case(r.case_file, sets);
  if (!r.output_dir.empty()) c.output.dir = r.output_dir;
  if (mpi::rank() == 0) {
    for (const std::string& note : c.notes) std::fprintf(stderr, "shallows: note: %s\n", note.c_str());
  }
  RunOptions options;
  options.backend.kind = r.backend;
  options.backend.threads = r.threads;
  set_parallel(options.backend, r.parallel, c.parallel);
  options.quiet = r.quiet;
  options.restart = r.restart;
  options.strict = r.strict;
  const RunSummary s = run_case(c, options);
  return s.stopped_by != 0 ? 128 + s.stopped_by : 0;  // 130 for SIGINT, 143 for SIGTERM, as a shell reports them
}

struct MeshCommand {
  std::string file, cells = "triangles";
  std::vector<double> x{0.0, 1.0}, y{0.0, 1.0};
  shallows::index_t nx = 10, ny = 10;
  double perturbation = 0;
  bool shuffle = false, binary = false;
  std::uint64_t seed = 1;
};

int mesh_command(const MeshCommand& m) {
  using namespace shallows;
  if (mpi::active()) throw std::runtime_error("shallows mesh writes one file: run it as one process, not under mpirun");
  RectangleMeshSpec spec;
  spec.x0 = m.x[0];
  spec.x1 = m.x[1];
  spec.y0 = m.y[0];
  spec.y1 = m.y[1];
  spec.nx = m.nx;
  spec.ny = m.ny;
  spec.cells = m.cells == "quadrilaterals" ? RectangleCells::quadrilaterals
               : m.cells == "mixed"        ? RectangleCells::mixed
                                           : RectangleCells::triangles;
  spec.perturbation = m.perturbation;
  spec.shuffle = m.shuffle;
  spec.seed = m.seed;
  const io::GmshMesh mesh = rectangle_mesh(spec);
  io::write_gmsh(m.file, mesh, m.binary);
  std::printf("%s: %zu nodes, %zu cells, boundary groups west, east, south, north (MSH 4.1%s)\n", m.file.c_str(),
              mesh.node_x.size(), mesh.cell_tag.size(), m.binary ? ", binary" : "");
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  // Under mpirun or srun: one rank of a distributed run (exec/mpi); else alone.
  const shallows::mpi::Session mpi_session(argc, argv);
  CLI::App app{"shallows: well-balanced shallow-water simulator (floods, dam breaks, tsunamis)"};
  app.set_version_flag("--version", std::string("shallows ") + SHALLOWS_VERSION);
  app.require_subcommand(1);

  auto* run = app.add_subcommand("run", "Run a case file (or the built-in dam break when none is given)");
  RunCommand r;
  run->add_option("case", r.case_file, "Case file (TOML); omit to run the built-in default case")
      ->check(CLI::ExistingFile);
  run->add_option("-o,--output", r.output_dir, "Output folder (overrides output.dir)");
  run->add_option("-t,--threads", r.threads, "CPU threads (default: all cores)")
      ->check(CLI::Validator([](std::string& v) { return shallows::cli::check_threads(v, false); }, "THREADS"));
  run->add_option("-p,--precision", r.precision, "Arithmetic precision")->check(CLI::IsMember({"float", "double"}));
  run->add_option("-b,--backend", r.backend, "Executor")->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  run->add_option("-s,--set", r.sets, "Override a case key, e.g. --set domain.nx=400 (repeatable)");
  run->add_flag("-q,--quiet", r.quiet, "No summary on stdout");
  run->add_option("--halo-steps", r.parallel.halo_steps,
                  "Under mpirun: steps between halo exchanges (halo width k; overrides parallel.halo_steps; default 1)")
      ->check(CLI::Range(1, 64));
  run->add_option("--ranks-x", r.parallel.ranks_x,
                  "Under mpirun: ranks along x (overrides parallel.ranks_x; default: from the grid's aspect ratio)")
      ->check(CLI::Range(1, 1 << 16));
  run->add_option("--ranks-y", r.parallel.ranks_y, "Under mpirun: ranks along y (overrides parallel.ranks_y)")
      ->check(CLI::Range(1, 1 << 16));
  run->add_option("--restart", r.restart,
                  "Go on from a checkpoint: its file, or the output folder holding it (output.checkpoint_every)");
  run->add_option("--member", r.member, "A case with [ensemble]: run member N (0-based) alone, as a plain run")
      ->check(CLI::NonNegativeNumber);
  run->add_flag("--dry-run", r.dry_run, "A case with [ensemble]: list the members and their values, run nothing");
  run->add_option("-j,--jobs", r.jobs,
                  "A case with [ensemble]: members run side by side, each on threads / jobs threads (on a GPU: "
                  "each on a stream of its own) (default 1)")
      ->check(CLI::Range(1, 1 << 16));
  run->add_flag("--strict", r.strict,
                "Fail (exit status 1) when the mass balance behind walls misses its tolerance, instead of warning");

  auto* bench = app.add_subcommand("bench", "Throughput benchmark (cell-updates per second) on the seed workloads");
  shallows::cli::BenchOptions bench_options;
  shallows::cli::add_bench_options(*bench, bench_options);

  auto* features = app.add_subcommand("features", "Print what runs where: features against grid or mesh, CPU or GPU, "
                                                  "one process or MPI ranks (Markdown; docs/features.md)");

  auto* mesh = app.add_subcommand("mesh", "Write a rectangle mesh (Gmsh MSH 4.1) for tests, benchmarks and examples");
  MeshCommand mesh_options;
  mesh->add_option("file", mesh_options.file, "Output .msh file")->required();
  mesh->add_option("--nx", mesh_options.nx, "Squares along x")->check(CLI::Range(1, 1 << 20));
  mesh->add_option("--ny", mesh_options.ny, "Squares along y")->check(CLI::Range(1, 1 << 20));
  mesh->add_option("--x", mesh_options.x, "x range (m)")->expected(2)->delimiter(',');
  mesh->add_option("--y", mesh_options.y, "y range (m)")->expected(2)->delimiter(',');
  mesh->add_option("--cells", mesh_options.cells, "Cell shapes")
      ->check(CLI::IsMember({"triangles", "quadrilaterals", "mixed"}));
  mesh->add_option("--perturb", mesh_options.perturbation,
                   "Move interior nodes at random by up to this fraction of the spacing")
      ->check(CLI::Range(0.0, 0.45));
  mesh->add_flag("--shuffle", mesh_options.shuffle, "Number cells and nodes at random");
  mesh->add_option("--seed", mesh_options.seed, "Random seed (perturbation, numbering)");
  mesh->add_flag("--binary", mesh_options.binary, "Binary MSH instead of ASCII");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A rank whose command line fails (a file one node lacks) ends the whole job: the others would wait for it.
    if (e.get_exit_code() != 0 && shallows::mpi::active()) shallows::mpi::abort_job(e.what());
    return app.exit(e);
  }
  if (*bench) return shallows::cli::bench_command(bench_options);
  if (*features) {
    std::fputs(shallows::features_table().c_str(), stdout);
    return 0;
  }
  try {
    if (*run) return run_command(r);
    if (*mesh) return mesh_command(mesh_options);
  } catch (const std::exception& e) {
    // One failed rank ends the whole job (the others may wait on it in a collective).
    if (shallows::mpi::active()) shallows::mpi::abort_job(e.what());
    std::fprintf(stderr, "shallows: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
