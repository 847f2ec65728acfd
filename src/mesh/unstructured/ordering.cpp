// SPDX-License-Identifier: MIT
#include "shallows/mesh/unstructured/ordering.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace shallows {
namespace {

using std::size_t;

// Cell adjacency through interior edges (CSR): the neighbours of c are next[start[c] .. start[c + 1]).
// degree: their number (at most 4 in a valid mesh), compact so that the searches keep it in cache.
struct Adjacency {
  std::vector<std::int64_t> start;
  std::vector<mesh_index> next;
  std::vector<std::uint8_t> degree;
  int degree_of(mesh_index c) const { return degree[static_cast<size_t>(c)]; }
};

Adjacency cell_adjacency(const UnstructuredMesh& mesh) {
  Adjacency a;
  a.start.assign(static_cast<size_t>(mesh.cells()) + 2, 0);
  const auto edges = static_cast<std::int64_t>(mesh.edge_left.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < edges; ++e) {
    const mesh_index l = mesh.edge_left[static_cast<size_t>(e)], r = mesh.edge_right[static_cast<size_t>(e)];
    if (r < 0) continue;
#pragma omp atomic
    ++a.start[static_cast<size_t>(l) + 2];
#pragma omp atomic
    ++a.start[static_cast<size_t>(r) + 2];
  }
  for (size_t i = 2; i < a.start.size(); ++i) a.start[i] += a.start[i - 1];
  a.next.resize(static_cast<size_t>(a.start.back()));
  // The order of a cell's neighbours depends on the threads: users must not depend on it.
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < edges; ++e) {
    const mesh_index l = mesh.edge_left[static_cast<size_t>(e)], r = mesh.edge_right[static_cast<size_t>(e)];
    if (r < 0) continue;
    std::int64_t at_l, at_r;
#pragma omp atomic capture
    at_l = a.start[static_cast<size_t>(l) + 1]++;
#pragma omp atomic capture
    at_r = a.start[static_cast<size_t>(r) + 1]++;
    a.next[static_cast<size_t>(at_l)] = r;
    a.next[static_cast<size_t>(at_r)] = l;
  }
  a.start.pop_back();
  a.degree.resize(static_cast<size_t>(mesh.cells()));
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < mesh.cells(); ++c) {
    const auto cc = static_cast<size_t>(c);
    a.degree[cc] = static_cast<std::uint8_t>(std::min<std::int64_t>(a.start[cc + 1] - a.start[cc], 255));
  }
  return a;
}

// Stable LSD radix sort of (key, value) pairs on key bits [low_bit, high_bit).
void radix_sort(std::vector<std::uint64_t>& key, std::vector<mesh_index>& value, int low_bit, int high_bit) {
  constexpr int digit_bits = 11;
  constexpr size_t buckets = size_t{1} << digit_bits;
  const size_t n = key.size();
  std::vector<std::uint64_t> key_tmp(n);
  std::vector<mesh_index> value_tmp(n);
  std::vector<size_t> count(buckets);
  for (int shift = low_bit; shift < high_bit; shift += digit_bits) {
    const int bits = std::min(digit_bits, high_bit - shift);
    const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
    std::fill(count.begin(), count.end(), 0);
    for (size_t i = 0; i < n; ++i) ++count[(key[i] >> shift) & mask];
    if (*std::max_element(count.begin(), count.end()) == n) continue;  // one digit value: nothing to move
    size_t sum = 0;
    for (size_t& c : count) {
      const size_t here = c;
      c = sum;
      sum += here;
    }
    for (size_t i = 0; i < n; ++i) {
      const size_t to = count[(key[i] >> shift) & mask]++;
      key_tmp[to] = key[i];
      value_tmp[to] = value[i];
    }
    key.swap(key_tmp);
    value.swap(value_tmp);
  }
}

// Spreads the low 32 bits of v to the even bits of the result.
std::uint64_t spread_bits(std::uint64_t v) {
  v &= 0x00000000ffffffffULL;
  v = (v | v << 16) & 0x0000ffff0000ffffULL;
  v = (v | v << 8) & 0x00ff00ff00ff00ffULL;
  v = (v | v << 4) & 0x0f0f0f0f0f0f0f0fULL;
  v = (v | v << 2) & 0x3333333333333333ULL;
  v = (v | v << 1) & 0x5555555555555555ULL;
  return v;
}

void check_order(const UnstructuredMesh& mesh, const std::vector<mesh_index>& order) {
  const auto n = static_cast<size_t>(mesh.cells());
  if (order.size() != n)
    throw std::invalid_argument("renumber_cells: an order of " + std::to_string(order.size()) + " cells for " +
                                std::to_string(n) + " cells");
  std::vector<bool> seen(n, false);
  for (mesh_index c : order) {
    if (c < 0 || static_cast<size_t>(c) >= n || seen[static_cast<size_t>(c)])
      throw std::invalid_argument("renumber_cells: the order is not a permutation of the cells");
    seen[static_cast<size_t>(c)] = true;
  }
}

template <class T>
std::vector<T> gather(const std::vector<T>& v, const std::vector<mesh_index>& order) {
  std::vector<T> out(order.size());
  const auto n = static_cast<std::int64_t>(order.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i)
    out[static_cast<size_t>(i)] = v[static_cast<size_t>(order[static_cast<size_t>(i)])];
  return out;
}

} // namespace

std::vector<mesh_index> rcm_order(const UnstructuredMesh& mesh) {
  const Adjacency adj = cell_adjacency(mesh);
  const auto n = static_cast<size_t>(mesh.cells());
  std::vector<mesh_index> order;
  order.reserve(n);
  std::vector<std::uint8_t> placed(n, 0), seen(n, 0);
  std::vector<mesh_index> queue;
  queue.reserve(n);

  // Breadth-first level structure from root: its depth, and the node of smallest degree
  // in the last level (the next candidate of the pseudo-peripheral search).
  const auto levels = [&](mesh_index root, mesh_index& far) {
    queue.assign(1, root);
    seen[static_cast<size_t>(root)] = 1;
    size_t begin = 0, end = 1;
    int depth = 0;
    while (true) {
      for (size_t i = begin; i < end; ++i) {
        const auto c = static_cast<size_t>(queue[i]);
        for (auto k = adj.start[c]; k < adj.start[c + 1]; ++k) {
          const mesh_index d = adj.next[static_cast<size_t>(k)];
          if (seen[static_cast<size_t>(d)]) continue;
          seen[static_cast<size_t>(d)] = 1;
          queue.push_back(d);
        }
      }
      if (queue.size() == end) break;
      begin = end;
      end = queue.size();
      ++depth;
    }
    // Ties to the lowest index: the order within a level depends on the adjacency's.
    far = queue[begin];
    for (size_t i = begin; i < end; ++i) {
      const mesh_index c = queue[i];
      if (adj.degree_of(c) < adj.degree_of(far) || (adj.degree_of(c) == adj.degree_of(far) && c < far)) far = c;
    }
    for (mesh_index c : queue) seen[static_cast<size_t>(c)] = 0;
    return depth;
  };

  // The first piece is searched from the cell of smallest x + y, a corner that is often
  // peripheral already (one breadth-first pass saved); then pieces in cell order.
  size_t corner = 0;
  for (size_t c = 1; c < n; ++c)
    if (mesh.cell_x[c] + mesh.cell_y[c] < mesh.cell_x[corner] + mesh.cell_y[corner]) corner = c;
  std::array<mesh_index, 64> buffer{};
  std::vector<mesh_index> many;
  for (size_t next = 0; next <= n; ++next) {
    const size_t first = next == 0 ? corner : next - 1;
    if (first >= n || placed[first]) continue;
    // Pseudo-peripheral root (George and Liu): move to the far end while the depth grows.
    auto root = static_cast<mesh_index>(first);
    mesh_index far = root;
    int depth = levels(root, far);
    for (int tries = 0; tries < 8 && far != root; ++tries) {
      mesh_index further = far;
      const int d = levels(far, further);
      if (d <= depth) break;
      root = far;
      depth = d;
      far = further;
    }
    // Cuthill-McKee: breadth first, each node's new neighbours by increasing degree.
    size_t head = order.size();
    order.push_back(root);
    placed[static_cast<size_t>(root)] = 1;
    for (; head < order.size(); ++head) {
      const auto c = static_cast<size_t>(order[head]);
      const auto k0 = adj.start[c], k1 = adj.start[c + 1];
      const bool small = k1 - k0 <= static_cast<std::int64_t>(buffer.size());
      many.clear();
      size_t count = 0;
      for (auto k = k0; k < k1; ++k) {
        const mesh_index d = adj.next[static_cast<size_t>(k)];
        if (placed[static_cast<size_t>(d)]) continue;
        placed[static_cast<size_t>(d)] = 1;
        if (small)
          buffer[count++] = d;
        else
          many.push_back(d);
      }
      mesh_index* b = small ? buffer.data() : many.data();
      if (!small) count = many.size();
      std::sort(b, b + count, [&adj](mesh_index p, mesh_index q) {
        return adj.degree_of(p) != adj.degree_of(q) ? adj.degree_of(p) < adj.degree_of(q) : p < q;
      });
      order.insert(order.end(), b, b + count);
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}

std::vector<mesh_index> morton_order(const UnstructuredMesh& mesh) {
  const size_t n = static_cast<size_t>(mesh.cells());
  if (n == 0) return {};
  const auto [x_lo, x_hi] = std::minmax_element(mesh.cell_x.begin(), mesh.cell_x.end());
  const auto [y_lo, y_hi] = std::minmax_element(mesh.cell_y.begin(), mesh.cell_y.end());
  const double x0 = *x_lo, y0 = *y_lo;
  // One scale for both axes, from the larger extent: squares stay squares, so the curve's
  // blocks are compact on elongated domains too.
  const double extent = std::max(*x_hi - x0, *y_hi - y0);
  constexpr double top = double((1 << 21) - 1);
  const double scale = extent > 0 ? top / extent : 0;
  const auto quantise = [&](double v) {
    const double q = std::floor(v * scale);
    return static_cast<std::uint64_t>(std::clamp(q, 0.0, top));
  };
  std::vector<std::uint64_t> key(n);
  std::vector<mesh_index> order(n);
#pragma omp parallel for schedule(static)
  for (std::int64_t ci = 0; ci < static_cast<std::int64_t>(n); ++ci) {
    const auto c = static_cast<size_t>(ci);
    // Bits interleaved (seed 004 eq. 5), x on the even ones: x varies fastest, as in the
    // row-major numbering of a grid, which a grid-like mesh then keeps within each 2 x 2 block.
    key[c] = spread_bits(quantise(mesh.cell_x[c] - x0)) | spread_bits(quantise(mesh.cell_y[c] - y0)) << 1;
    order[c] = static_cast<mesh_index>(c);
  }
  radix_sort(key, order, 0, 42);
  return order;
}

std::vector<mesh_index> random_order(const UnstructuredMesh& mesh, std::uint64_t seed) {
  std::vector<mesh_index> order(static_cast<size_t>(mesh.cells()));
  for (size_t c = 0; c < order.size(); ++c) order[c] = static_cast<mesh_index>(c);
  // Fisher-Yates written out: std::shuffle and the distributions differ between standard libraries.
  std::mt19937_64 rng(seed);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[static_cast<size_t>(rng() % i)]);
  return order;
}

UnstructuredMesh renumber_cells(const UnstructuredMesh& mesh, const std::vector<mesh_index>& order) {
  check_order(mesh, order);
  const size_t n = order.size();
  const auto cells = static_cast<std::int64_t>(n);
  std::vector<mesh_index> new_cell(n);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < cells; ++i)
    new_cell[static_cast<size_t>(order[static_cast<size_t>(i)])] = static_cast<mesh_index>(i);

  UnstructuredMesh out;
  out.node_x = mesh.node_x;
  out.node_y = mesh.node_y;
  out.node_z = mesh.node_z;
  out.boundary_names = mesh.boundary_names;
  out.source = mesh.source;
  out.cell_area = gather(mesh.cell_area, order);
  out.cell_x = gather(mesh.cell_x, order);
  out.cell_y = gather(mesh.cell_y, order);
  out.cell_tag = gather(mesh.cell_tag, order);
  out.cell_file_index = mesh.cell_file_index.empty() ? order : gather(mesh.cell_file_index, order);
  out.cell_nodes.resize(4 * n);
  out.cell_edges.resize(4 * n);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < cells; ++i)
    for (size_t k = 0; k < 4; ++k) {
      const size_t to = 4 * static_cast<size_t>(i) + k;
      const size_t from = 4 * static_cast<size_t>(order[static_cast<size_t>(i)]) + k;
      out.cell_nodes[to] = mesh.cell_nodes[from];
      out.cell_edges[to] = mesh.cell_edges[from];
    }

  // Edge order: interior edges by (smaller cell, larger cell), then boundary edges by
  // (cell, slot). An edge loop then reads its cells nearly in order, and the boundary
  // edges form one block that a loop may treat apart. Key = (bucket, second): bucket
  // the smaller cell, or cells + the cell of a boundary edge; second the larger cell,
  // or the slot. Keys are unique, so the order does not depend on the threads.
  const size_t edges = mesh.edge_left.size();
  const auto n_edges = static_cast<std::int64_t>(edges);
  std::vector<std::uint64_t> key(edges);
  std::vector<mesh_index> start(2 * n + 2, 0);
#pragma omp parallel for schedule(static)
  for (std::int64_t ei = 0; ei < n_edges; ++ei) {
    const auto e = static_cast<size_t>(ei);
    const size_t c = static_cast<size_t>(mesh.edge_left[e]);
    const auto l = static_cast<std::uint64_t>(new_cell[c]);
    const mesh_index right = mesh.edge_right[e];
    if (right >= 0) {
      const auto r = static_cast<std::uint64_t>(new_cell[static_cast<size_t>(right)]);
      key[e] = std::min(l, r) << 32 | std::max(l, r);
    } else {
      std::uint64_t slot = 0;
      while (slot < 3 && mesh.cell_edges[4 * c + slot] != static_cast<mesh_index>(e)) ++slot;
      key[e] = (n + l) << 32 | slot;
    }
#pragma omp atomic
    ++start[(key[e] >> 32) + 2];
  }
  // Counting sort by bucket (a bucket holds at most 4 edges), then insertion inside each.
  for (size_t b = 2; b < start.size(); ++b) start[b] += start[b - 1];
  std::vector<mesh_index> edge_order(edges);
#pragma omp parallel for schedule(static)
  for (std::int64_t ei = 0; ei < n_edges; ++ei) {
    mesh_index at;
#pragma omp atomic capture
    at = start[(key[static_cast<size_t>(ei)] >> 32) + 1]++;
    edge_order[static_cast<size_t>(at)] = static_cast<mesh_index>(ei);
  }
  const auto buckets = static_cast<std::int64_t>(2 * n);
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < buckets; ++b) {
    const auto b0 = static_cast<size_t>(start[static_cast<size_t>(b)]);
    const auto b1 = static_cast<size_t>(start[static_cast<size_t>(b) + 1]);
    for (size_t i = b0 + 1; i < b1; ++i) {
      const mesh_index e = edge_order[i];
      size_t j = i;
      for (; j > b0 && key[static_cast<size_t>(e)] < key[static_cast<size_t>(edge_order[j - 1])]; --j)
        edge_order[j] = edge_order[j - 1];
      edge_order[j] = e;
    }
  }
  key = {};
  start = {};

  const auto relabel = [&new_cell](mesh_index c) { return c >= 0 ? new_cell[static_cast<size_t>(c)] : c; };
  out.edge_left.resize(edges);
  out.edge_right.resize(edges);
  std::vector<mesh_index> new_edge(edges);
#pragma omp parallel for schedule(static)
  for (std::int64_t ii = 0; ii < n_edges; ++ii) {
    const auto i = static_cast<size_t>(ii);
    const auto e = static_cast<size_t>(edge_order[i]);
    new_edge[e] = static_cast<mesh_index>(i);
    // Left and right are kept: the normal and the node order stay valid.
    out.edge_left[i] = relabel(mesh.edge_left[e]);
    out.edge_right[i] = relabel(mesh.edge_right[e]);
  }
  out.edge_node0 = gather(mesh.edge_node0, edge_order);
  out.edge_node1 = gather(mesh.edge_node1, edge_order);
  out.edge_nx = gather(mesh.edge_nx, edge_order);
  out.edge_ny = gather(mesh.edge_ny, edge_order);
  out.edge_length = gather(mesh.edge_length, edge_order);
  const auto slots = static_cast<std::int64_t>(out.cell_edges.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < slots; ++k) {
    mesh_index& e = out.cell_edges[static_cast<size_t>(k)];
    if (e >= 0) e = new_edge[static_cast<size_t>(e)];
  }
  return out;
}

std::vector<double> from_file_order(const UnstructuredMesh& mesh, const std::vector<double>& values) {
  if (mesh.cell_file_index.empty()) return values;
  std::vector<double> out(values.size());
  for (size_t c = 0; c < out.size(); ++c) out[c] = values[static_cast<size_t>(mesh.cell_file_index[c])];
  return out;
}

std::vector<double> to_file_order(const UnstructuredMesh& mesh, const std::vector<double>& values) {
  if (mesh.cell_file_index.empty()) return values;
  std::vector<double> out(values.size());
  for (size_t c = 0; c < out.size(); ++c) out[static_cast<size_t>(mesh.cell_file_index[c])] = values[c];
  return out;
}

UnstructuredMesh apply_ordering(const UnstructuredMesh& mesh, CellOrdering ordering, std::uint64_t seed) {
  switch (ordering) {
    case CellOrdering::random:
      return renumber_cells(mesh, random_order(mesh, seed));
    case CellOrdering::rcm:
      return renumber_cells(mesh, rcm_order(mesh));
    case CellOrdering::morton:
      return renumber_cells(mesh, morton_order(mesh));
    case CellOrdering::file:
    default: {
      std::vector<mesh_index> identity(static_cast<size_t>(mesh.cells()));
      for (size_t c = 0; c < identity.size(); ++c) identity[c] = static_cast<mesh_index>(c);
      return renumber_cells(mesh, identity);
    }
  }
}

OrderingMetrics ordering_metrics(const UnstructuredMesh& mesh) {
  OrderingMetrics m;
  double sum = 0;
  std::int64_t interior = 0;
  for (size_t e = 0; e < mesh.edge_left.size(); ++e) {
    if (mesh.edge_right[e] < 0) continue;
    const index_t d = std::abs(index_t{mesh.edge_left[e]} - index_t{mesh.edge_right[e]});
    m.bandwidth = std::max(m.bandwidth, d);
    sum += static_cast<double>(d);
    ++interior;
  }
  if (interior > 0) m.mean_neighbour_distance = sum / static_cast<double>(interior);
  return m;
}

} // namespace shallows
