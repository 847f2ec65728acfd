// SPDX-License-Identifier: MIT
#pragma once
// Dry skipping on meshes (seed 002 "sparse simulations", seed 004's blocks
// for sparse wet areas): the cells in run order, in blocks of 32 (a warp),
// and a block that is dry with dry neighbour blocks is left out of a step.
//  * A block is dry when each of its cells is a dry fixed point
//    (dry_fixed_point) or inactive; a block with an edge on an open boundary
//    group (not a wall) is never dry, since water may come in there.
//  * A dry block all of whose neighbour blocks (the blocks of the cells
//    across its interior edges) are dry is not needed: its cells' edges all
//    join two dry cells, so the step would give each of them a zero rhs, the
//    same state and the same maxima. Leaving it out gives the same bits.
//  * The executors decide `needed` from `dry` at the start of a step with
//    dry_block_needed, the same function on the CPU and the GPU, compute the
//    needed blocks only, and set `dry` again for each block they updated.
// Cell numberings that keep neighbours close (RCM, Z-order: ordering.hpp)
// make the blocks compact, so that few dry cells are computed around the
// wet area.
#include <vector>

#include "shallows/bc/boundary.hpp"
#include "shallows/core/config.hpp"
#include "shallows/mesh/unstructured/mesh.hpp"

namespace shallows {

constexpr index_t kDryBlockCells = 32;

// The block graph and flags, as the loops read them (host or device memory).
// start == nullptr: no skipping.
struct DryBlocks {
  const mesh_index* start = nullptr;     // block b's neighbours: neighbours[start[b] .. start[b + 1])
  const mesh_index* neighbours = nullptr;
  const unsigned char* open = nullptr;   // 1: the block has an edge on an open boundary group (never dry)
  unsigned char* dry = nullptr;          // 1: every cell a dry fixed point or inactive (after the last update)
  unsigned char* needed = nullptr;       // this step's decision, for the passes that follow the first

  SHALLOWS_HD bool on() const { return start != nullptr; }
};

SHALLOWS_HD index_t dry_block_of(index_t cell) { return cell / kDryBlockCells; }

// Whether block b takes part in this step: it or a neighbour block is not dry.
SHALLOWS_HD bool dry_block_needed(const DryBlocks& d, index_t b) {
  if (!d.dry[b]) return true;
  for (index_t k = d.start[b]; k < d.start[b + 1]; ++k)
    if (!d.dry[d.neighbours[k]]) return true;
  return false;
}

// The block graph of a mesh on the host: each block's neighbour blocks (in
// increasing order, itself left out) and whether it touches an open boundary
// group: one whose condition (groups, by group) is not a wall.
struct DryBlockGraph {
  index_t blocks = 0;
  std::vector<mesh_index> start, neighbours;  // 32-bit: half the bytes for each step's decision to read
  std::vector<unsigned char> open;
};

DryBlockGraph dry_block_graph(index_t cells, const std::vector<mesh_index>& edge_left,
                              const std::vector<mesh_index>& edge_right,
                              const std::vector<BoundaryCondition<double>>& groups);

} // namespace shallows
