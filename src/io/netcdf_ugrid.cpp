// SPDX-License-Identifier: MIT
#include "netcdf_ugrid.hpp"

#if defined(SHALLOWS_HAVE_NETCDF)
#include <netcdf.h>

#include <vector>

namespace shallows::io::detail {

UgridMesh::UgridMesh(int ncid, const UnstructuredMesh& mesh, Check check)
    : ncid_(ncid), mesh_(mesh), check_(std::move(check)) {
  check_(nc_def_dim(ncid_, "nMesh_node", static_cast<std::size_t>(mesh_.nodes()), &dim_node_), "define nMesh_node");
  check_(nc_def_dim(ncid_, "nMesh_face", static_cast<std::size_t>(mesh_.cells()), &dim_face_), "define nMesh_face");
  check_(nc_def_dim(ncid_, "nMaxMesh_face_nodes", 4, &dim_face_nodes_), "define nMaxMesh_face_nodes");
  if (has_edges()) {
    check_(nc_def_dim(ncid_, "nMesh_edge", static_cast<std::size_t>(mesh_.edges()), &dim_edge_), "define nMesh_edge");
    check_(nc_def_dim(ncid_, "Two", 2, &dim_two_), "define Two");
  }
}

bool UgridMesh::has_edges() const {
  const auto e = static_cast<std::size_t>(mesh_.edges());
  return e > 0 && mesh_.edge_node0.size() == e && mesh_.edge_node1.size() == e;
}

void UgridMesh::text(int var, const char* name, const std::string& value) const {
  check_(nc_put_att_text(ncid_, var, name, value.size(), value.c_str()), name);
}

int UgridMesh::coordinate(const char* name, int dim, const char* long_name, const char* standard_name) const {
  int id = 0;
  check_(nc_def_var(ncid_, name, NC_DOUBLE, 1, &dim, &id), name);
  text(id, "long_name", long_name);
  text(id, "standard_name", standard_name);
  text(id, "units", "m");
  return id;
}

int UgridMesh::connectivity(const char* name, const int* dims, const char* role, const char* long_name) const {
  int id = 0;
  check_(nc_def_var(ncid_, name, NC_INT, 2, dims, &id), name);
  text(id, "cf_role", role);
  text(id, "long_name", long_name);
  const int fill_index = -1, start_index = 0;
  check_(nc_put_att_int(ncid_, id, "_FillValue", NC_INT, 1, &fill_index), name);
  check_(nc_put_att_int(ncid_, id, "start_index", NC_INT, 1, &start_index), name);
  return id;
}

void UgridMesh::tie(int var, bool measured) const {
  text(var, "mesh", "mesh");
  text(var, "location", "face");
  text(var, "coordinates", "mesh_face_x mesh_face_y");
  if (measured) text(var, "cell_measures", "area: mesh_face_area");
}

void UgridMesh::define() {
  const bool edges = has_edges();
  check_(nc_def_var(ncid_, "mesh", NC_INT, 0, nullptr, &var_mesh_), "define mesh");
  text(var_mesh_, "cf_role", "mesh_topology");
  text(var_mesh_, "long_name", "topology of the 2-D unstructured mesh");
  const int two = 2;
  check_(nc_put_att_int(ncid_, var_mesh_, "topology_dimension", NC_INT, 1, &two), "topology_dimension");
  text(var_mesh_, "node_coordinates", "mesh_node_x mesh_node_y");
  text(var_mesh_, "face_node_connectivity", "mesh_face_nodes");
  text(var_mesh_, "face_dimension", "nMesh_face");
  text(var_mesh_, "face_coordinates", "mesh_face_x mesh_face_y");
  if (edges) {
    text(var_mesh_, "edge_node_connectivity", "mesh_edge_nodes");
    text(var_mesh_, "edge_dimension", "nMesh_edge");
  }

  const char* px = "projection_x_coordinate";
  const char* py = "projection_y_coordinate";
  var_node_x_ = coordinate("mesh_node_x", dim_node_, "x coordinate of mesh node", px);
  var_node_y_ = coordinate("mesh_node_y", dim_node_, "y coordinate of mesh node", py);
  const int face_dims[2] = {dim_face_, dim_face_nodes_};
  var_face_nodes_ = connectivity("mesh_face_nodes", face_dims, "face_node_connectivity",
                                 "nodes of each face, counter-clockwise (fill: triangle)");
  var_face_x_ = coordinate("mesh_face_x", dim_face_, "x coordinate of face centroid", px);
  var_face_y_ = coordinate("mesh_face_y", dim_face_, "y coordinate of face centroid", py);
  check_(nc_def_var(ncid_, "mesh_face_area", NC_DOUBLE, 1, &dim_face_, &var_face_area_), "define mesh_face_area");
  text(var_face_area_, "long_name", "area of face");
  text(var_face_area_, "standard_name", "cell_area");
  text(var_face_area_, "units", "m2");
  tie(var_face_area_, false);
  // The element tag of each face in the mesh file: faces are in the run's
  // (renumbered) order, this maps them back. Exact in double up to 2^53.
  check_(nc_def_var(ncid_, "mesh_face_tag", NC_DOUBLE, 1, &dim_face_, &var_face_tag_), "define mesh_face_tag");
  text(var_face_tag_, "long_name", "element tag of the face in the mesh file");
  text(var_face_tag_, "mesh", "mesh");
  text(var_face_tag_, "location", "face");
  if (edges) {
    const int edge_dims[2] = {dim_edge_, dim_two_};
    var_edge_nodes_ = connectivity("mesh_edge_nodes", edge_dims, "edge_node_connectivity", "nodes of each edge");
  }
}

void UgridMesh::put() const {
  static_assert(sizeof(mesh_index) == sizeof(int));
  const UnstructuredMesh& m = mesh_;
  check_(nc_put_var_double(ncid_, var_node_x_, m.node_x.data()), "write mesh_node_x");
  check_(nc_put_var_double(ncid_, var_node_y_, m.node_y.data()), "write mesh_node_y");
  check_(nc_put_var_int(ncid_, var_face_nodes_, m.cell_nodes.data()), "write mesh_face_nodes");
  check_(nc_put_var_double(ncid_, var_face_x_, m.cell_x.data()), "write mesh_face_x");
  check_(nc_put_var_double(ncid_, var_face_y_, m.cell_y.data()), "write mesh_face_y");
  check_(nc_put_var_double(ncid_, var_face_area_, m.cell_area.data()), "write mesh_face_area");
  std::vector<double> tags(m.cell_area.size());
  for (std::size_t k = 0; k < tags.size(); ++k)  // a mesh built by hand, without tags: 1, 2, 3, ...
    tags[k] = m.cell_tag.size() == tags.size() ? static_cast<double>(m.cell_tag[k]) : static_cast<double>(k + 1);
  check_(nc_put_var_double(ncid_, var_face_tag_, tags.data()), "write mesh_face_tag");
  if (has_edges()) {
    std::vector<int> nodes(2 * m.edge_node0.size());
    for (std::size_t e = 0; e < m.edge_node0.size(); ++e) {
      nodes[2 * e] = m.edge_node0[e];
      nodes[2 * e + 1] = m.edge_node1[e];
    }
    check_(nc_put_var_int(ncid_, var_edge_nodes_, nodes.data()), "write mesh_edge_nodes");
  }
}

} // namespace shallows::io::detail

#endif
