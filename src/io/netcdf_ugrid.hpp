// SPDX-License-Identifier: MIT
#pragma once
// The UGRID-1.0 topology of an unstructured mesh in a NetCDF file, written
// alike into output.nc and ensemble.nc: the dimensions nMesh_node, nMesh_face,
// nMaxMesh_face_nodes (and nMesh_edge, Two where the mesh has edges), the
// topology variable "mesh", node and face coordinates, face areas, the faces'
// element tags in the mesh file, and the connectivities.
#include <functional>
#include <string>

#include "shallows/mesh/unstructured/mesh.hpp"

namespace shallows::io::detail {

class UgridMesh {
 public:
  // Reports a NetCDF status that is not NC_NOERR (what: the step); must throw.
  using Check = std::function<void(int status, const char* what)>;

  // Defines the dimensions (the file in define mode).
  UgridMesh(int ncid, const UnstructuredMesh& mesh, Check check);

  int face_dim() const { return dim_face_; }

  // Defines the topology and its variables (define mode).
  void define();
  // The attributes that tie a field on the faces to the topology (and to the
  // faces' areas, where `measured`).
  void tie(int var, bool measured = true) const;
  // Writes the variables define() made (data mode).
  void put() const;

 private:
  bool has_edges() const;
  int coordinate(const char* name, int dim, const char* long_name, const char* standard_name) const;
  int connectivity(const char* name, const int* dims, const char* role, const char* long_name) const;
  void text(int var, const char* name, const std::string& value) const;

  int ncid_;
  const UnstructuredMesh& mesh_;
  Check check_;
  int dim_node_ = 0, dim_face_ = 0, dim_face_nodes_ = 0, dim_edge_ = 0, dim_two_ = 0;
  int var_mesh_ = 0, var_node_x_ = 0, var_node_y_ = 0, var_face_nodes_ = 0, var_face_x_ = 0, var_face_y_ = 0;
  int var_face_area_ = 0, var_face_tag_ = 0, var_edge_nodes_ = 0;
};

} // namespace shallows::io::detail
