// SPDX-License-Identifier: MIT
// CUDA executor for unstructured meshes: bit-for-bit agreement with the CPU
// mesh executor (same steps, dt, fields and maxima) for every loop design,
// both precisions, triangle and mixed meshes, every boundary kind, wet/dry
// fronts, emerged islands and inactive cells; determinism; a lake at rest;
// the Backend interface (batched advance against step(), snapshots, volume,
// errors); every forcing and scalar feature, restarts with them. Every
// test skips, visibly, where no CUDA device is present (CI);
// tools/gpu-check.sh runs them on a GPU machine (label backend).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "shallows/exec/cuda_backend.hpp"
#include "shallows/solver/cell_layout.hpp"
#include "shallows/solver/mass_balance.hpp"
#include "shallows/solver/simulation.hpp"
#include "shallows/solver/time_step.hpp"
#include "support/gpu.hpp"
#include "support/measures.hpp"
#include "support/mesh_problems.hpp"
#include "support/problems.hpp"

#ifndef SHALLOWS_HAVE_CUDA
TEST(CudaMeshBackend, NotBuilt) { GTEST_SKIP() << "this build has no CUDA backend: GPU tests skipped"; }
#else

namespace {

using namespace shallows;
using test_support::make_mesh_problem;

const double kInf = std::numeric_limits<double>::infinity();
const std::vector<Precision> kPrecisions{Precision::double_precision, Precision::single_precision};

const char* precision_name(Precision p) { return p == Precision::single_precision ? "float" : "double"; }

// A design of the GPU executor: BackendOptions::mesh_loop, and for the cell
// loop its kernel (SHALLOWS_CUDA_MESH_KERNEL): slots (the default, two
// passes), shared (two passes, the CPU's loop body).
struct Design {
  const char* loop;
  const char* layout;  // nullptr: the default
  std::string label() const { return std::string(loop) + (layout ? std::string(" ") + layout : std::string()); }
};
const std::vector<Design> kDesigns{{"cell", nullptr}, {"cell", "shared"}, {"edge", nullptr}};

BackendOptions options(const std::string& kind, const std::string& loop, bool maxima = true) {
  BackendOptions o;
  o.kind = kind;
  o.threads = 2;
  o.track_maxima = maxima;
  o.arrival_threshold = 0.05;
  o.mesh_loop = loop;
  return o;
}

std::unique_ptr<Backend> gpu_backend(const Problem& p, const Design& d, bool maxima = true) {
  const test_support::MeshLayoutScope scope(d.layout);
  return make_backend(p, options("cuda", d.loop, maxima));
}

RectangleMeshSpec unit_square(index_t n, RectangleCells cells, std::uint64_t seed = 11) {
  RectangleMeshSpec s;
  s.nx = s.ny = n;
  s.cells = cells;
  s.perturbation = 0.3;
  s.shuffle = true;
  s.seed = seed;
  return s;
}

const std::map<std::string, BoundaryCondition<double>> kAllKinds{{"west", {BoundaryKind::inflow, 0.2}},
                                                                 {"east", {BoundaryKind::open, 0}},
                                                                 {"north", {BoundaryKind::level, 0.1}}};

// A dam break over a bump that stands out of the low water (an island, a
// wet/dry front running onto it), walls south and on unnamed edges. A dry
// tolerance of 1 mm keeps thin films at the fronts from racing.
Problem dam_break(const RectangleMeshSpec& spec, Precision precision, double manning = 0,
                  CellOrdering ordering = CellOrdering::random,
                  const std::map<std::string, BoundaryCondition<double>>& bcs = kAllKinds) {
  const auto z = [](double x, double y) {
    return 0.8 * std::exp(-40 * ((x - 0.6) * (x - 0.6) + (y - 0.4) * (y - 0.4))) - 0.1 * y;
  };
  Problem p = make_mesh_problem(spec, z, [](double x, double) { return x < 0.3 ? 0.6 : 0.05; }, bcs, ordering);
  p.physics.h_dry = 1e-3;
  p.physics.n_manning = manning;
  p.precision = precision;
  p.cfl = 0.9;
  return p;
}

// The same with a block of inactive cells (NaN bed) and a second, ragged
// one on the north side.
Problem masked_dam_break(Precision precision) {
  const auto z = [](double x, double y) {
    if (std::abs(x - 0.45) < 0.06 && std::abs(y - 0.6) < 0.15) return std::nan("");
    if (y > 0.93 && std::fmod(x * 10, 1.0) < 0.4) return std::nan("");
    return 0.8 * std::exp(-40 * ((x - 0.7) * (x - 0.7) + (y - 0.3) * (y - 0.3))) - 0.1 * y;
  };
  Problem p = make_mesh_problem(unit_square(28, RectangleCells::triangles, 5), z,
                                [](double x, double) { return x < 0.3 ? 0.6 : 0.05; }, kAllKinds, CellOrdering::rcm);
  p.physics.h_dry = 1e-3;
  p.precision = precision;
  p.cfl = 0.9;
  return p;
}

struct RunResult {
  Fields f;
  Maxima m;
  AdvanceResult a;
  double volume = 0;
  std::string name;
};

RunResult finish(Backend& b, const AdvanceResult& a) {
  RunResult r;
  r.a = a;
  b.read_state(r.f);
  b.read_maxima(r.m);
  r.volume = b.volume();
  r.name = b.name();
  return r;
}

RunResult run_cpu(const Problem& p, double t_end, index_t max_steps = index_t(1) << 40) {
  auto b = make_backend(p, options("cpu", "cell"));
  const AdvanceResult a = b->advance(0.0, t_end, max_steps);
  return finish(*b, a);
}

RunResult run_gpu(const Problem& p, const Design& d, double t_end, index_t max_steps = index_t(1) << 40) {
  auto b = gpu_backend(p, d);
  const AdvanceResult a = b->advance(0.0, t_end, max_steps);
  return finish(*b, a);
}

bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// Index of the first value whose bits differ (NaNs too: output files must be
// the same bytes), or -1.
long long first_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (std::memcmp(&a[k], &b[k], sizeof(double)) != 0) return static_cast<long long>(k);
  }
  return -1;
}

void expect_same_bits(const std::vector<double>& a, const std::vector<double>& b, const std::string& what) {
  const long long k = first_difference(a, b);
  if (k < 0) return;
  ADD_FAILURE() << what << " differs first at cell " << k << " of " << b.size() << ": "
                << (static_cast<std::size_t>(k) < a.size() ? a[static_cast<std::size_t>(k)] : 0.0) << " vs "
                << b[static_cast<std::size_t>(k)] << " (rel. L1 " << test_support::rel_l1(a, b) << ")";
}

void expect_same_fields(const Fields& a, const Fields& b, const std::string& what) {
  expect_same_bits(a.h, b.h, what + ": h");
  expect_same_bits(a.hu, b.hu, what + ": hu");
  expect_same_bits(a.hv, b.hv, what + ": hv");
}

// The GPU run against the CPU run: the same steps, times, fields, maxima
// (the NaN of cells never reached included) and volume, bit for bit.
void expect_identical_runs(const RunResult& gpu, const RunResult& cpu, const std::string& what) {
  EXPECT_EQ(gpu.a.steps, cpu.a.steps) << what;
  EXPECT_EQ(gpu.a.t, cpu.a.t) << what;
  EXPECT_EQ(gpu.a.dt, cpu.a.dt) << what;
  expect_same_fields(gpu.f, cpu.f, what);
  expect_same_bits(gpu.m.max_h, cpu.m.max_h, what + ": max_h");
  expect_same_bits(gpu.m.max_speed, cpu.m.max_speed, what + ": max_speed");
  expect_same_bits(gpu.m.arrival_time, cpu.m.arrival_time, what + ": arrival_time");
  EXPECT_EQ(gpu.volume, cpu.volume) << what << ": volume";
}

// The run did something: the state moved, and some cells are wet and some dry.
void expect_nontrivial(const Problem& p, const RunResult& r, const std::string& what) {
  EXPECT_GT(test_support::rel_l1(r.f.h, p.h), 1e-3) << what << ": the flow did not move";
  std::size_t dry = 0, wet = 0;
  for (std::size_t c = 0; c < r.f.h.size(); ++c) {
    ASSERT_TRUE(std::isfinite(r.f.h[c]) && r.f.h[c] >= 0) << what << ": depth " << r.f.h[c] << " in cell " << c;
    (r.f.h[c] > 1e-3 ? wet : dry) += 1;
  }
  EXPECT_GT(dry, 0u) << what;
  EXPECT_GT(wet, 0u) << what;
}

// ------------------------------------------------------------------ agreement with the CPU

TEST(CudaMeshBackend, TrianglesAgreeWithCpuBitForBit) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    const Problem p = dam_break(unit_square(30, RectangleCells::triangles), prec);
    const RunResult cpu = run_cpu(p, 0.5);
    expect_nontrivial(p, cpu, "CPU");
    EXPECT_GT(cpu.a.steps, 50);
    EXPECT_EQ(cpu.a.t, 0.5);
    for (const Design& d : kDesigns) {
      const std::string what = "triangles " + d.label() + " " + precision_name(prec);
      const RunResult gpu = run_gpu(p, d, 0.5);
      expect_identical_runs(gpu, cpu, what);
    }
  }
}

TEST(CudaMeshBackend, MixedMeshAgreesWithCpuBitForBit) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    const Problem p = dam_break(unit_square(26, RectangleCells::mixed, 3), prec, 0, CellOrdering::morton);
    const RunResult cpu = run_cpu(p, 0.4);
    expect_nontrivial(p, cpu, "CPU");
    for (const Design& d : kDesigns) {
      expect_identical_runs(run_gpu(p, d, 0.4), cpu, "mixed " + d.label() + " " + precision_name(prec));
    }
  }
}

TEST(CudaMeshBackend, QuadrilateralMeshAgreesWithCpuBitForBit) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    const Problem p = dam_break(unit_square(24, RectangleCells::quadrilaterals, 9), prec, 0, CellOrdering::rcm);
    const RunResult cpu = run_cpu(p, 0.4);
    for (const Design& d : kDesigns) {
      expect_identical_runs(run_gpu(p, d, 0.4), cpu, "quadrilaterals " + d.label() + " " + precision_name(prec));
    }
  }
}

// Every boundary kind on every side (the generator's four groups) and the
// unnamed group (walls).
TEST(CudaMeshBackend, EveryBoundaryKindAgreesWithCpu) {
  SHALLOWS_REQUIRE_GPU();
  const BoundaryCondition<double> kinds[4] = {
      {BoundaryKind::wall, 0}, {BoundaryKind::open, 0}, {BoundaryKind::inflow, 0.25}, {BoundaryKind::level, 0.3}};
  const char* sides[4] = {"west", "east", "south", "north"};
  for (int rotation = 0; rotation < 4; ++rotation) {
    std::map<std::string, BoundaryCondition<double>> bcs;
    for (int s = 0; s < 4; ++s) bcs[sides[s]] = kinds[(s + rotation) % 4];
    for (Precision prec : kPrecisions) {
      const Problem p = dam_break(unit_square(20, RectangleCells::mixed, 17), prec, 0, CellOrdering::random, bcs);
      const RunResult cpu = run_cpu(p, 0.3);
      for (const Design& d : kDesigns) {
        expect_identical_runs(run_gpu(p, d, 0.3), cpu,
                              "rotation " + std::to_string(rotation) + " " + d.label() + " " + precision_name(prec));
      }
    }
  }
}

// Manning friction takes a cube root per wet cell and step (apply_manning):
// math::cbrt is built from IEEE basic operations, so the GPU gives the CPU's
// bits here too (libm's and CUDA's cbrt differ in the last bit).
TEST(CudaMeshBackend, ManningFrictionIsBitIdenticalToCpu) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    const Problem p = dam_break(unit_square(30, RectangleCells::triangles), prec, 0.03);
    const RunResult cpu = run_cpu(p, 0.4);
    expect_nontrivial(p, cpu, "CPU");
    for (const Design& d : kDesigns) {
      const std::string what = "Manning " + d.label() + " " + precision_name(prec);
      expect_identical_runs(run_gpu(p, d, 0.4), cpu, what);
    }
    // Friction made a difference (the comparison above is not vacuous).
    const RunResult frictionless = run_cpu(dam_break(unit_square(30, RectangleCells::triangles), prec), 0.4);
    EXPECT_GT(test_support::rel_l1(frictionless.f.hu, cpu.f.hu), 1e-3) << precision_name(prec);
  }
}

TEST(CudaMeshBackend, InactiveCellsAgreeWithCpuAndStayDry) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    const Problem p = masked_dam_break(prec);
    std::size_t inactive = 0;
    for (double z : p.z) inactive += std::isnan(z) ? 1 : 0;
    ASSERT_GT(inactive, 10u);
    const RunResult cpu = run_cpu(p, 0.4);
    expect_nontrivial(p, cpu, "CPU");
    for (const Design& d : kDesigns) {
      const std::string what = "masked " + d.label() + " " + precision_name(prec);
      const RunResult gpu = run_gpu(p, d, 0.4);
      expect_identical_runs(gpu, cpu, what);
      for (std::size_t c = 0; c < p.z.size(); ++c) {
        if (!std::isnan(p.z[c])) continue;
        ASSERT_EQ(gpu.f.h[c], 0.0) << what << ": inactive cell " << c << " got water";
        ASSERT_EQ(gpu.f.hu[c], 0.0) << what;
        ASSERT_TRUE(std::isnan(gpu.m.arrival_time[c])) << what;
      }
    }
  }
}

// Backend::step (Simulation, `shallows run`) against the CPU's, step by step:
// the same dt each step; then the batched advance of both to a target.
TEST(CudaMeshBackend, StepByStepAgreesWithCpu) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    const Problem p = dam_break(unit_square(20, RectangleCells::triangles, 23), prec);
    for (const Design& d : kDesigns) {
      const std::string what = "step " + d.label() + " " + precision_name(prec);
      auto cpu = make_backend(p, options("cpu", d.loop));
      auto gpu = gpu_backend(p, d);
      double t = 0;
      for (int k = 0; k < 40; ++k) {
        // dt_max caps some steps (1e-3 is under the CFL step here).
        const double dt_max = k % 7 == 3 ? 1e-3 : 1.0;
        const double dc = cpu->step(t, dt_max);
        const double dg = gpu->step(t, dt_max);
        ASSERT_EQ(dg, dc) << what << ", step " << k;
        t += dc;
      }
      const AdvanceResult ac = cpu->advance(t, t + 0.1, 1 << 30);
      const AdvanceResult ag = gpu->advance(t, t + 0.1, 1 << 30);
      EXPECT_EQ(ag.steps, ac.steps) << what;
      EXPECT_EQ(ag.t, ac.t) << what;
      expect_identical_runs(finish(*gpu, ag), finish(*cpu, ac), what);
    }
  }
}

// ------------------------------------------------------------------ GPU properties

// With friction (cube roots) the designs still agree with each other bit for
// bit: the same device functions, the same order.
TEST(CudaMeshBackend, DesignsGiveIdenticalResults) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    const Problem p = dam_break(unit_square(30, RectangleCells::mixed, 31), prec, 0.03);
    const RunResult ref = run_gpu(p, kDesigns[0], 0.5);
    for (const Design& d : kDesigns) {
      const std::string what = d.label() + " vs " + kDesigns[0].label() + " " + precision_name(prec);
      const RunResult r = run_gpu(p, d, 0.5);
      EXPECT_EQ(r.a.steps, ref.a.steps) << what;
      EXPECT_EQ(r.a.t, ref.a.t) << what;
      expect_same_fields(r.f, ref.f, what);
      EXPECT_TRUE(bitwise_equal(r.m.max_speed, ref.m.max_speed)) << what;
    }
  }
}

TEST(CudaMeshBackend, OptionsAndStats) {
  SHALLOWS_REQUIRE_GPU();
  const Problem p = dam_break(unit_square(8, RectangleCells::triangles), Precision::single_precision);
  for (const Design& d : kDesigns) {
    auto b = gpu_backend(p, d);
    EXPECT_NE(b->name().find("cuda mesh"), std::string::npos) << b->name();
    const auto* cb = dynamic_cast<const CudaBackend*>(b.get());
    ASSERT_NE(cb, nullptr) << d.label() << ": the mesh executor must give CudaStats";
    b->advance(0.0, kInf, 5);
    const CudaStats s = cb->stats();
    EXPECT_EQ(s.steps, 5) << d.label();
    EXPECT_GT(s.bytes_per_cell_update, 50.0) << d.label();
    EXPECT_LT(s.bytes_per_cell_update, 400.0) << d.label();
    EXPECT_FALSE(s.device.empty());
  }
  EXPECT_THROW(make_backend(p, options("cuda", "diagonal")), std::invalid_argument);
  {
    const test_support::MeshLayoutScope scope("zigzag");
    EXPECT_THROW(make_backend(p, options("cuda", "cell")), std::invalid_argument);
  }
  Problem third = p;
  third.scheme = Scheme::roe3;
  EXPECT_THROW(make_backend(third, options("cuda", "cell")), std::runtime_error);  // the capability table's refusal
}

// Dry skipping (dry_blocks.hpp) on the GPU: the bits of the CPU run without
// it, cells left out, and a reloaded state goes on with the same bits.
TEST(CudaMeshBackend, DrySkippingGivesTheCpuBitsAndLeavesOutTheCpuBlocks) {
  SHALLOWS_REQUIRE_GPU();
  // A level on the reservoir's side: blocks along it are never dry, the valley's are.
  const std::map<std::string, BoundaryCondition<double>> bcs{{"west", {BoundaryKind::level, 0.15}}};
  for (RectangleCells cells : {RectangleCells::triangles, RectangleCells::mixed}) {
    for (CellOrdering ordering : {CellOrdering::rcm, CellOrdering::morton}) {
      for (Precision prec : kPrecisions) {
        const Problem p = test_support::dry_valley(cells, ordering, prec, bcs, 0.03);
        BackendOptions skip = options("cpu", "edge"), full = skip;
        full.dry_skip = false;
        auto cpu_full = make_backend(p, full);
        auto cpu_skip = make_backend(p, skip);
        const AdvanceResult a = cpu_full->advance(0.0, kInf, 80);
        cpu_skip->advance(0.0, kInf, 80);
        const RunResult cpu = finish(*cpu_full, a);
        for (const Design& d : kDesigns) {
          const std::string what = d.label() + " " + precision_name(prec) + ", ordering " +
                                   std::to_string(static_cast<int>(ordering)) + ", cells " +
                                   std::to_string(static_cast<int>(cells));
          auto gpu = gpu_backend(p, d);
          const RunResult g = finish(*gpu, gpu->advance(0.0, kInf, 80));
          expect_identical_runs(g, cpu, what);
          // The GPU starts skipping at the batch after the first dry block: never fewer cells than the CPU.
          EXPECT_GE(gpu->cells_computed(), cpu_skip->cells_computed()) << what;
          EXPECT_LT(gpu->cells_computed(), 80.0 * static_cast<double>(p.mesh->cells())) << what;
          Fields f;
          gpu->read_state(f);
          gpu->load_state(f);
          const AdvanceResult ga = gpu->advance(g.a.t, kInf, 40);
          const AdvanceResult ca = cpu_full->advance(a.t, kInf, 40);
          expect_identical_runs(finish(*gpu, ga), finish(*cpu_full, ca), what + ", after a reload");
          cpu_full = make_backend(p, full);  // for the next design: again from the start
          cpu_full->advance(0.0, kInf, 80);
        }
      }
    }
  }
}

// Boundary groups that follow time series (an inflow hydrograph, a level
// that rises and falls): the CPU's bits in every design.
TEST(CudaMeshBackend, GroupSeriesAgreeWithCpuBitForBit) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    Problem p = dam_break(unit_square(24, RectangleCells::mixed), prec, 0.02, CellOrdering::rcm);
    p.forcing.groups.resize(p.mesh_boundary.size());
    p.forcing.groups[static_cast<std::size_t>(p.mesh->find_boundary("west"))] = {{0.0, 0.1, 0.3}, {0.2, 0.6, 0.05}};
    p.forcing.groups[static_cast<std::size_t>(p.mesh->find_boundary("north"))] = {{0.0, 0.2, 0.4}, {0.1, 0.3, 0.0}};
    const RunResult cpu = run_cpu(p, 0.4);
    for (const Design& d : kDesigns) {
      auto b = gpu_backend(p, d);
      const RunResult g = finish(*b, b->advance(0.0, 0.4, index_t(1) << 40));
      expect_identical_runs(g, cpu, d.label() + " " + precision_name(prec));
    }
  }
}

// Small enough for compute-sanitizer (memcheck, racecheck, initcheck,
// synccheck; tools/gpu-check.sh runs the CudaSanitizer.* tests): every
// design, both precisions, maxima, a snapshot, inactive cells, a mixed mesh
// (four slots) and a triangle mesh (three), dry skipping.
TEST(CudaSanitizer, SmallRunOfEveryMeshDesign) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    for (const Problem& p : {masked_dam_break(prec), dam_break(unit_square(7, RectangleCells::mixed), prec, 0.03),
                             test_support::dry_valley(RectangleCells::mixed, CellOrdering::morton, prec, {}, 0, 12)}) {
      for (const Design& d : kDesigns) {
        auto b = gpu_backend(p, d);
        b->step(0.0, 1.0);
        b->advance(0.0, 0.05, 1 << 30);
        Fields f;
        Maxima m;
        b->read_state(f);
        b->read_maxima(m);
        EXPECT_GT(b->volume(), 0.0);
        Snapshot snap = b->snapshot();
        b->step(0.05, 1.0);
        EXPECT_EQ(snap.take().h, f.h);
      }
    }
  }
}

// ------------------------------------------------------------------ forcing and passive scalars

// dam_break on `spec` with everything a mesh run can carry: rain (a
// hyetograph with a scale per cell, or a radar stack of three frames),
// Green-Ampt or initial + constant loss with parameters per cell, a Manning
// map, a well, a sink and a source over several cells, and two passive
// scalars that the groups, the rain and the sources bring.
Problem forced_dam_break(const RectangleMeshSpec& spec, Precision precision, bool radar, std::uint64_t seed) {
  Problem p = dam_break(spec, precision, 0.0, CellOrdering::rcm);
  const UnstructuredMesh& m = *p.mesh;
  const std::size_t n = m.cell_area.size();
  const auto field = [&](double base, double spread, double k) {
    std::vector<double> v(n);
    for (std::size_t c = 0; c < n; ++c)
      v[c] = base + spread * std::sin(k * m.cell_x[c] + 3 * m.cell_y[c] + double(seed));
    return v;
  };
  Forcing& f = p.forcing;
  f.manning = field(0.03, 0.015, 7);
  if (radar) {
    f.infiltration.model = InfiltrationModel::initial_constant;
    f.infiltration.p0 = field(0.003, 0.002, 5);
    f.infiltration.p1 = {3e-5};
    f.infiltration.p2 = {0.0};
    f.rain.frame_times = {0.0, 0.07, 0.19};
    for (int k = 0; k < 3; ++k) {
      const std::vector<double> frame = field(4e-4, 3e-4, 2.0 + k);
      f.rain.frames.insert(f.rain.frames.end(), frame.begin(), frame.end());
    }
  } else {
    f.infiltration.model = InfiltrationModel::green_ampt;
    f.infiltration.p0 = field(2e-4, 1e-4, 4);
    f.infiltration.p1 = {0.1};
    f.infiltration.p2 = {0.3};
    f.rain.rate = {{0.0, 0.1, 1e6}, {2e-3, 5e-4, 5e-4}};
    f.rain.scale = field(1.0, 0.5, 3);
  }
  // Cells by their centroid: a well in the dry east, a sink in the reservoir, a source over a patch.
  const auto nearest = [&](double x, double y) {
    std::size_t best = 0;
    for (std::size_t c = 1; c < n; ++c) {
      if (std::hypot(m.cell_x[c] - x, m.cell_y[c] - y) < std::hypot(m.cell_x[best] - x, m.cell_y[best] - y)) best = c;
    }
    return static_cast<index_t>(best);
  };
  std::vector<index_t> patch;
  for (std::size_t c = 0; c < n; ++c)
    if (std::hypot(m.cell_x[c] - 0.15, m.cell_y[c] - 0.8) < 0.12) patch.push_back(static_cast<index_t>(c));
  f.sources = {{"well", {nearest(0.85, 0.2)}, TimeSeries::constant(0.002)},
               {"sink", {nearest(0.1, 0.3)}, TimeSeries::constant(-0.003)},
               {"patch", patch, {{0.0, 0.2}, {0.004, 0.001}}}};
  // What each boundary group brings: west is an inflow, north a level, east open.
  const auto groups = [&](double west, double north) {
    std::vector<double> g(p.mesh_boundary.size(), 0.0);
    g[static_cast<std::size_t>(m.find_boundary("west"))] = west;
    g[static_cast<std::size_t>(m.find_boundary("north"))] = north;
    return g;
  };
  PassiveScalar salt = test_support::scalar("salt", field(0.5, 0.4, 9), 0.2, {1.0, 0.0, 2.0});
  salt.groups = groups(0.7, 0.3);
  PassiveScalar dye = test_support::scalar("dye", {0.0}, 1.0, {0.0, 0.0, 5.0});
  dye.groups = groups(1.0, 0.0);
  p.scalars = {salt, dye};
  return p;
}

struct ForcedRun {
  RunResult r;
  ForcingState state;
  ForcingVolumes moved;
  BoundaryFlow sides;
  double positivity = 0;
};

ForcedRun run_forced(const Problem& p, const std::string& kind, const Design& d, double t_end) {
  const test_support::MeshLayoutScope scope(kind == "cuda" ? d.layout : nullptr);
  auto b = make_backend(p, options(kind, kind == "cuda" ? d.loop : "edge"));
  const AdvanceResult a = b->advance(0.0, t_end, index_t(1) << 40);
  ForcedRun out;
  out.r = finish(*b, a);
  b->read_forcing_state(out.state);
  out.moved = b->forcing_volumes();
  out.sides = b->boundary_flow();
  out.positivity = b->positivity_volume();
  return out;
}

double rel(double a, double b) { return std::abs(a - b) / std::max({std::abs(a), std::abs(b), 1e-300}); }

// Every forcing and scalar feature on perturbed, shuffled meshes of each
// kind, renumbered by RCM: the GPU takes the CPU's steps and gives its state,
// scalars, maxima, volume and each cell's infiltration bit for bit, in every
// design and both precisions; the accounts (summed by trees on the GPU)
// agree to round-off, and the water balances on both.
TEST(CudaMeshForcing, EverythingOnAgreesWithCpuBitForBit) {
  SHALLOWS_REQUIRE_GPU();
  const RectangleCells kinds[] = {RectangleCells::triangles, RectangleCells::mixed, RectangleCells::quadrilaterals};
  int run = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    for (const RectangleCells cells : kinds) {
      for (const Precision precision : kPrecisions) {
        const bool radar = (seed + static_cast<std::uint64_t>(cells)) % 2 == 0;
        const Problem p = forced_dam_break(unit_square(18 + 3 * seed, cells, seed), precision, radar, seed);
        const double t_end = 0.25;
        const ForcedRun cpu = run_forced(p, "cpu", kDesigns[0], t_end);
        const Design& d = kDesigns[static_cast<std::size_t>(run++) % kDesigns.size()];
        const ForcedRun gpu = run_forced(p, "cuda", d, t_end);
        const std::string what = std::string(precision_name(precision)) + ", seed " + std::to_string(seed) + ", " +
                                 (radar ? "radar + loss" : "hyetograph + Green-Ampt") + ", cells " +
                                 std::to_string(static_cast<int>(cells)) + ", " + d.label();
        expect_identical_runs(gpu.r, cpu.r, what);
        ASSERT_EQ(gpu.r.f.hc.size(), 2u) << what;
        for (std::size_t s = 0; s < 2; ++s)
          expect_same_bits(gpu.r.f.hc[s], cpu.r.f.hc[s], what + ": scalar " + std::to_string(s));
        expect_same_bits(gpu.state.infiltration, cpu.state.infiltration, what + ": infiltration");
        EXPECT_LE(rel(gpu.moved.rain, cpu.moved.rain), 1e-12) << what;
        EXPECT_LE(rel(gpu.moved.infiltration, cpu.moved.infiltration), 1e-12) << what;
        EXPECT_LE(rel(gpu.moved.sources, cpu.moved.sources), 1e-12) << what;
        EXPECT_LE(rel(gpu.sides.in, cpu.sides.in), 1e-12) << what;
        EXPECT_LE(rel(gpu.sides.out, cpu.sides.out), 1e-12) << what;
        EXPECT_LE(rel(gpu.positivity, cpu.positivity), precision == Precision::double_precision ? 1e-9 : 1e-5) << what;
        // Something happened: rain fell, the soil took some, the sources ran, water crossed the groups.
        EXPECT_GT(gpu.moved.rain, 0.0) << what;
        EXPECT_GT(gpu.moved.infiltration, 0.0) << what;
        EXPECT_NE(gpu.moved.sources, 0.0) << what;
        EXPECT_GT(gpu.sides.in, 0.0) << what;
        expect_nontrivial(p, gpu.r, what);
        const double initial = layout_volume(MeshCells{p.mesh->cell_area.data(), p.mesh->cells()}, p.h.data(),
                                             p.z.data());
        const MassBalance b = mass_balance(p, initial, gpu.r.volume, gpu.positivity, gpu.moved, gpu.sides);
        EXPECT_TRUE(b.checked) << what;
        EXPECT_TRUE(b.ok) << what << ": residual " << b.relative_residual << " > " << b.tolerance;
      }
    }
  }
}

// A run with forcing and scalars restarted from its state and forcing state
// at t = 0.1 goes on as the run that did not stop there, bit for bit.
TEST(CudaMeshForcing, RestartFromTheForcingStateGoesOnBitForBit) {
  SHALLOWS_REQUIRE_GPU();
  const Problem p = forced_dam_break(unit_square(20, RectangleCells::mixed, 4), Precision::double_precision, false, 4);
  auto first = make_backend(p, options("cuda", "cell"));
  const AdvanceResult half = first->advance(0.0, 0.1, index_t(1) << 40);
  Fields state;
  Maxima maxima;
  ForcingState forcing;
  first->read_state(state);
  first->read_maxima(maxima);
  first->read_forcing_state(forcing);
  const AdvanceResult on = first->advance(half.t, 0.2, index_t(1) << 40);
  ForcedRun whole;
  whole.r = finish(*first, on);
  first->read_forcing_state(whole.state);
  auto second = make_backend(p, options("cuda", "cell"));
  second->load_state(state);
  second->load_maxima(maxima);
  second->load_forcing_state(forcing);
  const AdvanceResult rest = second->advance(half.t, 0.2, index_t(1) << 40);
  const RunResult r = finish(*second, rest);
  EXPECT_EQ(rest.steps, on.steps);
  EXPECT_GT(rest.steps, 0);
  expect_same_fields(r.f, whole.r.f, "restarted");
  for (std::size_t s = 0; s < 2; ++s) expect_same_bits(r.f.hc[s], whole.r.f.hc[s], "restarted: scalar");
  expect_same_bits(r.m.max_h, whole.r.m.max_h, "restarted: max_h");
  ForcingState end;
  second->read_forcing_state(end);
  expect_same_bits(end.infiltration, whole.state.infiltration, "restarted: infiltration");
  EXPECT_EQ(end.boundary.size(), whole.state.boundary.size());
}

// For compute-sanitizer (tools/gpu-check.sh sanitize): a few steps of every
// design with every forcing and scalar feature, the accounts and the forcing
// state read back.
TEST(CudaSanitizer, SmallMeshRunWithForcingAndScalars) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    for (const bool radar : {false, true}) {
      const Problem p = forced_dam_break(unit_square(8, RectangleCells::mixed, 3), prec, radar, 3);
      for (const Design& d : kDesigns) {
        const ForcedRun r = run_forced(p, "cuda", d, 0.02);
        EXPECT_GT(r.r.a.steps, 0) << d.label();
        EXPECT_GT(r.moved.rain, 0.0) << d.label();
        EXPECT_EQ(r.r.f.hc.size(), 2u) << d.label();
      }
    }
  }
}

} // namespace
#endif  // SHALLOWS_HAVE_CUDA
