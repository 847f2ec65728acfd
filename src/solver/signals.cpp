// SPDX-License-Identifier: MIT
#include "shallows/solver/signals.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace shallows {
namespace {

volatile sig_atomic_t g_received = 0;
struct sigaction g_old_int, g_old_term;

// Async-signal-safe: a flag the first time, _exit the second.
extern "C" void on_stop_signal(int sig) {
  if (g_received != 0) _exit(128 + sig);
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
    if (std::sscanf(hook, "%d*%d@%lf", &test_signal_, &test_count_, &test_time_) != 3) {
      test_count_ = 1;
      if (std::sscanf(hook, "%d@%lf", &test_signal_, &test_time_) != 2) test_signal_ = 0;
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
  for (int k = 0; k < test_count_; ++k) raise(sig);
}

} // namespace shallows
