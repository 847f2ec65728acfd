// SPDX-License-Identifier: MIT
// The ensemble runner: each member is a plain run (run_case) of its own case
// into DIR/members/NNNN/, so its outputs are those of `--member N`. Members
// run side by side on `jobs` threads, on the CPU or on a GPU, where each
// member's executor has a stream of its own; run_members is the one place
// that chooses, where a batched executor would take a list of members
// instead. Under mpirun each rank runs its share of the members as one-rank
// runs, and rank 0 writes the ensemble's files from their results on disk
// (what a rerun reads too).
#include "shallows/solver/run_ensemble.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>

#include "shallows/core/stopwatch.hpp"
#include "shallows/exec/mpi/context.hpp"
#ifdef SHALLOWS_HAVE_CUDA
#include "shallows/exec/cuda_backend.hpp"
#endif
#include "shallows/solver/ensemble_statistics.hpp"
#include "shallows/solver/signals.hpp"

namespace shallows {
namespace {

namespace fs = std::filesystem;
fs::path done_file(const fs::path& dir, std::size_t member) {
  fs::path d = member_dir(dir, member);
  return d.replace_filename(d.filename().string() + ".done");
}

// FNV-1a over pieces, each closed by a separator byte no text holds.
struct Fnv {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  void mix(std::string_view s) {
    for (const unsigned char ch : s) h = (h ^ ch) * 0x100000001b3ULL;
    h = (h ^ 0xff) * 0x100000001b3ULL;
  }
};

void mix_arrays(Fnv& f, const io::FieldArrays& arrays) {
  for (const auto& [key, values] : arrays) {
    f.mix(key);
    f.mix(std::string_view(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double)));
  }
}

// What a member's result must match to be taken as done: the case file's text (and arrays), the command line's
// --set and the member's values. Another [ensemble] or case file runs the member again. The case's part, the same
// for every member, is mixed once (case_fingerprint); each member's goes on from it.
Fnv case_fingerprint(const std::string& case_text, const io::FieldArrays& arrays) {
  Fnv f;
  f.mix(case_text);
  mix_arrays(f, arrays);
  return f;
}

// Its own arrays where `source` gives member m some.
std::uint64_t member_fingerprint(Fnv f, const std::vector<std::string>& sets, const EnsembleCase& source,
                                 const io::Ensemble& ensemble, std::size_t m) {
  for (const std::string& s : sets) f.mix(s);
  for (const std::string& s : ensemble.members[m].overrides()) f.mix(s);
  if (m < source.member_arrays.size()) mix_arrays(f, source.member_arrays[m]);
  return f.h;
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The ensemble's progress on stderr: a line rewritten in place on a terminal, a line per member otherwise.
class EnsembleProgress {
 public:
  // label: "ensemble", or under mpirun the rank whose share the line counts.
  EnsembleProgress(bool enabled, std::string label, std::size_t total, std::size_t skipped)
      : enabled_(enabled), tty_(isatty(STDERR_FILENO)), label_(std::move(label)), total_(total), done_(skipped),
        skipped_(skipped) {}
  ~EnsembleProgress() {
    if (enabled_ && tty_ && shown_) std::fprintf(stderr, "\n");
  }
  void member_done(bool failed) {
    ++done_;
    failed_ += failed ? 1 : 0;
    if (!enabled_) return;
    const std::size_t ran = done_ - skipped_;
    const double elapsed = seconds_since(start_);
    const double eta = ran > 0 ? elapsed / static_cast<double>(ran) * static_cast<double>(total_ - done_) : 0;
    std::fprintf(stderr, "%s%s: %zu/%zu members done (%zu failed, %zu done before), ETA %.0f s%s",
                 tty_ ? "\r" : "", label_.c_str(), done_, total_, failed_, skipped_, eta, tty_ ? "   " : "\n");
    std::fflush(stderr);
    shown_ = true;
  }
  // A message on a line of its own.
  void say(const std::string& msg) {
    if (tty_ && shown_) std::fprintf(stderr, "\n");
    shown_ = false;
    std::fprintf(stderr, "shallows: %s\n", msg.c_str());
  }

 private:
  bool enabled_, tty_;
  std::string label_;
  std::size_t total_, done_, skipped_, failed_ = 0;
  bool shown_ = false;
  Clock::time_point start_ = Clock::now();
};

struct Shared {
  Shared(const EnsembleCase& c, const io::Ensemble& e, const EnsembleOptions& o)
      : source(c), ensemble(e), options(o) {}
  const EnsembleCase& source;
  const io::Ensemble& ensemble;
  const EnsembleOptions& options;
  fs::path dir;
  std::size_t cells = 0;
  Fnv case_hash;  // case_fingerprint
  std::mutex load;  // cases are read one at a time (GDAL, NetCDF and muParser set-up)
  std::mutex test_hook;
  StopSignals* signals = nullptr;
};

struct MemberOutcome {
  io::MemberReport report;
  bool stopped = false;
};

// One member: its case read, its folder emptied, the plain run, then its result (the done marker).
MemberOutcome run_member(Shared& sh, std::size_t m, int threads) {
  MemberOutcome out;
  const auto start = Clock::now();
  try {
    std::optional<io::Case> c;
    {
      const std::lock_guard lock(sh.load);
      c.emplace(load_member_case(sh.source, sh.ensemble, m, sh.options.sets));
    }
    if (static_cast<std::size_t>(c->problem.cells()) != sh.cells)
      throw io::InputError("its case has " + std::to_string(c->problem.cells()) + " cells, the ensemble's " +
                           std::to_string(sh.cells) + ": members share one grid or mesh");
    const fs::path folder = member_dir(sh.dir, m);
    fs::remove_all(folder);
    c->output.dir = folder;
    RunOptions run = sh.options.run;
    run.backend.threads = threads;
    run.progress = false;
    run.quiet = true;
    run.handle_signals = false;
    Maxima maxima;
    run.maxima = &maxima;
    if (sh.signals)
      run.on_batch = [&sh](double t, double) {
        const std::lock_guard lock(sh.test_hook);
        sh.signals->test_hook(t);
      };
    const RunSummary s = run_case(*c, run);
    if (s.stopped_by != 0) {
      out.stopped = true;
      return out;
    }
    io::MemberResult& r = out.report.result;
    r.maxima = std::move(maxima);
    r.initial_volume = s.initial_volume;
    r.final_volume = s.final_volume;
    r.mass_balance_residual = s.mass_balance.checked ? s.mass_balance.relative_residual : std::nan("");
    r.wall_seconds = seconds_since(start);
    r.steps = s.steps;
    r.fingerprint = member_fingerprint(sh.case_hash, sh.options.sets, sh.source, sh.ensemble, m);
    io::write_member_result(done_file(sh.dir, m), r);
    out.report.ok = true;
  } catch (const std::exception& e) {
    out.report.message = e.what();
  }
  return out;
}

// The members of `todo`, side by side on `jobs` threads, each with threads / jobs CPU threads; on a GPU each
// member's executor launches on a stream of its own, so that small members' steps overlap on the device.
// done(member, outcome) as each ends. Stops taking members on a signal.
void run_members(Shared& sh, const std::vector<std::size_t>& todo,
                 const std::function<void(std::size_t, const MemberOutcome&)>& done) {
  const auto jobs = static_cast<std::size_t>(
      std::clamp<long>(sh.options.jobs, 1, static_cast<long>(std::max<std::size_t>(todo.size(), 1))));
  int threads = sh.options.run.backend.threads;
  if (jobs > 1) {
    const int all = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    threads = std::max(1, all / static_cast<int>(jobs));
  }
  std::atomic<std::size_t> next{0};
  std::mutex report;
  const auto work = [&] {
    for (;;) {
      if (StopSignals::received() != 0) return;
      const std::size_t k = next++;
      if (k >= todo.size()) return;
      const MemberOutcome o = run_member(sh, todo[k], threads);
      const std::lock_guard lock(report);
      done(todo[k], o);
    }
  };
  std::vector<std::thread> workers;
  for (std::size_t j = 1; j < jobs; ++j) workers.emplace_back(work);
  work();
  for (std::thread& t : workers) t.join();
}

// Under mpirun: what a rank tells the others of the members it ran. Its text: "stopped_by\n", then per member
// "m ok length\n" and its message (a message may hold any byte).
struct RankOutcomes {
  int stopped_by = 0;
  std::vector<std::pair<std::size_t, io::MemberReport>> members;  // no results: rank 0 reads them from disk
};

std::string encode(const RankOutcomes& o) {
  std::string out = std::to_string(o.stopped_by) + "\n";
  for (const auto& [m, r] : o.members)
    out += std::to_string(m) + " " + (r.ok ? "1" : "0") + " " + std::to_string(r.message.size()) + "\n" + r.message;
  return out;
}

RankOutcomes decode(const std::string& text) {
  RankOutcomes o;
  std::istringstream in(text);
  in >> o.stopped_by;
  in.get();
  std::size_t m = 0, length = 0;
  int ok = 0;
  while (in >> m >> ok >> length) {
    in.get();
    io::MemberReport r;
    r.ok = ok != 0;
    r.message.resize(length);
    in.read(r.message.data(), static_cast<std::streamsize>(length));
    o.members.emplace_back(m, std::move(r));
  }
  return o;
}

} // namespace

fs::path member_dir(const fs::path& dir, std::size_t member) {
  char name[32];
  std::snprintf(name, sizeof name, "%04zu", member);
  return dir / "members" / name;
}

io::Case load_member_case(const fs::path& case_file, const io::Ensemble& ensemble, std::size_t member,
                          const std::vector<std::string>& sets) {
  EnsembleCase source;
  source.file = case_file;
  return load_member_case(source, ensemble, member, sets);
}

io::Case load_member_case(const EnsembleCase& source, const io::Ensemble& ensemble, std::size_t member,
                          const std::vector<std::string>& sets) {
  if (member >= ensemble.members.size())
    throw io::InputError("--member " + std::to_string(member) + ": the ensemble has " +
                         std::to_string(ensemble.members.size()) + " members (0 to " +
                         std::to_string(ensemble.members.size() - 1) + ")");
  std::vector<std::string> all = sets;
  const std::vector<std::string> own = ensemble.members[member].overrides();
  all.insert(all.end(), own.begin(), own.end());
  std::optional<io::FieldArrays> merged;
  if (member < source.member_arrays.size() && !source.member_arrays[member].empty()) {
    merged = source.arrays;
    for (const auto& [key, values] : source.member_arrays[member]) (*merged)[key] = values;
  }
  const io::FieldArrays& arrays = merged ? *merged : source.arrays;
  if (!source.file.empty()) return io::load_case(source.file, all, arrays);
  return io::parse_case(source.text, source.source_name, source.base_dir, all, arrays);
}

std::string list_members(const io::Ensemble& ensemble) {
  std::string out = std::to_string(ensemble.members.size()) + " members (" + ensemble.form + ")";
  for (std::size_t m = 0; m < ensemble.members.size(); ++m) {
    const io::EnsembleMember& member = ensemble.members[m];
    char head[32];
    std::snprintf(head, sizeof head, "\nmember %04zu:", m);
    out += head;
    for (const io::EnsembleValue& v : member.values) out += " --set '" + v.key + "=" + v.toml + "'";
    if (member.weight != 1) {
      char w[40];
      std::snprintf(w, sizeof w, " (weight %g)", member.weight);
      out += w;
    }
  }
  return out + "\n";
}

EnsembleSummary run_ensemble(const fs::path& case_file, const io::Ensemble& ensemble,
                             const EnsembleOptions& options) {
  EnsembleCase source;
  source.file = case_file;
  return run_ensemble(source, ensemble, options);
}

EnsembleSummary run_ensemble(const EnsembleCase& source, const io::Ensemble& ensemble, const EnsembleOptions& options) {
  if (!options.run.restart.empty())
    throw io::InputError("--restart goes on with one run: give it with --member N");
  // Under mpirun, rank r runs the members r, r + R, ... of those to run, each a one-rank run (mpi::Alone).
  const auto ranks = static_cast<std::size_t>(mpi::job_size()), rank = static_cast<std::size_t>(mpi::job_rank());
  const bool root = rank == 0;
  EnsembleSummary summary;
  summary.members = ensemble.members.size();
  // The first member whose case reads gives the grid or mesh, the bed and the gauges of the ensemble's files.
  std::optional<io::Case> reference;
  std::string first_error;
  for (std::size_t m = 0; m < ensemble.members.size() && !reference; ++m) {
    try {
      reference.emplace(load_member_case(source, ensemble, m, options.sets));
    } catch (const io::InputError& e) {
      if (first_error.empty()) first_error = "members[" + std::to_string(m) + "]: " + e.what();
    }
  }
  if (!reference) throw io::InputError("[ensemble]: no member's case can be read; " + first_error);

  EnsembleOptions own = options;
#ifdef SHALLOWS_HAVE_CUDA
  // Under mpirun, a rank's members on its node's GPU, as the ranks of one run take them.
  if (ranks > 1 && own.run.backend.kind != "cpu" && own.run.backend.cuda_device < 0 && cuda_device_count() > 0)
    own.run.backend.cuda_device = mpi::node_ranks().rank % cuda_device_count();
#endif
  Shared sh(source, ensemble, own);
  sh.dir = options.output_dir.empty() ? reference->output.dir : options.output_dir;
  sh.cells = static_cast<std::size_t>(reference->problem.cells());
  sh.case_hash = case_fingerprint(source.file.empty() ? source.text : read_text(source.file), source.arrays);
  std::vector<io::MemberReport> reports(ensemble.members.size());
  std::vector<std::size_t> todo;
  for (std::size_t m = 0; m < ensemble.members.size(); ++m) {
    std::optional<io::MemberResult> r = io::read_member_result(done_file(sh.dir, m));
    if (r && r->maxima.max_h.size() == sh.cells &&
        r->fingerprint == member_fingerprint(sh.case_hash, options.sets, source, ensemble, m)) {
      reports[m].ok = true;
      reports[m].result = std::move(*r);
      ++summary.skipped;
    } else {
      todo.push_back(m);
    }
  }
  std::vector<std::size_t> mine;
  for (std::size_t k = rank; k < todo.size(); k += ranks) mine.push_back(todo[k]);
  // Every rank has read what is done before any rank's members change it.
  if (ranks > 1) mpi::gather_text({});

  RankOutcomes outcomes;
  {
    std::optional<mpi::Alone> alone;
    if (ranks > 1) alone.emplace();
    StopSignals signals;
    sh.signals = &signals;
    const std::string label =
        ranks > 1 ? "ensemble, rank 0 of " + std::to_string(ranks) + " (its share)" : std::string("ensemble");
    EnsembleProgress progress(options.progress && root, label, ranks > 1 ? mine.size() : ensemble.members.size(),
                              ranks > 1 ? 0 : summary.skipped);
    run_members(sh, mine, [&](std::size_t m, const MemberOutcome& o) {
      if (o.stopped) return;
      reports[m] = o.report;
      outcomes.members.emplace_back(m, io::MemberReport{o.report.ok, o.report.message, {}});
      if (!o.report.ok) progress.say("member " + std::to_string(m) + " failed: " + o.report.message);
      progress.member_done(!o.report.ok);
    });
    outcomes.stopped_by = StopSignals::received();
  }
  // What the other ranks ran: its status, and on rank 0 its result from its done file.
  if (ranks > 1) {
    const std::vector<std::string> all = mpi::gather_text(encode(outcomes));
    outcomes.members.clear();
    for (std::size_t r = 0; r < all.size(); ++r) {
      RankOutcomes o = decode(all[r]);
      outcomes.stopped_by = std::max(outcomes.stopped_by, o.stopped_by);
      if (r == rank) {
        outcomes.members.insert(outcomes.members.end(), o.members.begin(), o.members.end());
        continue;
      }
      for (auto& [m, report] : o.members) {
        outcomes.members.emplace_back(m, report);
        if (!root || !report.ok) {
          reports[m] = std::move(report);
          continue;
        }
        std::optional<io::MemberResult> result = io::read_member_result(done_file(sh.dir, m));
        reports[m].ok = result && result->maxima.max_h.size() == sh.cells;
        if (reports[m].ok) {
          reports[m].result = std::move(*result);
        } else {
          reports[m].message = "rank " + std::to_string(r) + " ran it, but rank 0 cannot read " +
                               done_file(sh.dir, m).string() + " (the ranks must share the output folder)";
          std::fprintf(stderr, "shallows: member %zu failed: %s\n", m, reports[m].message.c_str());
        }
      }
    }
  }
  for (const auto& [m, report] : outcomes.members) {
    ++summary.ran;
    if (!reports[m].ok) ++summary.failed;
  }
  summary.stopped_by = outcomes.stopped_by;
  if (options.reports) *options.reports = reports;
  if (summary.stopped_by != 0) {
    if (root)
      std::fprintf(stderr,
                   "shallows: ensemble stopped by a signal after %zu of %zu members; run the same command again to "
                   "go on (the members done are kept)\n",
                   summary.skipped + summary.ran, summary.members);
    return summary;
  }
  if (!root) return summary;

  std::vector<const Maxima*> ok;
  std::vector<double> weights;
  for (std::size_t m = 0; m < reports.size(); ++m)
    if (reports[m].ok) {
      ok.push_back(&reports[m].result.maxima);
      weights.push_back(ensemble.members[m].weight);
    }
  std::optional<EnsembleStatistics> stats;
  if (!ok.empty()) stats = ensemble_statistics(ok, weights, ensemble.thresholds, ensemble.percentiles);
  io::write_ensemble_files(sh.dir, *reference, ensemble, reports, stats ? &*stats : nullptr);
  if (!options.quiet) {
    std::printf("ensemble %s: %zu members, %zu run now, %zu done before, %zu failed\n", reference->name.c_str(),
                summary.members, summary.ran, summary.skipped, summary.failed);
    std::printf("outputs in %s (ensemble.nc, ensemble.csv, members/)\n", sh.dir.string().c_str());
  }
  return summary;
}

} // namespace shallows
