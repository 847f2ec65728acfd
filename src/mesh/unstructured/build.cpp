// SPDX-License-Identifier: MIT
#include "shallows/mesh/unstructured/build.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "shallows/io/input_error.hpp"

namespace shallows {
namespace {

using io::GmshMesh;
using io::InputError;
using std::size_t;

// Counts must fit the 32-bit mesh_index used inside the kernels.
constexpr std::int64_t max_count = std::int64_t{1} << 31;

// A cell is degenerate below this fraction of its bounding box (area) or of its size (side).
constexpr double tiny = 1e-12;

enum class CellFault { none, bad_node, degenerate, non_convex };

struct CellGeometry {
  double area = 0, x = 0, y = 0;
  bool clockwise = false;
};

int file_sides(const GmshMesh& f, size_t c) { return f.cell_nodes[c][3] < 0 ? 3 : 4; }

// Area, area centroid and orientation of a file cell, or why it cannot be a cell.
CellFault cell_geometry(const GmshMesh& f, size_t c, CellGeometry& g) {
  const auto& n = f.cell_nodes[c];
  const int s = file_sides(f, c);
  const auto nodes = static_cast<std::int64_t>(f.node_x.size());
  for (int k = 0; k < s; ++k)
    if (n[k] < 0 || n[k] >= nodes) return CellFault::bad_node;
  for (int k = 0; k < s; ++k)
    for (int m = k + 1; m < s; ++m)
      if (n[k] == n[m]) return CellFault::degenerate;
  // Coordinates relative to the first node: no cancellation far from the origin.
  std::array<double, 4> x{}, y{};
  const double x0 = f.node_x[static_cast<size_t>(n[0])], y0 = f.node_y[static_cast<size_t>(n[0])];
  double xmin = 0, xmax = 0, ymin = 0, ymax = 0;
  for (int k = 1; k < s; ++k) {
    x[k] = f.node_x[static_cast<size_t>(n[k])] - x0;
    y[k] = f.node_y[static_cast<size_t>(n[k])] - y0;
    xmin = std::min(xmin, x[k]);
    xmax = std::max(xmax, x[k]);
    ymin = std::min(ymin, y[k]);
    ymax = std::max(ymax, y[k]);
  }
  const double size = std::max(xmax - xmin, ymax - ymin);
  // Shoelace: twice the signed area, sum of x_k y_{k+1} - x_{k+1} y_k.
  double area2 = 0, cx = 0, cy = 0;
  for (int k = 0; k < s; ++k) {
    const int m = (k + 1) % s;
    const double cross = x[k] * y[m] - x[m] * y[k];
    area2 += cross;
    cx += (x[k] + x[m]) * cross;
    cy += (y[k] + y[m]) * cross;
  }
  // Negated comparisons so that NaN coordinates are refused too.
  if (!(std::abs(0.5 * area2) > tiny * size * size)) return CellFault::degenerate;
  for (int k = 0; k < s; ++k) {
    const int m = (k + 1) % s;
    if (!(std::hypot(x[m] - x[k], y[m] - y[k]) > tiny * size)) return CellFault::degenerate;
  }
  if (s == 4) {
    // Convex: every corner turns the way the cell winds (a straight corner is allowed).
    // A self-intersecting quadrilateral has corners turning both ways.
    const double sign = area2 > 0 ? 1.0 : -1.0;
    for (int k = 0; k < 4; ++k) {
      const int p = (k + 3) % 4, m = (k + 1) % 4;
      const double turn = (x[k] - x[p]) * (y[m] - y[k]) - (y[k] - y[p]) * (x[m] - x[k]);
      if (!(sign * turn >= -tiny * size * size)) return CellFault::non_convex;
    }
    g.x = x0 + cx / (3 * area2);
    g.y = y0 + cy / (3 * area2);
  } else {
    // The area centroid of a triangle is its node average.
    g.x = x0 + (x[1] + x[2]) / 3;
    g.y = y0 + (y[1] + y[2]) / 3;
  }
  g.area = 0.5 * std::abs(area2);
  g.clockwise = area2 < 0;
  return CellFault::none;
}

// Two half-edges of the same node pair found in the buckets of build_mesh.
enum class EdgeFault { none, shared_by_many, inconsistent };

struct BucketFault {
  EdgeFault kind = EdgeFault::none;
  size_t begin = 0, end = 0;  // the group in the scratch buffer
};

class MeshBuilder {
 public:
  MeshBuilder(const GmshMesh& f, const std::string& source) : f_(f), source_(source) {}

  UnstructuredMesh build() {
    check_sizes();
    copy_nodes();
    build_cells();
    match_half_edges();
    number_edges();
    edge_geometry();
    boundary_groups();
    return std::move(m_);
  }

 private:
  const GmshMesh& f_;
  const std::string& source_;
  UnstructuredMesh m_;
  // Half-edge h = 4 * cell + slot (slot k: cell nodes k -> k+1 counter-clockwise).
  // mate[h]: the other cell's half-edge on the same node pair, -1 on the boundary.
  std::vector<std::int64_t> mate_;

  [[noreturn]] void fail(const std::string& what) const { throw InputError(source_ + ": " + what); }

  std::int64_t node_tag(std::int64_t n) const {
    return f_.node_tag.size() == f_.node_x.size() ? f_.node_tag[static_cast<size_t>(n)] : n + 1;
  }
  std::int64_t cell_tag(size_t c) const { return f_.cell_tag[c]; }
  std::string element(size_t c) const { return "element " + std::to_string(cell_tag(c)); }

  mesh_index node(std::int64_t h) const { return m_.cell_nodes[static_cast<size_t>(h)]; }
  // The node after slot h's node in its cell (counter-clockwise).
  mesh_index next_node(std::int64_t h) const {
    const std::int64_t c = h / 4;
    const int k = static_cast<int>(h % 4);
    const int s = m_.cell_sides(c);
    return m_.cell_nodes[static_cast<size_t>(4 * c + (k + 1) % s)];
  }

  void check_sizes() const {
    const size_t nodes = f_.node_x.size(), cells = f_.cell_nodes.size();
    if (f_.node_y.size() != nodes || (!f_.node_z.empty() && f_.node_z.size() != nodes))
      fail("node coordinate arrays differ in size");
    if (f_.cell_tag.size() != cells) fail("cell_tag and cell_nodes differ in size");
    if (f_.line_physical.size() != f_.line_nodes.size()) fail("line_physical and line_nodes differ in size");
    if (static_cast<std::int64_t>(nodes) >= max_count)
      fail(std::to_string(nodes) + " nodes: meshes are limited to 2^31 - 1 nodes");
    if (static_cast<std::int64_t>(cells) >= max_count)
      fail(std::to_string(cells) + " cells: meshes are limited to 2^31 - 1 cells");
    if (cells == 0) fail("no cells (triangles or quadrilaterals)");
  }

  void copy_nodes() {
    m_.source = source_;
    m_.node_x = f_.node_x;
    m_.node_y = f_.node_y;
    m_.node_z = f_.node_z.empty() ? std::vector<double>(f_.node_x.size(), 0.0) : f_.node_z;
  }

  void build_cells() {
    const auto cells = static_cast<std::int64_t>(f_.cell_nodes.size());
    m_.cell_nodes.assign(static_cast<size_t>(4 * cells), -1);
    m_.cell_area.resize(static_cast<size_t>(cells));
    m_.cell_x.resize(static_cast<size_t>(cells));
    m_.cell_y.resize(static_cast<size_t>(cells));
    m_.cell_tag = f_.cell_tag;
    m_.cell_file_index.resize(static_cast<size_t>(cells));
    for (std::int64_t c = 0; c < cells; ++c) m_.cell_file_index[static_cast<size_t>(c)] = static_cast<mesh_index>(c);
    // The first bad cell in file order is reported, whatever the thread count.
    std::int64_t first_bad = cells;
#pragma omp parallel for schedule(static) reduction(min : first_bad)
    for (std::int64_t c = 0; c < cells; ++c) {
      const auto cc = static_cast<size_t>(c);
      CellGeometry g;
      if (cell_geometry(f_, cc, g) != CellFault::none) {
        first_bad = std::min(first_bad, c);
        continue;
      }
      const auto& n = f_.cell_nodes[cc];
      const int s = file_sides(f_, cc);
      for (int k = 0; k < s; ++k) {
        // Clockwise: reversed, keeping node 0 first.
        const int from = g.clockwise ? (s - k) % s : k;
        m_.cell_nodes[4 * cc + static_cast<size_t>(k)] = static_cast<mesh_index>(n[static_cast<size_t>(from)]);
      }
      m_.cell_area[cc] = g.area;
      m_.cell_x[cc] = g.x;
      m_.cell_y[cc] = g.y;
    }
    if (first_bad < cells) {
      const auto c = static_cast<size_t>(first_bad);
      CellGeometry g;
      switch (cell_geometry(f_, c, g)) {
        case CellFault::bad_node:
          fail(element(c) + ": node index out of range");
        case CellFault::non_convex:
          fail(element(c) + ": non-convex or self-intersecting quadrilateral");
        default:
          fail(element(c) + ": degenerate cell (zero area)");
      }
    }
  }

  // Half-edges are bucketed by their smaller node (a counting sort, linear in the mesh
  // size), then matched inside each bucket by their larger node.
  void match_half_edges() {
    const auto half_edges = 4 * m_.cells();
    const size_t nodes = m_.node_x.size();
    const auto low = [this](std::int64_t h) { return static_cast<size_t>(std::min(node(h), next_node(h))); };
    std::vector<std::int64_t> start(nodes + 2, 0);
#pragma omp parallel for schedule(static)
    for (std::int64_t h = 0; h < half_edges; ++h)
      if (node(h) >= 0) {
#pragma omp atomic
        ++start[low(h) + 2];
      }
    for (size_t i = 2; i < start.size(); ++i) start[i] += start[i - 1];
    // Not zeroed: every slot is written below. The order inside a bucket depends on the
    // threads; match_bucket sorts it.
    const std::unique_ptr<std::int64_t[]> bucket(new std::int64_t[static_cast<size_t>(start.back())]);
#pragma omp parallel for schedule(static)
    for (std::int64_t h = 0; h < half_edges; ++h)
      if (node(h) >= 0) {
        std::int64_t slot;
#pragma omp atomic capture
        slot = start[low(h) + 1]++;
        bucket[static_cast<size_t>(slot)] = h;
      }
    // Now bucket of node a = [start[a], start[a + 1]).
    mate_.assign(static_cast<size_t>(half_edges), -1);
    const auto n_nodes = static_cast<std::int64_t>(nodes);
    std::int64_t first_bad = n_nodes;
#pragma omp parallel reduction(min : first_bad)
    {
      std::vector<std::pair<mesh_index, std::int64_t>> scratch;
#pragma omp for schedule(dynamic, 4096)
      for (std::int64_t a = 0; a < n_nodes; ++a) {
        const auto b0 = static_cast<size_t>(start[static_cast<size_t>(a)]);
        const auto b1 = static_cast<size_t>(start[static_cast<size_t>(a) + 1]);
        if (b0 != b1 && match_bucket(bucket.get(), b0, b1, scratch).kind != EdgeFault::none)
          first_bad = std::min(first_bad, a);
      }
    }
    if (first_bad < n_nodes) {
      std::vector<std::pair<mesh_index, std::int64_t>> scratch;
      const auto a = static_cast<size_t>(first_bad);
      const auto b0 = static_cast<size_t>(start[a]), b1 = static_cast<size_t>(start[a + 1]);
      report(match_bucket(bucket.get(), b0, b1, scratch), scratch);
    }
  }

  // Matches the half-edges bucket[b0, b1) (same smaller node): sorted by (larger node,
  // half-edge), so by cell within a node pair, then paired. Returns the first fault.
  BucketFault match_bucket(const std::int64_t* bucket, size_t b0, size_t b1,
                           std::vector<std::pair<mesh_index, std::int64_t>>& scratch) {
    scratch.clear();
    for (size_t i = b0; i < b1; ++i) {
      const std::int64_t h = bucket[i];
      scratch.emplace_back(std::max(node(h), next_node(h)), h);
    }
    // By (larger node, half-edge): a bucket holds about the node's valence, so insertion.
    if (scratch.size() > 32) {
      std::sort(scratch.begin(), scratch.end());
    } else {
      for (size_t i = 1; i < scratch.size(); ++i)
        for (size_t j = i; j > 0 && scratch[j] < scratch[j - 1]; --j) std::swap(scratch[j], scratch[j - 1]);
    }
    BucketFault fault;
    for (size_t i = 0; i < scratch.size();) {
      size_t j = i + 1;
      while (j < scratch.size() && scratch[j].first == scratch[i].first) ++j;
      if (j - i == 1) {
        mate_[static_cast<size_t>(scratch[i].second)] = -1;
      } else if (j - i == 2) {
        const std::int64_t h = scratch[i].second, g = scratch[i + 1].second;
        // Counter-clockwise neighbours run along their common edge in opposite directions.
        if (node(h) == node(g)) {
          if (fault.kind == EdgeFault::none) fault = {EdgeFault::inconsistent, i, j};
        } else {
          mate_[static_cast<size_t>(h)] = g;
          mate_[static_cast<size_t>(g)] = h;
        }
      } else if (fault.kind == EdgeFault::none) {
        fault = {EdgeFault::shared_by_many, i, j};
      }
      i = j;
    }
    return fault;
  }

  [[noreturn]] void report(const BucketFault& fault, const std::vector<std::pair<mesh_index, std::int64_t>>& group) {
    const std::int64_t h = group[fault.begin].second;
    const std::int64_t a = std::min(node(h), next_node(h)), b = std::max(node(h), next_node(h));
    const std::string edge = "the edge between nodes " + std::to_string(node_tag(a)) + " and " +
                             std::to_string(node_tag(b));
    std::string elements;
    for (size_t i = fault.begin; i < fault.end; ++i)
      elements += (i == fault.begin ? "" : ", ") + std::to_string(cell_tag(static_cast<size_t>(group[i].second / 4)));
    if (fault.kind == EdgeFault::inconsistent)
      fail("elements " + elements + " overlap: once oriented counter-clockwise they run along " + edge +
           " in the same direction (inconsistent orientation or folded mesh)");
    fail(edge + " is shared by " + std::to_string(fault.end - fault.begin) + " cells (elements " + elements + ")");
  }

  // Edges numbered as the cells meet them: by (left cell, slot); the left cell is the
  // one of lower index, and the edge runs along it counter-clockwise. A cell owns the
  // edges it is the left cell of: counted per cell, summed, then filled in parallel.
  void number_edges() {
    const auto cells = m_.cells();
    const auto owns = [this](std::int64_t h) {
      return node(h) >= 0 && (mate_[static_cast<size_t>(h)] < 0 || mate_[static_cast<size_t>(h)] > h);
    };
    std::vector<std::int64_t> first(static_cast<size_t>(cells) + 1, 0);
#pragma omp parallel for schedule(static)
    for (std::int64_t c = 0; c < cells; ++c)
      for (std::int64_t h = 4 * c; h < 4 * c + 4; ++h) first[static_cast<size_t>(c) + 1] += owns(h) ? 1 : 0;
    for (size_t c = 1; c < first.size(); ++c) first[c] += first[c - 1];
    const std::int64_t edges = first.back();
    if (edges >= max_count) fail(std::to_string(edges) + " edges: meshes are limited to 2^31 - 1 edges");
    const auto ne = static_cast<size_t>(edges);
    m_.edge_left.resize(ne);
    m_.edge_right.resize(ne);
    m_.edge_node0.resize(ne);
    m_.edge_node1.resize(ne);
    m_.cell_edges.assign(static_cast<size_t>(4 * cells), -1);
    // Each slot is written once: by its cell if it owns the edge, else by the owner.
#pragma omp parallel for schedule(static)
    for (std::int64_t c = 0; c < cells; ++c) {
      auto e = static_cast<mesh_index>(first[static_cast<size_t>(c)]);
      for (std::int64_t h = 4 * c; h < 4 * c + 4; ++h) {
        if (!owns(h)) continue;
        const std::int64_t g = mate_[static_cast<size_t>(h)];
        const auto ee = static_cast<size_t>(e);
        m_.cell_edges[static_cast<size_t>(h)] = e;
        if (g >= 0) m_.cell_edges[static_cast<size_t>(g)] = e;
        m_.edge_left[ee] = static_cast<mesh_index>(c);
        m_.edge_right[ee] = g >= 0 ? static_cast<mesh_index>(g / 4) : boundary_code(0);
        m_.edge_node0[ee] = node(h);
        m_.edge_node1[ee] = next_node(h);
        ++e;
      }
    }
    mate_ = {};
  }

  void edge_geometry() {
    const auto edges = m_.edges();
    m_.edge_nx.resize(static_cast<size_t>(edges));
    m_.edge_ny.resize(static_cast<size_t>(edges));
    m_.edge_length.resize(static_cast<size_t>(edges));
#pragma omp parallel for schedule(static)
    for (std::int64_t e = 0; e < edges; ++e) {
      const auto ee = static_cast<size_t>(e);
      const auto a = static_cast<size_t>(m_.edge_node0[ee]), b = static_cast<size_t>(m_.edge_node1[ee]);
      const double dx = m_.node_x[b] - m_.node_x[a], dy = m_.node_y[b] - m_.node_y[a];
      const double length = std::sqrt(dx * dx + dy * dy);
      // Right of node0 -> node1, that is out of the counter-clockwise left cell.
      m_.edge_nx[ee] = dy / length;
      m_.edge_ny[ee] = -dx / length;
      m_.edge_length[ee] = length;
    }
  }

  // Groups: 0 for walls, then the physical line groups that lie on boundary edges, by
  // name. A physical tag without a name is named by its number, so that a case can still
  // refer to it; tags of the same name form one group.
  void boundary_groups() {
    std::map<int, std::string> tag_name;
    for (const auto& [tag, name] : f_.line_physical_names)
      if (tag != 0) tag_name[tag] = name.empty() ? std::to_string(tag) : name;
    for (int tag : f_.line_physical)
      if (tag != 0 && !tag_name.contains(tag)) tag_name[tag] = std::to_string(tag);
    std::vector<std::string> names{""};  // every name for now, sorted
    for (const auto& [tag, name] : tag_name) names.push_back(name);
    std::sort(names.begin() + 1, names.end());
    names.erase(std::unique(names.begin() + 1, names.end()), names.end());
    std::map<int, int> tag_group;
    for (const auto& [tag, name] : tag_name)
      tag_group[tag] = static_cast<int>(std::lower_bound(names.begin() + 1, names.end(), name) - names.begin());

    // Line elements with a physical tag, sorted by node pair.
    const auto nodes = static_cast<std::int64_t>(m_.node_x.size());
    std::vector<std::pair<std::uint64_t, size_t>> lines;
    for (size_t l = 0; l < f_.line_nodes.size(); ++l) {
      const auto [a, b] = f_.line_nodes[l];
      if (a < 0 || a >= nodes || b < 0 || b >= nodes)
        fail("line element " + std::to_string(l + 1) + " (in file order): node index out of range");
      if (f_.line_physical[l] != 0 && a != b) lines.emplace_back(pair_key(a, b), l);
    }
    std::sort(lines.begin(), lines.end());
    // Line elements on no boundary edge (interior curves, or no edge at all) are ignored.
    std::vector<int> used(names.size(), 0);
    used[0] = 1;
    for (size_t e = 0; e < m_.edge_left.size() && !lines.empty(); ++e) {
      if (m_.edge_right[e] >= 0) continue;
      const std::uint64_t key = pair_key(m_.edge_node0[e], m_.edge_node1[e]);
      auto it = std::lower_bound(lines.begin(), lines.end(), std::pair<std::uint64_t, size_t>{key, 0});
      int group = 0, tag = 0;
      for (; it != lines.end() && it->first == key; ++it) {
        const int t = f_.line_physical[it->second];
        const int g = tag_group.at(t);
        if (group != 0 && g != group)
          fail("the boundary edge between nodes " + std::to_string(node_tag(m_.edge_node0[e])) + " and " +
               std::to_string(node_tag(m_.edge_node1[e])) + " lies in two physical groups (" + std::to_string(tag) +
               " \"" + names[static_cast<size_t>(group)] + "\" and " + std::to_string(t) + " \"" +
               names[static_cast<size_t>(g)] + "\")");
        group = g;
        tag = t;
      }
      used[static_cast<size_t>(group)] = 1;
      m_.edge_right[e] = boundary_code(group);
    }
    // Keep the groups that have edges, still by name.
    std::vector<int> renumbered(names.size(), 0);
    m_.boundary_names.clear();
    for (size_t g = 0; g < names.size(); ++g)
      if (used[g]) {
        renumbered[g] = static_cast<int>(m_.boundary_names.size());
        m_.boundary_names.push_back(names[g]);
      }
    for (mesh_index& r : m_.edge_right)
      if (r < 0) r = boundary_code(renumbered[static_cast<size_t>(boundary_group(r))]);
  }

  static std::uint64_t pair_key(std::int64_t a, std::int64_t b) {
    return static_cast<std::uint64_t>(std::min(a, b)) << 32 | static_cast<std::uint64_t>(std::max(a, b));
  }
};

} // namespace

UnstructuredMesh build_mesh(const io::GmshMesh& file, const std::string& source) {
  return MeshBuilder(file, source).build();
}

index_t connected_components(const UnstructuredMesh& mesh) {
  // Union-find with path halving over the interior edges.
  std::vector<mesh_index> parent(static_cast<size_t>(mesh.cells()));
  for (size_t c = 0; c < parent.size(); ++c) parent[c] = static_cast<mesh_index>(c);
  const auto root = [&parent](mesh_index c) {
    while (parent[static_cast<size_t>(c)] != c) {
      parent[static_cast<size_t>(c)] = parent[static_cast<size_t>(parent[static_cast<size_t>(c)])];
      c = parent[static_cast<size_t>(c)];
    }
    return c;
  };
  index_t pieces = mesh.cells();
  for (size_t e = 0; e < mesh.edge_left.size(); ++e) {
    if (mesh.edge_right[e] < 0) continue;
    const mesh_index a = root(mesh.edge_left[e]), b = root(mesh.edge_right[e]);
    if (a == b) continue;
    parent[static_cast<size_t>(std::max(a, b))] = std::min(a, b);
    --pieces;
  }
  return pieces;
}

UnstructuredMesh deactivate_cells(const UnstructuredMesh& mesh, const std::vector<double>& z) {
  if (z.size() != static_cast<size_t>(mesh.cells()))
    throw std::invalid_argument("deactivate_cells: " + std::to_string(z.size()) + " bed values for " +
                                std::to_string(mesh.cells()) + " cells");
  const auto active = [&z](mesh_index c) { return !std::isnan(z[static_cast<size_t>(c)]); };
  UnstructuredMesh out;
  out.node_x = mesh.node_x;
  out.node_y = mesh.node_y;
  out.node_z = mesh.node_z;
  out.cell_nodes = mesh.cell_nodes;
  out.cell_area = mesh.cell_area;
  out.cell_x = mesh.cell_x;
  out.cell_y = mesh.cell_y;
  out.cell_tag = mesh.cell_tag;
  out.cell_file_index = mesh.cell_file_index;
  out.boundary_names = mesh.boundary_names;
  if (out.boundary_names.empty()) out.boundary_names.emplace_back();
  out.source = mesh.source;

  // Kept edges stay in their order.
  std::vector<mesh_index> new_edge(mesh.edge_left.size(), -1);
  mesh_index kept = 0;
  for (size_t e = 0; e < mesh.edge_left.size(); ++e) {
    const mesh_index l = mesh.edge_left[e], r = mesh.edge_right[e];
    const bool left_on = active(l), right_on = r >= 0 ? active(r) : false;
    if (!left_on && !right_on) continue;
    new_edge[e] = kept++;
    if (left_on) {
      out.edge_left.push_back(l);
      out.edge_right.push_back(r >= 0 && !right_on ? boundary_code(0) : r);
      out.edge_node0.push_back(mesh.edge_node0[e]);
      out.edge_node1.push_back(mesh.edge_node1[e]);
      out.edge_nx.push_back(mesh.edge_nx[e]);
      out.edge_ny.push_back(mesh.edge_ny[e]);
      out.edge_length.push_back(mesh.edge_length[e]);
    } else {
      out.push_reversed_wall(mesh, e);  // only the right cell is active
    }
  }
  out.cell_edges.resize(mesh.cell_edges.size());
  for (size_t s = 0; s < mesh.cell_edges.size(); ++s) {
    const mesh_index e = mesh.cell_edges[s];
    out.cell_edges[s] = e >= 0 && active(static_cast<mesh_index>(s / 4)) ? new_edge[static_cast<size_t>(e)] : -1;
  }
  return out;
}

} // namespace shallows
