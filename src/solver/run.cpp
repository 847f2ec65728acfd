// SPDX-License-Identifier: MIT
#include "shallows/solver/run.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "shallows/core/stopwatch.hpp"
#include "shallows/io/checkpoint.hpp"
#include "shallows/exec/mpi/context.hpp"
#include "shallows/io/output.hpp"
#include "shallows/solver/capabilities.hpp"
#include "shallows/solver/signals.hpp"
#include "shallows/solver/simulation.hpp"

namespace shallows {
namespace {

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
      << "  \"setup_seconds\": " << json_number(s.setup_seconds) << ",\n"
      << "  \"stepping_seconds\": " << json_number(s.stepping_seconds) << ",\n"
      << "  \"output_wait_seconds\": " << json_number(s.output_wait_seconds) << ",\n"
      << "  \"finish_seconds\": " << json_number(s.finish_seconds) << ",\n"
      << "  \"wall_seconds\": " << json_number(s.wall_seconds) << ",\n"
      << "  \"cell_updates_per_second\": " << json_number(s.cell_updates_per_second) << ",\n"
      << "  \"initial_volume\": " << json_number(s.initial_volume) << ",\n"
      << "  \"final_volume\": " << json_number(s.final_volume) << ",\n"
      << "  \"relative_mass_change\": " << json_number(s.relative_mass_change) << ",\n"
      << "  \"positivity_volume\": " << json_number(s.positivity_volume) << ",\n"
      << "  \"rain_volume\": " << json_number(s.forcing.rain) << ",\n"
      << "  \"infiltration_volume\": " << json_number(s.forcing.infiltration) << ",\n"
      << "  \"source_volume\": " << json_number(s.forcing.sources) << ",\n"
      << "  \"boundary_inflow_volume\": " << (s.boundary.kept() ? json_number(s.boundary.in) : "null") << ",\n"
      << "  \"boundary_outflow_volume\": " << (s.boundary.kept() ? json_number(s.boundary.out) : "null") << ",\n"
      << "  \"closed_domain\": " << (s.mass_balance.closed ? "true" : "false") << ",\n"
      << "  \"mass_balance_residual\": "
      << (s.mass_balance.checked ? json_number(s.mass_balance.relative_residual) : "null") << ",\n"
      << "  \"mass_balance_tolerance\": " << json_number(s.mass_balance.tolerance) << ",\n"
      << "  \"mass_balance_ok\": " << (s.mass_balance.checked ? (s.mass_balance.ok ? "true" : "false") : "null")
      << ",\n";
    if (!s.scalars.empty()) {
      f << "  \"scalars\": [";
      for (std::size_t k = 0; k < s.scalars.size(); ++k) {
        const ScalarSummary& m = s.scalars[k];
        f << (k ? ",\n" : "\n") << "    {\"name\": " << json_string(m.name)
          << ", \"initial_mass\": " << json_number(m.initial_mass) << ", \"final_mass\": " << json_number(m.final_mass)
          << ", \"relative_mass_change\": " << json_number(m.relative_mass_change) << "}";
      }
      f << "\n  ],\n";
    }
    if (!s.structures.empty()) {
      f << "  \"structures\": [";
      for (std::size_t k = 0; k < s.structures.size(); ++k)
        f << (k ? ",\n" : "\n") << "    {\"name\": " << json_string(s.structures[k].name)
          << ", \"volume\": " << json_number(s.structures[k].volume)
          << (s.structures[k].width >= 0 ? ", \"width\": " + json_number(s.structures[k].width) : std::string())
          << "}";
      f << "\n  ],\n";
    }
    f << "  \"ranks\": " << s.ranks << ",\n"
      << "  \"process_grid\": [" << s.ranks_x << ", " << s.ranks_y << "],\n"
      << "  \"halo_steps\": " << s.halo_steps << ",\n"
      << "  \"halo_cells\": " << s.halo_cells << ",\n"
      << "  \"rank_timings\": [";
    for (std::size_t r = 0; r < s.rank_timings.size(); ++r) {
      const RankTiming& t = s.rank_timings[r];
      f << (r ? ",\n" : "\n") << "    {\"rank\": " << t.rank << ", \"compute\": " << json_number(t.compute)
        << ", \"reduce\": " << json_number(t.reduce) << ", \"pack\": " << json_number(t.pack)
        << ", \"exchange\": " << json_number(t.exchange) << ", \"wait\": " << json_number(t.wait)
        << ", \"steps\": " << t.steps << ", \"exchanges\": " << t.exchanges
        << ", \"halo_bytes_per_exchange\": " << json_number(t.halo_bytes)
        << ", \"halo_sides_gpu_to_gpu\": " << t.device_sides << ", \"halo_sides_through_host\": " << t.host_sides
        << ", \"halo_sides_mpi_gpu_memory\": " << t.mpi_device_sides
        << ", \"rate_allreduce\": " << (t.device_rate ? "\"gpu\"" : "\"mpi\"")
        << ", \"halo_overlap\": " << (t.overlap ? "true" : "false") << "}";
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

  void write(double time, Snapshot snapshot, const VolumeAccount& account) {
    std::unique_lock lock(mutex_);
    space_.wait(lock, [this] { return queue_.size() < 2 || error_; });
    rethrow_locked();
    queue_.push_back(Queued{time, std::move(snapshot), account});
    ready_.notify_one();
  }

  // Waits until every queued frame is written (the thread goes on); rethrows a writer error.
  void wait_idle() {
    std::unique_lock lock(mutex_);
    space_.wait(lock, [this] { return (queue_.empty() && !busy_) || error_; });
    rethrow_locked();
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
      Queued frame;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return !queue_.empty() || done_; });
        if (queue_.empty()) return;
        frame = std::move(queue_.front());
        queue_.pop_front();
        busy_ = true;
      }
      try {
        const Fields fields = frame.snapshot.take();
        writer_.write(frame.time, fields, frame.account);
      } catch (...) {
        std::lock_guard lock(mutex_);
        error_ = std::current_exception();
        queue_.clear();  // untaken snapshots give their buffers back
        busy_ = false;
        space_.notify_all();
        return;
      }
      {
        std::lock_guard lock(mutex_);
        busy_ = false;
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
  struct Queued {
    double time = 0;
    Snapshot snapshot;
    VolumeAccount account;
  };
  std::deque<Queued> queue_;
  std::exception_ptr error_;
  bool done_ = false;
  bool busy_ = false;  // a frame taken from the queue is being written
  std::thread thread_;
};

// When to write a checkpoint: every checkpoint_every simulated seconds and/or
// checkpoint_wall wall-clock seconds, at the first batch boundary after.
class CheckpointClock {
 public:
  CheckpointClock(const io::OutputSettings& o, double t)
      : every_(o.checkpoint_every), wall_(o.checkpoint_wall), next_t_(next_after(t)), last_(Clock::now()) {}
  bool due(double t) const {
    return (every_ > 0 && t >= next_t_) || (wall_ > 0 && seconds_since(last_) >= wall_);
  }
  void taken(double t) {
    next_t_ = next_after(t);
    last_ = Clock::now();
  }

 private:
  double next_after(double t) const { return every_ > 0 ? (std::floor(t / every_) + 1) * every_ : 0; }
  double every_, wall_;
  double next_t_;
  Clock::time_point last_;
};

const char* signal_name(int sig) { return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal"; }

} // namespace

void set_parallel(BackendOptions& backend, const io::ParallelSettings& command_line,
                  const io::ParallelSettings& from_case) {
  const auto pick = [](int& to, int cli, int from_file) {
    if (cli > 0)
      to = cli;
    else if (from_file > 0)
      to = from_file;
  };
  pick(backend.ranks_x, command_line.ranks_x, from_case.ranks_x);
  pick(backend.ranks_y, command_line.ranks_y, from_case.ranks_y);
  pick(backend.halo_steps, command_line.halo_steps, from_case.halo_steps);
}

namespace {

// The run of case c by sim, from its start or from a checkpoint's moment
// (resume), to the end: outputs, checkpoints, signals, summary.json.
RunSummary run_from(const io::Case& c, const RunOptions& options, Simulation& sim,
                    const std::optional<io::Checkpoint>& resume, const BackendOptions& backend_options,
                    Clock::time_point setup_start);

} // namespace

RunSummary run_case(const io::Case& c, const RunOptions& options) {
  const auto setup_start = Clock::now();
  const Problem& p = c.problem;
  BackendOptions backend_options = options.backend;
  backend_options.arrival_threshold = c.output.arrival_threshold;
  const bool checkpoints = c.output.checkpoint_every > 0 || c.output.checkpoint_wall > 0;
  // Maxima are kept for the formats' files (gauges write none) and for a checkpoint (its restart goes on with them).
  const bool keep_maxima = io::OutputWriter::writes_maxima(c.output) || checkpoints;
  backend_options.track_maxima = backend_options.track_maxima && (keep_maxima || options.maxima);
  if (mpi::size() > 1 && (checkpoints || !options.restart.empty()) &&
      !runs_on_cpu_or_gpu(Feature::checkpoints, p.on_mesh(), true))
    throw io::InputError("checkpoints and --restart run on one MPI rank only (output.checkpoint_every, "
                     "output.checkpoint_wall, --restart)");
  // Before the first collective that the inputs shape: ranks with other inputs would hang or corrupt memory there.
  if (mpi::size() > 1) {
    const BackendOptions& o = backend_options;
    std::uint64_t h = io::case_fingerprint(c);
    for (const std::uint64_t v : {std::uint64_t(c.problem.precision), std::uint64_t(o.halo_steps),
                                  std::uint64_t(o.ranks_x), std::uint64_t(o.ranks_y), std::uint64_t(o.track_maxima),
                                  std::uint64_t(std::hash<std::string>{}(o.kind))})
      h = (h ^ v) * 0x100000001b3ULL;
    mpi::check_same_on_every_rank(h, "case");
  }
  std::optional<io::Checkpoint> resume;
  if (!options.restart.empty()) resume = io::read_checkpoint(options.restart, c);
  // Outlives run_from's writer thread, which takes every snapshot before the backend behind them goes.
  Simulation sim(p, backend_options);
  return run_from(c, options, sim, resume, backend_options, setup_start);
}

RunSummary run_case(const io::Case& c, const RunOptions& options, Simulation& sim) {
  const auto setup_start = Clock::now();
  if (sim.time() != 0 || sim.steps() != 0)
    throw std::invalid_argument("run_case: the simulation has advanced already (t = " + std::to_string(sim.time()) +
                                " s): a run starts from the case's initial state");
  if (!options.restart.empty()) throw std::invalid_argument("run_case: a given simulation runs no restart");
  if (mpi::size() > 1) throw std::invalid_argument("run_case: a given simulation runs on one MPI rank");
  return run_from(c, options, sim, std::nullopt, options.backend, setup_start);
}

namespace {

RunSummary run_from(const io::Case& c, const RunOptions& options, Simulation& sim,
                    const std::optional<io::Checkpoint>& resume, const BackendOptions& backend_options,
                    Clock::time_point setup_start) {
  const Problem& p = c.problem;
  // On several ranks every rank steps, and rank 0 alone writes: the fields
  // reach it gathered (snapshot, maxima and volume are collective).
  const bool root = mpi::rank() == 0;
  const bool checkpoints = c.output.checkpoint_every > 0 || c.output.checkpoint_wall > 0;
  // Without a format or gauge the state never leaves the device: no snapshot,
  // no maxima read back. The choice is the same on every rank (collectives).
  const bool keep_frames = io::OutputWriter::writes_fields(c.output);
  const bool gauges_only = io::OutputWriter::writes_gauges_only(c.output);
  // Frame k is written at frame_times[k]: 0, then every output time.
  std::vector<double> frame_times{0.0};
  frame_times.insert(frame_times.end(), p.output_times.begin(), p.output_times.end());
  io::OutputResume output_resume;
  if (resume) {
    sim.restore(resume->t, resume->steps, resume->state, resume->maxima);
    sim.backend().load_forcing_state(resume->forcing);
    const auto frames_before = static_cast<std::ptrdiff_t>(resume->frames);
    output_resume.frame_times.assign(frame_times.begin(), frame_times.begin() + frames_before);
  }
  std::optional<io::OutputWriter> writer;
  if (root && p.on_mesh()) writer.emplace(c.output, p.mesh, p.z, p.physics.h_dry, output_resume);
  if (root && !p.on_mesh()) writer.emplace(c.output, p.grid, p.z, p.physics.h_dry, output_resume);

  RunSummary s;
  s.case_name = c.name;
  s.backend = sim.backend().name();
  s.precision = p.precision == Precision::single_precision ? "float" : "double";
  s.threads = options.backend.threads;
  s.cells = p.cells();
  s.t_end = p.t_end;
  s.initial_volume = resume ? resume->initial_volume : sim.volume();
  // Each passive scalar's mass (one rank: the executors refuse scalars on several).
  const auto scalar_masses = [&] {
    std::vector<double> masses;
    if (p.scalars.empty()) return masses;
    const Fields state = sim.state();
    if (state.hc.size() != p.scalars.size())
      throw std::logic_error("the backend's state holds " + std::to_string(state.hc.size()) +
                             " passive scalars, the problem " + std::to_string(p.scalars.size()));
    for (const std::vector<double>& hc : state.hc)
      masses.push_back(scalar_mass(hc, p.z, p.grid, p.mesh.get()));
    return masses;
  };
  const std::vector<double> initial_scalar_mass = resume ? resume->initial_scalar_mass : scalar_masses();
  std::optional<AsyncWriter> frames;
  if (writer) frames.emplace(*writer);
  // structures.csv: written here, a row per frame, whatever the formats; on several ranks by rank 0, whose
  // executor keeps the one-rank tallies as every rank's does (read_forcing_accounts, not collective).
  std::optional<io::StructureSeriesWriter> structure_series;
  if (root && !p.forcing.structures.empty())
    structure_series.emplace(c.output.dir, p.forcing.structures, resume ? resume->frames : 0);
  std::size_t written = resume ? resume->frames : 0;  // frames queued so far
  // The positivity account of the whole run, an interrupted one's included.
  const auto positivity_so_far = [&] {
    return (resume ? resume->positivity_volume : 0.0) + sim.backend().positivity_volume();
  };
  const auto queue_frame = [&] {
    if (keep_frames) {
      const ForcingVolumes moved = sim.backend().forcing_volumes();
      const BoundaryFlow sides = sim.backend().boundary_flow();
      const VolumeAccount account{sim.volume(),       positivity_so_far(), moved.rain, moved.infiltration,
                                  moved.sources,      sides.in,            sides.out};
      // Gauges alone take their cells, not the whole state (a copy of it is what the writer would wait on).
      // Either call reads the state once on every rank (collective).
      static const std::vector<std::size_t> no_cells;
      const bool cells_only = writer ? !writer->gauge_cells().empty() : gauges_only;
      Snapshot snapshot = cells_only ? Snapshot(sim.backend().read_cells(writer ? writer->gauge_cells() : no_cells))
                                     : sim.snapshot();
      if (frames) frames->write(frame_times[written], std::move(snapshot), account);
    }
    if (structure_series) {
      ForcingState accounts;
      sim.backend().read_forcing_accounts(accounts);
      structure_series->write(frame_times[written], accounts.structures);
    }
    ++written;
  };
  if (!resume) queue_frame();

  CheckpointClock clock(c.output, sim.time());
  // Every frame so far on disk, then the state: a restart from it goes on
  // with the outputs as they are (one rank: see above).
  const auto checkpoint = [&] {
    frames->wait_idle();
    io::Checkpoint k;
    k.t = sim.time();
    k.steps = sim.steps();
    k.frames = written;
    k.initial_volume = s.initial_volume;
    k.initial_scalar_mass = initial_scalar_mass;
    k.positivity_volume = positivity_so_far();
    sim.backend().read_forcing_state(k.forcing);
    k.state = sim.state();
    k.maxima = sim.maxima();
    io::write_checkpoint(c, k);
    clock.taken(k.t);
  };
  s.setup_seconds = seconds_since(setup_start);

  const auto start = Clock::now();
  int stop = 0;  // the signal that stopped the run
  {
    // A second signal during the checkpoint below exits at once. On several
    // ranks (no checkpoints there) a signal ends the job as by default.
    std::optional<StopSignals> signals;
    if (mpi::size() == 1 && options.handle_signals) signals.emplace();
    {
      Progress progress(options.progress && root);
      while (written < frame_times.size()) {
        const double target = frame_times[written];
        const auto stepping = Clock::now();
        const bool reached = sim.advance_until(target, [&](double t, double dt) {
          progress.update(t, dt, p.t_end, seconds_since(start));
          if (options.on_batch) options.on_batch(t, dt);
          if (signals) signals->test_hook(t);
          return StopSignals::received() != 0 || (checkpoints && clock.due(t));
        });
        s.stepping_seconds += seconds_since(stepping);
        // Handing a frame over blocks only while two frames are still being
        // written; checkpoints wait for the writer too.
        const auto handing = Clock::now();
        if (reached) queue_frame();
        if ((stop = StopSignals::received()) != 0) break;
        if (checkpoints && clock.due(sim.time()) && written < frame_times.size()) checkpoint();
        s.output_wait_seconds += seconds_since(handing);
      }
    }
    if (stop != 0) {
      checkpoint();
      frames->drain();
      writer->finish(keep_frames ? sim.maxima() : Maxima{});  // valid files, taken up again by --restart (one rank)
      if (structure_series) structure_series->finish();
    }
  }
  if (stop != 0) {
    std::fprintf(stderr, "shallows: %s at t = %.9g s (step %lld): checkpoint %s written; go on with --restart %s\n",
                 signal_name(stop), sim.time(), static_cast<long long>(sim.steps()),
                 io::checkpoint_path(c.output.dir).string().c_str(), c.output.dir.string().c_str());
    s.stopped_by = stop;
    s.steps = sim.steps();
    return s;
  }
  const auto draining = Clock::now();
  if (frames) frames->drain();
  s.output_wait_seconds += seconds_since(draining);

  const auto finish_start = Clock::now();
  const Maxima maxima = keep_frames || options.maxima ? sim.maxima() : Maxima{};  // collective on several ranks
  if (writer) writer->finish(maxima);
  if (structure_series) structure_series->finish();
  if (options.maxima) *options.maxima = maxima;
  s.steps = sim.steps();
  s.final_volume = sim.volume();
  s.finish_seconds = seconds_since(finish_start);
  s.wall_seconds = s.setup_seconds + s.stepping_seconds + s.output_wait_seconds + s.finish_seconds;
  s.relative_mass_change =
      s.initial_volume > 0 ? (s.final_volume - s.initial_volume) / s.initial_volume : s.final_volume;
  s.positivity_volume = positivity_so_far();
  s.forcing = sim.backend().forcing_volumes();
  s.boundary = sim.backend().boundary_flow();
  s.mass_balance = mass_balance(p, s.initial_volume, s.final_volume, s.positivity_volume, s.forcing, s.boundary);
  if (!p.forcing.structures.empty()) {
    ForcingState accounts;
    sim.backend().read_forcing_accounts(accounts);
    for (std::size_t k = 0; k < p.forcing.structures.size(); ++k) {
      const Structure& st = p.forcing.structures[k];
      const bool breach = st.spec.kind == StructureKind::breach;
      s.structures.push_back({st.name, accounts.structure_volume(k), breach ? accounts.structure_width(k) : -1.0,
                              breach || st.on_line()});
    }
  }
  const std::vector<double> final_scalar_mass = scalar_masses();
  for (std::size_t k = 0; k < final_scalar_mass.size(); ++k) {
    const double m0 = initial_scalar_mass[k], m1 = final_scalar_mass[k];
    s.scalars.push_back({p.scalars[k].name, m0, m1, m0 > 0 ? (m1 - m0) / m0 : m1});
  }
  s.cell_updates_per_second = s.stepping_seconds > 0 ? static_cast<double>(s.cells) *
                                                           static_cast<double>(s.steps) / s.stepping_seconds
                                                     : 0;
  if (const RankReport* d = sim.backend().rank_report()) {
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
    std::printf("wall time %.3f s: set-up %.3f, stepping %.3f, waiting for outputs %.3f, end %.3f\n",
                s.wall_seconds, s.setup_seconds, s.stepping_seconds, s.output_wait_seconds, s.finish_seconds);
    std::printf("%.3g cell-updates/s while stepping, relative mass change %.3g\n", s.cell_updates_per_second,
                s.relative_mass_change);
    if (p.forcing.active()) {
      std::printf("rain brought %.6g m^3, infiltration took %.6g m^3, sources brought %.6g m^3\n", s.forcing.rain,
                  s.forcing.infiltration, s.forcing.sources);
    }
    if (s.boundary.kept())
      std::printf("through the sides: %.6g m^3 in, %.6g m^3 out\n", s.boundary.in, s.boundary.out);
    for (const StructureSummary& m : s.structures)
      std::printf("structure %s moved %.6g m^3 %s\n", m.name.c_str(), m.volume,
                  m.line ? "from its line's left to its right" : "from its inlet to its outlet");
    for (const ScalarSummary& m : s.scalars)
      std::printf("%s: mass %.6g at the start, %.6g at the end\n", m.name.c_str(), m.initial_mass, m.final_mass);
    // Unchecked only where water crosses the boundary and the executor keeps no account of it (mass_balance).
    std::printf("positivity fixes added %.3g m^3; %s\n", s.positivity_volume,
                s.mass_balance.checked ? (s.mass_balance.ok ? "mass balance kept" : "mass balance MISSED")
                : std::isnan(s.positivity_volume)
                    ? "mass balance not checked (this executor keeps no positivity account)"
                    : "mass balance not checked (this executor keeps no account of the water through the open, "
                      "inflow and level boundaries)");
    std::printf("outputs in %s\n", c.output.dir.string().c_str());
  }
  if (!s.mass_balance.ok) {
    if (options.strict) throw std::runtime_error(mass_balance_message(s.mass_balance) + " (--strict)");
    std::fprintf(stderr, "shallows: warning: %s\n", mass_balance_message(s.mass_balance).c_str());
  }
  return s;
}

} // namespace

} // namespace shallows
