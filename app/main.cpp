// SPDX-License-Identifier: MIT
// The shallows command line: `run` (the work is in the library) and `bench`
// (app/bench.cpp).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "bench.hpp"
#include "shallows/io/case.hpp"
#include "shallows/solver/run.hpp"

namespace {

int run_command(const std::string& case_file, const std::string& output_dir, int threads,
                const std::string& precision, const std::string& backend, std::vector<std::string> sets,
                bool quiet) {
  using namespace shallows;
  if (!precision.empty()) sets.push_back("numerics.precision=\"" + precision + "\"");
  io::Case c = case_file.empty() ? io::parse_case(io::default_case_toml(), "<built-in>", ".", sets)
                                 : io::load_case(case_file, sets);
  if (!output_dir.empty()) c.output.dir = output_dir;
  RunOptions options;
  options.backend.kind = backend;
  options.backend.threads = threads;
  options.quiet = quiet;
  run_case(c, options);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"shallows: well-balanced shallow-water simulator (floods, dam breaks, tsunamis)"};
  app.set_version_flag("--version", std::string("shallows ") + SHALLOWS_VERSION);
  app.require_subcommand(1);

  auto* run = app.add_subcommand("run", "Run a case file (or the built-in dam break when none is given)");
  std::string case_file, output_dir, precision, backend = "cpu";
  int threads = 0;
  bool quiet = false;
  std::vector<std::string> sets;
  run->add_option("case", case_file, "Case file (TOML); omit to run the built-in default case")
      ->check(CLI::ExistingFile);
  run->add_option("-o,--output", output_dir, "Output folder (overrides output.dir)");
  run->add_option("-t,--threads", threads, "CPU threads (default: all cores)")->check(CLI::PositiveNumber);
  run->add_option("-p,--precision", precision, "Arithmetic precision")->check(CLI::IsMember({"float", "double"}));
  run->add_option("-b,--backend", backend, "Executor")->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  run->add_option("-s,--set", sets, "Override a case key, e.g. --set domain.nx=400 (repeatable)");
  run->add_flag("-q,--quiet", quiet, "No summary on stdout");

  auto* bench = app.add_subcommand("bench", "Throughput benchmark (cell-updates per second) on the seed workloads");
  shallows::cli::BenchOptions bench_options;
  shallows::cli::add_bench_options(*bench, bench_options);

  CLI11_PARSE(app, argc, argv);
  if (*bench) return shallows::cli::bench_command(bench_options);
  try {
    if (*run) return run_command(case_file, output_dir, threads, precision, backend, sets, quiet);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shallows: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
