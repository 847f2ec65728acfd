// SPDX-License-Identifier: MIT
#include "shallows/mesh/unstructured/dry_blocks.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace shallows {

DryBlockGraph dry_block_graph(index_t cells, const std::vector<mesh_index>& edge_left,
                              const std::vector<mesh_index>& edge_right,
                              const std::vector<BoundaryCondition<double>>& groups) {
  if (edge_left.size() != edge_right.size()) throw std::invalid_argument("dry_block_graph: edge arrays differ in size");
  DryBlockGraph g;
  g.blocks = (cells + kDryBlockCells - 1) / kDryBlockCells;
  const auto blocks = static_cast<std::size_t>(g.blocks);
  g.open.assign(blocks, 0);
  std::vector<std::vector<mesh_index>> near(blocks);
  for (std::size_t e = 0; e < edge_left.size(); ++e) {
    const mesh_index l = edge_left[e], r = edge_right[e];
    if (l < 0 || l >= cells || r >= cells)
      throw std::invalid_argument("dry_block_graph: edge " + std::to_string(e) + " names a cell outside the mesh");
    const index_t bl = dry_block_of(l);
    if (r < 0) {
      const auto group = static_cast<std::size_t>(boundary_group(r));
      if (group >= groups.size() || groups[group].kind != BoundaryKind::wall) g.open[static_cast<std::size_t>(bl)] = 1;
      continue;
    }
    const index_t br = dry_block_of(r);
    if (br == bl) continue;
    near[static_cast<std::size_t>(bl)].push_back(static_cast<mesh_index>(br));
    near[static_cast<std::size_t>(br)].push_back(static_cast<mesh_index>(bl));
  }
  g.start.assign(blocks + 1, 0);
  for (std::size_t b = 0; b < blocks; ++b) {
    std::vector<mesh_index>& v = near[b];
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    g.neighbours.insert(g.neighbours.end(), v.begin(), v.end());
    if (g.neighbours.size() > static_cast<std::size_t>(std::numeric_limits<mesh_index>::max()))
      throw std::invalid_argument("dry_block_graph: more block neighbours than 32-bit indices hold");
    g.start[b + 1] = static_cast<mesh_index>(g.neighbours.size());
  }
  return g;
}

} // namespace shallows
