// SPDX-License-Identifier: MIT
// Run outputs on an unstructured mesh: UGRID NetCDF read back through the C
// API, the .vtu frames and .pvd collection, gauges located by point in cell,
// PNG maps rasterised from the cells.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "shallows/io/output.hpp"
#include "support/output_files.hpp"

#if defined(SHALLOWS_HAVE_NETCDF)
#include <netcdf.h>
#endif
#if defined(SHALLOWS_HAVE_PNG)
#include <png.h>
#endif

namespace fs = std::filesystem;
using namespace shallows::test_support;
using shallows::Fields;
using shallows::Maxima;
using shallows::mesh_index;
using shallows::UnstructuredMesh;
using shallows::io::InputError;
using shallows::io::OutputSettings;
using shallows::io::OutputWriter;

namespace mesh_output_tests {

// Three cells, nodes counter-clockwise, offset from the origin (map coordinates):
//
//   y=20        5
//              / \          cell 2: triangle 3-2-5, inactive (no bed)
//   y=10  3 --- 2
//         |     | \         cell 0: triangle 1-4-2, dry
//         |  1  |  0 \      cell 1: quad 0-1-2-3, wet
//   y=0   0 --- 1 -- 4
//        x=0   x=20  x=30
//
// The upper right corner of the bounding box is in no cell.
constexpr double x_off = 1000, y_off = 2000;
constexpr std::size_t tri_dry = 0, quad = 1, tri_off = 2;
constexpr double h_dry = 1e-3;
constexpr double t0 = 0.0, t1 = 7.5;

std::shared_ptr<const UnstructuredMesh> make_mesh() {
  auto m = std::make_shared<UnstructuredMesh>();
  const double xy[6][2] = {{0, 0}, {20, 0}, {20, 10}, {0, 10}, {30, 0}, {10, 20}};
  for (const auto& p : xy) {
    m->node_x.push_back(x_off + p[0]);
    m->node_y.push_back(y_off + p[1]);
    m->node_z.push_back(0);
  }
  m->cell_nodes = {1, 4, 2, -1, 0, 1, 2, 3, 3, 2, 5, -1};
  m->cell_area = {50, 200, 100};
  m->cell_x = {x_off + 70.0 / 3, x_off + 10, x_off + 10};
  m->cell_y = {y_off + 10.0 / 3, y_off + 5, y_off + 40.0 / 3};
  m->cell_tag = {10, 11, 12};
  // Edges: node0 -> node1 with the left cell on its left; -1 = boundary group 0 (wall).
  const mesh_index edges[8][4] = {{0, 1, 1, -1}, {1, 2, 1, 0},  {2, 3, 1, 2},  {3, 0, 1, -1},
                                  {1, 4, 0, -1}, {4, 2, 0, -1}, {2, 5, 2, -1}, {5, 3, 2, -1}};
  for (const auto& e : edges) {
    m->edge_node0.push_back(e[0]);
    m->edge_node1.push_back(e[1]);
    m->edge_left.push_back(e[2]);
    m->edge_right.push_back(e[3]);
    const double dx = m->node_x[std::size_t(e[1])] - m->node_x[std::size_t(e[0])];
    const double dy = m->node_y[std::size_t(e[1])] - m->node_y[std::size_t(e[0])];
    const double len = std::hypot(dx, dy);
    m->edge_length.push_back(len);
    m->edge_nx.push_back(dy / len);
    m->edge_ny.push_back(-dx / len);
  }
  m->cell_edges = {4, 5, 1, -1, 0, 1, 2, 3, 2, 6, 7, -1};
  m->boundary_names = {""};
  m->source = "hand-made.msh";
  return m;
}

double bed(std::size_t c) { return c == tri_off ? std::nan("") : c == tri_dry ? 0.3 : 0.1; }
std::vector<double> make_bed() { return {bed(0), bed(1), bed(2)}; }

// Only the quad is wet: 1.5 m at t0, 2.5 m at t1.
double quad_depth(int frame) { return 1.5 + frame; }
constexpr double quad_u = 0.4, quad_v = -0.2;

Fields make_fields(int frame) {
  Fields f;
  f.h = {5e-4, quad_depth(frame), 1.0};
  f.hu = {1e-4, quad_depth(frame) * quad_u, 0.0};  // dry cell's discharge must be written as 0
  f.hv = {0.0, quad_depth(frame) * quad_v, 0.0};
  return f;
}

Maxima make_maxima() {
  Maxima m;
  m.max_h = {5e-4, quad_depth(1), 1.0};
  m.max_speed = {0.1, std::hypot(quad_u, quad_v), 0.0};
  m.arrival_time = {std::nan(""), 2.5, std::nan("")};
  return m;
}

class OutputMeshTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) / ("shallows_test_output_mesh_" + std::string(info->name()));
    fs::remove_all(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  OutputSettings settings(std::vector<std::string> formats) const {
    OutputSettings s;
    s.dir = dir_;
    s.formats = std::move(formats);
    s.gauges = {{"in_quad", x_off + 5, y_off + 5},
                {"on_edge", x_off + 20, y_off + 5},  // shared by cells 0 and 1: the lower index
                {"inactive", x_off + 10, y_off + 19}};
    return s;
  }

  void run(const OutputSettings& s) const {
    OutputWriter w(s, make_mesh(), make_bed(), h_dry);
    w.write(t0, make_fields(0));
    w.write(t1, make_fields(1));
    w.finish(make_maxima());
  }

  fs::path dir_;
};

// ---------------------------------------------------------------------------
// NetCDF (UGRID 1.0)

#if defined(SHALLOWS_HAVE_NETCDF)

int nc_int_att(int nc, int var, const char* name) {
  int v = -12345;
  EXPECT_EQ(nc_get_att_int(nc, var, name, &v), NC_NOERR) << name;
  return v;
}

std::size_t dim_len(int nc, const char* name) {
  int dim = -1;
  std::size_t len = 0;
  EXPECT_EQ(nc_inq_dimid(nc, name, &dim), NC_NOERR) << name;
  EXPECT_EQ(nc_inq_dimlen(nc, dim, &len), NC_NOERR) << name;
  return len;
}

int var_id(int nc, const char* name) {
  int id = -1;
  EXPECT_EQ(nc_inq_varid(nc, name, &id), NC_NOERR) << name;
  return id;
}

std::vector<std::string> var_dims(int nc, int var) {
  int ndims = 0, dims[NC_MAX_VAR_DIMS];
  nc_inq_varndims(nc, var, &ndims);
  nc_inq_vardimid(nc, var, dims);
  std::vector<std::string> names;
  for (int d = 0; d < ndims; ++d) {
    char name[NC_MAX_NAME + 1] = {};
    nc_inq_dimname(nc, dims[d], name);
    names.push_back(name);
  }
  return names;
}

std::vector<float> read_float(int nc, const char* name, std::size_t count) {
  std::vector<float> v(count);
  const int id = var_id(nc, name);
  nc_type type{};
  nc_inq_vartype(nc, id, &type);
  EXPECT_EQ(type, NC_FLOAT) << name;
  EXPECT_EQ(nc_get_var_float(nc, id, v.data()), NC_NOERR) << name;
  return v;
}

std::vector<double> read_double(int nc, const char* name, std::size_t count) {
  std::vector<double> v(count);
  EXPECT_EQ(nc_get_var_double(nc, var_id(nc, name), v.data()), NC_NOERR) << name;
  return v;
}

// A passive scalar on a mesh: its concentration per face and record (NaN
// where inactive, h c / h elsewhere, however shallow), and its mass, h c times
// each active face's area, summed.
TEST_F(OutputMeshTest, NetcdfCarriesTheScalarsPerFace) {
  OutputSettings s = settings({"netcdf"});
  s.scalars = {{"salt", "g kg-1"}};
  {
    OutputWriter w(s, make_mesh(), make_bed(), h_dry);
    for (int frame = 0; frame < 2; ++frame) {
      Fields f = make_fields(frame);
      f.hc = {{2.0 * f.h[0], 3.0 * f.h[1], 7.0}};
      w.write(frame == 0 ? t0 : t1, f);
    }
    w.finish(make_maxima());
  }
  int nc = -1;
  nc_ok(nc_open((dir_ / "output.nc").c_str(), NC_NOWRITE, &nc));
  const int salt = var_id(nc, "salt");
  EXPECT_EQ(var_dims(nc, salt), (std::vector<std::string>{"time", "nMesh_face"}));
  EXPECT_EQ(nc_text(nc, salt, "units"), "g kg-1");
  EXPECT_EQ(nc_text(nc, salt, "location"), "face");
  const std::vector<float> c = read_float(nc, "salt", 6);
  EXPECT_FLOAT_EQ(c[3 + tri_dry], 2.0f);  // a dry face keeps its concentration
  EXPECT_FLOAT_EQ(c[3 + quad], 3.0f);
  EXPECT_TRUE(std::isnan(c[3 + tri_off]) || c[3 + tri_off] > 1e30f);  // inactive: fill value
  const std::vector<double> mass = read_double(nc, "salt_mass", 2);
  EXPECT_DOUBLE_EQ(mass[1], 2.0 * 5e-4 * 50 + 3.0 * quad_depth(1) * 200);  // areas 50 and 200; the inactive face not
  nc_close(nc);
}

TEST_F(OutputMeshTest, NetcdfFollowsUgrid) {
  run(settings({"netcdf"}));
  ASSERT_TRUE(fs::exists(dir_ / "output.nc"));
  EXPECT_TRUE(part_files(dir_).empty());
  int nc = -1;
  nc_ok(nc_open((dir_ / "output.nc").c_str(), NC_NOWRITE, &nc));

  EXPECT_EQ(dim_len(nc, "time"), 2u);
  EXPECT_EQ(dim_len(nc, "nMesh_node"), 6u);
  EXPECT_EQ(dim_len(nc, "nMesh_face"), 3u);
  EXPECT_EQ(dim_len(nc, "nMaxMesh_face_nodes"), 4u);
  EXPECT_EQ(dim_len(nc, "nMesh_edge"), 8u);
  EXPECT_EQ(dim_len(nc, "Two"), 2u);
  EXPECT_EQ(nc_text(nc, NC_GLOBAL, "Conventions"), "CF-1.8 UGRID-1.0");
  EXPECT_EQ(nc_text(nc, NC_GLOBAL, "institution"), "shallows");
  EXPECT_NE(nc_text(nc, NC_GLOBAL, "comment").find("centroid"), std::string::npos);
  double dry_depth = 0;
  nc_ok(nc_get_att_double(nc, NC_GLOBAL, "dry_depth", &dry_depth));
  EXPECT_EQ(dry_depth, h_dry);
  EXPECT_EQ(nc_text(nc, NC_GLOBAL, "dx"), "<missing>");  // grid only

  // Mesh topology.
  const int mesh = var_id(nc, "mesh");
  EXPECT_EQ(nc_text(nc, mesh, "cf_role"), "mesh_topology");
  EXPECT_EQ(nc_int_att(nc, mesh, "topology_dimension"), 2);
  EXPECT_EQ(nc_text(nc, mesh, "node_coordinates"), "mesh_node_x mesh_node_y");
  EXPECT_EQ(nc_text(nc, mesh, "face_node_connectivity"), "mesh_face_nodes");
  EXPECT_EQ(nc_text(nc, mesh, "face_dimension"), "nMesh_face");
  EXPECT_EQ(nc_text(nc, mesh, "face_coordinates"), "mesh_face_x mesh_face_y");
  EXPECT_EQ(nc_text(nc, mesh, "edge_node_connectivity"), "mesh_edge_nodes");

  const int node_x = var_id(nc, "mesh_node_x");
  EXPECT_EQ(nc_text(nc, node_x, "standard_name"), "projection_x_coordinate");
  EXPECT_EQ(nc_text(nc, node_x, "units"), "m");
  EXPECT_EQ(nc_text(nc, var_id(nc, "mesh_node_y"), "standard_name"), "projection_y_coordinate");
  const std::vector<double> nx = read_double(nc, "mesh_node_x", 6), ny = read_double(nc, "mesh_node_y", 6);
  EXPECT_EQ(nx[4], x_off + 30);
  EXPECT_EQ(ny[5], y_off + 20);

  const int face_nodes = var_id(nc, "mesh_face_nodes");
  EXPECT_EQ(var_dims(nc, face_nodes), (std::vector<std::string>{"nMesh_face", "nMaxMesh_face_nodes"}));
  EXPECT_EQ(nc_text(nc, face_nodes, "cf_role"), "face_node_connectivity");
  EXPECT_EQ(nc_int_att(nc, face_nodes, "_FillValue"), -1);
  EXPECT_EQ(nc_int_att(nc, face_nodes, "start_index"), 0);
  int faces[12] = {};
  nc_ok(nc_get_var_int(nc, face_nodes, faces));
  const int expected_faces[12] = {1, 4, 2, -1, 0, 1, 2, 3, 3, 2, 5, -1};
  for (int k = 0; k < 12; ++k) EXPECT_EQ(faces[k], expected_faces[k]) << k;
  int edge_nodes[16] = {};
  nc_ok(nc_get_var_int(nc, var_id(nc, "mesh_edge_nodes"), edge_nodes));
  EXPECT_EQ(edge_nodes[2], 1);  // edge 1 joins nodes 1 and 2
  EXPECT_EQ(edge_nodes[3], 2);
  EXPECT_EQ(edge_nodes[15], 3);

  const std::vector<double> fx = read_double(nc, "mesh_face_x", 3), fy = read_double(nc, "mesh_face_y", 3);
  EXPECT_DOUBLE_EQ(fx[tri_dry], x_off + 70.0 / 3);
  EXPECT_DOUBLE_EQ(fy[tri_off], y_off + 40.0 / 3);
  EXPECT_EQ(read_double(nc, "mesh_face_area", 3)[quad], 200.0);
  EXPECT_EQ(read_double(nc, "mesh_face_tag", 3), (std::vector<double>{10, 11, 12}));
  const std::vector<double> time = read_double(nc, "time", 2);
  EXPECT_EQ(time[1], t1);

  // Fields on the faces.
  const int h_id = var_id(nc, "h");
  EXPECT_EQ(var_dims(nc, h_id), (std::vector<std::string>{"time", "nMesh_face"}));
  EXPECT_EQ(nc_text(nc, h_id, "mesh"), "mesh");
  EXPECT_EQ(nc_text(nc, h_id, "location"), "face");
  EXPECT_EQ(nc_text(nc, h_id, "units"), "m");
  EXPECT_EQ(nc_text(nc, h_id, "standard_name"), "flood_water_thickness");
  EXPECT_EQ(nc_text(nc, var_id(nc, "u"), "units"), "m s-1");
  EXPECT_EQ(nc_text(nc, var_id(nc, "eta"), "standard_name"), "water_surface_height_above_reference_datum");
  EXPECT_EQ(var_dims(nc, var_id(nc, "z")), (std::vector<std::string>{"nMesh_face"}));
  EXPECT_EQ(nc_text(nc, var_id(nc, "max_h"), "location"), "face");

  const std::vector<float> h = read_float(nc, "h", 6), hu = read_float(nc, "hu", 6), u = read_float(nc, "u", 6),
                           v = read_float(nc, "v", 6), eta = read_float(nc, "eta", 6), z = read_float(nc, "z", 3);
  EXPECT_FLOAT_EQ(h[quad], float(quad_depth(0)));
  EXPECT_FLOAT_EQ(h[3 + quad], float(quad_depth(1)));
  EXPECT_FLOAT_EQ(hu[3 + quad], float(quad_depth(1) * quad_u));
  EXPECT_FLOAT_EQ(u[quad], float(quad_u));
  EXPECT_FLOAT_EQ(v[3 + quad], float(quad_v));
  EXPECT_FLOAT_EQ(eta[3 + quad], float(quad_depth(1) + bed(quad)));
  EXPECT_EQ(h[tri_dry], 0.0f);  // dry
  EXPECT_EQ(hu[tri_dry], 0.0f);
  EXPECT_FLOAT_EQ(eta[3 + tri_dry], float(bed(tri_dry)));
  EXPECT_EQ(h[tri_off], NC_FILL_FLOAT);  // inactive
  EXPECT_EQ(eta[3 + tri_off], NC_FILL_FLOAT);
  EXPECT_FLOAT_EQ(z[quad], float(bed(quad)));
  EXPECT_EQ(z[tri_off], NC_FILL_FLOAT);

  const std::vector<float> max_h = read_float(nc, "max_h", 3), max_speed = read_float(nc, "max_speed", 3),
                           arrival = read_float(nc, "arrival_time", 3);
  EXPECT_FLOAT_EQ(max_h[quad], float(quad_depth(1)));
  EXPECT_EQ(max_h[tri_dry], 0.0f);
  EXPECT_EQ(max_speed[tri_dry], 0.0f);
  EXPECT_EQ(max_h[tri_off], NC_FILL_FLOAT);
  EXPECT_FLOAT_EQ(max_speed[quad], float(std::hypot(quad_u, quad_v)));
  EXPECT_FLOAT_EQ(arrival[quad], 2.5f);
  EXPECT_EQ(arrival[tri_dry], NC_FILL_FLOAT);

  nc_ok(nc_close(nc));
}

#endif

// ---------------------------------------------------------------------------
// VTK unstructured grid

// The bytes of the appended array whose DataArray is named `name` (raw, UInt64 header).
std::string vtu_array(const std::string& file, const std::string& name) {
  const auto tag = file.find("Name=\"" + name + "\"");
  if (tag == std::string::npos) return {};
  const auto offset = std::stoull(attribute(file.substr(tag), "offset"));
  const auto start = file.find('_', file.find("<AppendedData")) + 1 + offset;
  std::uint64_t bytes = 0;
  std::memcpy(&bytes, file.data() + start, sizeof bytes);
  return file.substr(start + 8, bytes);
}

template <class T>
std::vector<T> values(const std::string& bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

TEST_F(OutputMeshTest, VtuFramesAndCollection) {
  run(settings({"vtk"}));
  EXPECT_TRUE(part_files(dir_).empty());
  EXPECT_TRUE(fs::exists(dir_ / "vtk" / "frame_00000.vtu"));
  EXPECT_FALSE(fs::exists(dir_ / "vtk" / "frame_00000.vti"));

  const std::string vtu = slurp(dir_ / "vtk" / "frame_00001.vtu");
  ASSERT_FALSE(vtu.empty());
  EXPECT_EQ(vtu.rfind("<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"1.0\"", 0), 0u);
  EXPECT_EQ(attribute(vtu, "header_type"), "UInt64");
  EXPECT_EQ(attribute(vtu, "NumberOfPoints"), "6");
  EXPECT_EQ(attribute(vtu, "NumberOfCells"), "3");
  EXPECT_NE(vtu.find(">7.5</DataArray>"), std::string::npos);  // TimeValue
  EXPECT_NE(vtu.find("<CellData Scalars=\"h\" Vectors=\"velocity\">"), std::string::npos);

  const std::vector<double> points = values<double>(vtu_array(vtu, "Points"));
  ASSERT_EQ(points.size(), 18u);
  EXPECT_EQ(points[3 * 4], x_off + 30);
  EXPECT_EQ(points[3 * 5 + 1], y_off + 20);
  EXPECT_EQ(points[3 * 5 + 2], 0.0);
  EXPECT_EQ(values<std::int32_t>(vtu_array(vtu, "connectivity")),
            (std::vector<std::int32_t>{1, 4, 2, 0, 1, 2, 3, 3, 2, 5}));
  EXPECT_EQ(values<std::int64_t>(vtu_array(vtu, "offsets")), (std::vector<std::int64_t>{3, 7, 10}));
  EXPECT_EQ(values<std::uint8_t>(vtu_array(vtu, "types")), (std::vector<std::uint8_t>{5, 9, 5}));

  const std::vector<float> h = values<float>(vtu_array(vtu, "h"));
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[tri_dry], 0.0f);
  EXPECT_FLOAT_EQ(h[quad], float(quad_depth(1)));
  EXPECT_TRUE(std::isnan(h[tri_off]));
  const std::vector<float> hv = values<float>(vtu_array(vtu, "hv")), z = values<float>(vtu_array(vtu, "z"));
  ASSERT_EQ(hv.size(), 3u);
  EXPECT_FLOAT_EQ(hv[quad], float(quad_depth(1) * quad_v));
  ASSERT_EQ(z.size(), 3u);
  EXPECT_FLOAT_EQ(z[tri_dry], float(bed(tri_dry)));
  const std::vector<float> velocity = values<float>(vtu_array(vtu, "velocity"));
  ASSERT_EQ(velocity.size(), 9u);
  EXPECT_FLOAT_EQ(velocity[3 * quad], float(quad_u));
  EXPECT_FLOAT_EQ(velocity[3 * quad + 1], float(quad_v));
  for (const char* name : {"hu", "u", "v", "eta"}) EXPECT_EQ(vtu_array(vtu, name).size(), 12u) << name;

  const std::string maxima = slurp(dir_ / "vtk" / "maxima.vtu");
  const std::vector<float> arrival = values<float>(vtu_array(maxima, "arrival_time"));
  ASSERT_EQ(arrival.size(), 3u);
  EXPECT_FLOAT_EQ(arrival[quad], 2.5f);
  EXPECT_TRUE(std::isnan(arrival[tri_dry]));

  const std::string pvd = slurp(dir_ / "output.pvd");
  EXPECT_NE(pvd.find("timestep=\"0\" group=\"\" part=\"0\" file=\"vtk/frame_00000.vtu\""), std::string::npos);
  EXPECT_NE(pvd.find("timestep=\"7.5\" group=\"\" part=\"0\" file=\"vtk/frame_00001.vtu\""), std::string::npos);
}

// ---------------------------------------------------------------------------
// Gauges

TEST_F(OutputMeshTest, GaugesTakeTheCellHoldingThem) {
  run(settings({}));
  const std::vector<std::string> lines = split(slurp(dir_ / "gauges.csv"), '\n');
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "time,in_quad_h,in_quad_u,in_quad_v,in_quad_eta,on_edge_h,on_edge_u,on_edge_v,on_edge_eta,"
                      "inactive_h,inactive_u,inactive_v,inactive_eta");
  for (int frame = 0; frame < 2; ++frame) {
    const std::vector<std::string> cells = split(lines[std::size_t(frame) + 1], ',');
    ASSERT_EQ(cells.size(), 13u);
    const double expected[9] = {frame == 0 ? t0 : t1,
                                quad_depth(frame), quad_u, quad_v, quad_depth(frame) + bed(quad),
                                0.0, 0.0, 0.0, bed(tri_dry)};  // on the shared edge: cell 0, dry
    for (int k = 0; k < 9; ++k)
      EXPECT_NEAR(std::strtod(cells[std::size_t(k)].c_str(), nullptr), expected[k], 1e-9) << "column " << k;
    for (int k = 9; k < 13; ++k) EXPECT_EQ(cells[std::size_t(k)], "nan") << "column " << k;
  }
}

TEST_F(OutputMeshTest, GaugeInNoCellIsNamed) {
  OutputSettings s = settings({"vtk"});
  s.gauges.push_back({"upper_right", x_off + 25, y_off + 15});  // inside the bounding box, in no cell
  try {
    OutputWriter w(s, make_mesh(), make_bed(), h_dry);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gauge \"upper_right\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("outside the mesh"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_));  // failed before making anything
}

TEST_F(OutputMeshTest, BadMeshAndSizesAreRejected) {
  EXPECT_THROW(OutputWriter(settings({}), std::shared_ptr<const UnstructuredMesh>(), make_bed(), h_dry),
               std::invalid_argument);
  EXPECT_THROW(OutputWriter(settings({}), make_mesh(), std::vector<double>(4), h_dry), std::invalid_argument);
  auto broken = std::make_shared<UnstructuredMesh>(*make_mesh());
  broken->cell_nodes[5] = 6;  // no node 6
  EXPECT_THROW(OutputWriter(settings({}), broken, make_bed(), h_dry), std::invalid_argument);
  OutputWriter w(settings({}), make_mesh(), make_bed(), h_dry);
  Fields f = make_fields(0);
  f.h.push_back(1);
  EXPECT_THROW(w.write(t0, f), std::invalid_argument);
}

// ---------------------------------------------------------------------------
// PNG

#if defined(SHALLOWS_HAVE_PNG)

struct Image {
  std::uint32_t width = 0, height = 0;
  std::vector<std::uint8_t> rgb;

  const std::uint8_t* at(int x, int y) const { return &rgb[(std::size_t(y) * width + std::size_t(x)) * 3]; }
};

Image read_png(const fs::path& p) {
  const std::string s = slurp(p);
  EXPECT_GE(s.size(), 8u) << p;
  EXPECT_EQ(s.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << p;
  Image img;
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, s.data(), s.size())) {
    ADD_FAILURE() << p << ": " << image.message;
    return img;
  }
  image.format = PNG_FORMAT_RGB;
  img.width = image.width;
  img.height = image.height;
  img.rgb.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, img.rgb.data(), 0, nullptr)) ADD_FAILURE() << p << ": " << image.message;
  return img;
}

TEST_F(OutputMeshTest, PngMapsColourTheCells) {
  run(settings({"png"}));
  EXPECT_TRUE(part_files(dir_).empty());
  // docs/outputs.md: the 30 m x 20 m bounding box gives an 800 x round(800 * 20 / 30) = 533 map,
  // placed at (12, 40) in an image 184 px wider and 52 px taller.
  const Image img = read_png(dir_ / "png" / "depth_00000.png");
  ASSERT_EQ(img.width, 800u + 184u);
  ASSERT_EQ(img.height, 533u + 52u);
  auto pixel = [&](double x, double y) {  // map coordinates relative to the bounding box
    return img.at(12 + int(x / 30 * 800), 40 + int((20 - y) / 20 * 533));
  };
  auto rgb = [](const std::uint8_t* p) { return std::vector<int>{p[0], p[1], p[2]}; };

  // The quad holds the frame's largest depth: the darkest colour of the ramp (top of the colour bar).
  EXPECT_EQ(rgb(pixel(10, 5)), (std::vector<int>{8, 48, 107}));
  EXPECT_EQ(rgb(pixel(2, 1)), (std::vector<int>{8, 48, 107}));
  // The dry triangle: hillshade grey.
  const std::uint8_t* dry = pixel(23, 3);
  EXPECT_EQ(dry[0], dry[1]);
  EXPECT_EQ(dry[1], dry[2]);
  EXPECT_GT(dry[0], 40);
  EXPECT_LT(dry[0], 240);
  // The inactive triangle and the part of the bounding box in no cell: white.
  EXPECT_EQ(rgb(pixel(10, 15)), (std::vector<int>{255, 255, 255}));
  EXPECT_EQ(rgb(pixel(27, 17)), (std::vector<int>{255, 255, 255}));
  EXPECT_EQ(rgb(pixel(1, 19)), (std::vector<int>{255, 255, 255}));

  EXPECT_TRUE(fs::exists(dir_ / "png" / "depth_00001.png"));
  const Image max = read_png(dir_ / "png" / "max_depth.png");
  EXPECT_EQ(max.width, img.width);
}

#endif

}  // namespace
