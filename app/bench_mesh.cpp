// SPDX-License-Identifier: MIT
// `shallows bench --case s004-t1-mesh | s004-t2-mesh`: the seed-004 workloads
// on perturbed triangle meshes (rectangle_mesh), per cell count, numbering
// (random, reverse Cuthill-McKee, Z-order; edges sorted by their cells in
// each), loop design (cell, edge) and precision. Prints the connectivity
// bandwidth (seed 001 eq. 19) and mean neighbour index distance (seed 004
// eq. 6) of each numbering, cell-updates per second and, on the GPU, the
// bytes a cell-update moves in the design and the fraction of the bound those
// bytes give at the copy bandwidth measured in the same run.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench.hpp"
#include "shallows/exec/cuda_backend.hpp"
#include "shallows/mesh/unstructured/build.hpp"
#include "shallows/mesh/unstructured/generator.hpp"
#include "shallows/mesh/unstructured/ordering.hpp"
#include "shallows/solver/seed_problems.hpp"
#include "shallows/solver/simulation.hpp"

namespace shallows::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

CellOrdering ordering_of(const std::string& name) {
  if (name == "random") return CellOrdering::random;
  if (name == "rcm") return CellOrdering::rcm;
  if (name == "morton") return CellOrdering::morton;
  return CellOrdering::file;
}


} // namespace

int bench_mesh(const BenchOptions& o, const std::string& case_name, std::ostringstream& rows) {
  const bool cuda = o.backend == "cuda";
#ifndef SHALLOWS_HAVE_CUDA
  if (cuda) {
    std::fprintf(stderr, "shallows bench: this build has no CUDA backend\n");
    return 1;
  }
#endif
  std::vector<double> millions = o.mesh_cells;
  if (millions.empty()) millions = cuda ? std::vector<double>{1, 4, 16} : std::vector<double>{0.25, 1};
  std::vector<std::string> orderings = o.orderings;
  if (orderings.empty()) orderings = {"random", "rcm", "morton"};
  std::vector<std::string> loops = o.loops;
  if (loops.empty()) loops = {"cell", "edge"};
  std::vector<std::string> precisions = o.precisions;
  if (precisions.empty()) precisions = {"float", "double"};
  const bool dynamic = case_name == "s004-t2-mesh";

  std::printf("| case | backend | ordering | loop | precision | cells | bandwidth | mean distance | steps | seconds | "
              "cell-updates/s | per thread | B/cell-update | copy GB/s | bound G/s | fraction |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (double m : millions) {
    RectangleMeshSpec spec;
    spec.nx = spec.ny = std::max<index_t>(1, static_cast<index_t>(std::llround(std::sqrt(m * 1e6 / 2))));
    spec.x0 = spec.y0 = dynamic ? -10 : 0;
    spec.x1 = spec.y1 = dynamic ? 10 : 10;
    spec.perturbation = 0.25;
    spec.shuffle = true;
    const auto built_at = Clock::now();
    const UnstructuredMesh file_mesh = build_mesh(rectangle_mesh(spec), "<generated>");
    std::fprintf(stderr, "  mesh of %lld cells generated and built in %.1f s\n",
                 static_cast<long long>(file_mesh.cells()), seconds_since(built_at));
    for (const std::string& ordering : orderings) {
      auto mesh = std::make_shared<const UnstructuredMesh>(apply_ordering(file_mesh, ordering_of(ordering), 1));
      const OrderingMetrics metrics = ordering_metrics(*mesh);
      for (const std::string& prec : precisions) {
        const Precision precision = prec == "float" ? Precision::single_precision : Precision::double_precision;
        const Problem p = seeds::s004_mesh(case_name, mesh, precision);
        const double cells = static_cast<double>(mesh->cells());
        double copy_bw = 0;
#ifdef SHALLOWS_HAVE_CUDA
        if (cuda) copy_bw = cuda_copy_bandwidth(static_cast<std::size_t>(cells * 4 * (prec == "float" ? 4 : 8)));
#endif
        for (const std::string& loop : loops) {
          BackendOptions options;
          options.kind = cuda ? "cuda" : "cpu";
          options.threads = o.threads;
          options.track_maxima = false;
          options.mesh_loop = loop;
          std::unique_ptr<Backend> b = make_backend(p, options);
          AdvanceResult a = b->advance(0.0, 1e30, 3);  // warm-up
          index_t steps = 0, batch = cuda ? 20 : 2;
          double elapsed = 0;
          const auto start = Clock::now();
          for (;;) {
            a = b->advance(a.t, 1e30, batch);
            steps += a.steps;
            elapsed = seconds_since(start);
            if (elapsed >= o.seconds) break;
            batch = std::clamp<index_t>(static_cast<index_t>(0.2 * static_cast<double>(steps) / elapsed), 1, 100000);
          }
          const double rate = cells * static_cast<double>(steps) / elapsed;
          double bytes = 0;
          std::string device = "cpu";
#ifdef SHALLOWS_HAVE_CUDA
          if (const auto* cb = dynamic_cast<const CudaBackend*>(b.get())) {
            bytes = cb->stats().bytes_per_cell_update;
            device = cb->stats().device;
          }
#endif
          const double bound = bytes > 0 && copy_bw > 0 ? copy_bw / bytes : 0;
          const int threads = cuda ? 0 : (o.threads > 0 ? o.threads : omp_get_max_threads());
          char per_thread[32] = "-";
          if (threads > 0) std::snprintf(per_thread, sizeof per_thread, "%.3g", rate / threads);
          char line[768];
          std::snprintf(line, sizeof line,
                        "| %s | %s | %s | %s | %s | %lld | %lld | %.1f | %lld | %.3f | %.3g | %s | %.0f | %.0f | %.1f | "
                        "%.2f |",
                        case_name.c_str(), b->name().c_str(), ordering.c_str(), loop.c_str(), prec.c_str(),
                        static_cast<long long>(mesh->cells()), static_cast<long long>(metrics.bandwidth),
                        metrics.mean_neighbour_distance, static_cast<long long>(steps), elapsed, rate, per_thread,
                        bytes, copy_bw * 1e-9, bound * 1e-9, bound > 0 ? rate / bound : 0.0);
          std::printf("%s\n", line);
          std::fflush(stdout);
          rows << "| " << today() << " | " << (cuda ? device : o.machine) << " | " << o.commit << " " << line << "\n";
        }
      }
    }
  }
  return 0;
}

} // namespace shallows::cli
