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
  // Advances n steps with no output time in the way (t_end of the problem still caps dt).
  void advance_steps(index_t n);

  double time() const { return t_; }
  index_t steps() const { return steps_; }
  Fields state() const;
  // The current state for output, copied to the host while the run goes on
  // (Backend::snapshot); this Simulation must outlive the snapshot.
  Snapshot snapshot() { return backend_->snapshot(); }
  Maxima maxima() const;
  double volume() const { return backend_->volume(); }
  const Backend& backend() const { return *backend_; }
  const Problem& problem() const { return problem_; }

 private:
  Problem problem_;
  std::unique_ptr<Backend> backend_;
  double t_ = 0;
  index_t steps_ = 0;
  index_t batch_ = 1;  // steps per call of Backend::advance
};

} // namespace shallows
