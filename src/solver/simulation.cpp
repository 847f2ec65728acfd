// SPDX-License-Identifier: MIT
#include "shallows/solver/simulation.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace shallows {

Simulation::Simulation(const Problem& problem, const BackendOptions& options)
    : problem_(problem), backend_(make_backend(problem, options)) {}

void Simulation::advance_to(double target, const std::function<void(double, double)>& on_step) {
  while (t_ < target) {
    const double remaining = target - t_;
    const double dt = backend_->step(t_, remaining);
    if (!(dt > 0)) {
      throw std::runtime_error("time step collapsed to " + std::to_string(dt) + " s at t = " + std::to_string(t_));
    }
    // A clipped step lands on the target exactly, with no rounding drift.
    t_ = dt >= remaining ? target : t_ + dt;
    ++steps_;
    if (on_step) on_step(t_, dt);
  }
}

void Simulation::advance_steps(index_t n) {
  for (index_t k = 0; k < n; ++k) {
    const double dt_max = problem_.t_end > t_ ? problem_.t_end - t_ : std::numeric_limits<double>::max();
    t_ += backend_->step(t_, dt_max);
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
