// SPDX-License-Identifier: MIT
// Unstructured mesh construction: geometry, edges, boundary groups, errors,
// connected pieces, inactive cells, and the rectangle mesh generator.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/io/gmsh.hpp"
#include "shallows/mesh/unstructured/build.hpp"
#include "shallows/mesh/unstructured/generator.hpp"
#include "support/mesh_checks.hpp"

using shallows::boundary_code;
using shallows::boundary_group;
using shallows::build_mesh;
using shallows::connected_components;
using shallows::deactivate_cells;
using shallows::index_t;
using shallows::mesh_index;
using shallows::rectangle_mesh;
using shallows::RectangleCells;
using shallows::RectangleMeshSpec;
using shallows::UnstructuredMesh;
using shallows::io::GmshMesh;
using shallows::io::InputError;
using shallows::test::expect_consistent;

namespace {

// A hand-made file: nodes (tags 101, 102, ...), cells (tags 1, 2, ...), lines.
struct FileBuilder {
  GmshMesh f;
  std::int64_t node(double x, double y) {
    f.node_x.push_back(x);
    f.node_y.push_back(y);
    f.node_z.push_back(0.5 * x);
    f.node_tag.push_back(101 + static_cast<std::int64_t>(f.node_tag.size()));
    return static_cast<std::int64_t>(f.node_x.size()) - 1;
  }
  void cell(std::array<std::int64_t, 4> nodes, std::int64_t tag = 0) {
    f.cell_nodes.push_back(nodes);
    f.cell_tag.push_back(tag != 0 ? tag : static_cast<std::int64_t>(f.cell_tag.size()) + 1);
  }
  void line(std::int64_t a, std::int64_t b, int physical) {
    f.line_nodes.push_back({a, b});
    f.line_physical.push_back(physical);
  }
};

// The 2 x 1 rectangle [0, 2] x [0, 1]: nodes 0 1 2 along y = 0, 3 4 5 along y = 1.
FileBuilder two_by_one_nodes() {
  FileBuilder b;
  for (double y : {0.0, 1.0})
    for (double x : {0.0, 1.0, 2.0}) b.node(x, y);
  return b;
}

FileBuilder two_quads() {
  FileBuilder b = two_by_one_nodes();
  b.cell({0, 1, 4, 3});
  b.cell({1, 2, 5, 4});
  return b;
}

FileBuilder four_triangles() {
  FileBuilder b = two_by_one_nodes();
  b.cell({0, 1, 4, -1});
  b.cell({0, 4, 3, -1});
  b.cell({1, 2, 5, -1});
  b.cell({1, 5, 4, -1});
  return b;
}

index_t boundary_edges(const UnstructuredMesh& m) {
  index_t n = 0;
  for (index_t e = 0; e < m.edges(); ++e) n += m.is_boundary(e) ? 1 : 0;
  return n;
}

double total_area(const UnstructuredMesh& m) {
  double a = 0;
  for (double v : m.cell_area) a += v;
  return a;
}

// Euler's relation for a mesh of one piece without holes: V - E + F = 1.
void expect_euler(const UnstructuredMesh& m) { EXPECT_EQ(m.nodes() - m.edges() + m.cells(), 1); }

std::string error_of(const GmshMesh& f) {
  try {
    build_mesh(f, "test.msh");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// Boundary group of the edge whose midpoint is (x, y), -2 if no edge is there.
int group_at(const UnstructuredMesh& m, double x, double y) {
  for (std::size_t e = 0; e < m.edge_left.size(); ++e) {
    const auto a = static_cast<std::size_t>(m.edge_node0[e]), b = static_cast<std::size_t>(m.edge_node1[e]);
    const double mx = 0.5 * (m.node_x[a] + m.node_x[b]), my = 0.5 * (m.node_y[a] + m.node_y[b]);
    if (std::abs(mx - x) < 1e-12 && std::abs(my - y) < 1e-12)
      return m.edge_right[e] < 0 ? boundary_group(m.edge_right[e]) : -1;
  }
  return -2;
}

} // namespace

TEST(MeshBuild, TwoQuadsGeometryAndEdges) {
  const UnstructuredMesh m = build_mesh(two_quads().f, "two_quads.msh");
  expect_consistent(m);
  ASSERT_EQ(m.cells(), 2);
  EXPECT_EQ(m.nodes(), 6);
  EXPECT_EQ(m.edges(), 7);
  EXPECT_EQ(boundary_edges(m), 6);
  expect_euler(m);
  for (std::size_t c = 0; c < 2; ++c) {
    EXPECT_EQ(m.cell_area[c], 1.0);
    EXPECT_EQ(m.cell_x[c], 0.5 + static_cast<double>(c));
    EXPECT_EQ(m.cell_y[c], 0.5);
    EXPECT_EQ(m.cell_sides(static_cast<index_t>(c)), 4);
    EXPECT_EQ(m.cell_tag[c], static_cast<std::int64_t>(c) + 1);
  }
  EXPECT_EQ(total_area(m), 2.0);
  // The shared edge: left = the lower cell index, normal +x (out of cell 0).
  int interior = 0;
  for (std::size_t e = 0; e < 7; ++e) {
    if (m.edge_right[e] < 0) {
      EXPECT_EQ(m.edge_right[e], boundary_code(0));
      continue;
    }
    ++interior;
    EXPECT_EQ(m.edge_left[e], 0);
    EXPECT_EQ(m.edge_right[e], 1);
    EXPECT_EQ(m.edge_nx[e], 1.0);
    EXPECT_EQ(m.edge_ny[e], 0.0);
    EXPECT_EQ(m.edge_length[e], 1.0);
  }
  EXPECT_EQ(interior, 1);
  EXPECT_EQ(m.boundary_names, std::vector<std::string>{""});
  EXPECT_EQ(m.source, "two_quads.msh");
  EXPECT_EQ(m.node_z[2], 1.0);
  EXPECT_EQ(connected_components(m), 1);
}

TEST(MeshBuild, FourTrianglesGeometryAndEdges) {
  const UnstructuredMesh m = build_mesh(four_triangles().f, "tri.msh");
  expect_consistent(m);
  ASSERT_EQ(m.cells(), 4);
  EXPECT_EQ(m.edges(), 9);
  EXPECT_EQ(boundary_edges(m), 6);
  expect_euler(m);
  const std::array<std::array<double, 2>, 4> centroid{{{2.0 / 3, 1.0 / 3}, {1.0 / 3, 2.0 / 3},
                                                        {1 + 2.0 / 3, 1.0 / 3}, {1 + 1.0 / 3, 2.0 / 3}}};
  for (std::size_t c = 0; c < 4; ++c) {
    EXPECT_EQ(m.cell_area[c], 0.5);
    EXPECT_NEAR(m.cell_x[c], centroid[c][0], 1e-15);
    EXPECT_NEAR(m.cell_y[c], centroid[c][1], 1e-15);
    EXPECT_EQ(m.cell_sides(static_cast<index_t>(c)), 3);
    EXPECT_EQ(m.cell_edges[4 * c + 3], -1);
  }
  EXPECT_EQ(total_area(m), 2.0);
  // Every edge appears in the slots that join its two nodes.
  for (std::size_t c = 0; c < 4; ++c)
    for (std::size_t k = 0; k < 3; ++k) {
      const auto e = static_cast<std::size_t>(m.cell_edges[4 * c + k]);
      const mesh_index a = m.cell_nodes[4 * c + k], b = m.cell_nodes[4 * c + (k + 1) % 3];
      EXPECT_EQ(std::min(a, b), std::min(m.edge_node0[e], m.edge_node1[e]));
      EXPECT_EQ(std::max(a, b), std::max(m.edge_node0[e], m.edge_node1[e]));
    }
}

TEST(MeshBuild, ClockwiseCellsAreReoriented) {
  FileBuilder b = two_by_one_nodes();
  b.cell({0, 3, 4, 1});  // clockwise
  b.cell({1, 2, 5, 4});
  const UnstructuredMesh m = build_mesh(b.f, "cw.msh");
  expect_consistent(m);
  // Node 0 stays first, the others reversed.
  EXPECT_EQ((std::vector<mesh_index>(m.cell_nodes.begin(), m.cell_nodes.begin() + 4)),
            (std::vector<mesh_index>{0, 1, 4, 3}));
  EXPECT_EQ(m.cell_area[0], 1.0);
  EXPECT_EQ(m.cell_x[0], 0.5);
  EXPECT_EQ(m.cell_y[0], 0.5);
  EXPECT_EQ(m.edges(), 7);

  FileBuilder t = four_triangles();
  for (auto& c : t.f.cell_nodes) std::swap(c[1], c[2]);  // all clockwise
  const UnstructuredMesh mt = build_mesh(t.f, "cw.msh");
  expect_consistent(mt);
  EXPECT_EQ(mt.edges(), 9);
  EXPECT_EQ(total_area(mt), 2.0);
}

TEST(MeshBuild, QuadCentroidIsTheAreaCentroid) {
  // Trapezoid (0,0) (3,0) (2,1) (0,1): area 5/2, centroid (19/15, 7/15); node average (7/4, 1/2).
  FileBuilder b;
  b.node(0, 0);
  b.node(3, 0);
  b.node(2, 1);
  b.node(0, 1);
  b.cell({0, 1, 2, 3});
  const UnstructuredMesh m = build_mesh(b.f, "trapezoid.msh");
  expect_consistent(m);
  EXPECT_NEAR(m.cell_area[0], 2.5, 1e-15);
  EXPECT_NEAR(m.cell_x[0], 19.0 / 15, 1e-15);
  EXPECT_NEAR(m.cell_y[0], 7.0 / 15, 1e-15);
}

TEST(MeshBuild, FarFromTheOriginGeometryIsExact) {
  FileBuilder b;
  const double x0 = 6.5e5, y0 = 4.2e6;  // UTM-like coordinates
  for (double y : {0.0, 1.0})
    for (double x : {0.0, 1.0, 2.0}) b.node(x0 + x, y0 + y);
  b.cell({0, 1, 4, 3});
  b.cell({1, 2, 5, -1});
  b.cell({1, 5, 4, -1});
  const UnstructuredMesh m = build_mesh(b.f, "utm.msh");
  expect_consistent(m);
  EXPECT_EQ(m.cell_area[0], 1.0);
  EXPECT_EQ(m.cell_area[1], 0.5);
  EXPECT_EQ(m.cell_x[0], x0 + 0.5);
  expect_euler(m);
}

TEST(MeshBuild, DegenerateCellsNameTheElement) {
  FileBuilder b = two_quads();
  b.node(3, 0);
  b.cell({2, 6, 2, -1}, 42);  // repeated node
  EXPECT_NE(error_of(b.f).find("test.msh: element 42: degenerate cell (zero area)"), std::string::npos)
      << error_of(b.f);

  FileBuilder c = two_quads();
  const auto n = c.node(4, 0);
  c.cell({1, 2, n, -1}, 43);  // three nodes on y = 0
  EXPECT_NE(error_of(c.f).find("test.msh: element 43: degenerate cell (zero area)"), std::string::npos)
      << error_of(c.f);

  FileBuilder d = two_quads();
  const auto p = d.node(2, 0 + 1e-14);  // a node on top of node 2
  d.cell({2, p, 5, -1}, 44);
  EXPECT_NE(error_of(d.f).find("element 44: degenerate"), std::string::npos) << error_of(d.f);

  FileBuilder q;  // arrowhead: non-convex
  q.node(0, 0);
  q.node(2, 0);
  q.node(2, 2);
  q.node(1, 0.5);
  q.cell({0, 1, 2, 3}, 45);
  EXPECT_NE(error_of(q.f).find("test.msh: element 45: non-convex"), std::string::npos) << error_of(q.f);

  FileBuilder t;  // bow tie: self-intersecting
  t.node(0, 0);
  t.node(2, 2);
  t.node(2, 0);
  t.node(0, 1);
  t.cell({0, 1, 2, 3}, 46);
  EXPECT_NE(error_of(t.f).find("element 46"), std::string::npos) << error_of(t.f);

  FileBuilder o = two_quads();
  o.cell({0, 1, 99, -1}, 47);
  EXPECT_NE(error_of(o.f).find("element 47: node index out of range"), std::string::npos) << error_of(o.f);

  FileBuilder nan = two_quads();
  nan.f.node_x[5] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(error_of(nan.f).find("element 2: degenerate"), std::string::npos) << error_of(nan.f);
}

TEST(MeshBuild, EdgeOfThreeCellsIsRefused) {
  FileBuilder b;
  b.node(0, 0);
  b.node(1, 0);
  b.node(0.5, 1);
  b.node(0.5, -1);
  b.node(0.5, 2);
  b.cell({0, 1, 2, -1}, 7);
  b.cell({1, 0, 3, -1}, 8);
  b.cell({0, 1, 4, -1}, 9);
  const std::string msg = error_of(b.f);
  EXPECT_NE(msg.find("test.msh: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("nodes 101 and 102"), std::string::npos) << msg;
  EXPECT_NE(msg.find("3 cells"), std::string::npos) << msg;
  EXPECT_NE(msg.find("7, 8, 9"), std::string::npos) << msg;
}

TEST(MeshBuild, OverlappingCellsAreRefused) {
  // Two counter-clockwise triangles on the same side of edge 0-1: a folded mesh.
  FileBuilder b;
  b.node(0, 0);
  b.node(1, 0);
  b.node(0.5, 1);
  b.node(0.2, 2);
  b.cell({0, 1, 2, -1}, 3);
  b.cell({0, 1, 3, -1}, 4);
  const std::string msg = error_of(b.f);
  EXPECT_NE(msg.find("elements 3, 4 overlap"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nodes 101 and 102"), std::string::npos) << msg;
}

TEST(MeshBuild, TooFewOrMismatchedArraysAreRefused) {
  EXPECT_THROW(build_mesh(GmshMesh{}, "empty.msh"), InputError);
  FileBuilder b = two_quads();
  b.f.cell_tag.pop_back();
  EXPECT_THROW(build_mesh(b.f, "bad.msh"), InputError);
}

TEST(MeshBuild, BoundaryGroupsFromPhysicalLines) {
  FileBuilder b = two_quads();
  b.f.line_physical_names = {{5, "inflow"}, {3, "outflow"}, {8, ""}, {9, "gauge"}};
  b.line(3, 0, 5);  // west: inflow
  b.line(2, 5, 3);  // east: outflow
  b.line(0, 1, 7);  // south, left half: tag 7, no name
  b.line(1, 2, 8);  // south, right half: tag 8, empty name
  b.line(4, 3, 0);  // north, left half: a line without physical group -> wall
  b.line(1, 4, 9);  // interior line (embedded curve): ignored
  b.line(0, 5, 5);  // not an edge of any cell: ignored
  b.line(3, 0, 5);  // the same line twice: fine
  const UnstructuredMesh m = build_mesh(b.f, "groups.msh");
  expect_consistent(m);
  // Groups on boundary edges only, by name; "gauge" lies on no boundary edge.
  const std::vector<std::string> names{"", "7", "8", "inflow", "outflow"};
  EXPECT_EQ(m.boundary_names, names);
  EXPECT_EQ(m.find_boundary("inflow"), 3);
  EXPECT_EQ(m.find_boundary("gauge"), -1);
  EXPECT_EQ(group_at(m, 0.0, 0.5), 3);
  EXPECT_EQ(group_at(m, 2.0, 0.5), 4);
  EXPECT_EQ(group_at(m, 0.5, 0.0), 1);
  EXPECT_EQ(group_at(m, 1.5, 0.0), 2);
  EXPECT_EQ(group_at(m, 0.5, 1.0), 0);
  EXPECT_EQ(group_at(m, 1.5, 1.0), 0);
  EXPECT_EQ(group_at(m, 1.0, 0.5), -1);  // interior edge

  // One edge in two groups is ambiguous.
  b.line(5, 2, 9);
  const std::string msg = error_of(b.f);
  EXPECT_NE(msg.find("two physical groups"), std::string::npos) << msg;
  EXPECT_NE(msg.find("outflow"), std::string::npos) << msg;
}

TEST(MeshBuild, ConnectedComponents) {
  FileBuilder b;
  for (double x0 : {0.0, 5.0}) {
    const auto a = b.node(x0, 0), c = b.node(x0 + 1, 0), d = b.node(x0 + 1, 1), e = b.node(x0, 1);
    b.cell({a, c, d, e});
  }
  const UnstructuredMesh m = build_mesh(b.f, "two.msh");
  expect_consistent(m);
  EXPECT_EQ(connected_components(m), 2);
  EXPECT_EQ(m.edges(), 8);

  // Two squares touching at a corner only are two pieces.
  FileBuilder t;
  t.node(0, 0);
  t.node(1, 0);
  t.node(1, 1);
  t.node(0, 1);
  t.node(2, 1);
  t.node(2, 2);
  t.node(1, 2);
  t.cell({0, 1, 2, 3});
  t.cell({2, 4, 5, 6});
  EXPECT_EQ(connected_components(build_mesh(t.f, "corner.msh")), 2);

  RectangleMeshSpec s;
  s.nx = 7;
  s.ny = 5;
  s.shuffle = true;
  EXPECT_EQ(connected_components(build_mesh(rectangle_mesh(s), "gen")), 1);
}

namespace {

// 3 x 3 unit quadrilaterals on [0, 3]^2; the cell with centroid (x, y).
UnstructuredMesh three_by_three() {
  RectangleMeshSpec s;
  s.x1 = 3;
  s.y1 = 3;
  s.nx = 3;
  s.ny = 3;
  s.cells = RectangleCells::quadrilaterals;
  s.shuffle = true;
  return build_mesh(rectangle_mesh(s), "3x3");
}

std::size_t cell_at(const UnstructuredMesh& m, double x, double y) {
  for (std::size_t c = 0; c < m.cell_x.size(); ++c)
    if (std::abs(m.cell_x[c] - x) < 1e-12 && std::abs(m.cell_y[c] - y) < 1e-12) return c;
  ADD_FAILURE() << "no cell at " << x << ", " << y;
  return 0;
}

} // namespace

TEST(MeshBuild, DeactivateTheMiddleCell) {
  const UnstructuredMesh m = three_by_three();
  ASSERT_EQ(m.edges(), 24);
  const std::size_t mid = cell_at(m, 1.5, 1.5);
  std::vector<double> z(9, 1.0);
  z[mid] = std::numeric_limits<double>::quiet_NaN();
  const UnstructuredMesh d = deactivate_cells(m, z);
  expect_consistent(d);
  EXPECT_EQ(d.cells(), 9);
  EXPECT_EQ(d.edges(), 24);
  EXPECT_EQ(boundary_edges(d), 16);
  for (std::size_t k = 0; k < 4; ++k) EXPECT_EQ(d.cell_edges[4 * mid + k], -1);
  // The four new walls: group 0, left = the active neighbour, normal towards the middle.
  int walls = 0;
  for (std::size_t e = 0; e < d.edge_left.size(); ++e) {
    const auto a = static_cast<std::size_t>(d.edge_node0[e]), b = static_cast<std::size_t>(d.edge_node1[e]);
    const double mx = 0.5 * (d.node_x[a] + d.node_x[b]), my = 0.5 * (d.node_y[a] + d.node_y[b]);
    if (std::max(std::abs(mx - 1.5), std::abs(my - 1.5)) != 0.5) continue;
    ++walls;
    EXPECT_EQ(d.edge_right[e], boundary_code(0));
    EXPECT_NE(static_cast<std::size_t>(d.edge_left[e]), mid);
    EXPECT_GT(d.edge_nx[e] * (1.5 - mx) + d.edge_ny[e] * (1.5 - my), 0);
  }
  EXPECT_EQ(walls, 4);
  EXPECT_THROW(deactivate_cells(m, std::vector<double>(8, 0.0)), std::invalid_argument);
}

TEST(MeshBuild, DeactivateTwoNeighbours) {
  const UnstructuredMesh m = three_by_three();
  const std::size_t mid = cell_at(m, 1.5, 1.5), east = cell_at(m, 2.5, 1.5);
  std::vector<double> z(9, 0.0);
  z[mid] = z[east] = std::numeric_limits<double>::quiet_NaN();
  const UnstructuredMesh d = deactivate_cells(m, z);
  expect_consistent(d);
  // Dropped: the edge between the two, and the east side of the east cell.
  EXPECT_EQ(d.edges(), 22);
  EXPECT_EQ(boundary_edges(d), 16);
  EXPECT_EQ(connected_components(d), 3);  // the 7 active cells, and 2 cells without edges
  double wall_length = 0;
  for (std::size_t e = 0; e < d.edge_left.size(); ++e)
    if (d.edge_right[e] < 0) wall_length += d.edge_length[e];
  EXPECT_EQ(wall_length, 16.0);
}

TEST(MeshGenerator, CellAndNodeCounts) {
  RectangleMeshSpec s;
  s.nx = 4;
  s.ny = 3;
  for (RectangleCells kind : {RectangleCells::triangles, RectangleCells::quadrilaterals, RectangleCells::mixed}) {
    s.cells = kind;
    const GmshMesh f = rectangle_mesh(s);
    EXPECT_EQ(f.node_x.size(), 20u);
    EXPECT_EQ(f.line_nodes.size(), 14u);
    std::size_t quads = 0;
    for (const auto& c : f.cell_nodes) quads += c[3] >= 0 ? 1 : 0;
    // mixed: squares (i, j) with i / 2 + j / 2 even, that is i < 2 and j < 2, or i >= 2 and j == 2.
    const std::size_t expect_quads = kind == RectangleCells::triangles ? 0 : kind == RectangleCells::mixed ? 6 : 12;
    EXPECT_EQ(quads, expect_quads);
    EXPECT_EQ(f.cell_nodes.size(), expect_quads + 2 * (12 - expect_quads));
    const UnstructuredMesh m = build_mesh(f, "gen");
    expect_consistent(m);
    expect_euler(m);
    EXPECT_EQ(boundary_edges(m), 14);
  }
}

TEST(MeshGenerator, TrianglesAlternateTheirDiagonal) {
  RectangleMeshSpec s;
  s.nx = 2;
  s.ny = 1;
  s.x1 = 2;
  const GmshMesh f = rectangle_mesh(s);
  ASSERT_EQ(f.cell_nodes.size(), 4u);
  // Square (0, 0): diagonal SW-NE, nodes 0-4; square (1, 0): SE-NW, nodes 2-4.
  EXPECT_EQ(f.cell_nodes[0], (std::array<std::int64_t, 4>{0, 1, 4, -1}));
  EXPECT_EQ(f.cell_nodes[1], (std::array<std::int64_t, 4>{0, 4, 3, -1}));
  EXPECT_EQ(f.cell_nodes[2], (std::array<std::int64_t, 4>{1, 2, 4, -1}));
  EXPECT_EQ(f.cell_nodes[3], (std::array<std::int64_t, 4>{2, 5, 4, -1}));
  const UnstructuredMesh m = build_mesh(f, "gen");
  for (double a : m.cell_area) EXPECT_EQ(a, 0.5);
  EXPECT_EQ(m.edges(), 9);
}

TEST(MeshGenerator, PerturbedMeshIsValid) {
  for (RectangleCells kind : {RectangleCells::triangles, RectangleCells::quadrilaterals, RectangleCells::mixed})
    for (double p : {0.2, 0.3, 0.45}) {
      RectangleMeshSpec s;
      s.x0 = -2;
      s.x1 = 3;
      s.y0 = 10;
      s.y1 = 12;
      s.nx = 60;
      s.ny = 40;
      s.cells = kind;
      s.perturbation = p;
      s.shuffle = true;
      s.seed = 7;
      const GmshMesh f = rectangle_mesh(s);
      const double hx = 5.0 / 60, hy = 2.0 / 40;
      int moved = 0;
      for (std::size_t n = 0; n < f.node_x.size(); ++n) {
        const double x = f.node_x[n], y = f.node_y[n];
        const double fx = (x - s.x0) / hx, fy = (y - s.y0) / hy;
        const double ox = fx - std::round(fx), oy = fy - std::round(fy);
        const bool on_side = x == s.x0 || x == s.x1 || y == s.y0 || y == s.y1;
        if (on_side) {
          // Boundary nodes stay on the lattice.
          EXPECT_NEAR(ox, 0, 1e-9);
          EXPECT_NEAR(oy, 0, 1e-9);
        } else {
          EXPECT_GT(x, s.x0);
          EXPECT_LT(x, s.x1);
          EXPECT_GT(y, s.y0);
          EXPECT_LT(y, s.y1);
          EXPECT_LE(std::abs(ox), p + 1e-9);
          EXPECT_LE(std::abs(oy), p + 1e-9);
          moved += std::abs(ox) > 1e-9 ? 1 : 0;
        }
      }
      EXPECT_GT(moved, 59 * 39 * 9 / 10);
      // As written: counter-clockwise, convex, no cell reoriented.
      const UnstructuredMesh m = build_mesh(f, "gen");
      expect_consistent(m);
      for (std::size_t c = 0; c < f.cell_nodes.size(); ++c) {
        ASSERT_EQ(m.cell_nodes[4 * c + 1], f.cell_nodes[c][1]);
        EXPECT_GT(m.cell_area[c], 0.05 * 0.5 * hx * hy);
      }
      EXPECT_NEAR(total_area(m), 10.0, 1e-12);
      expect_euler(m);
      EXPECT_EQ(m.boundary_names, (std::vector<std::string>{"", "east", "north", "south", "west"}));
      // Each side is a group of its own, of the side's length.
      std::map<int, double> length;
      for (std::size_t e = 0; e < m.edge_left.size(); ++e)
        if (m.edge_right[e] < 0) length[boundary_group(m.edge_right[e])] += m.edge_length[e];
      EXPECT_EQ(length.count(0), 0u);
      EXPECT_NEAR(length[m.find_boundary("west")], 2.0, 1e-12);
      EXPECT_NEAR(length[m.find_boundary("east")], 2.0, 1e-12);
      EXPECT_NEAR(length[m.find_boundary("south")], 5.0, 1e-12);
      EXPECT_NEAR(length[m.find_boundary("north")], 5.0, 1e-12);
    }
}

TEST(MeshGenerator, QuadrilateralsWithoutPerturbationAreTheGrid) {
  RectangleMeshSpec s;
  s.x1 = 4;
  s.y1 = 1.5;
  s.nx = 8;
  s.ny = 3;
  s.cells = RectangleCells::quadrilaterals;
  const UnstructuredMesh m = build_mesh(rectangle_mesh(s), "gen");
  for (std::size_t c = 0; c < m.cell_area.size(); ++c) {
    EXPECT_EQ(m.cell_area[c], 0.25);
    EXPECT_EQ(m.cell_x[c], 0.25 + 0.5 * static_cast<double>(c % 8));
    EXPECT_EQ(m.cell_y[c], 0.25 + 0.5 * static_cast<double>(c / 8));
  }
  for (std::size_t e = 0; e < m.edge_left.size(); ++e) {
    EXPECT_EQ(std::abs(m.edge_nx[e]) + std::abs(m.edge_ny[e]), 1.0);
    EXPECT_EQ(m.edge_length[e], 0.5);
  }
}

TEST(MeshGenerator, DeterministicForASeed) {
  RectangleMeshSpec s;
  s.nx = 13;
  s.ny = 9;
  s.cells = RectangleCells::mixed;
  s.perturbation = 0.3;
  s.shuffle = true;
  s.seed = 12345;
  const GmshMesh a = rectangle_mesh(s), b = rectangle_mesh(s);
  EXPECT_EQ(a.node_x, b.node_x);
  EXPECT_EQ(a.node_y, b.node_y);
  EXPECT_EQ(a.cell_nodes, b.cell_nodes);
  EXPECT_EQ(a.line_nodes, b.line_nodes);
  s.seed = 12346;
  const GmshMesh c = rectangle_mesh(s);
  EXPECT_NE(a.node_x, c.node_x);
  // The same on every platform: the offsets come from a hash of the seed and the node.
  RectangleMeshSpec pinned;
  pinned.nx = pinned.ny = 10;
  pinned.x1 = pinned.y1 = 10;
  pinned.perturbation = 0.2;
  pinned.seed = 3;
  const GmshMesh p = rectangle_mesh(pinned);
  EXPECT_NEAR(p.node_x[12], 0.97036281398667312, 1e-15);
  EXPECT_NEAR(p.node_y[12], 0.92704879083757685, 1e-15);
  EXPECT_NE(a.cell_nodes, c.cell_nodes);
  // Shuffled, the mesh is the same one numbered otherwise: the same cells, by area.
  s.shuffle = false;
  s.seed = 12345;
  const GmshMesh plain = rectangle_mesh(s);
  EXPECT_NE(plain.cell_nodes, a.cell_nodes);
  std::vector<double> area_plain = build_mesh(plain, "gen").cell_area, area_shuffled = build_mesh(a, "gen").cell_area;
  std::sort(area_plain.begin(), area_plain.end());
  std::sort(area_shuffled.begin(), area_shuffled.end());
  EXPECT_EQ(area_plain, area_shuffled);
  std::vector<double> x_plain = plain.node_x, x_shuffled = a.node_x;
  std::sort(x_plain.begin(), x_plain.end());
  std::sort(x_shuffled.begin(), x_shuffled.end());
  EXPECT_EQ(x_plain, x_shuffled);
}

TEST(MeshGenerator, SameMeshWhateverTheThreadCount) {
  RectangleMeshSpec s;
  s.nx = 41;
  s.ny = 37;
  s.cells = RectangleCells::mixed;
  s.perturbation = 0.4;
  s.shuffle = true;
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const GmshMesh f1 = rectangle_mesh(s);
  const UnstructuredMesh m1 = build_mesh(f1, "gen");
  omp_set_num_threads(5);
  const GmshMesh f5 = rectangle_mesh(s);
  const UnstructuredMesh m5 = build_mesh(f5, "gen");
  omp_set_num_threads(threads);
  EXPECT_EQ(f1.node_x, f5.node_x);
  EXPECT_EQ(f1.node_y, f5.node_y);
  EXPECT_EQ(f1.cell_nodes, f5.cell_nodes);
  EXPECT_EQ(m1.cell_nodes, m5.cell_nodes);
  EXPECT_EQ(m1.cell_edges, m5.cell_edges);
  EXPECT_EQ(m1.edge_left, m5.edge_left);
  EXPECT_EQ(m1.edge_right, m5.edge_right);
  EXPECT_EQ(m1.edge_node0, m5.edge_node0);
  EXPECT_EQ(m1.edge_nx, m5.edge_nx);
}

TEST(MeshGenerator, BadSpecsAreRefused) {
  const auto refused = [](auto change) {
    RectangleMeshSpec s;
    change(s);
    EXPECT_THROW(rectangle_mesh(s), std::invalid_argument);
  };
  refused([](RectangleMeshSpec& s) { s.nx = 0; });
  refused([](RectangleMeshSpec& s) { s.ny = -1; });
  refused([](RectangleMeshSpec& s) { s.x1 = s.x0; });
  refused([](RectangleMeshSpec& s) { s.y1 = -1; });
  refused([](RectangleMeshSpec& s) { s.perturbation = -0.1; });
  refused([](RectangleMeshSpec& s) { s.perturbation = 0.5; });
  refused([](RectangleMeshSpec& s) { s.perturbation = std::numeric_limits<double>::quiet_NaN(); });
  refused([](RectangleMeshSpec& s) { s.x1 = std::numeric_limits<double>::infinity(); });
  refused([](RectangleMeshSpec& s) { s.nx = s.ny = 100000; });
  RectangleMeshSpec one;
  one.nx = one.ny = 1;
  one.perturbation = 0.4;  // no interior node
  const UnstructuredMesh m = build_mesh(rectangle_mesh(one), "gen");
  EXPECT_EQ(m.cells(), 2);
  EXPECT_EQ(m.edges(), 5);
}
