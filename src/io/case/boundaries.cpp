// SPDX-License-Identifier: MIT
// [boundary]: the conditions on a grid's sides or a mesh's physical line
// groups, and [[boundary.segment]] stretches of a grid's sides.
#include <algorithm>
#include <cmath>

#include "reader.hpp"
#include "shallows/mesh/unstructured/build.hpp"

namespace shallows::io::case_reader {
namespace {

// series: where the side's or group's discharge or eta goes when it is a CSV
// time series; the condition's value is then the series' first.
BoundaryCondition<double> read_boundary(const Reader& rd, const toml::table& b, std::string_view side,
                                        const fs::path& base_dir, TimeSeries* series) {
  BoundaryCondition<double> bc;
  const std::string key = dotted("boundary", side);
  const toml::node* n = b.get(side);
  if (!n) return bc;
  const auto kind_of = [&](const std::string& name, const std::string& at) {
    if (name == "wall") return BoundaryKind::wall;
    if (name == "open") return BoundaryKind::open;
    if (name == "inflow") return BoundaryKind::inflow;
    if (name == "level") return BoundaryKind::level;
    std::string msg = "unknown boundary type '" + clip(name) + "' (valid: wall, open, inflow, level)";
    if (auto best = closest(name, {"wall", "open", "inflow", "level"}))
      msg = "unknown boundary type '" + clip(name) + "' (did you mean '" + std::string(*best) +
            "'? valid: wall, open, inflow, level)";
    rd.fail_at(at, msg);
  };
  if (n->is_string()) {
    bc.kind = kind_of(*n->value<std::string>(), key);
    if (bc.kind == BoundaryKind::inflow)
      rd.fail_at(key, "an inflow boundary needs its discharge: { type = \"inflow\", discharge = q }");
    if (bc.kind == BoundaryKind::level)
      rd.fail_at(key, "a level boundary needs its surface elevation: { type = \"level\", eta = v }");
    return bc;
  }
  if (!n->is_table())
    rd.fail_type(key, "\"wall\", \"open\" or a table { type = ..., ... }", *n);
  const toml::table& t = *n->as_table();
  rd.check_keys(t, key, {"type", "discharge", "eta", "concentration"});
  const auto type = rd.string(t, key, "type");
  if (!type) rd.fail_at(key, "missing 'type' (wall, open, inflow or level)");
  bc.kind = kind_of(*type, key + ".type");
  // The values themselves are read by read_boundaries, once the scalars are known (read_concentrations).
  if (t.contains("concentration")) {
    if (bc.kind == BoundaryKind::wall || bc.kind == BoundaryKind::open)
      rd.fail_at(key + ".concentration", "only used by types \"inflow\" and \"level\" (water that enters through "
                                         "the side), not \"" + *type + "\" (an open side lets out the water inside)");
  }
  // A CSV file instead of a number: the value over time.
  const auto value_of = [&](const char* name, const std::string& what) -> std::optional<double> {
    const toml::node* v = t.get(name);
    if (!v || !v->is_string()) return rd.number(t, key, name);
    *series = series_file(rd, key + "." + name, *v, base_dir, 1.0, what, -1.0, std::nullopt);
    return series->v.front();
  };
  const bool is_inflow = bc.kind == BoundaryKind::inflow, is_level = bc.kind == BoundaryKind::level;
  const auto discharge = is_inflow ? value_of("discharge", "discharge (m^2/s)") : rd.number(t, key, "discharge");
  const auto eta = is_level ? value_of("eta", "surface elevation (m)") : rd.number(t, key, "eta");
  if (bc.kind == BoundaryKind::inflow) {
    if (!discharge) rd.fail_at(key, "type \"inflow\" needs 'discharge' (m^2/s, into the domain)");
    bc.value = *discharge;
  } else if (discharge) {
    rd.fail_at(key + ".discharge", "only used by type \"inflow\", not \"" + *type + "\"");
  }
  if (bc.kind == BoundaryKind::level) {
    if (!eta) rd.fail_at(key, "type \"level\" needs 'eta' (free-surface elevation, m)");
    bc.value = *eta;
  } else if (eta) {
    rd.fail_at(key + ".eta", "only used by type \"level\", not \"" + *type + "\"");
  }
  return bc;
}

const std::string segments_on_mesh =
    "boundary segments run on Cartesian grids; on a mesh, give the stretch a physical line group of its own in the "
    "mesh file and its condition under [boundary] (this case runs on a mesh, [mesh])";

} // namespace

void read_boundaries(const Reader& rd, const toml::table& root, const fs::path& base_dir,
                     const std::shared_ptr<UnstructuredMesh>& mesh, Problem& p) {
  if (mesh) {
    *mesh = deactivate_cells(*mesh, p.z);
    p.mesh_boundary.assign(mesh->boundary_names.size(), BoundaryCondition<double>{});
    if (const toml::table* b = rd.table(root, "", "boundary")) {
      for (auto&& [k, v] : *b) {
        const std::string name(k.str());
        if (name == "segment" && v.is_array() && !runs_on_cpu_or_gpu(Feature::segments, true, false))
          rd.fail_at("boundary.segment", segments_on_mesh);
        const int group = mesh->find_boundary(name);
        if (group < 0) {
          std::string groups;
          for (std::size_t q = 1; q < mesh->boundary_names.size(); ++q)
            groups += (groups.empty() ? "" : ", ") + mesh->boundary_names[q];
          rd.fail_at(dotted("boundary", name), "the mesh " + mesh->source + " has no physical line group '" +
                                                   clip(name) + "' (its groups: " +
                                                   (groups.empty() ? "none" : groups) + ")");
        }
        p.forcing.groups.resize(mesh->boundary_names.size());
        p.mesh_boundary[static_cast<std::size_t>(group)] =
            read_boundary(rd, *b, name, base_dir, &p.forcing.groups[static_cast<std::size_t>(group)]);
        if (!v.is_table()) continue;
        const std::vector<double> given = read_concentrations(rd, *v.as_table(), dotted("boundary", name), p.scalars);
        for (std::size_t q = 0; q < given.size(); ++q) {
          std::vector<double>& groups = p.scalars[q].groups;
          groups.resize(mesh->boundary_names.size(), 0.0);
          groups[static_cast<std::size_t>(group)] = given[q];
        }
      }
    }
    p.mesh = mesh;
  } else if (const toml::table* b = rd.table(root, "", "boundary")) {
    rd.check_keys(*b, "boundary", find_section("boundary")->keys);
    const char* sides[4] = {"west", "east", "south", "north"};
    for (std::size_t s = 0; s < 4; ++s) {
      p.boundary[s] = read_boundary(rd, *b, sides[s], base_dir, &p.forcing.boundary[s]);
      const toml::node* side = b->get(sides[s]);
      if (!side || !side->is_table()) continue;
      const std::vector<double> given =
          read_concentrations(rd, *side->as_table(), dotted("boundary", sides[s]), p.scalars);
      for (std::size_t k = 0; k < given.size(); ++k) p.scalars[k].side[s] = given[k];
    }
  }
}

// [[boundary.segment]]: a condition on the cells of a side's first column
// or row whose centres lie in [from, to]. A level, open or wall stretch is a
// condition of its own for their ghost cells (Problem::segments); an inflow
// stretch is left to build_problem.
void read_segments(const Reader& rd, const toml::node& n, const fs::path& base_dir, Problem& p, Reading& r) {
  const toml::array* a = n.as_array();
  if (!a) rd.fail_type("boundary.segment", "an array of tables [[boundary.segment]] with side, from, to, type", n);
  const Grid& g = p.grid;
  struct Placed {
    Side side;
    index_t begin, end;  // cells along the side
    std::string key, name;
  };
  std::vector<Placed> placed;
  for (std::size_t k = 0; k < a->size(); ++k) {
    const std::string at = "boundary.segment[" + std::to_string(k) + "]";
    const toml::table* t = a->get(k)->as_table();
    if (!t)
      rd.fail_type(at, "a table { side = .., from = .., to = .., type = \"inflow\", hydrograph = .. }", *a->get(k));
    rd.check_keys(*t, at, find_entry_keys("boundary.segment")->keys);
    const auto side_str = rd.string(*t, at, "side");
    if (!side_str) rd.fail_at(at + ".side", "missing (west, east, south or north)");
    Side side{};
    if (*side_str == "west") side = Side::west;
    else if (*side_str == "east") side = Side::east;
    else if (*side_str == "south") side = Side::south;
    else if (*side_str == "north") side = Side::north;
    else rd.fail_at(at + ".side", "unknown side '" + clip(*side_str) + "' (valid: west, east, south, north)");
    const auto type = rd.string(*t, at, "type");
    if (!type) rd.fail_at(at + ".type", "missing (inflow, level, open or wall)");
    const Keys types{"inflow", "level", "open", "wall"};
    if (std::find(types.begin(), types.end(), *type) == types.end()) {
      std::string msg = "unknown segment type '" + clip(*type) + "' (";
      if (auto best = closest(*type, types)) msg += "did you mean '" + std::string(*best) + "'? ";
      rd.fail_at(at + ".type", msg + "valid: inflow, level, open, wall)");
    }
    const bool along_y = side == Side::west || side == Side::east;
    const char* coord = along_y ? "y" : "x";
    const auto from = rd.number(*t, at, "from");
    const auto to = rd.number(*t, at, "to");
    if (!from || !to)
      rd.fail_at(at, std::string("needs from and to (") + coord + " along the " + *side_str + " side, m)");
    if (!(*from < *to)) rd.fail_at(at, "from must be less than to, found from = " + num(*from) + ", to = " + num(*to));
    const std::string name = "segment " + *side_str + " " + num(*from) + "-" + num(*to);
    // The side's cells whose centres lie in [from, to]: m = begin .. end - 1 along it.
    const index_t count = along_y ? g.ny : g.nx;
    index_t begin = count, end = 0;
    for (index_t m = 0; m < count; ++m) {
      const double centre = along_y ? g.y_center(m) : g.x_center(m);
      if (centre < *from || centre > *to) continue;
      begin = std::min(begin, m);
      end = m + 1;
    }
    if (begin >= end) {
      const double first = along_y ? g.y_center(0) : g.x_center(0);
      const double step = along_y ? g.dy : g.dx;
      rd.fail_at(at, name + ": no cell of the " + *side_str + " side has its centre in " + coord + " = [" +
                         num(*from) + ", " + num(*to) + "] (centres at " + coord + " = " + num(first) + " + " +
                         num(step) + " k, k = 0.." + std::to_string(count - 1) + ")");
    }
    for (const Placed& o : placed) {
      if (o.side == side && begin < o.end && o.begin < end)
        rd.fail_at(at, name + " overlaps " + o.name + " (" + o.key + ")");
    }
    placed.push_back({side, begin, end, at, name});
    if (*type != "inflow") {
      BoundarySegment sg;
      sg.name = name;
      sg.where = {side, begin, end, {BoundaryKind::wall, 0.0}};
      for (const char* key : {"hydrograph", "discharge", "scale"})
        if (t->contains(key)) rd.fail_at(at + "." + key, "only used by type \"inflow\", not \"" + *type + "\"");
      if (*type == "level") {
        sg.where.bc.kind = BoundaryKind::level;
        const toml::node* eta = t->get("eta");
        if (!eta)
          rd.fail_at(at, "a level segment needs eta (free-surface elevation, m: a number or a CSV time series)");
        if (eta->is_string()) {
          sg.value = series_file(rd, at + ".eta", *eta, base_dir, 1.0, "surface elevation (m)", p.t_end, std::nullopt);
          sg.where.bc.value = sg.value.v.front();
        } else {
          sg.where.bc.value = rd.number(*eta, at + ".eta");
          if (!std::isfinite(sg.where.bc.value))
            rd.fail_at(at + ".eta", "must be finite, found " + num(sg.where.bc.value));
        }
      } else {
        sg.where.bc.kind = *type == "open" ? BoundaryKind::open : BoundaryKind::wall;
        if (t->contains("eta")) rd.fail_at(at + ".eta", "only used by type \"level\", not \"" + *type + "\"");
      }
      if (t->contains("concentration") && *type != "level")
        rd.fail_at(at + ".concentration",
                   "only used by types \"inflow\" and \"level\" (water that enters), not \"" + *type + "\"");
      const std::vector<double> c = read_concentrations(rd, *t, at, p.scalars);
      for (std::size_t q = 0; q < c.size(); ++q) p.scalars[q].segments.push_back(c[q]);
      p.segments.push_back(std::move(sg));
      continue;
    }
    if (t->contains("eta")) rd.fail_at(at + ".eta", "only used by type \"level\", not \"inflow\"");
    Reading::InflowSegment in;
    in.key = at;
    in.name = name;
    in.side_name = *side_str;
    in.side = side;
    in.begin = begin;
    in.end = end;
    const toml::node* hydrograph = t->get("hydrograph");
    const auto discharge = rd.number(*t, at, "discharge");
    if (hydrograph && discharge) rd.fail_at(at, "give either hydrograph (a CSV file) or discharge (m^3/s), not both");
    if (!hydrograph && !discharge)
      rd.fail_at(at, "an inflow segment needs hydrograph = \"q.csv\" or discharge = Q (total m^3/s into the domain)");
    if (discharge) {
      if (*discharge < 0)
        rd.fail_at(at + ".discharge", "must be >= 0 (m^3/s into the domain), found " + num(*discharge) +
                                          " (a [[source]] with a negative discharge takes water out)");
      in.discharge = TimeSeries::constant(*discharge);
    } else {
      in.discharge = series_file(rd, at + ".hydrograph", *hydrograph, base_dir, 1.0, "discharge (m^3/s)", p.t_end,
                                 "an inflow segment only brings water in; a [[source]] with a negative discharge "
                                 "takes it out");
    }
    scale_discharge(rd, *t, at, in.discharge);
    in.discharge_key = at + (hydrograph ? ".hydrograph" : ".discharge");
    in.concentrations = read_concentrations(rd, *t, at, p.scalars);
    r.inflow_segments.push_back(std::move(in));
  }
}

// An inflow side or group gives its ghost cells the depth inside, so it brings
// no water into cells that are dry: a note where every cell it feeds starts dry.
void note_dry_inflows(const Problem& p, std::vector<std::string>& notes) {
  // Grids: an inflow segment; meshes (no segments): a source. Both are volume sources, which fill dry cells too.
  const std::string instead = p.mesh ? "bring the discharge with a [[source]] at the inlet"
                                     : "give the stretch as a [[boundary.segment]] of type \"inflow\"";
  const auto note = [&](const std::string& key) {
    notes.push_back(key + ": an inflow boundary brings water only into wet cells (its ghost cells take the depth "
                            "inside), and every cell along it is dry at t = 0, so no water will enter there; for a "
                            "river entering a dry channel " + instead + " (a discharge in m^3/s that also fills dry "
                            "cells)");
  };
  const auto dry = [&](std::size_t k) { return !(p.h[k] > p.physics.h_dry); };
  if (p.mesh) {
    const UnstructuredMesh& m = *p.mesh;
    for (std::size_t g = 1; g < p.mesh_boundary.size(); ++g) {
      if (p.mesh_boundary[g].kind != BoundaryKind::inflow) continue;
      bool all_dry = true, any = false;
      for (index_t e = 0; e < m.edges(); ++e) {
        if (m.edge_right[static_cast<std::size_t>(e)] != boundary_code(static_cast<int>(g))) continue;
        any = true;
        all_dry = all_dry && dry(static_cast<std::size_t>(m.edge_left[static_cast<std::size_t>(e)]));
      }
      if (any && all_dry) note("boundary." + m.boundary_names[g]);
    }
    return;
  }
  const Grid& grid = p.grid;
  const char* names[4] = {"west", "east", "south", "north"};
  const std::vector<SegmentCondition<double>> segments = segments_at<double>(p.segments, 0.0);
  for (int s = 0; s < 4; ++s) {
    if (p.boundary[static_cast<std::size_t>(s)].kind != BoundaryKind::inflow) continue;
    const auto side = static_cast<Side>(s);
    const bool x_side = side == Side::west || side == Side::east;
    const index_t n = x_side ? grid.ny : grid.nx;
    bool all_dry = true, any = false;
    for (index_t k = 0; k < n && all_dry; ++k) {
      // A segment's cells follow its own condition.
      if (segment_at(side, k, segments.data(), static_cast<int>(segments.size())) >= 0) continue;
      const index_t i = x_side ? (side == Side::west ? 0 : grid.nx - 1) : k;
      const index_t j = x_side ? k : (side == Side::south ? 0 : grid.ny - 1);
      any = true;
      all_dry = dry(static_cast<std::size_t>(j * grid.nx + i));
    }
    if (any && all_dry) note(std::string("boundary.") + names[s]);
  }
}

} // namespace shallows::io::case_reader
