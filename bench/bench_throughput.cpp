// SPDX-License-Identifier: MIT
// Throughput benchmark: cell-updates per second of whole time steps on the
// seed-004 workloads (S004-T1 static load, S004-T2 dynamic load), per
// backend, size and precision. Prints a table; --append adds the rows to a
// results file. Timings never feed a pass/fail test.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "shallows/solver/simulation.hpp"

namespace {

using namespace shallows;

Problem s004(const std::string& name, index_t n, Precision precision) {
  Problem p;
  const bool dynamic = name == "s004-t2";
  const double x0 = dynamic ? -10 : 0, len = dynamic ? 20 : 10;
  p.grid.nx = p.grid.ny = n;
  p.grid.x0 = p.grid.y0 = x0;
  p.grid.dx = p.grid.dy = len / static_cast<double>(n);
  const auto cells = static_cast<std::size_t>(p.grid.cells());
  p.z.assign(cells, 0.0);
  p.h.assign(cells, 0.0);
  p.hu.assign(cells, 0.0);
  p.hv.assign(cells, 0.0);
  // S004-T2: a dry tolerance of 1e-3 m leaves about two thirds of the domain dry.
  p.physics.h_dry = dynamic ? 1e-3 : 1e-6;
  for (index_t j = 0; j < n; ++j) {
    for (index_t i = 0; i < n; ++i) {
      const double x = p.grid.x_center(i), y = p.grid.y_center(j);
      double h = dynamic ? 16 * std::exp(-(x * x + y * y) / 5)
                         : std::exp(-((x - 5) * (x - 5) + (y - 5) * (y - 5)) / 20);
      if (h <= p.physics.h_dry) h = 0;
      p.h[static_cast<std::size_t>(j * n + i)] = h;
    }
  }
  p.cfl = 0.9;
  p.precision = precision;
  p.t_end = 1e30;
  return p;
}

double wet_fraction(const Fields& f, double h_dry) {
  std::size_t wet = 0;
  for (double h : f.h) wet += h > h_dry;
  return static_cast<double>(wet) / static_cast<double>(f.h.size());
}

std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"shallows throughput benchmark (cell-updates per second)"};
  std::string backend = "cpu", case_name = "s004-t1", append, machine = "unnamed machine";
  std::vector<index_t> sizes{256, 1024};
  std::vector<std::string> precisions{"double", "float"};
  int threads = 0;
  double seconds = 2.0;
  app.add_option("-b,--backend", backend)->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("-c,--case", case_name)->check(CLI::IsMember({"s004-t1", "s004-t2"}));
  app.add_option("-n,--sizes", sizes, "cells per side")->delimiter(',');
  app.add_option("-p,--precision", precisions)->delimiter(',')->check(CLI::IsMember({"float", "double"}));
  app.add_option("-t,--threads", threads, "CPU threads (0: all)");
  app.add_option("-s,--seconds", seconds, "time to run each configuration");
  app.add_option("--append", append, "append the table rows to this markdown file");
  app.add_option("--machine", machine, "machine description for the results file");
  CLI11_PARSE(app, argc, argv);

  std::ostringstream rows;
  std::printf("| case | backend | threads | precision | cells | steps | seconds | cell-updates/s | wet |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& prec : precisions) {
    for (index_t n : sizes) {
      const Precision precision = prec == "float" ? Precision::single_precision : Precision::double_precision;
      BackendOptions options;
      options.kind = backend;
      options.threads = threads;
      options.track_maxima = false;
      Simulation sim(s004(case_name, n, precision), options);
      sim.advance_steps(3);  // warm-up: first touch of pages, caches
      const double wet = wet_fraction(sim.state(), sim.problem().physics.h_dry);
      const auto start = std::chrono::steady_clock::now();
      index_t steps = 0;
      double elapsed = 0;
      do {
        sim.advance_steps(10);
        steps += 10;
        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      } while (elapsed < seconds);
      const double rate = static_cast<double>(n * n) * static_cast<double>(steps) / elapsed;
      char line[512];
      std::snprintf(line, sizeof line, "| %s | %s | %d | %s | %lldx%lld | %lld | %.3f | %.3g | %.2f |", case_name.c_str(),
                    sim.backend().name().c_str(), threads, prec.c_str(), static_cast<long long>(n),
                    static_cast<long long>(n), static_cast<long long>(steps), elapsed, rate, wet);
      std::printf("%s\n", line);
      std::fflush(stdout);
      rows << "| " << today() << " | " << machine << " " << line << "\n";
    }
  }
  if (!append.empty()) {
    std::ofstream f(append, std::ios::app);
    f << rows.str();
  }
  return 0;
}
