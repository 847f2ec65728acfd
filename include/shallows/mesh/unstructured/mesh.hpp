// SPDX-License-Identifier: MIT
#pragma once
// An unstructured mesh of triangles and quadrilaterals, with the geometry the
// finite-volume scheme needs precomputed once (seed 001 §2): cell areas and
// centroids, edges with their two cells (or one cell and a boundary group),
// unit normals and lengths, and each cell's edges. Host data in double; the
// executors copy what their loops read, in their precision.
#include <cstdint>
#include <string>
#include <vector>

#include "shallows/core/config.hpp"

namespace shallows {

// Index of a node, cell or edge. 32 bits inside kernels: build_mesh refuses
// meshes with 2^31 or more cells, edges or nodes.
using mesh_index = std::int32_t;

// The right side of a boundary edge holds the code of its boundary group.
SHALLOWS_HD constexpr mesh_index boundary_code(int group) { return -1 - group; }
SHALLOWS_HD constexpr int boundary_group(mesh_index right) { return -1 - right; }

struct UnstructuredMesh {
  // Nodes (m). node_z: elevation the mesh file gives each node (0 if none).
  std::vector<double> node_x, node_y, node_z;

  // Cells, 4 slots each: nodes counter-clockwise, -1 in the last slot of a triangle.
  std::vector<mesh_index> cell_nodes;
  std::vector<double> cell_area;       // m^2, > 0
  std::vector<double> cell_x, cell_y;  // centroid (m)
  std::vector<std::int64_t> cell_tag;  // element tag in the mesh file (messages, mapping back)
  // The cell's place among the mesh file's elements (0-based), which renumbering keeps: the order in
  // which Python takes and gives fields per cell. Empty: the cells are in the file's order.
  std::vector<mesh_index> cell_file_index;

  // Edges: edge_left >= 0 a cell; edge_right >= 0 a cell, or boundary_code(group) < 0.
  // The unit normal points out of the left cell.
  std::vector<mesh_index> edge_left, edge_right;
  std::vector<mesh_index> edge_node0, edge_node1;  // end points; left cell on the left of node0 -> node1
  std::vector<double> edge_nx, edge_ny, edge_length;

  // Edges of each cell, 4 slots: slot k joins the cell's nodes k and k+1; -1 pads a triangle
  // (and marks an inactive cell, see deactivate_cells).
  std::vector<mesh_index> cell_edges;

  // Boundary groups: [0] is "" (edges in no physical line group: walls), then the
  // physical line groups of the mesh file that hold boundary edges, sorted by name
  // (a group without a name is named by its tag, e.g. "7").
  std::vector<std::string> boundary_names;

  std::string source;  // mesh file, for messages

  index_t nodes() const { return static_cast<index_t>(node_x.size()); }
  index_t cells() const { return static_cast<index_t>(cell_area.size()); }
  index_t edges() const { return static_cast<index_t>(edge_left.size()); }
  int cell_sides(index_t c) const { return cell_nodes[static_cast<std::size_t>(4 * c + 3)] < 0 ? 3 : 4; }
  // The length of a cell's edges (m): 0 for an inactive cell (deactivate_cells).
  double cell_perimeter(index_t c) const {
    double perimeter = 0;
    for (int k = 0; k < 4; ++k) {
      const mesh_index e = cell_edges[static_cast<std::size_t>(4 * c + k)];
      if (e >= 0) perimeter += edge_length[static_cast<std::size_t>(e)];
    }
    return perimeter;
  }
  bool is_boundary(index_t e) const { return edge_right[static_cast<std::size_t>(e)] < 0; }
  // Appends interior edge e of `from` as its right cell sees it, a wall (group 0): that cell on the left,
  // the nodes and the normal reversed. The second side of a cut edge; an edge to an inactive cell.
  void push_reversed_wall(const UnstructuredMesh& from, std::size_t e) {
    const mesh_index cell = from.edge_right[e], node0 = from.edge_node1[e], node1 = from.edge_node0[e];
    const double nx = -from.edge_nx[e], ny = -from.edge_ny[e], length = from.edge_length[e];
    edge_left.push_back(cell);
    edge_right.push_back(boundary_code(0));
    edge_node0.push_back(node0);
    edge_node1.push_back(node1);
    edge_nx.push_back(nx);
    edge_ny.push_back(ny);
    edge_length.push_back(length);
  }
  // Index of a boundary group by name, -1 if the mesh has none of that name.
  int find_boundary(const std::string& name) const {
    for (std::size_t g = 1; g < boundary_names.size(); ++g)
      if (boundary_names[g] == name) return static_cast<int>(g);
    return -1;
  }
};

} // namespace shallows
