// SPDX-License-Identifier: MIT
#pragma once
// Decomposition of a Cartesian grid into rectangular blocks, one per rank,
// on a px x py process grid (rank = ry * px + rx), each block widened by a
// halo on the sides that face another block ("ghost-cell expansion", seed
// 002): a halo of k * r cells lets a rank take k steps between exchanges,
// r being the cells a step's stencil reaches (1 for roe1; roe3: 2 per stage,
// 3 stages). Pure functions: no MPI here.
#include <array>
#include <string>

#include "shallows/mesh/structured/grid.hpp"
#include "shallows/solver/problem.hpp"

namespace shallows::mpi {

struct ProcessGrid {
  int px = 1;
  int py = 1;
};

// The process grid of `ranks` ranks for an nx x ny grid: ranks_x / ranks_y
// where given (> 0; one of them alone fixes the other), else the factor pair
// with the least cut length (px - 1) ny + (py - 1) nx, ties to the larger px.
// Throws std::runtime_error naming --ranks-x / parallel.ranks_x (and y) when they do not fit.
ProcessGrid choose_process_grid(int ranks, index_t nx, index_t ny, int ranks_x = 0, int ranks_y = 0);

// Cells a step reaches beyond a cell: how far values from outside a block
// travel into it per step.
int stencil_radius(Scheme scheme);

// One rank's part of the global grid, in global cell indices.
struct Block {
  int rank = 0, rx = 0, ry = 0;
  CellBox owned;   // the cells this rank computes and outputs
  CellBox local;   // owned and its halo: the grid of the rank's executor
  // Neighbour ranks west, east, south, north (Side order); -1 at the domain's edge.
  int neighbour[4] = {-1, -1, -1, -1};

  // owned in the coordinates of the local grid.
  CellBox owned_in_local() const {
    return {owned.i0 - local.i0, owned.j0 - local.j0, owned.i1 - local.i0, owned.j1 - local.j0};
  }
};

// The block of `rank` with a halo of `halo` cells. Throws std::runtime_error
// where a neighbouring block is narrower than the halo (its owned cells could
// not fill it).
Block make_block(const ProcessGrid& pg, int rank, index_t nx, index_t ny, index_t halo);

// What an exchange moves on each side (west, east, south, north; Side
// order), in the block's local coordinates, with a halo of `halo` cells:
// west/east over the owned rows, south/north over the whole local width, so
// that the corners come through the west/east halos of the south/north
// neighbours. Meaningful on the sides that face another block.
struct ExchangeBoxes {
  std::array<CellBox, 4> send;  // owned cells the neighbour on that side needs
  std::array<CellBox, 4> recv;  // the halo that neighbour fills
};
ExchangeBoxes exchange_boxes(const Block& b, index_t halo);

// The local cells whose stencil (`radius` cells) reaches no halo cell that an
// exchange writes: what a step can compute while the halos travel.
CellBox inner_cells(const Block& b, int radius);

// The executor's problem of a block: the global problem's fields cut to the
// local box, the global boundary conditions on the domain's edges and open
// ones where another block lies (those ghost cells and the halo's outer
// cells go wrong; the halo keeps that away from the owned cells for k
// steps), and owned set.
Problem local_problem(const Problem& global, const Block& b);

} // namespace shallows::mpi
