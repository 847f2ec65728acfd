// SPDX-License-Identifier: MIT
// The test executables' main. CTest runs each GoogleTest suite in one process
// (tests/suites.cmake); a suite whose tests all skipped themselves (the GPU
// tests on a machine without one) exits with 77, which CTest reports as
// skipped. A failure anywhere in the suite still exits with 1.
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const int failed = RUN_ALL_TESTS();
  const testing::UnitTest& run = *testing::UnitTest::GetInstance();
  if (failed == 0 && run.successful_test_count() == 0 && run.skipped_test_count() > 0) return 77;
  return failed;
}
