// SPDX-License-Identifier: MIT
#pragma once
// Output snapshots of a CUDA executor, copied to the host while the run goes
// on (Backend::snapshot). For one snapshot of the state (h, hu, hv):
//
//   compute stream  ... step n | D2D interior -> staging, record `staged` | step n+1 ...
//   copy stream                  wait `staged` | D2H staging -> pinned slot s, record done[s]
//   any host thread                              take(): wait done[s], convert to double, release s
//
// The device-to-device copy is cheap (device bandwidth) and is the only part
// on the compute stream, so the executor may overwrite its state right after.
// The copy stream is non-blocking: it never waits for the legacy default
// stream, only for the events above.
//
// Buffers:
//  - one staging buffer on the device (3 interior fields, no ghosts). The
//    compute stream waits for the D2H of the previous snapshot (its done
//    event) before it overwrites the buffer with the next one. Output times
//    are many steps apart, so that wait has normally long passed; snapshots
//    back to back cost the compute stream at most one D2H each. One buffer
//    instead of two halves the device memory spent on output.
//  - two pinned host slots (cudaHostAlloc), each allocated on first use. A
//    snapshot holds its slot until it is taken or destroyed; snapshot()
//    blocks while both are held, so a slot in use is never overwritten. A
//    thread must therefore not hold two untaken snapshots and ask for a third.
//
// The buffers, the copy stream and the events live in a Core shared with the
// snapshots in flight: a snapshot outliving its executor holds no dangling
// pointer (Backend still asks that the backend outlive its snapshots).
//
// Use in an executor (Real = float or double), with the state in padded
// device arrays and its kernels on `stream`:
//     gpu::SnapshotStager<Real> stager_{grid_};
//     Snapshot snapshot() override { return stager_.snapshot(stream, d_h, d_hu, d_hv); }
// An unstructured mesh's state is contiguous (no ghosts): SnapshotStager<Real>{cells}.
#include <cuda_runtime.h>

#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cuda_check.cuh"
#include "device_array.cuh"
#include "shallows/mesh/structured/grid.hpp"
#include "shallows/solver/backend.hpp"

namespace shallows::gpu {

// Makes `device` the calling thread's current device for the guard's
// lifetime (a snapshot may be taken or freed on a writer thread).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    SHALLOWS_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) SHALLOWS_CUDA_CHECK(cudaSetDevice(device));
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  ~DeviceGuard() { cudaSetDevice(previous_); }

 private:
  int previous_ = 0;
};

template <class Real>
class SnapshotStager {
 public:
  // `grid`: the layout of the padded arrays given to snapshot(). Nothing is
  // allocated before the first snapshot.
  explicit SnapshotStager(const Grid& grid) : grid_(grid) {}
  // Arrays of `cells` values each, contiguous (an unstructured mesh).
  explicit SnapshotStager(index_t cells) : mesh_cells_(cells) {}
  SnapshotStager(const SnapshotStager&) = delete;
  SnapshotStager& operator=(const SnapshotStager&) = delete;

  // A snapshot of the interior of the padded device arrays d_h, d_hu, d_hv as
  // they will be once the work queued on `compute` so far has run. Returns
  // once the copies are queued (or, with both host slots held, once one is
  // released); `compute` may overwrite the arrays right after. The first call
  // checks free device memory and allocates the staging buffer.
  Snapshot snapshot(cudaStream_t compute, const Real* d_h, const Real* d_hu, const Real* d_hv) {
    const auto cells = static_cast<std::size_t>(this->cells());
    if (cells == 0) return Snapshot(Fields{});
    if (!core_) core_ = make_core(d_h);
    Core& c = *core_;
    const DeviceGuard guard(c.device);
    const int s = c.acquire();
    // From here on the slot goes back to the core whatever happens.
    auto pending = std::make_unique<PendingCopy>(core_, s);
    const std::size_t bytes = 3 * cells * sizeof(Real);
    if (!c.slot[s]) SHALLOWS_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&c.slot[s]), bytes, cudaHostAllocDefault));
    pending->host = c.slot[s];
    // The staging buffer is free once the previous snapshot's D2H is done.
    if (c.last >= 0) SHALLOWS_CUDA_CHECK(cudaStreamWaitEvent(compute, c.done[c.last], 0));
    const Real* fields[3] = {d_h, d_hu, d_hv};
    if (mesh_cells_ >= 0) {
      for (int k = 0; k < 3; ++k) {
        SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(c.staging.get() + k * cells, fields[k], cells * sizeof(Real),
                                            cudaMemcpyDeviceToDevice, compute));
      }
    } else {
      const std::size_t row = static_cast<std::size_t>(grid_.nx) * sizeof(Real);
      const std::size_t pitch = static_cast<std::size_t>(grid_.pitch()) * sizeof(Real);
      const auto rows = static_cast<std::size_t>(grid_.ny);
      const index_t first = grid_.index(0, 0);
      for (int k = 0; k < 3; ++k) {
        SHALLOWS_CUDA_CHECK(cudaMemcpy2DAsync(c.staging.get() + k * cells, row, fields[k] + first, pitch, row, rows,
                                              cudaMemcpyDeviceToDevice, compute));
      }
    }
    SHALLOWS_CUDA_CHECK(cudaEventRecord(c.staged, compute));
    SHALLOWS_CUDA_CHECK(cudaStreamWaitEvent(c.copy, c.staged, 0));
    SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(c.slot[s], c.staging.get(), bytes, cudaMemcpyDeviceToHost, c.copy));
    SHALLOWS_CUDA_CHECK(cudaEventRecord(c.done[s], c.copy));
    c.last = s;
    return Snapshot(std::move(pending));
  }

 private:
  // What the snapshots in flight share with the stager.
  struct Core {
    int device = 0;
    std::size_t cells = 0;
    cudaStream_t copy = nullptr;
    cudaEvent_t staged = nullptr;      // the D2D of the latest snapshot, on the compute stream
    cudaEvent_t done[2] = {};          // the D2H into slot 0 / 1, on the copy stream
    DeviceArray<Real> staging;         // h, hu, hv interiors, row-major, one after the other
    Real* slot[2] = {nullptr, nullptr};  // pinned host slots of 3 * cells values
    int last = -1;                     // slot of the latest snapshot (touched by snapshot() only)
    std::mutex mutex;
    std::condition_variable freed;
    bool held[2] = {false, false};

    Core() = default;
    Core(const Core&) = delete;
    Core& operator=(const Core&) = delete;
    ~Core() {
      try {
        const DeviceGuard guard(device);
        // The last D2H waited for the last D2D: once the copy stream is idle,
        // neither buffer is touched by the device any more.
        if (copy) cudaStreamSynchronize(copy);
        for (Real*& p : slot) {
          if (p) cudaFreeHost(p);
          p = nullptr;
        }
        for (cudaEvent_t e : {staged, done[0], done[1]}) {
          if (e) cudaEventDestroy(e);
        }
        if (copy) cudaStreamDestroy(copy);
        staging = DeviceArray<Real>();
      } catch (...) {
        // No usable device left to free on: leave the rest to the driver.
      }
    }

    // A free slot, marked held; blocks while both are held.
    int acquire() {
      std::unique_lock lock(mutex);
      freed.wait(lock, [this] { return !held[0] || !held[1]; });
      const int s = held[0] ? 1 : 0;
      held[s] = true;
      return s;
    }

    void release(int s) {
      {
        std::lock_guard lock(mutex);
        held[s] = false;
      }
      freed.notify_all();
    }
  };

  class PendingCopy final : public Snapshot::Pending {
   public:
    PendingCopy(std::shared_ptr<Core> core, int slot) : core_(std::move(core)), slot_(slot) {}
    PendingCopy(const PendingCopy&) = delete;
    PendingCopy& operator=(const PendingCopy&) = delete;
    ~PendingCopy() override {
      // Untaken: the D2H may still run, but the next D2H into this slot is
      // queued behind it on the copy stream, and the host reads a slot only
      // after its own done event.
      if (!released_) core_->release(slot_);
    }

    Fields take() override {
      Fields f;
      {
        const DeviceGuard guard(core_->device);
        SHALLOWS_CUDA_CHECK(cudaEventSynchronize(core_->done[slot_]));
      }
      const std::size_t n = core_->cells;
      f.h.assign(host, host + n);
      f.hu.assign(host + n, host + 2 * n);
      f.hv.assign(host + 2 * n, host + 3 * n);
      released_ = true;
      core_->release(slot_);
      return f;
    }

    const Real* host = nullptr;  // the slot's pinned buffer

   private:
    std::shared_ptr<Core> core_;
    int slot_;
    bool released_ = false;
  };

  // Device (that of d_h), staging buffer, copy stream and events.
  std::shared_ptr<Core> make_core(const Real* d_h) const {
    cudaPointerAttributes attr{};
    SHALLOWS_CUDA_CHECK(cudaPointerGetAttributes(&attr, d_h));
    auto core = std::make_shared<Core>();
    core->device = attr.device;
    core->cells = static_cast<std::size_t>(cells());
    const DeviceGuard guard(core->device);
    const std::size_t bytes = 3 * core->cells * sizeof(Real);
    char what[160];
    if (mesh_cells_ >= 0) {
      std::snprintf(what, sizeof what, "the output staging buffer of a mesh of %lld cells in %s",
                    static_cast<long long>(mesh_cells_), sizeof(Real) == 4 ? "float" : "double");
    } else {
      std::snprintf(what, sizeof what, "the output staging buffer of a %lldx%lld grid in %s",
                    static_cast<long long>(grid_.nx), static_cast<long long>(grid_.ny),
                    sizeof(Real) == 4 ? "float" : "double");
    }
    require_free_memory(bytes, what);
    core->staging = DeviceArray<Real>(3 * core->cells);
    SHALLOWS_CUDA_CHECK(cudaStreamCreateWithFlags(&core->copy, cudaStreamNonBlocking));
    SHALLOWS_CUDA_CHECK(cudaEventCreateWithFlags(&core->staged, cudaEventDisableTiming));
    for (cudaEvent_t& e : core->done) SHALLOWS_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return core;
  }

  index_t cells() const { return mesh_cells_ >= 0 ? mesh_cells_ : grid_.cells(); }

  Grid grid_;               // layout of a grid's padded arrays
  index_t mesh_cells_ = -1;  // >= 0: contiguous arrays of that many cells instead
  std::shared_ptr<Core> core_;
};

} // namespace shallows::gpu
