// SPDX-License-Identifier: MIT
// `shallows bench --case s004-t1-mesh | s004-t2-mesh`: the seed-004 workloads
// on perturbed triangle meshes (rectangle_mesh), per cell count, numbering
// (random, reverse Cuthill-McKee, Z-order; edges sorted by their cells in
// each), loop design (cell, edge) and precision. Prints the connectivity
// bandwidth (seed 001 eq. 19) and mean neighbour index distance (seed 004
// eq. 6) of each numbering, cell-updates per second and, on the GPU, the
// bytes a cell-update moves in the design and the fraction of the bound those
// bytes give at the copy bandwidth measured in the same run. With --windows,
// S004-T2: the time per step with dry skipping against the wet area.
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
#include "shallows/core/stopwatch.hpp"
#include "shallows/exec/cuda_backend.hpp"
#include "shallows/mesh/unstructured/build.hpp"
#include "shallows/mesh/unstructured/generator.hpp"
#include "shallows/mesh/unstructured/ordering.hpp"
#include "shallows/solver/seed_problems.hpp"
#include "shallows/solver/simulation.hpp"

namespace shallows::cli {
namespace {

CellOrdering ordering_of(const std::string& name) {
  if (name == "random") return CellOrdering::random;
  if (name == "rcm") return CellOrdering::rcm;
  if (name == "morton") return CellOrdering::morton;
  return CellOrdering::file;
}

RectangleMeshSpec bench_spec(double millions, bool dynamic) {
  RectangleMeshSpec spec;
  spec.nx = spec.ny = std::max<index_t>(1, static_cast<index_t>(std::llround(std::sqrt(millions * 1e6 / 2))));
  spec.x0 = spec.y0 = dynamic ? -10 : 0;
  spec.x1 = spec.y1 = 10;
  spec.perturbation = 0.25;
  spec.shuffle = true;
  return spec;
}

double wet_fraction(const Backend& b, double h_dry) {
  Fields f;
  b.read_state(f);
  double wet = 0;
  for (double h : f.h) wet += h > h_dry ? 1 : 0;
  return f.h.empty() ? 0 : wet / static_cast<double>(f.h.size());
}

// Dry skipping against the wet area (S004-T2 on a mesh), as the grid's
// run_cuda_wet_windows: runs with skipping on and off advance in lockstep
// through windows of `window` steps (the same dt sequence: the same bits),
// each window timed on both; the wet fraction is read at the window's ends,
// outside the timing. The cost of a wet cell is that of S004-T1 (all wet) on
// a mesh of the same cells and numbering, timed for as many steps:
// proportional cost means time(skip) = wet fraction x time(all wet).
// The meshes: S004-T2's on [-10, 10]^2 and S004-T1's on [0, 10]^2 of the same cells and numbering.
void mesh_wet_windows(const BenchOptions& o, const std::shared_ptr<const UnstructuredMesh>& dry_mesh,
                      const std::shared_ptr<const UnstructuredMesh>& wet_mesh, const std::string& ordering,
                      const std::string& loop, const std::string& prec, std::ostringstream& rows) {
  const bool cuda = o.backend == "cuda";
  const Precision precision = prec == "float" ? Precision::single_precision : Precision::double_precision;
  const Problem p = seeds::s004_mesh("s004-t2-mesh", dry_mesh, precision);
  const Problem wet = seeds::s004_mesh("s004-t1-mesh", wet_mesh, precision);
  BackendOptions options;
  options.kind = cuda ? "cuda" : "cpu";
  options.threads = o.threads;
  options.track_maxima = false;
  options.mesh_loop = loop;
  BackendOptions off = options;
  off.dry_skip = false;
  auto skip = make_backend(p, options);
  auto full = make_backend(p, off);
  auto wet_ref = make_backend(wet, options);
  skip->advance(0.0, 1e30, 3);  // warm-up
  double t = full->advance(0.0, 1e30, 3).t;
  double t_ref = wet_ref->advance(0.0, 1e30, 3).t;
  const double cells = static_cast<double>(p.mesh->cells());
  double wet0 = wet_fraction(*skip, p.physics.h_dry);
  double worst = 0;
  for (int w = 0; w < o.windows; ++w) {
    const double computed_before = skip->cells_computed();
    auto start = Clock::now();
    const AdvanceResult a = skip->advance(t, 1e30, o.window_steps);
    const double t_skip = seconds_since(start);
    start = Clock::now();
    const AdvanceResult b = full->advance(t, 1e30, o.window_steps);
    const double t_full = seconds_since(start);
    if (a.t != b.t) throw std::runtime_error("the runs with and without dry skipping diverged in time");
    t = a.t;
    start = Clock::now();
    t_ref = wet_ref->advance(t_ref, 1e30, o.window_steps).t;
    const double t_wet = seconds_since(start);
    const double wet1 = wet_fraction(*skip, p.physics.h_dry);
    const double wet_mean = 0.5 * (wet0 + wet1);
    const double computed = (skip->cells_computed() - computed_before) / (cells * static_cast<double>(a.steps));
    const double ratio = t_skip / t_wet;
    worst = std::max(worst, std::abs(ratio / wet_mean - 1));
    std::printf("| s004-t2-mesh | %s | %s | %s | %s | %.0f | %d | %lld | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f |\n",
                skip->name().c_str(), ordering.c_str(), loop.c_str(), prec.c_str(), cells, w + 1,
                static_cast<long long>(a.steps), wet0, wet1, wet_mean, computed, t_skip / t_full, ratio,
                ratio / wet_mean);
    std::fflush(stdout);
    wet0 = wet1;
  }
  std::printf("  %s %s %s: largest |time(skip) / time(all wet) / wet fraction - 1| over %d windows: %.2f\n",
              ordering.c_str(), loop.c_str(), prec.c_str(), o.windows, worst);
  std::string device = o.machine;
#ifdef SHALLOWS_HAVE_CUDA
  if (const auto* cb = dynamic_cast<const CudaBackend*>(skip.get())) device = cb->stats().device;
#endif
  char row[768];
  std::snprintf(row, sizeof row,
                "| %s | %s | %s | s004-t2-mesh | %.0f cells, %s | %s | %s | - | - | dry skipping vs wet area: %d "
                "windows of %lld steps, largest abs(time(skip)/time(all wet)/wet fraction - 1) = %.2f |",
                today().c_str(), device.c_str(), o.commit.c_str(), cells, ordering.c_str(), prec.c_str(),
                skip->name().c_str(), o.windows, static_cast<long long>(o.window_steps), worst);
  rows << row << "\n";
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
  if (o.windows > 0) {
    if (!dynamic) throw std::runtime_error("--windows times s004-t2-mesh (or the grid's s004-t2)");
    std::printf("| case | backend | ordering | loop | precision | cells | window | steps | wet start | wet end | "
                "wet mean | cells computed | time skip / full | time skip / all wet | / wet mean |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (double m : millions) {
      for (const std::string& ordering : o.orderings.empty() ? std::vector<std::string>{"rcm", "morton"} : orderings) {
        const auto make_mesh = [&](bool on_dry_bed) {
          return std::make_shared<const UnstructuredMesh>(apply_ordering(
              build_mesh(rectangle_mesh(bench_spec(m, on_dry_bed)), "<generated>"), ordering_of(ordering), 1));
        };
        const auto dry_mesh = make_mesh(true), wet_mesh = make_mesh(false);
        for (const std::string& loop : o.loops.empty() ? std::vector<std::string>{cuda ? "cell" : "edge"} : loops)
          for (const std::string& prec : precisions) mesh_wet_windows(o, dry_mesh, wet_mesh, ordering, loop, prec, rows);
      }
    }
    return 0;
  }

  std::printf("| case | backend | ordering | loop | precision | cells | bandwidth | mean distance | steps | seconds | "
              "cell-updates/s | per thread | B/cell-update | copy GB/s | bound G/s | fraction |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (double m : millions) {
    const RectangleMeshSpec spec = bench_spec(m, dynamic);
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
