// SPDX-License-Identifier: MIT
#pragma once
// From what a mesh file holds to the mesh the solver runs on.
#include <string>
#include <vector>

#include "shallows/io/gmsh.hpp"
#include "shallows/mesh/unstructured/mesh.hpp"

namespace shallows {

// Builds cells, edges and geometry. Clockwise cells are reoriented (node 0
// stays first); degenerate ones (zero area, repeated nodes, non-convex or
// self-intersecting quadrilaterals) are refused, as are edges shared by three
// or more cells and cells that overlap (two counter-clockwise cells running
// along their common edge in the same direction). The centroid is the area
// centroid. Edges are numbered as the cells meet them, by (left cell, slot);
// the left cell is the one of lower index. Boundary edges take the group of
// the physical line element on them, group 0 (wall) where there is none or
// its physical tag is 0; an edge in two different groups is refused. Line
// elements on no boundary edge (embedded curves) are ignored. Nodes are kept
// as in the file, used or not.
// Throws io::InputError naming `source` and the element tag (or the node
// tags of an edge) at fault.
// Pieces that are not connected to each other are allowed; count them with
// connected_components.
UnstructuredMesh build_mesh(const io::GmshMesh& file, const std::string& source);

// Number of pieces of the mesh connected through interior edges (a cell
// without edges, such as an inactive one, is a piece of its own).
index_t connected_components(const UnstructuredMesh& mesh);

// Takes cells whose bed is NaN out of the computation: their edges with an
// active cell become walls (group 0) of that cell (the active cell made the
// left one: nodes swapped and normal negated where it was the right one),
// edges between two inactive cells, and boundary edges of inactive cells, are
// dropped, and an inactive cell keeps no edges (all its cell_edges slots -1).
// Cells and the remaining edges keep their order (so edges are no longer
// sorted as renumber_cells leaves them). z: bed per cell; throws
// std::invalid_argument if its size is not the number of cells.
UnstructuredMesh deactivate_cells(const UnstructuredMesh& mesh, const std::vector<double>& z);

} // namespace shallows
