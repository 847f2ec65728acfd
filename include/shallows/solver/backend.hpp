// SPDX-License-Identifier: MIT
#pragma once
// A backend owns the state of one run on one device (CPU threads or a GPU)
// and advances it; the simulation loop above it only decides time targets.
#include <memory>
#include <string>

#include "shallows/core/config.hpp"
#include "shallows/solver/fields.hpp"
#include "shallows/solver/problem.hpp"

namespace shallows {

struct BackendOptions {
  std::string kind = "cpu";     // cpu, cuda or auto
  int threads = 0;              // CPU threads; 0: OpenMP's default
  bool track_maxima = true;     // max depth, max speed and arrival time, every step
  double arrival_threshold = 0.01;
};

// Where a run of steps ended.
struct AdvanceResult {
  double t = 0;       // time reached
  index_t steps = 0;  // steps taken
  double dt = 0;      // the last step's dt
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // One step from time t: dt = min(CFL step of seed 000 eq. 8, dt_max).
  // Returns the dt taken; throws if the solution is no longer finite.
  virtual double step(double t, double dt_max) = 0;
  // Steps from t towards target, at most max_steps, the last one clipped to
  // land on target exactly. The default calls step(); a GPU backend keeps
  // the time control on the device and synchronises once per batch.
  virtual AdvanceResult advance(double t, double target, index_t max_steps);
  virtual void read_state(Fields& out) const = 0;
  virtual void read_maxima(Maxima& out) const = 0;
  // Water volume sum(h) dx dy over active cells, summed in a fixed order.
  virtual double volume() const = 0;
};

std::unique_ptr<Backend> make_backend(const Problem& problem, const BackendOptions& options);

// Whether this build has the CUDA backend and a usable GPU is present.
bool cuda_available();

} // namespace shallows
