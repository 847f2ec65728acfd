// SPDX-License-Identifier: MIT
// Files written by Gmsh itself (tests/data/gmsh/, made from plate.geo by
// Gmsh 4.8): MSH 2.2 and 4.1, ASCII and binary, read to the same mesh, and
// that mesh built into cells and edges with the right geometry and boundary
// groups.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "shallows/io/gmsh.hpp"
#include "shallows/mesh/unstructured/build.hpp"

namespace {

using namespace shallows;

const std::string dir = std::string(SHALLOWS_SOURCE_DIR) + "/tests/data/gmsh/";

TEST(GmshInterop, FourEncodingsOfOneMeshReadTheSame) {
  const io::GmshMesh ref = io::read_gmsh(dir + "plate-41.msh");
  for (const char* name : {"plate-41-bin.msh", "plate-22.msh", "plate-22-bin.msh"}) {
    SCOPED_TRACE(name);
    const io::GmshMesh m = io::read_gmsh(dir + name);
    EXPECT_EQ(m.node_x, ref.node_x);
    EXPECT_EQ(m.node_y, ref.node_y);
    EXPECT_EQ(m.cell_nodes, ref.cell_nodes);
    EXPECT_EQ(m.line_nodes, ref.line_nodes);
    EXPECT_EQ(m.line_physical_names, ref.line_physical_names);
  }
}

TEST(GmshInterop, PlateWithAHoleBuildsWithItsGeometryAndGroups) {
  const UnstructuredMesh m = build_mesh(io::read_gmsh(dir + "plate-22-bin.msh"), "plate-22-bin.msh");
  int triangles = 0, quads = 0;
  double area = 0;
  for (index_t c = 0; c < m.cells(); ++c) {
    (m.cell_sides(c) == 3 ? triangles : quads)++;
    area += m.cell_area[static_cast<std::size_t>(c)];
  }
  EXPECT_GT(triangles, 0);
  EXPECT_GT(quads, 0);
  EXPECT_NEAR(area, 2.0 - 0.4 * 0.2, 1e-12);
  EXPECT_EQ(connected_components(m), 1);
  // Boundary length per group: the sides, the walls and the pier (the hole).
  std::map<std::string, double> length;
  for (index_t e = 0; e < m.edges(); ++e) {
    if (!m.is_boundary(e)) continue;
    length[m.boundary_names[static_cast<std::size_t>(boundary_group(m.edge_right[static_cast<std::size_t>(e)]))]] +=
        m.edge_length[static_cast<std::size_t>(e)];
  }
  EXPECT_NEAR(length["left"], 1.0, 1e-12);
  EXPECT_NEAR(length["right"], 1.0, 1e-12);
  EXPECT_NEAR(length["walls"], 4.0, 1e-12);
  EXPECT_NEAR(length["pier"], 1.2, 1e-12);
  EXPECT_EQ(length.count(""), 0u);  // every boundary edge is in a named group
}

} // namespace
