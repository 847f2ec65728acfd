// SPDX-License-Identifier: MIT
// The capability table: what a problem asks for, what each place runs, the
// message a refused run gets, and docs/features.md as its printout.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "shallows/solver/backend.hpp"
#include "shallows/solver/capabilities.hpp"
#include "support/mesh_problems.hpp"
#include "support/problems.hpp"

namespace shallows {
namespace {

using test_support::make_mesh_problem;
using test_support::make_problem;

Problem flat_grid() {
  return make_problem(8, 8, 0, 1, 0, 1, [](double, double) { return 0.0; }, [](double, double) { return 1.0; });
}

Problem flat_mesh() {
  RectangleMeshSpec spec;
  spec.nx = 4;
  spec.ny = 4;
  return make_mesh_problem(spec, [](double, double) { return 0.0; }, [](double, double) { return 1.0; });
}

std::string message_of(const Problem& p, const BackendOptions& o) {
  try {
    make_backend(p, o);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(Capabilities, AProblemListsWhatItAsksFor) {
  Problem p = flat_grid();
  EXPECT_EQ(features_of(p), std::vector<Feature>{Feature::first_order});
  p.scheme = Scheme::roe3;
  p.forcing.rain.rate = TimeSeries::constant(1e-5);
  p.forcing.manning.assign(64, 0.03);
  p.scalars.push_back(test_support::scalar("dye", {1.0}));
  p.segments.push_back(test_support::segment(Side::west, 2, 4, BoundaryKind::level, 1.0));
  const std::vector<Feature> want{Feature::first_order, Feature::third_order, Feature::rain,
                                  Feature::manning_map, Feature::segments,    Feature::scalars};
  EXPECT_EQ(features_of(p), want);
}

TEST(Capabilities, GridsRunEverythingEverywhereButCheckpointsOnRanks) {
  for (const bool gpu : {false, true}) {
    for (const bool ranks : {false, true}) {
      for (Feature f : {Feature::first_order, Feature::third_order, Feature::rain, Feature::infiltration,
                        Feature::manning_map, Feature::sources, Feature::side_series, Feature::segments,
                        Feature::scalars})
        EXPECT_TRUE(runs(f, {false, gpu, ranks})) << feature_name(f);
      EXPECT_EQ(runs(Feature::checkpoints, {false, gpu, ranks}), !ranks);
    }
  }
}

TEST(Capabilities, MeshesRunInOneProcessFirstOrderWithForcingAndScalars) {
  for (const bool gpu : {false, true}) {
    EXPECT_TRUE(runs(Feature::first_order, {true, gpu, false}));
    EXPECT_FALSE(runs(Feature::first_order, {true, gpu, true}));
    EXPECT_FALSE(runs(Feature::third_order, {true, gpu, false}));
    EXPECT_FALSE(runs(Feature::segments, {true, gpu, false}));
    for (const Feature f : {Feature::rain, Feature::infiltration, Feature::manning_map, Feature::sources,
                            Feature::side_series, Feature::scalars, Feature::checkpoints})
      EXPECT_TRUE(runs(f, {true, gpu, false})) << feature_name(f);
  }
}

// The CPU and the GPU run the same features: only ranks and meshes refuse.
TEST(Capabilities, ARefusalNamesTheFeaturesTheWayOutAndThePlace) {
  Problem p = flat_mesh();
  EXPECT_EQ(refusal(p, {true, true, false}), "");
  p.forcing.rain.rate = TimeSeries::constant(1e-5);
  p.scalars.push_back(test_support::scalar("dye", {1.0}));
  EXPECT_EQ(refusal(p, {true, false, false}), "");
  EXPECT_EQ(refusal(p, {true, true, false}), "");
  p.segments.push_back(test_support::segment(Side::west, 0, 1, BoundaryKind::open, 0.0));
  EXPECT_EQ(refusal(p, {true, true, false}),
            "boundary segments run on grids only so far; this run is on a mesh on the GPU");
  p.scheme = Scheme::roe3;
  EXPECT_EQ(refusal(p, {true, false, false}),
            "third order (roe3) and boundary segments run on grids only so far; this run is on a mesh on the CPU");
  EXPECT_EQ(refusal(p, {true, false, true}),
            "meshes run in one process only so far (no MPI decomposition of meshes)");
}

// make_backend reads the table: a mesh with segments is refused on the CPU,
// naming them; an unknown backend is refused before anything else.
TEST(Capabilities, TheBackendFactoryRefusesThroughTheTable) {
  Problem p = flat_mesh();
  p.segments.push_back(test_support::segment(Side::west, 0, 1, BoundaryKind::open, 0.0));
  BackendOptions o;
  o.kind = "cpu";
  EXPECT_EQ(message_of(p, o), "boundary segments run on grids only so far; this run is on a mesh on the CPU");
  o.kind = "auto";  // the GPU does not run it either: the CPU is asked, and refuses
  EXPECT_EQ(message_of(p, o), "boundary segments run on grids only so far; this run is on a mesh on the CPU");
  o.kind = "gpu";
  EXPECT_EQ(message_of(p, o), "unknown backend 'gpu' (valid: cpu, cuda, auto)");
}

Structure pump_between(index_t inlet, index_t outlet) {
  Structure s;
  s.name = "station";
  s.inlet = inlet;
  s.outlet = outlet;
  s.discharge = TimeSeries::constant(1.0);
  return s;
}

// Pumps, gates and culverts run on the CPU and the GPU, grids and meshes, in one process and on ranks.
TEST(Capabilities, StructuresRunOnTheCpuAndTheGpuInOneProcessAndOnRanks) {
  Problem p = flat_grid();
  p.forcing.structures.push_back(pump_between(0, 63));
  EXPECT_EQ(features_of(p), (std::vector<Feature>{Feature::first_order, Feature::structures}));
  EXPECT_EQ(refusal(p, {false, false, false}), "");
  EXPECT_EQ(refusal(p, {false, true, false}), "");
  EXPECT_EQ(refusal(p, {false, false, true}), "");
  EXPECT_EQ(refusal(p, {false, true, true}), "");
  p.scheme = Scheme::roe3;
  EXPECT_EQ(refusal(p, {false, true, false}), "");
  Problem m = flat_mesh();
  m.forcing.structures.push_back(pump_between(0, 5));
  EXPECT_EQ(refusal(m, {true, false, false}), "");
  EXPECT_EQ(refusal(m, {true, true, false}), "");
  BackendOptions o;
  o.kind = "cuda";
  // Runs where a GPU is, else fails for want of one: never refused for the pump.
  const std::string cuda = message_of(p, o);
  EXPECT_TRUE(cuda.empty() || cuda.rfind("backend 'cuda': ", 0) == 0) << cuda;
  o.kind = "auto";
  EXPECT_EQ(message_of(p, o), "");  // the GPU where one is, else the CPU
}

// Weirs, walls and breaches: a feature of their own, run wherever a grid runs (CPU, GPU, ranks of either) and on
// meshes, refused with the third-order scheme naming the line.
TEST(Capabilities, LinesRunWithTheFirstOrderScheme) {
  Problem p = flat_grid();
  Structure wall;
  wall.name = "fence";
  wall.spec.kind = StructureKind::wall;
  wall.crossings.push_back({0, 1, 1.0, 0.0, 0.5});
  p.forcing.structures.push_back(wall);
  EXPECT_EQ(features_of(p), (std::vector<Feature>{Feature::first_order, Feature::lines}));
  for (bool gpu : {false, true})
    for (bool ranks : {false, true}) EXPECT_EQ(refusal(p, {false, gpu, ranks}), "") << gpu << ranks;
  p.scheme = Scheme::roe3;
  for (bool gpu : {false, true})
    EXPECT_EQ(refusal(p, {false, gpu, false}),
              "structure 'fence': weirs and walls run on grids with the first-order scheme only so far (this run is "
              "third order, roe3)");
}

// docs/features.md holds the table as `shallows features` prints it.
TEST(Capabilities, TheDocsTableIsTheTable) {
  std::ifstream in(std::string(SHALLOWS_SOURCE_DIR) + "/docs/features.md");
  ASSERT_TRUE(in) << "docs/features.md";
  std::stringstream doc;
  doc << in.rdbuf();
  EXPECT_NE(doc.str().find(features_table()), std::string::npos)
      << "docs/features.md lacks the table `shallows features` prints:\n"
      << features_table();
}

} // namespace
} // namespace shallows
