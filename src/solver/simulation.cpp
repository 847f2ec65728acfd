// SPDX-License-Identifier: MIT
#include "shallows/solver/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <cstdio>
#include <stdexcept>

namespace shallows {

Simulation::Simulation(const Problem& problem, const BackendOptions& options)
    : problem_(problem), backend_(make_backend(problem, options)) {}

void Simulation::advance_to(double target, const std::function<void(double, double)>& on_step) {
  advance_until(target, [&](double t, double dt) {
    if (on_step) on_step(t, dt);
    return false;
  });
}

bool Simulation::advance_until(double target, const std::function<bool(double, double)>& pause) {
  // Batches of steps: a GPU backend synchronises once per batch, and the
  // callback (progress) runs once per batch. The batch grows while a batch
  // takes under a tenth of a second of wall time, so that progress stays live.
  while (t_ < target) {
    const auto start = Clock::now();
    const AdvanceResult r = backend_->advance(t_, target, batch_);
    // Steps shorter than t's rounding leave t where it was: the run would go on for ever.
    if (r.steps > 0 && !(r.t > t_)) {
      char what[240];
      std::snprintf(what, sizeof what,
                    "time step %.3g s no longer advances t = %.9g s: the flow has become too fast for the grid "
                    "(check rain rates, source discharges and boundary inflows)",
                    r.dt, t_);
      throw std::runtime_error(what);
    }
    t_ = r.t;
    steps_ += r.steps;
    if (r.steps > 0) dt_ = r.dt;
    const double seconds = seconds_since(start);
    if (seconds < 0.1 && batch_ < 4096) batch_ *= 2;
    if (seconds > 0.5 && batch_ > 1) batch_ /= 2;
    if (pause(t_, r.dt) && t_ < target) return false;
  }
  return true;
}

void Simulation::restore(double t, index_t steps, const Fields& state, const Maxima& maxima) {
  backend_->load_state(state);
  backend_->load_maxima(maxima);
  t_ = t;
  steps_ = steps;
}

void Simulation::advance_steps(index_t n) {
  for (index_t k = 0; k < n; ++k) {
    const double dt_max = problem_.t_end > t_ ? problem_.t_end - t_ : std::numeric_limits<double>::max();
    dt_ = backend_->step(t_, dt_max);
    t_ += dt_;
    ++steps_;
  }
}

Fields Simulation::state() const {
  Fields f;
  backend_->read_state(f);
  return f;
}

Maxima Simulation::maxima() const {
  Maxima m;
  backend_->read_maxima(m);
  return m;
}

} // namespace shallows
