// SPDX-License-Identifier: MIT
#include "shallows/solver/run.hpp"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "shallows/exec/mpi/context.hpp"
#include "shallows/io/output.hpp"
#include "shallows/solver/simulation.hpp"

namespace shallows {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// "%.17g" round-trips doubles; JSON has no NaN, so those become null.
std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      out += buf;
      continue;
    }
    out += ch;
  }
  return out + "\"";
}

void write_summary_json(const std::filesystem::path& dir, const RunSummary& s) {
  std::filesystem::create_directories(dir);  // also when no output format asked for it
  const auto final_path = dir / "summary.json";
  const auto part = dir / "summary.json.part";
  {
    std::ofstream f(part);
    f << "{\n"
      << "  \"case\": " << json_string(s.case_name) << ",\n"
      << "  \"version\": " << json_string(SHALLOWS_VERSION) << ",\n"
      << "  \"backend\": " << json_string(s.backend) << ",\n"
      << "  \"precision\": " << json_string(s.precision) << ",\n"
      << "  \"threads\": " << s.threads << ",\n"
      << "  \"cells\": " << s.cells << ",\n"
      << "  \"steps\": " << s.steps << ",\n"
      << "  \"t_end\": " << json_number(s.t_end) << ",\n"
      << "  \"wall_seconds\": " << json_number(s.wall_seconds) << ",\n"
      << "  \"cell_updates_per_second\": " << json_number(s.cell_updates_per_second) << ",\n"
      << "  \"initial_volume\": " << json_number(s.initial_volume) << ",\n"
      << "  \"final_volume\": " << json_number(s.final_volume) << ",\n"
      << "  \"relative_mass_change\": " << json_number(s.relative_mass_change) << ",\n"
      << "  \"ranks\": " << s.ranks << ",\n"
      << "  \"process_grid\": [" << s.ranks_x << ", " << s.ranks_y << "],\n"
      << "  \"halo_steps\": " << s.halo_steps << ",\n"
      << "  \"halo_cells\": " << s.halo_cells << ",\n"
      << "  \"rank_timings\": [";
    for (std::size_t r = 0; r < s.rank_timings.size(); ++r) {
      const mpi::RankTiming& t = s.rank_timings[r];
      f << (r ? ",\n" : "\n") << "    {\"rank\": " << t.rank << ", \"compute\": " << json_number(t.compute)
        << ", \"reduce\": " << json_number(t.reduce) << ", \"pack\": " << json_number(t.pack)
        << ", \"exchange\": " << json_number(t.exchange) << ", \"wait\": " << json_number(t.wait)
        << ", \"steps\": " << t.steps << ", \"exchanges\": " << t.exchanges
        << ", \"halo_bytes_per_exchange\": " << json_number(t.halo_bytes) << "}";
    }
    f << (s.rank_timings.empty() ? "]\n" : "\n  ]\n") << "}\n";
    if (!f) throw std::runtime_error("cannot write " + part.string());
  }
  std::filesystem::rename(part, final_path);
}

class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled && isatty(STDERR_FILENO)) {}
  void update(double t, double dt, double t_end, double elapsed) {
    if (!enabled_ || elapsed - last_ < 0.5) return;
    last_ = elapsed;
    const double done = t_end > 0 ? t / t_end : 1.0;
    const double eta = done > 0 ? elapsed * (1 - done) / done : 0;
    std::fprintf(stderr, "\r  t = %.4g s  dt = %.3g s  %5.1f%%  ETA %.0f s   ", t, dt, 100 * done, eta);
    std::fflush(stderr);
    shown_ = true;
  }
  ~Progress() {
    if (shown_) std::fprintf(stderr, "\n");
  }

 private:
  bool enabled_;
  bool shown_ = false;
  double last_ = 0;
};

// Writes output frames on a thread of its own, so that the simulation goes
// on while NetCDF, VTK and PNG files are written. A frame is a Snapshot:
// the thread takes it (for the CUDA executor: waits for its copy to the host
// and converts it) and writes it. At most two frames wait (double
// buffering); a writer error is rethrown to the run. The destructor (also
// on an exception in the time loop) lets the thread finish the queued frames
// and joins it: destroy the writer before the backend behind the snapshots.
class AsyncWriter {
 public:
  explicit AsyncWriter(io::OutputWriter& writer) : writer_(writer), thread_([this] { work(); }) {}
  ~AsyncWriter() { stop(); }

  void write(double time, Snapshot snapshot) {
    std::unique_lock lock(mutex_);
    space_.wait(lock, [this] { return queue_.size() < 2 || error_; });
    rethrow_locked();
    queue_.emplace_back(time, std::move(snapshot));
    ready_.notify_one();
  }

  // Waits for every queued frame; rethrows a writer error.
  void drain() {
    stop();
    std::lock_guard lock(mutex_);
    rethrow_locked();
  }

 private:
  void work() {
    for (;;) {
      std::pair<double, Snapshot> frame;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return !queue_.empty() || done_; });
        if (queue_.empty()) return;
        frame = std::move(queue_.front());
        queue_.pop_front();
      }
      try {
        const Fields fields = frame.second.take();
        writer_.write(frame.first, fields);
      } catch (...) {
        std::lock_guard lock(mutex_);
        error_ = std::current_exception();
        queue_.clear();  // untaken snapshots give their buffers back
        space_.notify_all();
        return;
      }
      space_.notify_all();
    }
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    ready_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  void rethrow_locked() {
    if (error_) std::rethrow_exception(error_);
  }

  io::OutputWriter& writer_;
  std::mutex mutex_;
  std::condition_variable ready_, space_;
  std::deque<std::pair<double, Snapshot>> queue_;
  std::exception_ptr error_;
  bool done_ = false;
  std::thread thread_;
};

} // namespace

RunSummary run_case(const io::Case& c, const RunOptions& options) {
  const Problem& p = c.problem;
  BackendOptions backend_options = options.backend;
  backend_options.arrival_threshold = c.output.arrival_threshold;
  // On several ranks every rank steps, and rank 0 alone writes: the fields
  // reach it gathered (snapshot, maxima and volume are collective).
  const bool root = mpi::rank() == 0;
  // Declared before `frames`, so destroyed after it: the writer thread has
  // taken every snapshot before the backend behind them goes.
  Simulation sim(p, backend_options);
  std::optional<io::OutputWriter> writer;
  if (root && p.on_mesh()) writer.emplace(c.output, p.mesh, p.z, p.physics.h_dry);
  if (root && !p.on_mesh()) writer.emplace(c.output, p.grid, p.z, p.physics.h_dry);

  RunSummary s;
  s.case_name = c.name;
  s.backend = sim.backend().name();
  s.precision = p.precision == Precision::single_precision ? "float" : "double";
  s.threads = options.backend.threads;
  s.cells = p.cells();
  s.t_end = p.t_end;
  s.initial_volume = sim.volume();
  std::optional<AsyncWriter> frames;
  if (writer) frames.emplace(*writer);
  const auto write_frame = [&](double t) {
    Snapshot snapshot = sim.snapshot();
    if (frames) frames->write(t, std::move(snapshot));
  };
  write_frame(0.0);

  const auto start = Clock::now();
  {
    Progress progress(options.progress && root);
    for (double target : p.output_times) {
      sim.advance_to(target, [&](double t, double dt) { progress.update(t, dt, p.t_end, seconds_since(start)); });
      write_frame(target);
    }
  }
  if (frames) frames->drain();
  s.wall_seconds = seconds_since(start);
  const Maxima maxima = sim.maxima();
  if (writer) writer->finish(maxima);

  s.steps = sim.steps();
  s.final_volume = sim.volume();
  s.relative_mass_change =
      s.initial_volume > 0 ? (s.final_volume - s.initial_volume) / s.initial_volume : s.final_volume;
  s.cell_updates_per_second =
      s.wall_seconds > 0 ? static_cast<double>(s.cells) * static_cast<double>(s.steps) / s.wall_seconds : 0;
  if (const auto* d = dynamic_cast<const mpi::DistributedBackend*>(&sim.backend())) {
    s.ranks = mpi::size();
    s.ranks_x = d->ranks_x();
    s.ranks_y = d->ranks_y();
    s.halo_steps = backend_options.halo_steps;
    s.halo_cells = d->halo_cells();
    s.rank_timings = d->rank_timings();
  }
  if (!root) return s;
  write_summary_json(c.output.dir, s);

  if (!options.quiet) {
    std::printf("case %s: %lld cells, %lld steps to t = %g s on %s (%s)\n", s.case_name.c_str(),
                static_cast<long long>(s.cells), static_cast<long long>(s.steps), s.t_end, s.backend.c_str(),
                s.precision.c_str());
    if (s.ranks > 1) {
      std::printf("%d ranks (%d x %d), halo of %lld cells exchanged every %d steps\n", s.ranks, s.ranks_x,
                  s.ranks_y, static_cast<long long>(s.halo_cells), s.halo_steps);
    }
    std::printf("wall time %.3f s (time loop with outputs), %.3g cell-updates/s, relative mass change %.3g\n",
                s.wall_seconds, s.cell_updates_per_second, s.relative_mass_change);
    std::printf("outputs in %s\n", c.output.dir.string().c_str());
  }
  return s;
}

} // namespace shallows
