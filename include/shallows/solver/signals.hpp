// SPDX-License-Identifier: MIT
#pragma once
// SIGINT and SIGTERM during a run: the first sets a flag that the time loop
// polls between batches of steps (it then writes a checkpoint, closes the
// outputs and exits with 128 + signal); a second one, a second or more
// after the first, exits at once with _exit(128 + signal), leaving the last
// checkpoint written. Within that second it is the first one delivered again.

namespace shallows {

class StopSignals {
 public:
  // Installs the handlers; the destructor puts back the ones found.
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The first signal received (SIGINT or SIGTERM), 0 if none.
  static int received();
  // A signal this soon after the first (ms) repeats it.
  static constexpr int kRepeatMs = 1000;

  // Tests of interrupted runs: SHALLOWS_TEST_SIGNAL="<signal number>@<time>"
  // raises that signal once, at the first batch boundary at or after that
  // simulated time (9: a kill -9 at a known moment); "<signal>*<n>@<time>"
  // raises it n times in a row, "<signal>*<n>:<gap s>@<time>" n times that
  // many seconds apart. Call after every batch.
  void test_hook(double t);

 private:
  int test_signal_ = 0;
  int test_count_ = 1;
  double test_gap_ = 0;
  double test_time_ = 0;
};

} // namespace shallows
