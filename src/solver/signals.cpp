// SPDX-License-Identifier: MIT
#include "shallows/solver/signals.hpp"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace shallows {
namespace {

volatile sig_atomic_t g_received = 0;
volatile sig_atomic_t g_first_s = 0, g_first_ms = 0;  // CLOCK_MONOTONIC at the first signal
struct sigaction g_old_int, g_old_term;

// Async-signal-safe (clock_gettime is): a flag the first time, _exit for a
// later one. A signal within kRepeatMs of the first is the same request
// delivered twice (GNU timeout signals the process and its group; Ctrl-C
// reaches every process of the terminal's group), not a second one.
extern "C" void on_stop_signal(int sig) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const auto s = static_cast<sig_atomic_t>(now.tv_sec), ms = static_cast<sig_atomic_t>(now.tv_nsec / 1000000);
  if (g_received != 0) {
    if ((s - g_first_s) * 1000 + ms - g_first_ms >= StopSignals::kRepeatMs) _exit(128 + sig);
    return;
  }
  g_first_s = s;
  g_first_ms = ms;
  g_received = sig;
}

} // namespace

StopSignals::StopSignals() {
  g_received = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // writes and waits of the run go on
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
  if (const char* hook = std::getenv("SHALLOWS_TEST_SIGNAL"); hook && *hook) {
    if (std::sscanf(hook, "%d*%d:%lf@%lf", &test_signal_, &test_count_, &test_gap_, &test_time_) != 4) {
      test_gap_ = 0;
      if (std::sscanf(hook, "%d*%d@%lf", &test_signal_, &test_count_, &test_time_) != 3) {
        test_count_ = 1;
        if (std::sscanf(hook, "%d@%lf", &test_signal_, &test_time_) != 2) test_signal_ = 0;
      }
    }
  }
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

int StopSignals::received() { return g_received; }

void StopSignals::test_hook(double t) {
  if (test_signal_ == 0 || t < test_time_) return;
  const int sig = test_signal_;
  test_signal_ = 0;
  for (int k = 0; k < test_count_; ++k) {
    if (k > 0 && test_gap_ > 0) {
      const timespec gap{static_cast<time_t>(test_gap_), static_cast<long>(std::fmod(test_gap_, 1.0) * 1e9)};
      nanosleep(&gap, nullptr);
    }
    raise(sig);
  }
}

} // namespace shallows
