// SPDX-License-Identifier: MIT
// Ensembles on the GPU through the command line: members side by side
// (-j 3, each member's executor on a stream of its own) leave in each
// member's folder the bytes of that member run alone on the GPU, and those
// of the members on the CPU (first order: the GPU gives the CPU's bits).
// VTK and PNG only: the GPU machine's build has no NetCDF or GDAL. Every test
// skips where no CUDA device is present.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "support/cli_runs.hpp"
#include "support/ensemble_runs.hpp"
#include "support/gpu.hpp"

namespace {

using namespace shallows::test_support;

const std::string kFormats = " --set 'output.format=[\"vtk\", \"png\"]' -q";

TEST(CudaEnsemble, MembersSideBySideAreTheBytesOfEachRunAloneAndOfTheCpu) {
  SHALLOWS_REQUIRE_GPU();
  const fs::path dir = temp_dir("cuda-ens");
  const fs::path file = write_case(dir, kGridCase);
  const std::string run = "run " + file.string() + kFormats;
  const Result gpu = shell(kEnsembleEnv, run + " --backend cuda -j 3 -o " + (dir / "gpu").string());
  ASSERT_EQ(gpu.code, 0) << gpu.output;
  const Result cpu = shell(kEnsembleEnv, run + " --backend cpu -j 2 -t 2 -o " + (dir / "cpu").string());
  ASSERT_EQ(cpu.code, 0) << cpu.output;
  for (int m = 0; m < 4; ++m) {
    char name[8];
    std::snprintf(name, sizeof name, "%04d", m);
    const fs::path alone = dir / ("alone" + std::to_string(m));
    const Result a = shell(kEnsembleEnv, run + " --backend cuda --member " + std::to_string(m) + " -o " + alone.string());
    ASSERT_EQ(a.code, 0) << a.output;
    expect_same_files(dir / "gpu" / "members" / name, alone);
    expect_same_files(dir / "gpu" / "members" / name, dir / "cpu" / "members" / name);
  }
}

}  // namespace
