// SPDX-License-Identifier: MIT
#pragma once
// The time loop: advances a backend to given times exactly, counting steps.
#include <functional>
#include <memory>

#include "shallows/solver/backend.hpp"

namespace shallows {

class Simulation {
 public:
  Simulation(const Problem& problem, const BackendOptions& options);

  // Advances to exactly time target; on_step(t, dt) after every batch of steps if set.
  void advance_to(double target, const std::function<void(double, double)>& on_step = {});
  // As advance_to, but after every batch pause(t, dt) may stop the advance
  // early (between steps: a checkpoint, a signal). Batch boundaries do not
  // change the steps, so a paused run goes on as if it had not paused.
  // Returns whether target was reached.
  bool advance_until(double target, const std::function<bool(double, double)>& pause);
  // Puts back a moment of an earlier run of this problem (a checkpoint):
  // time, step count, state and maxima.
  void restore(double t, index_t steps, const Fields& state, const Maxima& maxima);
  // Advances n steps with no output time in the way (t_end of the problem still caps dt).
  void advance_steps(index_t n);

  double time() const { return t_; }
  index_t steps() const { return steps_; }
  double last_dt() const { return dt_; }  // the length of the last step taken (0 before the first)
  Fields state() const;
  std::vector<double> field(StateField which) const { return backend_->read_field(which); }
  // The current state for output, copied to the host while the run goes on
  // (Backend::snapshot); this Simulation must outlive the snapshot.
  Snapshot snapshot() { return backend_->snapshot(); }
  Maxima maxima() const;
  double volume() const { return backend_->volume(); }
  const Backend& backend() const { return *backend_; }
  Backend& backend() { return *backend_; }
  const Problem& problem() const { return problem_; }

 private:
  Problem problem_;
  std::unique_ptr<Backend> backend_;
  double t_ = 0;
  double dt_ = 0;
  index_t steps_ = 0;
  index_t batch_ = 1;  // steps per call of Backend::advance
};

} // namespace shallows
