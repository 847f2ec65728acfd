// SPDX-License-Identifier: MIT
// Pumps, gates and culverts on the CUDA executors (forcing_kernels.cuh's
// structures_kernel): two walled basins joined by a pump, a gate and a
// culvert, a passive scalar carried through them. On a grid in first order
// (the lagged kernel and the plain ones) and on a mesh (each design), the
// GPU gives the CPU's bits: the state, the scalar, and every structure's
// tally; third order agrees to round-off. A restart through
// read_forcing_state / load_forcing_state goes on bit for bit, and so does a
// run of the example case killed after a checkpoint; its structures.csv is
// the CPU run's. Weirs, walls and breaches give the CPU's bits too, on both
// grid kernels. Every test skips where no CUDA device is present.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/solver/backend.hpp"
#include "support/gpu.hpp"
#include "support/measures.hpp"
#include "support/mesh_problems.hpp"
#include "support/problems.hpp"
#include "support/restart_runs.hpp"
#include "support/structure_basins.hpp"

#ifndef SHALLOWS_HAVE_CUDA
TEST(CudaStructures, NotBuilt) { GTEST_SKIP() << "this build has no CUDA backend: GPU tests skipped"; }
#else

#include "shallows/exec/cuda_backend.hpp"

namespace cuda_structure_tests {

using namespace shallows;
using test_support::bitwise_equal;
using test_support::cell_near;

// The basins (support/structure_basins.hpp): the west one at eta 1.5 m, the east one at 0.3 m.
double basin_level(double x, double) { return x < 55 ? 1.5 : 0.3; }

// A pump that sends the east's water back west while the east stands at
// 0.6 m or more (off below 0.55 m), a gate west to east whose discharge
// follows a series, and a circular culvert under the ridge; a dye in the west
// basin. Order matters: the pump and the gate share the east cell.
void add_structures(Problem& p) {
  Structure pump;
  pump.name = "pump";
  pump.spec.kind = StructureKind::pump;
  pump.inlet = cell_near(p, 90, 10);
  pump.outlet = cell_near(p, 20, 10);
  pump.discharge = TimeSeries::constant(0.4);
  pump.spec.controlled = true;
  pump.spec.on = 0.6;
  pump.spec.off = 0.55;
  Structure gate;
  gate.name = "gate";
  gate.spec.kind = StructureKind::gate;
  gate.inlet = cell_near(p, 30, 5);
  gate.outlet = cell_near(p, 90, 10);
  gate.discharge = {{0.0, 60.0, 120.0}, {0.0, 0.3, 0.1}};
  Structure culvert;
  culvert.name = "culvert";
  culvert.spec.kind = StructureKind::culvert;
  culvert.spec.shape = CulvertShape::circular;
  culvert.spec.width = culvert.spec.height = 0.8;
  culvert.spec.length = 15;
  culvert.spec.n_manning = 0.013;
  culvert.spec.invert_in = 0.1;
  culvert.spec.invert_out = 0.0;
  culvert.inlet = cell_near(p, 45, 15);
  culvert.outlet = cell_near(p, 65, 15);
  p.forcing.structures = {pump, gate, culvert};
  std::vector<double> dye;
  for (index_t c = 0; c < p.cells(); ++c)
    dye.push_back(p.mesh ? (p.mesh->cell_x[static_cast<std::size_t>(c)] < 55 ? 1.0 : 0.0)
                         : (p.grid.x_center(c % p.grid.nx) < 55 ? 1.0 : 0.0));
  p.scalars = {test_support::scalar("dye", dye)};
}

Problem grid_basins(Precision precision, Scheme scheme = Scheme::roe1) {
  Problem p = test_support::grid_basins_problem(basin_level);
  for (Side s : {Side::west, Side::east, Side::south, Side::north}) p.bc(s) = {BoundaryKind::wall, 0};
  p.precision = precision;
  p.scheme = scheme;
  add_structures(p);
  return p;
}

Problem mesh_basins(Precision precision) {
  Problem p = test_support::mesh_basins_problem(basin_level);
  p.precision = precision;
  add_structures(p);
  return p;
}

const char* precision_name(Precision p) { return p == Precision::single_precision ? "float" : "double"; }

BackendOptions options(const std::string& kind, const std::string& mesh_loop = "cell") {
  BackendOptions o;
  o.kind = kind;
  o.threads = 2;
  o.track_maxima = true;
  o.mesh_loop = mesh_loop;
  return o;
}

struct Outcome {
  AdvanceResult a;
  Fields state;
  Maxima maxima;
  ForcingState forcing;
};

Outcome finish(Backend& b, const AdvanceResult& a) {
  Outcome r;
  r.a = a;
  b.read_state(r.state);
  b.read_maxima(r.maxima);
  b.read_forcing_state(r.forcing);
  return r;
}

Outcome run(std::unique_ptr<Backend> b, double t_end) {
  const AdvanceResult a = b->advance(0.0, t_end, 1 << 30);
  return finish(*b, a);
}

// Field by field, bit for bit: the state, the scalars, the maxima and the structures' tallies.
void expect_same_bits(const Outcome& gpu, const Outcome& cpu, const std::string& what) {
  EXPECT_EQ(gpu.a.steps, cpu.a.steps) << what;
  EXPECT_EQ(gpu.a.t, cpu.a.t) << what;
  EXPECT_TRUE(bitwise_equal(gpu.state.h, cpu.state.h)) << what << ": h";
  EXPECT_TRUE(bitwise_equal(gpu.state.hu, cpu.state.hu)) << what << ": hu";
  EXPECT_TRUE(bitwise_equal(gpu.state.hv, cpu.state.hv)) << what << ": hv";
  ASSERT_EQ(gpu.state.hc.size(), cpu.state.hc.size()) << what;
  for (std::size_t k = 0; k < cpu.state.hc.size(); ++k)
    EXPECT_TRUE(bitwise_equal(gpu.state.hc[k], cpu.state.hc[k])) << what << ": scalar " << k;
  EXPECT_TRUE(bitwise_equal(gpu.maxima.max_h, cpu.maxima.max_h)) << what << ": max_h";
  EXPECT_TRUE(bitwise_equal(gpu.maxima.max_speed, cpu.maxima.max_speed)) << what << ": max_speed";
  EXPECT_FALSE(cpu.forcing.structures.empty()) << what;
  EXPECT_TRUE(bitwise_equal(gpu.forcing.structures, cpu.forcing.structures)) << what << ": the tallies";
}

// Every structure moved water from its inlet to its outlet: the pump east to west once the culvert and the
// gate had raised the east to its start level (not from the start: less than its rate times the run), the gate
// and the culvert west to east. Runs of 400 s.
void expect_structures_ran(const Outcome& r, const std::string& what) {
  const ForcingState& f = r.forcing;
  ASSERT_EQ(f.structures.size(), 3 * kTallyValues) << what;
  EXPECT_GT(f.structure_volume(0), 1.0) << what << ": the pump";
  EXPECT_LT(f.structure_volume(0), 0.4 * 400 - 10) << what << ": the pump";
  EXPECT_GT(f.structure_volume(1), 1.0) << what << ": the gate";
  EXPECT_GT(f.structure_volume(2), 1.0) << what << ": the culvert";
}

// Grids, first order: the lagged kernel (CudaOptions' default) and the plain ones give the CPU's bits, double and
// float.
TEST(CudaStructures, GridFirstOrderGivesTheCpuBits) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision precision : {Precision::double_precision, Precision::single_precision}) {
    const Problem p = grid_basins(precision);
    const double t_end = 400;
    const Outcome cpu = run(make_backend(p, options("cpu")), t_end);
    expect_structures_ran(cpu, precision_name(precision));
    const Outcome lagged = run(make_cuda_backend(p, options("cuda"), CudaOptions{}), t_end);
    expect_same_bits(lagged, cpu, std::string("lagged, ") + precision_name(precision));
    CudaOptions plain_kernels;
    plain_kernels.kernel = "plain";
    const Outcome plain = run(make_cuda_backend(p, options("cuda"), plain_kernels), t_end);
    expect_same_bits(plain, cpu, std::string("plain, ") + precision_name(precision));
  }
}

// Grids, third order: the structures after the third stage, as on the CPU, to round-off.
TEST(CudaStructures, GridThirdOrderAgreesWithTheCpu) {
  SHALLOWS_REQUIRE_GPU();
  const Problem p = grid_basins(Precision::double_precision, Scheme::roe3);
  const double t_end = 400;
  const Outcome cpu = run(make_backend(p, options("cpu")), t_end);
  const Outcome gpu = run(make_backend(p, options("cuda")), t_end);
  expect_structures_ran(gpu, "roe3");
  EXPECT_EQ(gpu.a.t, cpu.a.t);
  EXPECT_LE(test_support::max_rel_diff(gpu.state.h, cpu.state.h), 1e-10);
  for (std::size_t k = 0; k < 3; ++k) {
    const double v = cpu.forcing.structure_volume(k);
    EXPECT_NEAR(gpu.forcing.structure_volume(k), v, 1e-10 * std::abs(v)) << p.forcing.structures[k].name;
  }
}

// Meshes: each design of the GPU executor gives the CPU's bits, double and float.
TEST(CudaStructures, MeshGivesTheCpuBits) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision precision : {Precision::double_precision, Precision::single_precision}) {
    const Problem p = mesh_basins(precision);
    const double t_end = 400;
    const Outcome cpu = run(make_backend(p, options("cpu", "cell")), t_end);
    expect_structures_ran(cpu, precision_name(precision));
    for (const char* loop : {"cell", "edge"}) {
      const Outcome gpu = run(make_backend(p, options("cuda", loop)), t_end);
      expect_same_bits(gpu, cpu, std::string(loop) + ", " + precision_name(precision));
    }
  }
}

// Read out at t = 300 (the pump running, the volumes so far) and loaded into
// a new executor: it goes on as the run that did not stop, bit for bit, the
// tallies included; tallies of the wrong size are refused.
TEST(CudaStructures, RestartGoesOnBitForBit) {
  SHALLOWS_REQUIRE_GPU();
  for (const bool mesh : {false, true}) {
    const std::string what = mesh ? "mesh" : "grid";
    const Problem p = mesh ? mesh_basins(Precision::double_precision) : grid_basins(Precision::double_precision);
    auto through = make_backend(p, options("cuda"));
    through->advance(0.0, 300.0, 1 << 30);
    Fields state;
    through->read_state(state);
    ForcingState forcing;
    through->read_forcing_state(forcing);
    ASSERT_EQ(forcing.structures.size(), 3 * kTallyValues) << what;
    EXPECT_EQ(forcing.structures[2], 1.0) << what << ": the pump runs";
    EXPECT_NE(forcing.structure_volume(2), 0.0) << what;
    const Outcome a = finish(*through, through->advance(300.0, 400.0, 1 << 30));

    auto restarted = make_backend(p, options("cuda"));
    restarted->load_state(state);
    restarted->load_forcing_state(forcing);
    ForcingState back;
    restarted->read_forcing_state(back);
    EXPECT_TRUE(bitwise_equal(back.structures, forcing.structures)) << what;
    const Outcome b = finish(*restarted, restarted->advance(300.0, 400.0, 1 << 30));
    EXPECT_TRUE(bitwise_equal(a.state.h, b.state.h)) << what;
    EXPECT_TRUE(bitwise_equal(a.state.hu, b.state.hu)) << what;
    EXPECT_TRUE(bitwise_equal(a.state.hc[0], b.state.hc[0])) << what;
    EXPECT_TRUE(bitwise_equal(a.forcing.structures, b.forcing.structures)) << what;
    forcing.structures.pop_back();
    EXPECT_THROW(restarted->load_forcing_state(forcing), std::invalid_argument) << what;
  }
}

namespace fs = std::filesystem;
const std::string kExample = std::string(SHALLOWS_SOURCE_DIR) + "/cases/basins-structures/case.toml";
const std::string kBreach = std::string(SHALLOWS_SOURCE_DIR) + "/cases/levee-breach/case.toml";

// The example case on the GPU: its structures.csv holds the CPU run's bytes.
TEST(CudaStructures, ExampleCaseWritesTheCpuStructuresCsv) {
  SHALLOWS_REQUIRE_GPU();
  const fs::path dir = test_support::temp_dir("cuda-structures-example");
  for (const char* backend : {"cpu", "cuda"}) {
    const test_support::Result r = test_support::shell(
        "run " + kExample + " -q --set 'output.format=[\"vtk\"]' --backend " + backend + " -o " +
        (dir / backend).string());
    ASSERT_EQ(r.code, 0) << backend << ": " << r.output;
  }
  const std::string cpu = test_support::slurp(dir / "cpu" / "structures.csv");
  EXPECT_FALSE(cpu.empty());
  EXPECT_EQ(test_support::slurp(dir / "cuda" / "structures.csv"), cpu);
  fs::remove_all(dir);
}

// Killed after a checkpoint and restarted on the GPU: the pump's state and
// the volumes go on, every output the same bytes.
TEST(CudaStructures, KilledRunContinuesByteForByte) {
  SHALLOWS_REQUIRE_GPU();
  test_support::kill_and_restart({"cuda-structures", kExample, "--backend cuda --set time.end=20", 12.3, 5.0});
}

// Weirs, walls and breaches: the example (a levee's weir, its breach from a
// CSV, a wall) on a grid, and on a mesh a weir with a Verheij breach that
// its trigger opens, a wall, and a dye: the GPU gives the CPU's bits, the
// state, the dye, the maxima and every tally, double and float (on a mesh
// each design).
Outcome run_case(const io::Case& c, const BackendOptions& o, double t_end) {
  return run(make_backend(c.problem, o), t_end);
}

// A grid case on both GPU kernels (the plain ones read the wall bits, the lagged one's rhs next to a line is
// first_rhs_kernel's), each the CPU run's bits.
void expect_both_kernels_give(const io::Case& c, const Outcome& cpu, double t_end, const std::string& what) {
  for (const char* kernel : {"lagged", "plain"}) {
    CudaOptions co;
    co.kernel = kernel;
    std::unique_ptr<CudaBackend> gpu = make_cuda_backend(c.problem, options("cuda"), co);
    ASSERT_EQ(gpu->stats().kernel, kernel) << what;
    expect_same_bits(run(std::move(gpu), t_end), cpu, std::string(kernel) + ", " + what);
  }
}

TEST(CudaStructures, GridLinesGiveTheCpuBits) {
  SHALLOWS_REQUIRE_GPU();
  for (const char* precision : {"double", "float"}) {
    const io::Case c = io::load_case(kBreach, {std::string("numerics.precision=") + precision});
    const Outcome cpu = run_case(c, options("cpu"), 120);
    // The breach opened and passed water; the wall and the levee held the rest.
    ASSERT_EQ(cpu.forcing.structures.size(), 3 * kTallyValues);
    EXPECT_GT(cpu.forcing.structure_volume(1), 100.0) << precision;
    EXPECT_NEAR(cpu.forcing.structure_volume(1), cpu.forcing.structure_volume(0),
                1e-12 * cpu.forcing.structure_volume(0))
        << precision << ": the levee passes water through its breach only";
    expect_both_kernels_give(c, cpu, 120, precision);
  }
}

// Lines of 2,000 crossings (a levee 6 km long with its breach, a wall 4 km long): the structures' pass in three
// launches, the flows and the weir cells each over several blocks, and the GPU still moves the CPU's bits.
TEST(CudaStructures, LongLinesGiveTheCpuBits) {
  SHALLOWS_REQUIRE_GPU();
  const std::string text =
      "[domain]\nnx = 40\nny = 1200\nx = [0.0, 200.0]\ny = [0.0, 6000.0]\n[bathymetry]\nz = 0.0\n"
      "[initial]\neta = \"x < 100 ? 2 : 0\"\n[physics]\nmanning = 0.03\n[time]\nend = 60\n"
      "[[structure]]\nname = \"levee\"\ntype = \"weir\"\npoints = [[100.0, -1.0], [100.0, 6001.0]]\n"
      "crest = 1.5\ncoefficient = 1.7\n"
      "[[structure]]\nname = \"gap\"\ntype = \"breach\"\nline = \"levee\"\nat = [100.0, 4500.0]\n"
      "start = 10.0\nbottom = 0.5\nwidth = { initial = 20.0, final = 200.0, model = \"verheij\" }\n"
      "[[structure]]\nname = \"fence\"\ntype = \"wall\"\npoints = [[150.0, 6001.0], [150.0, 2000.0]]\n";
  for (const char* precision : {"double", "float"}) {
    const io::Case c = io::parse_case(text, "case.toml", ".", {std::string("numerics.precision=") + precision});
    const Outcome cpu = run_case(c, options("cpu"), 60);
    ASSERT_EQ(cpu.forcing.structures.size(), 3 * kTallyValues);
    EXPECT_GT(cpu.forcing.structure_volume(1), 100.0) << precision << ": through the breach";
    EXPECT_GT(cpu.forcing.structure_volume(0), cpu.forcing.structure_volume(1)) << precision << ": over the low crest";
    expect_both_kernels_give(c, cpu, 60, precision);
  }
}

TEST(CudaStructures, MeshLinesGiveTheCpuBits) {
  SHALLOWS_REQUIRE_GPU();
  const fs::path dir = test_support::temp_dir("cuda-structures-mesh-lines");
  test_support::write_weir_basins_mesh(dir / "m.msh");
  const std::string text =
      "[mesh]\nfile = \"m.msh\"\n[bathymetry]\nz = \"0.002 * (400 - x)\"\n"
      "[initial]\neta = \"x < 200 ? 2.2 : 0.5\"\n[time]\nend = 100\n"
      "[[scalar]]\nname = \"dye\"\ninitial = \"x < 200 ? 1 : 0\"\n"
      "[[structure]]\nname = \"levee\"\ntype = \"weir\"\npoints = [[200.0, -5.0], [200.0, 105.0]]\n"
      "crest = 1.8\ncoefficient = 1.7\n"
      "[[structure]]\nname = \"gap\"\ntype = \"breach\"\nline = \"levee\"\nat = [200.0, 50.0]\n"
      "trigger = { level = 2.0, duration = 5.0 }\nbottom = 0.8\n"
      "width = { initial = 5.0, final = 30.0, model = \"verheij\" }\n"
      "[[structure]]\nname = \"fence\"\ntype = \"wall\"\npoints = [[300.0, 105.0], [300.0, 40.0]]\n";
  for (const char* precision : {"double", "float"}) {
    const io::Case c =
        io::parse_case(text, "case.toml", dir, {std::string("numerics.precision=") + precision});
    const Outcome cpu = run_case(c, options("cpu", "cell"), 100);
    ASSERT_EQ(cpu.forcing.structures.size(), 3 * kTallyValues);
    EXPECT_GT(cpu.forcing.structure_volume(0), 100.0) << precision << ": over the levee's crest";
    EXPECT_GT(cpu.forcing.structure_width(1), 5.0) << precision << ": the breach grew";
    for (const char* loop : {"cell", "edge"})
      expect_same_bits(run_case(c, options("cuda", loop), 100), cpu, std::string(loop) + ", " + precision);
  }
  fs::remove_all(dir);
}

}  // namespace cuda_structure_tests

#endif
