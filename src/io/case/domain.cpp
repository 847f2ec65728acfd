// SPDX-License-Identifier: MIT
// Where a case runs: [mesh], or the grid of [domain] or of the bathymetry
// raster; and [bathymetry] as given.
#include <cmath>

#include "reader.hpp"
#include "shallows/io/gmsh.hpp"
#include "shallows/mesh/unstructured/build.hpp"
#include "shallows/mesh/unstructured/ordering.hpp"

namespace shallows::io::case_reader {
namespace {

// [domain]: nx by ny cells over [x0, x1] x [y0, y1].
Grid read_grid(const Reader& rd, const toml::table& d) {
  rd.check_keys(d, "domain", find_section("domain")->keys);
  Grid g;
  const auto count = [&](std::string_view key) {
    const auto v = rd.integer(d, "domain", key);
    if (!v) rd.fail_at(dotted("domain", key), "missing (number of cells, an integer > 0)");
    if (*v <= 0) rd.fail_at(dotted("domain", key), "must be > 0, found " + std::to_string(*v));
    if (*v > (std::int64_t(1) << 24)) rd.fail_at(dotted("domain", key), "too large: " + std::to_string(*v));
    return static_cast<index_t>(*v);
  };
  const auto range = [&](std::string_view key) {
    const std::string full = dotted("domain", key);
    const toml::node* n = d.get(key);
    if (!n) rd.fail_at(full, "missing ([min, max] in metres)");
    const toml::array* a = n->as_array();
    if (!a || a->size() != 2) rd.fail_type(full, "an array [min, max] of two numbers", *n);
    const double lo = rd.number(*a->get(0), full + "[0]");
    const double hi = rd.number(*a->get(1), full + "[1]");
    if (!(hi > lo)) rd.fail_at(full, "max must be greater than min, found [" + num(lo) + ", " + num(hi) + "]");
    return std::pair{lo, hi};
  };
  g.nx = count("nx");
  g.ny = count("ny");
  if (g.nx * g.ny > (index_t(1) << 32)) rd.fail_at("domain", "too many cells (nx * ny > 2^32)");
  const auto [x0, x1] = range("x");
  const auto [y0, y1] = range("y");
  g.x0 = x0;
  g.y0 = y0;
  g.dx = (x1 - x0) / static_cast<double>(g.nx);
  g.dy = (y1 - y0) / static_cast<double>(g.ny);
  return g;
}

// [mesh]: the mesh file read, built and renumbered.
std::shared_ptr<UnstructuredMesh> read_mesh(const Reader& rd, const toml::table& m, const fs::path& base_dir,
                                            std::vector<std::string>& notes) {
  rd.check_keys(m, "mesh", find_section("mesh")->keys);
  const auto file = rd.string(m, "mesh", "file");
  if (!file) rd.fail_at("mesh.file", "missing (a Gmsh .msh file, format 2.2 or 4.1)");
  if (file->empty()) rd.fail_at("mesh.file", "empty file name");
  const fs::path path = fs::path(*file).is_absolute() ? fs::path(*file) : base_dir / *file;
  CellOrdering ordering = CellOrdering::rcm;
  if (auto o = rd.string(m, "mesh", "ordering")) {
    static const Keys valid{"rcm", "morton", "file", "random"};
    if (*o == "rcm") ordering = CellOrdering::rcm;
    else if (*o == "morton") ordering = CellOrdering::morton;
    else if (*o == "file") ordering = CellOrdering::file;
    else if (*o == "random") ordering = CellOrdering::random;
    else rd.fail_at("mesh.ordering", "unknown ordering '" + clip(*o) + "' (valid: " + join(valid) + ")");
  }
  std::uint64_t seed = 1;
  if (auto v = rd.integer(m, "mesh", "seed")) {
    if (*v < 0) rd.fail_at("mesh.seed", "must be >= 0, found " + std::to_string(*v));
    seed = static_cast<std::uint64_t>(*v);
  }
  UnstructuredMesh mesh;
  try {
    mesh = build_mesh(read_gmsh(path), path.string());
  } catch (const InputError& e) {
    rd.fail_at("mesh.file", e.what());
  }
  const index_t pieces = connected_components(mesh);
  if (pieces > 1)
    notes.push_back(path.string() + ": the mesh has " + std::to_string(pieces) +
                    " pieces not connected to each other (each runs on its own)");
  return std::make_shared<UnstructuredMesh>(apply_ordering(mesh, ordering, seed));
}

} // namespace

Domain read_domain(const Reader& rd, const toml::table& root, const fs::path& base_dir, RasterReference& rasters,
                   Problem& p, std::vector<std::string>& notes) {
  Domain d;
  const toml::table* mesh_table = rd.table(root, "", "mesh");
  const toml::table* domain_table = rd.table(root, "", "domain");
  if (mesh_table && domain_table)
    rd.fail("mesh", "give either [domain] (a Cartesian grid) or [mesh] (an unstructured mesh), not both");
  if (mesh_table) d.mesh = read_mesh(rd, *mesh_table, base_dir, notes);

  if (const toml::table* bathy = rd.table(root, "", "bathymetry")) {
    rd.check_keys(*bathy, "bathymetry", find_section("bathymetry")->keys);
    d.z = field_spec(rd, *bathy, "bathymetry", "z", base_dir);
  }
  // z = "mesh": the node elevations of the mesh file.
  d.z_from_mesh = d.z && d.z->kind == FieldSpec::Kind::expression && trim(d.z->expression) == "mesh";
  if (d.z_from_mesh && !d.mesh)
    rd.fail_at("bathymetry.z", "\"mesh\" (node elevations of the mesh file) needs a [mesh] section");
  if (d.z && d.z->kind == FieldSpec::Kind::raster) d.z_raster = read_field_raster(rd, *d.z, rasters);
  if (d.mesh) return d;

  if (domain_table) {
    p.grid = read_grid(rd, *domain_table);
  } else if (d.z_raster) {
    p.grid = d.z_raster->grid();
    d.grid_from_raster = true;
  } else {
    rd.fail("domain", "missing section [domain] (nx, ny, x, y) or [mesh] (file); [domain] may be left out only "
                      "when bathymetry.z = { file = \"...\" } gives the grid");
  }
  // Coordinates far beyond any map (the Earth is 4e7 m round) lose the cell
  // size to rounding or overflow to infinity: refused, naming their source.
  const Grid& g = p.grid;
  constexpr double kFar = 1e12;  // m
  for (const double v : {g.x0, g.y0, g.x1(), g.y1(), g.dx, g.dy}) {
    if (std::isfinite(v) && std::abs(v) <= kFar) continue;
    const std::string where = domain_table ? std::string("domain") : std::string("bathymetry.z");
    rd.fail_at(where, "the grid spans x = [" + num(g.x0) + ", " + num(g.x1()) + "], y = [" + num(g.y0) + ", " +
                          num(g.y1()) + "] m with cells of " + num(g.dx) + " x " + num(g.dy) +
                          " m: coordinates and cell sizes must stay within +-1e12 m");
  }
  return d;
}

} // namespace shallows::io::case_reader
