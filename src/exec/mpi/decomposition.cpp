// SPDX-License-Identifier: MIT
#include "shallows/exec/mpi/decomposition.hpp"

#include <cstddef>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace shallows::mpi {

ProcessGrid choose_process_grid(int ranks, index_t nx, index_t ny, int ranks_x, int ranks_y) {
  if (ranks < 1) throw std::runtime_error("the job has no ranks");
  const std::string n = std::to_string(ranks);
  if (ranks_x < 0 || ranks_y < 0) {
    throw std::runtime_error("--ranks-x / parallel.ranks_x and --ranks-y / parallel.ranks_y must be positive");
  }
  if (ranks_x > 0 && ranks_y > 0) {
    if (ranks_x * ranks_y != ranks) {
      throw std::runtime_error("--ranks-x / parallel.ranks_x " + std::to_string(ranks_x) +
                               " x --ranks-y / parallel.ranks_y " + std::to_string(ranks_y) + " is not the job's " + n +
                               " ranks");
    }
    return {ranks_x, ranks_y};
  }
  if (ranks_x > 0 || ranks_y > 0) {
    const int given = ranks_x > 0 ? ranks_x : ranks_y;
    if (ranks % given != 0) {
      const char* what = ranks_x > 0 ? "--ranks-x / parallel.ranks_x " : "--ranks-y / parallel.ranks_y ";
      throw std::runtime_error(what + std::to_string(given) + " does not divide the job's " + n + " ranks");
    }
    return ranks_x > 0 ? ProcessGrid{given, ranks / given} : ProcessGrid{ranks / given, given};
  }
  ProcessGrid best;
  double best_cut = std::numeric_limits<double>::infinity();
  for (int px = ranks; px >= 1; --px) {
    if (ranks % px != 0) continue;
    const int py = ranks / px;
    const double cut = double(px - 1) * double(ny) + double(py - 1) * double(nx);
    if (cut < best_cut) {
      best_cut = cut;
      best = {px, py};
    }
  }
  return best;
}

int stencil_radius(Scheme scheme) {
  // roe1: a cell's update reads its four neighbours. roe3: a stage reads the
  // traces of the neighbours, each reconstructed from its 3 x 3 cells (2 cells),
  // and a step has three stages.
  return scheme == Scheme::roe3 ? 6 : 1;
}

namespace {

// Cells start..end of part r of n cells split into p parts.
index_t part_start(index_t n, int p, int r) { return n * r / p; }

} // namespace

Block make_block(const ProcessGrid& pg, int rank, index_t nx, index_t ny, index_t halo) {
  Block b;
  b.rank = rank;
  b.rx = rank % pg.px;
  b.ry = rank / pg.px;
  if (nx < pg.px || ny < pg.py) {
    throw std::runtime_error("a " + std::to_string(nx) + " x " + std::to_string(ny) + " grid cannot be split over " +
                             std::to_string(pg.px) + " x " + std::to_string(pg.py) + " ranks");
  }
  b.owned = {part_start(nx, pg.px, b.rx), part_start(ny, pg.py, b.ry), part_start(nx, pg.px, b.rx + 1),
             part_start(ny, pg.py, b.ry + 1)};
  b.local = b.owned;
  const auto check = [&](index_t width, const char* axis) {
    if (width < halo) {
      throw std::runtime_error("the halo of " + std::to_string(halo) + " cells is wider than a block (" +
                               std::to_string(width) + " cells along " + axis + "): use fewer ranks along " + axis +
                               " or a smaller --halo-steps / parallel.halo_steps");
    }
  };
  if (b.rx > 0) {
    b.neighbour[0] = rank - 1;
    check(b.owned.i0 - part_start(nx, pg.px, b.rx - 1), "x");
    b.local.i0 -= halo;
  }
  if (b.rx < pg.px - 1) {
    b.neighbour[1] = rank + 1;
    check(part_start(nx, pg.px, b.rx + 2) - b.owned.i1, "x");
    b.local.i1 += halo;
  }
  if (b.ry > 0) {
    b.neighbour[2] = rank - pg.px;
    check(b.owned.j0 - part_start(ny, pg.py, b.ry - 1), "y");
    b.local.j0 -= halo;
  }
  if (b.ry < pg.py - 1) {
    b.neighbour[3] = rank + pg.px;
    check(part_start(ny, pg.py, b.ry + 2) - b.owned.j1, "y");
    b.local.j1 += halo;
  }
  return b;
}

ExchangeBoxes exchange_boxes(const Block& b, index_t halo) {
  const CellBox o = b.owned_in_local();
  const index_t h = halo, width = b.local.nx();
  return {{CellBox{o.i0, o.j0, o.i0 + h, o.j1}, CellBox{o.i1 - h, o.j0, o.i1, o.j1}, CellBox{0, o.j0, width, o.j0 + h},
           CellBox{0, o.j1 - h, width, o.j1}},
          {CellBox{o.i0 - h, o.j0, o.i0, o.j1}, CellBox{o.i1, o.j0, o.i1 + h, o.j1}, CellBox{0, o.j0 - h, width, o.j0},
           CellBox{0, o.j1, width, o.j1 + h}}};
}

CellBox inner_cells(const Block& b, int radius) {
  const CellBox o = b.owned_in_local();
  CellBox in{0, 0, b.local.nx(), b.local.ny()};
  if (b.neighbour[0] >= 0) in.i0 = o.i0 + radius;
  if (b.neighbour[1] >= 0) in.i1 = o.i1 - radius;
  if (b.neighbour[2] >= 0) in.j0 = o.j0 + radius;
  if (b.neighbour[3] >= 0) in.j1 = o.j1 - radius;
  return in;
}

Problem local_problem(const Problem& global, const Block& b) {
  Problem p = global;
  const Grid& g = global.grid;
  p.grid.nx = b.local.nx();
  p.grid.ny = b.local.ny();
  p.grid.x0 = g.x0 + double(b.local.i0) * g.dx;
  p.grid.y0 = g.y0 + double(b.local.j0) * g.dy;
  const auto cut = [&](const std::vector<double>& f) {
    std::vector<double> out(static_cast<std::size_t>(b.local.cells()));
    for (index_t j = 0; j < b.local.ny(); ++j) {
      for (index_t i = 0; i < b.local.nx(); ++i) {
        out[static_cast<std::size_t>(j * b.local.nx() + i)] =
            f[static_cast<std::size_t>((b.local.j0 + j) * g.nx + b.local.i0 + i)];
      }
    }
    return out;
  };
  // Per-cell inputs (a single value stands for every cell and stays).
  const auto cut_cells = [&](std::vector<double>& f) {
    if (f.size() == static_cast<std::size_t>(g.cells())) f = cut(f);
  };
  p.z = cut(global.z);
  p.h = cut(global.h);
  p.hu = cut(global.hu);
  p.hv = cut(global.hv);
  Forcing& f = p.forcing;
  cut_cells(f.rain.scale);
  cut_cells(f.manning);
  cut_cells(f.infiltration.p0);
  cut_cells(f.infiltration.p1);
  cut_cells(f.infiltration.p2);
  if (f.rain.has_frames()) {
    const auto cells = static_cast<std::size_t>(g.cells());
    std::vector<double> frames;
    for (std::size_t k = 0; k < f.rain.frame_times.size(); ++k) {
      const std::vector<double> frame(global.forcing.rain.frames.begin() + static_cast<std::ptrdiff_t>(k * cells),
                                      global.forcing.rain.frames.begin() + static_cast<std::ptrdiff_t>((k + 1) * cells));
      const std::vector<double> local = cut(frame);
      frames.insert(frames.end(), local.begin(), local.end());
    }
    f.rain.frames = std::move(frames);
  }
  for (PassiveScalar& s : p.scalars) cut_cells(s.c);
  // A source keeps its cells in order, in local indices, -1 outside the block
  // (the forcing takes their depths from the ranks that own them).
  for (VolumeSource& s : f.sources) {
    for (index_t& c : s.cells) {
      const index_t i = c % g.nx - b.local.i0, j = c / g.nx - b.local.j0;
      c = (i >= 0 && i < b.local.nx() && j >= 0 && j < b.local.ny()) ? j * b.local.nx() + i : -1;
    }
  }
  // The structures' cells become indices into the replica (StructureReplica),
  // each cell once, in the order the structures first name them.
  StructureReplica& r = f.replica;
  std::map<index_t, index_t> slot;  // problem cell -> replica index
  const auto replicate = [&](index_t& c) {
    const auto [at, added] = slot.try_emplace(c, r.size());
    if (added) {
      const index_t i = c % g.nx - b.local.i0, j = c / g.nx - b.local.j0;
      r.cells.push_back(i >= 0 && i < b.local.nx() && j >= 0 && j < b.local.ny() ? j * b.local.nx() + i : -1);
      r.z.push_back(global.z[static_cast<std::size_t>(c)]);
    }
    c = at->second;
  };
  for (Structure& st : f.structures) {
    if (st.has_ends()) {
      replicate(st.inlet);
      replicate(st.outlet);
    }
    for (LineCrossing& x : st.crossings) {
      replicate(x.left);
      replicate(x.right);
    }
  }
  // Segments along the local sides (indices shifted to the block); none on a
  // side that faces another block.
  for (BoundarySegment& s : p.segments) {
    SegmentCondition<double>& w = s.where;
    const index_t shift = (w.side == Side::west || w.side == Side::east) ? b.local.j0 : b.local.i0;
    if (b.neighbour[static_cast<int>(w.side)] >= 0) {
      w.begin = w.end = 0;
    } else {
      w.begin -= shift;
      w.end -= shift;
    }
  }
  for (int s = 0; s < 4; ++s) {
    if (b.neighbour[s] < 0) continue;
    p.boundary[static_cast<std::size_t>(s)] = {BoundaryKind::open, 0.0};
    f.boundary[static_cast<std::size_t>(s)] = {};
  }
  p.owned = b.owned_in_local();
  return p;
}

} // namespace shallows::mpi
