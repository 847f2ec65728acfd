// SPDX-License-Identifier: MIT
// Case files with [mesh]: the mesh read and renumbered, fields at centroids,
// z from the mesh nodes or a raster, boundaries by physical group name, and
// the errors a user meets.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/io/gmsh.hpp"
#include "shallows/mesh/unstructured/generator.hpp"

namespace fs = std::filesystem;
using namespace shallows;
using shallows::io::InputError;

namespace {

class MeshCaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) / ("shallows_test_case_mesh_" + std::string(info->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    RectangleMeshSpec spec;
    spec.x1 = 20;
    spec.y1 = 10;
    spec.nx = 20;
    spec.ny = 10;
    spec.cells = RectangleCells::mixed;
    spec.perturbation = 0.2;
    spec.shuffle = true;
    io::GmshMesh m = rectangle_mesh(spec);
    for (std::size_t k = 0; k < m.node_x.size(); ++k) m.node_z[k] = 0.1 * m.node_x[k] - 3;  // a plane
    io::write_gmsh(dir_ / "valley.msh", m, true);
    cells_ = m.cell_tag.size();
  }
  void TearDown() override { fs::remove_all(dir_); }

  io::Case parse(const std::string& text) const { return io::parse_case(text, "case.toml", dir_); }

  std::string message(const std::string& text) const {
    try {
      parse(text);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  }

  fs::path dir_;
  std::size_t cells_ = 0;
};

const std::string tail = R"(
[time]
end = 1.0
)";

TEST_F(MeshCaseTest, ReadsTheMeshAndEvaluatesFieldsAtCentroids) {
  const io::Case c = parse(R"(
[mesh]
file = "valley.msh"
ordering = "morton"
[bathymetry]
z = "mesh"
[initial]
eta = "x < 5 ? 1 : -10"
u = 0.5
[boundary]
west = { type = "inflow", discharge = 0.3 }
east = "open"
)" + tail);
  const Problem& p = c.problem;
  ASSERT_TRUE(p.on_mesh());
  EXPECT_EQ(static_cast<std::size_t>(p.cells()), cells_);
  ASSERT_EQ(p.z.size(), cells_);
  const UnstructuredMesh& m = *p.mesh;
  for (std::size_t k = 0; k < cells_; ++k) {
    // The node mean of a plane, at the node mean of the cell (the centroid of a triangle).
    if (m.cell_sides(static_cast<index_t>(k)) == 3) {
      EXPECT_NEAR(p.z[k], 0.1 * m.cell_x[k] - 3, 1e-12);
    }
    const double eta = m.cell_x[k] < 5 ? 1.0 : -10.0;
    EXPECT_DOUBLE_EQ(p.h[k], std::max(eta - p.z[k], 0.0));
    EXPECT_DOUBLE_EQ(p.hu[k], 0.5 * p.h[k]);
  }
  ASSERT_EQ(p.mesh_boundary.size(), m.boundary_names.size());
  const int west = m.find_boundary("west"), east = m.find_boundary("east"), north = m.find_boundary("north");
  ASSERT_GT(west, 0);
  EXPECT_EQ(p.mesh_boundary[static_cast<std::size_t>(west)].kind, BoundaryKind::inflow);
  EXPECT_EQ(p.mesh_boundary[static_cast<std::size_t>(west)].value, 0.3);
  EXPECT_EQ(p.mesh_boundary[static_cast<std::size_t>(east)].kind, BoundaryKind::open);
  EXPECT_EQ(p.mesh_boundary[static_cast<std::size_t>(north)].kind, BoundaryKind::wall);
}

TEST_F(MeshCaseTest, ArraysPerCellAreInTheFilesElementOrderWhateverTheOrdering) {
  // A value per element of the file: its position there, which every ordering must bring to the same element.
  std::vector<double> position(cells_);
  for (std::size_t k = 0; k < cells_; ++k) position[k] = static_cast<double>(k);
  const io::FieldArrays arrays{{"initial.h", position}};
  std::map<std::int64_t, double> by_tag;  // element tag -> value, from the run in the file's order
  for (const char* ordering : {"file", "rcm", "morton", "random"}) {
    const io::Case c = io::parse_case(std::string("[mesh]\nfile = \"valley.msh\"\nordering = \"") + ordering +
                                          "\"\n" + tail,
                                      "case.toml", dir_, {}, arrays);
    const Problem& p = c.problem;
    ASSERT_EQ(p.h.size(), cells_) << ordering;
    for (std::size_t k = 0; k < cells_; ++k) {
      const double n = p.h[k];
      ASSERT_EQ(n, static_cast<double>(p.mesh->cell_file_index[k])) << ordering;
      if (std::string(ordering) == "file") by_tag[p.mesh->cell_tag[k]] = n;
      else ASSERT_EQ(by_tag.at(p.mesh->cell_tag[k]), n) << ordering;
    }
  }
}

TEST_F(MeshCaseTest, RasterIsSampledBilinearlyAtCentroids) {
  // A plane z = 0.5 x + 0.25 y on a raster of 1 m cells covering the mesh.
  std::ofstream f(dir_ / "dem.asc");
  f << "ncols 22\nnrows 12\nxllcorner -1\nyllcorner -1\ncellsize 1\n";
  for (int j = 11; j >= 0; --j) {
    for (int i = 0; i < 22; ++i) f << 0.5 * (i - 0.5) + 0.25 * (j - 0.5) << " ";
    f << "\n";
  }
  f.close();
  const io::Case c = parse(R"(
[mesh]
file = "valley.msh"
[bathymetry]
z = { file = "dem.asc" }
[initial]
h = 1
)" + tail);
  const UnstructuredMesh& m = *c.problem.mesh;
  for (std::size_t k = 0; k < cells_; ++k) EXPECT_NEAR(c.problem.z[k], 0.5 * m.cell_x[k] + 0.25 * m.cell_y[k], 1e-12);
}

// An inflow group along dry cells brings no water: noted, with a source as
// the remedy (segments are for grids).
TEST_F(MeshCaseTest, InflowGroupAlongDryCellsIsNoted) {
  const io::Case c = parse("[mesh]\nfile = \"valley.msh\"\n[initial]\nh = 0\n[boundary]\n"
                           "west = { type = \"inflow\", discharge = 0.3 }\n" + tail);
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_EQ(c.notes[0].rfind("boundary.west: an inflow boundary brings water only into wet cells", 0), 0u)
      << c.notes[0];
  EXPECT_NE(c.notes[0].find("[[source]] at the inlet"), std::string::npos) << c.notes[0];
  EXPECT_TRUE(parse("[mesh]\nfile = \"valley.msh\"\n[initial]\nh = 1\n[boundary]\n"
                    "west = { type = \"inflow\", discharge = 0.3 }\n" + tail)
                  .notes.empty());
}

// --set reaches a mesh's boundary groups as it reaches the sides of a grid;
// a group the mesh lacks is named as in the case file.
TEST_F(MeshCaseTest, SetOverridesBoundaryGroups) {
  const std::string text = "[mesh]\nfile = \"valley.msh\"\n[initial]\nh = 1\n[boundary]\nwest = \"open\"\n" + tail;
  const io::Case c = io::parse_case(text, "case.toml", dir_,
                                    {"boundary.west={ type = \"inflow\", discharge = 3.0 }", "boundary.east=\"open\""});
  const UnstructuredMesh& m = *c.problem.mesh;
  const auto bc = [&](const char* g) { return c.problem.mesh_boundary[static_cast<std::size_t>(m.find_boundary(g))]; };
  EXPECT_EQ(bc("west").kind, BoundaryKind::inflow);
  EXPECT_EQ(bc("west").value, 3.0);
  EXPECT_EQ(bc("east").kind, BoundaryKind::open);
  try {
    io::parse_case(text, "case.toml", dir_, {"boundary.inlet=\"open\""});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("has no physical line group 'inlet'"), std::string::npos) << e.what();
  }
}

// A group's discharge or eta from a CSV file: the series goes to
// Forcing::groups (by group), the condition starts with its first value;
// the series must last the run and an inflow's discharges be valid.
TEST_F(MeshCaseTest, GroupsFollowTimeSeries) {
  std::ofstream(dir_ / "q.csv") << "t,q\n0,0.5\n0.5,2\n2,1\n";
  std::ofstream(dir_ / "eta.csv") << "t,eta\n0,1.0\n3,1.5\n";
  const std::string text = "[mesh]\nfile = \"valley.msh\"\n[initial]\nh = 1\n[boundary]\n"
                           "west = { type = \"inflow\", discharge = \"q.csv\" }\n"
                           "east = { type = \"level\", eta = \"eta.csv\" }\nnorth = \"open\"\n" + tail;
  const io::Case c = parse(text);
  const Problem& p = c.problem;
  const UnstructuredMesh& m = *p.mesh;
  const auto group = [&](const char* g) { return static_cast<std::size_t>(m.find_boundary(g)); };
  ASSERT_EQ(p.forcing.groups.size(), m.boundary_names.size());
  EXPECT_EQ(p.forcing.groups[group("west")].t, (std::vector<double>{0, 0.5, 2}));
  EXPECT_EQ(p.forcing.groups[group("west")].v, (std::vector<double>{0.5, 2, 1}));
  EXPECT_EQ(p.mesh_boundary[group("west")].value, 0.5);
  EXPECT_EQ(p.forcing.groups[group("east")].v, (std::vector<double>{1.0, 1.5}));
  EXPECT_EQ(p.mesh_boundary[group("east")].kind, BoundaryKind::level);
  EXPECT_TRUE(p.forcing.groups[group("north")].empty());
  EXPECT_TRUE(p.forcing.has_boundary_series());

  std::ofstream(dir_ / "short.csv") << "t,q\n0,0.5\n0.5,2\n";
  EXPECT_NE(message("[mesh]\nfile = \"valley.msh\"\n[initial]\nh = 1\n[boundary]\n"
                    "west = { type = \"inflow\", discharge = \"short.csv\" }\n" + tail)
                .find("boundary.west.discharge: the run lasts until 1 s but the series ends at 0.5 s"),
            std::string::npos);
}

TEST_F(MeshCaseTest, ClearErrors) {
  const std::string mesh = "[mesh]\nfile = \"valley.msh\"\n";
  const std::string init = "[initial]\nh = 1\n";
  EXPECT_NE(message(mesh + init + "[boundary]\ninlet = \"open\"\n" + tail).find(
                "boundary.inlet: the mesh " + (dir_ / "valley.msh").string() +
                " has no physical line group 'inlet' (its groups: east, north, south, west)"),
            std::string::npos)
      << message(mesh + init + "[boundary]\ninlet = \"open\"\n" + tail);
  EXPECT_NE(message("[mesh]\nfile = \"missing.msh\"\n" + init + tail).find("mesh.file"), std::string::npos);
  EXPECT_NE(message("[mesh]\nfile = \"missing.msh\"\n" + init + tail).find("missing.msh"), std::string::npos);
  EXPECT_NE(message(mesh + "[domain]\nnx = 2\nny = 2\nx = [0, 1]\ny = [0, 1]\n" + init + tail)
                .find("give either [domain] (a Cartesian grid) or [mesh]"),
            std::string::npos);
  EXPECT_NE(message(mesh + init + "[numerics]\nscheme = \"roe3\"\n" + tail).find("numerics.scheme"), std::string::npos);
  EXPECT_NE(message(mesh + "ordering = \"hilbert\"\n" + init + tail).find("mesh.ordering: unknown ordering 'hilbert'"),
            std::string::npos);
  EXPECT_NE(message("[domain]\nnx = 2\nny = 2\nx = [0, 1]\ny = [0, 1]\n[bathymetry]\nz = \"mesh\"\n" + init + tail)
                .find("needs a [mesh] section"),
            std::string::npos);
  EXPECT_NE(message(mesh + init + tail + "[output]\ngauges = [{ name = \"far\", x = 50.0, y = 1.0 }]\n")
                .find("gauge 'far' at (50, 1) is outside the domain"),
            std::string::npos);
  // [parallel] is refused, as the other grid-only keys: a mesh runs on one rank.
  EXPECT_EQ(message(mesh + init + tail + "[parallel]\nhalo_steps = 4\n"),
            "case.toml: parallel: the MPI process grid and halo ([parallel]) apply to Cartesian grids only; this case "
            "runs on a mesh ([mesh]), which runs on one rank");
  // A raster that does not cover the mesh.
  std::ofstream(dir_ / "small.asc") << "ncols 2\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 1\n1 2\n3 4\n";
  EXPECT_NE(message(mesh + "[bathymetry]\nz = { file = \"small.asc\" }\n" + init + tail).find("lies outside the raster"),
            std::string::npos);
  // A bad mesh file: the reader's message comes through with the key.
  std::ofstream(dir_ / "bad.msh") << "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 3 1 3\n";
  const std::string bad = message("[mesh]\nfile = \"bad.msh\"\n" + init + tail);
  EXPECT_NE(bad.find("mesh.file"), std::string::npos) << bad;
  EXPECT_NE(bad.find("bad.msh"), std::string::npos) << bad;
}

} // namespace
