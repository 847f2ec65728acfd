// SPDX-License-Identifier: MIT
#pragma once
// Backend::advance for the CUDA executors, whose time control lives on the
// device: a step launched once the target time or the step limit is reached
// does nothing, so the host queues a batch of steps and synchronises once per
// batch, sizing the next batch from the last dt.
#include <algorithm>
#include <cmath>
#include <limits>

#include "cuda_check.cuh"
#include "shallows/solver/backend.hpp"
#include "shallows/solver/time_step.hpp"

namespace shallows::gpu {

// launch(n) queues n steps; fetch() waits for them and returns the device's
// time control (t, steps since the start, last dt, status); not_finite(t)
// makes the error thrown when status says the solution is no longer finite.
template <class Launch, class Fetch, class NotFinite>
AdvanceResult advance_in_batches(double t, double target, index_t max_steps, index_t max_batch, Launch&& launch,
                                 Fetch&& fetch, NotFinite&& not_finite) {
  AdvanceResult r{t, 0, 0};
  // A few steps asked (a rank's steps between two halo exchanges): all of them at once.
  index_t batch = max_steps <= 16 ? max_steps : 4;
  for (;;) {
    launch(batch);
    const auto c = fetch();
    if (c.status != 0) throw not_finite(c.t);
    r = {c.t, static_cast<index_t>(c.steps), c.dt};
    if (!takes_step(c.t, target, c.steps, max_steps)) break;
    // Next batch: the steps still needed at the last dt, within [1, max_batch].
    double want = c.dt > 0 ? std::ceil((target - c.t) / c.dt) : 1.0;
    want = std::min(want, static_cast<double>(max_steps - c.steps));
    batch = static_cast<index_t>(std::clamp(want, 1.0, static_cast<double>(max_batch)));
  }
  return r;
}

// The first-order executors' advance (grids, meshes): the control slot of
// the current state takes t and a step count of 0 (t and steps lead the
// slot: one small copy from the pinned host_in), then batches of
// launch_one(target, max_steps), one step each.
template <class CtrlT, class LaunchOne, class Fetch, class NotFinite>
AdvanceResult advance_from_slot(double t, double target, index_t max_steps, CtrlT* slot, CtrlT* host_in,
                                cudaStream_t stream, LaunchOne&& launch_one, Fetch&& fetch, NotFinite&& not_finite) {
  host_in->t = t;
  host_in->steps = 0;
  SHALLOWS_CUDA_CHECK(
      cudaMemcpyAsync(slot, host_in, sizeof(double) + sizeof(long long), cudaMemcpyHostToDevice, stream));
  return advance_in_batches(
      t, target, max_steps, 1024,
      [&](index_t batch) {
        for (index_t k = 0; k < batch; ++k) launch_one();
      },
      fetch, not_finite);
}

} // namespace shallows::gpu
