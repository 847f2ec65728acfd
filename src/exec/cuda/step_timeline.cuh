// SPDX-License-Identifier: MIT
#pragma once
// A diagnostic of the CUDA grid executor (SHALLOWS_CUDA_TIMELINE=1): CUDA
// events before a step's first kernel and after its last, so that a step's
// time splits into the time its kernels take on the GPU and the gap before
// the next step's first kernel starts (on a rank of a distributed run: the
// host's round trip of the rate, and the halo exchange every k steps).
// Printed to stderr when the executor ends.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace shallows::gpu {

class StepTimeline {
 public:
  explicit StepTimeline(int device) : device_(device), start_(kRing), stop_(kRing) {
    for (int i = 0; i < kRing; ++i) {
      cudaEventCreate(&start_[static_cast<std::size_t>(i)]);
      cudaEventCreate(&stop_[static_cast<std::size_t>(i)]);
    }
  }
  StepTimeline(const StepTimeline&) = delete;
  StepTimeline& operator=(const StepTimeline&) = delete;

  ~StepTimeline() {
    // The steps still in the ring, once the GPU has run them.
    for (long long s = std::max(0LL, recorded_ - kRing); s < recorded_; ++s) harvest(s);
    if (!kernel_.empty()) {
      std::fprintf(stderr,
                   "shallows: CUDA timeline (GPU %d): %zu steps; kernels per step %.4f ms (median %.4f, min %.4f, "
                   "max %.4f); gap before the next step %.4f ms (median %.4f, max %.4f)\n",
                   device_, kernel_.size(), mean(kernel_), median(kernel_),
                   double(*std::min_element(kernel_.begin(), kernel_.end())),
                   double(*std::max_element(kernel_.begin(), kernel_.end())), mean(gap_), median(gap_),
                   gap_.empty() ? 0.0 : double(*std::max_element(gap_.begin(), gap_.end())));
    }
    for (cudaEvent_t e : start_) cudaEventDestroy(e);
    for (cudaEvent_t e : stop_) cudaEventDestroy(e);
  }

  // Before a step's first kernel; the slot's step from kRing steps ago is read first.
  void begin(cudaStream_t stream) {
    if (recorded_ >= kRing) harvest(recorded_ - kRing);
    cudaEventRecord(start_[slot(recorded_)], stream);
  }

  // After the step's last kernel.
  void end(cudaStream_t stream) {
    cudaEventRecord(stop_[slot(recorded_)], stream);
    ++recorded_;
  }

 private:
  static constexpr int kRing = 1024;

  static std::size_t slot(long long step) { return static_cast<std::size_t>(step % kRing); }

  // Step s's kernel time, and the gap from its end to step s + 1's start where that was recorded.
  void harvest(long long s) {
    float ms = 0;
    cudaEventSynchronize(stop_[slot(s)]);
    if (cudaEventElapsedTime(&ms, start_[slot(s)], stop_[slot(s)]) == cudaSuccess) kernel_.push_back(ms);
    if (s + 1 < recorded_) {
      cudaEventSynchronize(start_[slot(s + 1)]);
      if (cudaEventElapsedTime(&ms, stop_[slot(s)], start_[slot(s + 1)]) == cudaSuccess) gap_.push_back(ms);
    }
  }

  static double mean(const std::vector<float>& v) {
    double sum = 0;
    for (float x : v) sum += x;
    return v.empty() ? 0.0 : sum / double(v.size());
  }

  static double median(std::vector<float> v) {
    if (v.empty()) return 0.0;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  }

  int device_ = -1;
  std::vector<cudaEvent_t> start_, stop_;  // a ring of kRing steps
  long long recorded_ = 0;
  std::vector<float> kernel_, gap_;  // ms per step
};

} // namespace shallows::gpu
