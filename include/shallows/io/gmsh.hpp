// SPDX-License-Identifier: MIT
#pragma once
// Gmsh MSH files (format 2.2 and 4.1, ASCII and binary): what a file holds,
// read as it is. Turning it into a mesh the solver runs on (orientation,
// edges, checks) is build_mesh (mesh/unstructured/build.hpp).
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace shallows::io {

struct GmshMesh {
  // Nodes in file order; node_tag: the tag the file gives each node.
  std::vector<double> node_x, node_y, node_z;
  std::vector<std::int64_t> node_tag;
  // 2D cells (element types 2: triangle, 3: quadrilateral) in file order:
  // indices into node_x, [3] = -1 for a triangle; orientation as in the file.
  std::vector<std::array<std::int64_t, 4>> cell_nodes;
  std::vector<std::int64_t> cell_tag;  // element tag in the file
  // Line elements (type 1): the boundary segments the file names.
  std::vector<std::array<std::int64_t, 2>> line_nodes;  // indices into node_x
  // Physical tag, 0 if none. 2.2: the first element tag; 4.1: the first
  // physical tag of the line's curve entity.
  std::vector<int> line_physical;
  // Physical groups of dimension 1 (lines): tag -> name ("" if unnamed).
  // Holds the named ones of $PhysicalNames and every tag in line_physical.
  std::map<int, std::string> line_physical_names;
};

// Reads a .msh file (2.2 or 4.1, ASCII or binary of either byte order).
// Throws InputError ("file:line: ..." for ASCII, "file (byte N): ..." for
// binary), naming the element at fault where there is one: missing or
// unreadable file, not MSH, unknown version, truncated file, malformed
// number, element naming a missing node, unsupported element type (points
// are skipped; higher-order and 3D elements are refused), no 2D elements.
// Sections other than $MeshFormat, $PhysicalNames, $Entities, $Nodes and
// $Elements are skipped.
GmshMesh read_gmsh(const std::filesystem::path& file);

// Writes MSH 4.1 (ASCII with 17 significant digits, or binary), one curve
// entity per physical line group and one surface holding the cells, so that
// read_gmsh (and Gmsh) read back the same nodes, cells and lines bit for bit.
// Empty node_tag / cell_tag: tags 1, 2, 3, ...; empty node_z: z = 0. Written
// to "<file>.part", then renamed. Throws std::invalid_argument for an
// inconsistent mesh, std::runtime_error if the file cannot be written.
void write_gmsh(const std::filesystem::path& file, const GmshMesh& mesh, bool binary = false);

} // namespace shallows::io
