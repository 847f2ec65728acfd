// SPDX-License-Identifier: MIT
#pragma once
// Device side of the CUDA executor for Cartesian grids: the time-step
// kernels, all calling the one numerical core (cartesian_edge, advance_cell,
// ghost_state) that the CPU executor calls, with the same expressions in the
// same order, so that a GPU step computes what a CPU step computes.
//
// Layout: structure of arrays h, hu, hv (two buffers each, ping-pong) and z,
// padded as Grid describes (2 ghost layers). Ghost states are never stored:
// a kernel that reads a cell outside the domain computes it from the mirrored
// interior cell with ghost_state, so no boundary kernel runs.
//
// Time control lives on the device (struct Ctrl, three slots used in turn):
// slot s holds the time, the step count, the buffer parity and the largest
// CFL rate of one state; the step kernel reads slot s, computes dt exactly as
// the CPU executor does, and fills slot s+1. A step launched after the target
// time is reached does nothing but copy the slot, so the host can launch a
// batch of steps and synchronise once per batch.
//
// Kernels:
//  * lagged_kernel (the default; "march" kernel): a warp owns a strip of 32
//    adjacent columns and marches up a chunk of rows, one row per
//    iteration, keeping the rows it needs in registers; a lane's west
//    neighbour comes from the lane below it through a shuffle, and the halo
//    lanes 0 and 31 are loaded but not written. The rhs of state n was
//    stored by the previous launch (first_rhs_kernel for the first state),
//    so state n+1 is a point-wise update of the chunk plus a one-cell ring;
//    the edges of state n+1 give the next rhs (stored) and the rate. Each
//    edge is evaluated once per step; 13 values per cell-update. Its kMaxima
//    instance also grows the run's maxima (solver/cell_maxima.hpp) with both
//    states of the cells it writes, n (loaded anyway) and n+1: 2 more values
//    read per cell-update, stored where they grow. A run launches it every
//    other step and the benchmark's instance in between, so the maxima cost
//    1 value per cell-update; slot_maxima_kernel catches up with a state left
//    ungrown before the maxima are read. Its kForcing instance applies the
//    cell forcing (rain, infiltration, a Manning map: forcing::MarchForcing)
//    to each state it makes, before that state's edges, so the rhs it stores
//    is the forced state's.
//  * lagged_scalars_kernel: a run with passive scalars follows each lagged
//    step with a pass that transports them, one thread per cell, with the
//    mass fluxes of state n's edges, which the lagged kernel's kScalars
//    instance stored with the rhs (MassFluxes), and state n and its rhs,
//    still in their buffers: 2 values stored and 5 read per cell-update (h,
//    rhs, bed, 2 fluxes; with infiltration a double each way more), 2 per
//    scalar. (Marching up strips of 32 columns, dividing out each
//    concentration once, is slower: bench/results.md.)
//  * plain_rate_kernel + plain_update_kernel ("plain"): one thread per cell,
//    neighbours read from global memory (L1/L2), each edge evaluated by both
//    of its cells: the simple reference the lagged kernel is tested against.
// Other designs (one-pass "fused", rate + update "split") are slower: see
// bench/cuda-notes.md.
//
// Dry-chunk skipping (seed 002, "sparse simulations"): a chunk whose cells
// are all dry fixed points (h in [+0, h_dry], hu = hv = +0, or inactive) and
// whose eight neighbour chunks are too, is not computed: such cells stay
// bit-identical and all edges touching them carry zero fluctuation and zero
// speed for this step and the next, so the result is the same bit for bit.
// A skipped chunk copies its cells into the output buffer once, the first
// time it is skipped after being computed, so both buffers hold its state.
// With compaction, list_kernel lists the chunks that need a warp each step
// and the step kernels' warps take their chunks from the list.
#include <cuda_runtime.h>

#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "shallows/solver/cell_layout.hpp"
#include "shallows/bc/boundary.hpp"
#include "shallows/mesh/structured/cartesian_edges.hpp"
#include "shallows/physics/cell_update.hpp"
#include "shallows/physics/scalar_transport.hpp"
#include "shallows/solver/cell_maxima.hpp"
#include "shallows/solver/time_step.hpp"
#include "forcing_kernels.cuh"
#include "warp.cuh"

namespace shallows::gpu {

constexpr int kBlockThreads = 128;
constexpr int kBlockWarps = kBlockThreads / 32;
constexpr unsigned long long kNonFinite = ~0ull;

// Resident blocks per SM the step kernels are compiled for (caps registers:
// 65536 / (128 * blocks)). Overridable at build time for tuning.
#ifndef SHALLOWS_CUDA_MIN_BLOCKS_FLOAT
#define SHALLOWS_CUDA_MIN_BLOCKS_FLOAT 5
#endif
#ifndef SHALLOWS_CUDA_MIN_BLOCKS_DOUBLE
#define SHALLOWS_CUDA_MIN_BLOCKS_DOUBLE 3
#endif
template <class Real>
struct MinBlocks {
  static constexpr int value = sizeof(Real) == 4 ? SHALLOWS_CUDA_MIN_BLOCKS_FLOAT : SHALLOWS_CUDA_MIN_BLOCKS_DOUBLE;
};

// Time control of one state (see the file comment). rate_bits holds the
// largest CFL rate of the state as the bit pattern of a non-negative Real, so
// that atomicMax on it is exact and order-independent; kNonFinite marks a
// rate that is NaN or infinite.
struct Ctrl {
  double t;             // time of this state
  long long steps;      // steps taken since the host last set t
  double dt;            // dt of the step that produced this state
  double maxima_time;   // t_previous + dt, not clipped to the target: the time the CPU's maxima take
  unsigned long long rate_bits;
  int parity;           // buffer holding this state
  int status;           // 0: fine; 1: the CFL rate was not finite
  int stepped;          // 1 when the launch that filled this slot took a step
  int pad;
};

// Arguments of one step launch.
struct Launch {
  int slot;             // Ctrl slot of the input state
  int use_t_in;         // 1: take t from t_in (Backend::step), 0: from the slot
  double t_in;
  double target;        // stop at this time (Simulation::advance_to semantics)
  double dt_max;        // cap on dt (Backend::step's dt_max)
  long long max_steps;  // stop after this many steps since t was set
};

// What the forcing kernels need of a step launch: its t (the launch's, or the
// input slot's) and dt and the buffer of the state after it (the output
// slot's), read on the device after the step's kernels. An executor with one
// state buffer (meshes) gives it as both buffers: its slots keep parity 0.
template <class Real>
struct StepClock {
  const Ctrl* ctrl;
  int slot;
  int use_t_in;
  double t_in;
  Real* h[2];
  Real* hu[2];
  Real* hv[2];

  __device__ forcing::StepWindow<Real> window() const {
    const Ctrl& in = ctrl[slot];
    const Ctrl& out = ctrl[(slot + 1) % 3];
    // Selects, not h[parity]: an index into the kernel's parameters would copy them to local memory.
    const bool b = out.parity != 0;
    return {out.stepped != 0, use_t_in ? t_in : in.t, out.dt, b ? h[1] : h[0], b ? hu[1] : hu[0], b ? hv[1] : hv[0],
            out.parity};
  }
};

// Chunks of the march kernels: strips of `width` columns, `rows` rows each.
struct ChunkGrid {
  int width = 30;       // 32 lanes less a halo lane on each side
  int rows = 32;
  index_t strips = 0;
  index_t chunk_rows = 0;
  index_t chunks = 0;

  // The chunks a box of cells touches, as a box of (strip, chunk row).
  __host__ __device__ CellBox chunks_over(const CellBox& box) const {
    if (box.cells() <= 0) return {};
    return {box.i0 / width, box.j0 / rows, (box.i1 - 1) / width + 1, (box.j1 - 1) / rows + 1};
  }
};

template <class Real>
struct Params {
  Real* h[2];
  Real* hu[2];
  Real* hv[2];
  Real* rh[2];             // lagged kernel: rhs of the state, same layout (null otherwise)
  Real* rhu[2];
  Real* rhv[2];
  const Real* z;
  index_t nx, ny, pitch;
  PhysicsParams<Real> phys;
  BoundaryCondition<Real> bc[4];
  Real inv_dx, inv_dy, half_inv_dx, half_inv_dy;
  double cfl;
  double dry_dt;  // dry_time_step
  ChunkGrid cg;
  int dry_skip;            // 1: skip dry chunks
  int level_sides;         // bit s: side s has a level condition (never skip next to it)
  unsigned char* dry[2];   // per chunk: all cells dry fixed points (indexed by state parity)
  unsigned char* same;     // per chunk: both buffers hold the chunk's current state
  unsigned long long* computed;  // chunks computed (statistics)
  unsigned* list;          // compaction: chunks that need a warp this step (null: every chunk gets one)
  unsigned* list_count;    // entries of the list, one counter per Ctrl slot
  Ctrl* ctrl;
  double* positivity_sum;  // positivity account: the depths the clamps added, summed over cells and steps
  CellBox owned;           // the cells whose rates count (Problem::owned_cells)
  // Maxima (cell_maxima.hpp), padded as the state; null when not tracked.
  // The lagged kernel grows them with each state it makes, the plain steps
  // and the initial state with slot_maxima_kernel.
  Real* max_h;
  Real* max_speed;
  double* arrival;
  double arrival_threshold;
  // The faces of weirs' and walls' lines (Structure::crossings), per padded
  // cell: bit 0 its west face, 1 east, 2 south, 3 north; null: none. The
  // plain kernels read them (kWalls) and so does first_rhs_kernel, which
  // makes the rhs of every chunk next to a line's cells after the structures
  // (their cells are MarchForcing::after_sources chunks'): the lagged
  // kernel's own edges never meet a line's face.
  const unsigned char* walls;

  __device__ __forceinline__ index_t index(index_t i, index_t j) const {
    return (j + Grid::ghost) * pitch + (i + Grid::ghost);
  }
};

// What only the plain kernels take (they run the problems the lagged kernel
// does not: forcing, passive scalars, boundary segments), kept out of the
// Params every kernel takes.
template <class Real>
struct PlainExtras {
  // Passive scalars: h c of scalar s in hc[2 s + parity], the concentration
  // entering through side k in scalar_side[4 s + k].
  Real* const* hc = nullptr;
  const Real* scalar_side = nullptr;
  int scalars = 0;
  // Boundary segments: conditions on stretches of sides, and the
  // concentration each brings of each scalar (scalar_segment[s n + k]).
  const SegmentCondition<Real>* segments = nullptr;
  int segment_count = 0;
  const Real* scalar_segment = nullptr;
};

// The mass flux of each edge of a state (scalar_transport.hpp's
// edge_mass_flux), padded as the state, by buffer parity: x[p][k] is the
// flux through the east edge of the cell at k, y[p][k] through its north
// edge; the west and south sides' edges are the ghosts' (i = -1, j = -1).
// The lagged kernel's kScalars instance and first_rhs_kernel store them
// with the edges they evaluate, for lagged_scalars_kernel; null without
// scalars.
template <class Real>
struct MassFluxes {
  Real* x[2] = {};
  Real* y[2] = {};
};

// ---------------------------------------------------------------- helpers

template <class Real>
struct Cell {
  Real h, hu, hv, z;
};

template <class Real>
__device__ __forceinline__ State<Real> st(const Cell<Real>& c) {
  return {c.h, c.hu, c.hv};
}

__device__ __forceinline__ unsigned long long encode_rate(float r) {
  if (!(r <= FLT_MAX)) return kNonFinite;
  return r > 0.0f ? static_cast<unsigned long long>(__float_as_uint(r)) : 0ull;
}
__device__ __forceinline__ unsigned long long encode_rate(double r) {
  if (!(r <= DBL_MAX)) return kNonFinite;
  return r > 0.0 ? static_cast<unsigned long long>(__double_as_longlong(r)) : 0ull;
}
template <class Real>
__device__ __forceinline__ Real decode_rate(unsigned long long b);
template <>
__device__ __forceinline__ float decode_rate<float>(unsigned long long b) {
  return __uint_as_float(static_cast<unsigned>(b));
}
template <>
__device__ __forceinline__ double decode_rate<double>(unsigned long long b) {
  return __longlong_as_double(static_cast<long long>(b));
}

template <class Real>
__device__ __forceinline__ Cell<Real> shfl_down(Cell<Real> c, int d) {
  return {shfl_down(c.h, d), shfl_down(c.hu, d), shfl_down(c.hv, d), shfl_down(c.z, d)};
}

template <class Real>
__device__ __forceinline__ BoundaryCondition<Real> side_bc(const Params<Real>& grid, int side) {
  switch (side) {
    case 0: return grid.bc[0];
    case 1: return grid.bc[1];
    case 2: return grid.bc[2];
    default: return grid.bc[3];
  }
}

// A side's condition at time t: the side's series' value there (as the
// host takes it), or its constant one.
template <class Real>
__device__ __forceinline__ BoundaryCondition<Real> side_at(const Params<Real>& grid,
                                                           const forcing::SideSeries& side_series, int side, double t) {
  return condition_at_time(side_bc(grid, side), side_series.side[side], t);
}

// The four sides' conditions as a block keeps them in shared memory (a
// type without constructors, as __shared__ requires).
template <class Real>
struct BlockSides {
  int kind[4];
  Real value[4];

  __device__ __forceinline__ BoundaryCondition<Real> operator[](int s) const {
    return {static_cast<BoundaryKind>(kind[s]), value[s]};
  }
};

// The sides' conditions at time t into `sides`, by threads 0..3 of the
// block; every thread must call it (it synchronises the block).
template <class Real>
__device__ __forceinline__ void block_sides_at(const Params<Real>& grid, const forcing::SideSeries& side_series,
                                               double t, BlockSides<Real>& sides) {
  if (threadIdx.x < 4) {
    const BoundaryCondition<Real> bc = side_at(grid, side_series, static_cast<int>(threadIdx.x), t);
    sides.kind[threadIdx.x] = static_cast<int>(bc.kind);
    sides.value[threadIdx.x] = bc.value;
  }
  __syncthreads();
}

// The condition of boundary cell `along` (j on west/east, i on south/north)
// of a side: its segment's, else the side's (sides[side] where given, else
// Params::bc).
template <class Real>
__device__ __forceinline__ BoundaryCondition<Real> boundary_cell_bc(const Params<Real>& grid, int side, index_t along,
                                                                    const SegmentCondition<Real>* segments,
                                                                    int segment_count,
                                                                    const BlockSides<Real>* sides = nullptr) {
  return condition_at(static_cast<Side>(side), along, sides ? (*sides)[side] : side_bc(grid, side), segments,
                      segment_count);
}

// Cell (i, j) of the state in (h, hu, hv), -2 <= i <= nx + 1, -2 <= j <= ny + 1
// or beyond. Interior cells are read; first-layer ghosts are computed from the
// mirrored interior cell as fill_ghost_cell does; corners, second-layer ghosts
// and anything further (never used by a first-order edge of an interior
// cell) are an inactive dummy.
template <class Real>
__device__ __forceinline__ Cell<Real> load_cell(const Params<Real>& grid, const Real* __restrict__ h,
                                                const Real* __restrict__ hu, const Real* __restrict__ hv,
                                                index_t i, index_t j,
                                                const SegmentCondition<Real>* segments = nullptr,
                                                int segment_count = 0,
                                                const BlockSides<Real>* sides = nullptr) {
  const bool in_i = i >= 0 && i < grid.nx;
  const bool in_j = j >= 0 && j < grid.ny;
  if (in_i && in_j) {
    const index_t k = grid.index(i, j);
    return {h[k], hu[k], hv[k], grid.z[k]};
  }
  int side = -1;
  index_t si = i, sj = j;
  if (in_j) {
    if (i == -1) {
      side = static_cast<int>(Side::west);
      si = 0;
    } else if (i == grid.nx) {
      side = static_cast<int>(Side::east);
      si = grid.nx - 1;
    }
  } else if (in_i) {
    if (j == -1) {
      side = static_cast<int>(Side::south);
      sj = 0;
    } else if (j == grid.ny) {
      side = static_cast<int>(Side::north);
      sj = grid.ny - 1;
    }
  }
  if (side < 0) return {Real(0), Real(0), Real(0), math::quiet_nan(Real(0))};
  const index_t k = grid.index(si, sj);
  const Real zi = grid.z[k];
  const State<Real> g = ghost_state(State<Real>{h[k], hu[k], hv[k]}, zi, static_cast<Side>(side),
                                    boundary_cell_bc(grid, side, side < 2 ? sj : si, segments, segment_count, sides),
                                    grid.phys);
  // The ghost's bed mirrors the interior one (make_padded_fields).
  return {g.h, g.hu, g.hv, zi};
}

// rhs = -((W + E) / dx + (S + N) / dy), component by component, in the
// CPU executor's order.
template <class Real>
__device__ __forceinline__ State<Real> cell_rhs(const Params<Real>& grid, State<Real> w, State<Real> e, State<Real> s,
                                                State<Real> n) {
  return {-((w.h + e.h) * grid.inv_dx + (s.h + n.h) * grid.inv_dy),
          -((w.hu + e.hu) * grid.inv_dx + (s.hu + n.hu) * grid.inv_dy),
          -((w.hv + e.hv) * grid.inv_dx + (s.hv + n.hv) * grid.inv_dy)};
}

__device__ __forceinline__ unsigned long long warp_max(unsigned long long v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const unsigned long long o = __shfl_xor_sync(kFullMask, v, off);
    v = o > v ? o : v;
  }
  return v;
}

// Block maximum of v, then one atomicMax per block. Every thread of the
// block must call it.
__device__ __forceinline__ void block_max_to(unsigned long long v, unsigned long long* target) {
  __shared__ unsigned long long warp_best[kBlockWarps];
  v = warp_max(v);
  if ((threadIdx.x & 31) == 0) warp_best[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long m = warp_best[0];
#pragma unroll
    for (int w = 1; w < kBlockWarps; ++w) m = warp_best[w] > m ? warp_best[w] : m;
    if (m != 0) atomicMax(target, m);
  }
}

// The time of a launch's input state: t_in (Backend::step) or the slot's.
__device__ __forceinline__ double launch_time(const Ctrl& c, const Launch& launch) {
  return launch.use_t_in ? launch.t_in : c.t;
}

// Does the launch take a step from control slot c? (The same on every thread.)
__device__ __forceinline__ bool launch_takes_step(const Ctrl& c, const Launch& launch) {
  return c.status == 0 && takes_step(launch_time(c, launch), launch.target, c.steps, launch.max_steps);
}

// Is a step to be taken from slot c, and with which dt, from time t_out?
// Step control as every executor's (solver/time_step.hpp): dt capped by
// launch.dt_max and the target. step_prologue's decision, for the kernels of
// a step that do not fill the next slot.
template <class Real, class Params>
__device__ __forceinline__ bool step_of(const Params& grid, const Launch& launch, const Ctrl& c, double& dt_out,
                                        double& t_out) {
  t_out = launch_time(c, launch);
  const double rate = static_cast<double>(decode_rate<Real>(c.rate_bits));
  dt_out = cfl_time_step(rate, grid.cfl, grid.dry_dt, step_cap(t_out, launch.target, launch.dt_max));
  return launch_takes_step(c, launch) && c.rate_bits != kNonFinite;
}

// How a step kernel fills the next control slot (step_prologue).
enum SlotFill : int {
  kPingPong = 1,        // two state buffers: the slot names the one holding its state
  kResetRate = 2,       // the next slot's rate is set to 0: a rate kernel of its own accumulates into it
  kClearSlotAfter = 4,  // the slot after the next one gets rate 0: the next launch accumulates into it
};

// step_of's decision, for the kernel that fills the next slot: thread 0 of
// block 0 fills it (all but rate_bits when a step is taken, unless
// kResetRate). t_out: the time of the input state.
template <class Real, int kFill, class Params>
__device__ __forceinline__ bool step_prologue(const Params& grid, const Launch& launch, const Ctrl& c, double& dt_out,
                                              double& t_out) {
  double dt = 0, t = 0;
  const bool active = step_of<Real>(grid, launch, c, dt, t);
  const bool wanted = launch_takes_step(c, launch);
  const bool finite = c.rate_bits != kNonFinite;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    Ctrl* o = &grid.ctrl[(launch.slot + 1) % 3];
    if (active) {
      o->t = step_end_time(t, dt, launch.target);
      o->steps = c.steps + 1;
      o->dt = dt;
      o->maxima_time = t + dt;
      if (kFill & kPingPong) o->parity = 1 - c.parity;
      o->status = 0;
      o->stepped = 1;
      if (kFill & kResetRate) o->rate_bits = 0;
    } else {
      o->t = t;
      o->steps = c.steps;
      o->dt = c.dt;
      o->maxima_time = c.maxima_time;
      if (kFill & kPingPong) o->parity = c.parity;
      o->status = (wanted && !finite) ? 1 : c.status;
      o->stepped = 0;
      o->rate_bits = c.rate_bits;
    }
    if (kFill & kClearSlotAfter) grid.ctrl[(launch.slot + 2) % 3].rate_bits = 0;
  }
  dt_out = dt;
  t_out = t;
  return active;
}

// Dry-chunk test for the warp's chunk (sx, cy): it and its 8 neighbours dry.
template <class Real>
__device__ __forceinline__ bool neighbourhood_dry(const Params<Real>& grid, int parity, index_t sx, index_t cy,
                                                  int lane) {
  bool d = true;
  if (lane < 9) {
    const index_t x = sx + (lane % 3) - 1;
    const index_t y = cy + (lane / 3) - 1;
    if (x >= 0 && x < grid.cg.strips && y >= 0 && y < grid.cg.chunk_rows)
      d = grid.dry[parity][y * grid.cg.strips + x] != 0;
  }
  return __all_sync(kFullMask, d);
}

template <class Real>
__device__ __forceinline__ bool next_to_level_side(const Params<Real>& grid, index_t sx, index_t cy) {
  return ((grid.level_sides & 1) && sx == 0) || ((grid.level_sides & 2) && sx == grid.cg.strips - 1) ||
         ((grid.level_sides & 4) && cy == 0) || ((grid.level_sides & 8) && cy == grid.cg.chunk_rows - 1);
}

// Skipped chunk: make sure the output buffer holds its state, keep it dry.
template <class Real>
__device__ __forceinline__ void skip_chunk(const Params<Real>& grid, int parity, index_t chunk, index_t i,
                                           bool tile_lane, index_t j0, index_t jend, int lane) {
  if (!grid.same[chunk]) {
    if (tile_lane) {
      for (index_t j = j0; j < jend; ++j) {
        const index_t k = grid.index(i, j);
        grid.h[1 - parity][k] = grid.h[parity][k];
        grid.hu[1 - parity][k] = grid.hu[parity][k];
        grid.hv[1 - parity][k] = grid.hv[parity][k];
        if (grid.rh[0]) {
          grid.rh[1 - parity][k] = grid.rh[parity][k];
          grid.rhu[1 - parity][k] = grid.rhu[parity][k];
          grid.rhv[1 - parity][k] = grid.rhv[parity][k];
        }
      }
    }
    __syncwarp();
    if (lane == 0) grid.same[chunk] = 1;
  }
  if (lane == 0) grid.dry[1 - parity][chunk] = 1;
}

// The chunk of global warp gw: with compaction the gw-th entry of this
// step's list (none past its end), else chunk gw.
template <class Real>
__device__ __forceinline__ bool warp_chunk(const Params<Real>& grid, int slot, index_t gw, index_t& chunk) {
  if (grid.list) {
    const unsigned count = grid.list_count[slot];
    if (gw >= static_cast<index_t>(count)) return false;
    chunk = static_cast<index_t>(grid.list[gw]);
    return true;
  }
  chunk = gw;
  return gw < grid.cg.chunks;
}

// Compaction (seed 002, "sparse simulations"): lists the chunks that need a
// warp this step, those not dry with dry neighbours and the dry ones whose
// output buffer does not hold their state yet; marks the others dry for the
// next state. The order of the list (atomics) varies from run to run; the
// results do not, as chunks are independent and the rate is a maximum.
template <class Real>
__global__ void list_kernel(const Params<Real> grid, const Launch launch) {
  const Ctrl c = grid.ctrl[launch.slot];
  if (blockIdx.x == 0 && threadIdx.x == 0) grid.list_count[(launch.slot + 1) % 3] = 0;
  if (!launch_takes_step(c, launch)) return;
  const int parity = c.parity;
  const index_t chunk = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  bool need = false;
  if (chunk < grid.cg.chunks) {
    const index_t cy = chunk / grid.cg.strips;
    const index_t sx = chunk - cy * grid.cg.strips;
    bool dry = true;
    for (index_t y = cy - 1; y <= cy + 1; ++y) {
      for (index_t x = sx - 1; x <= sx + 1; ++x) {
        if (x >= 0 && x < grid.cg.strips && y >= 0 && y < grid.cg.chunk_rows)
          dry = dry && grid.dry[parity][y * grid.cg.strips + x];
      }
    }
    need = !dry || !grid.same[chunk];
    if (!need) grid.dry[1 - parity][chunk] = 1;
  }
  warp_append(grid.list, &grid.list_count[launch.slot], need, static_cast<unsigned>(chunk));
}

// ---------------------------------------------------------------- first rhs

// The rhs and CFL rate of a state set by the host (slot launch.slot), which the
// lagged kernel takes from the launch before it: rhs into grid.rh[parity],
// rate accumulated into the slot. Also, over a list of chunks, of a state
// that changed after the lagged kernel made it: halos unpacked, sources
// (MarchForcing::after_sources), whose cells' maxima it then grows
// (kMaxima, when the slot's launch took a step). The ghosts take the sides'
// series (side_series) at the state's time, as step_prologue takes it.
// With scalars it also stores the state's mass fluxes (mass_fluxes).
template <class Real, bool kMaxima = false>
__global__ void __launch_bounds__(kBlockThreads) first_rhs_kernel(const Params<Real> grid, const Launch launch,
                                                                  const forcing::SideSeries side_series,
                                                                  const MassFluxes<Real> mass_fluxes) {
  const Ctrl c = grid.ctrl[launch.slot];
  __shared__ BlockSides<Real> block_sides;
  block_sides_at(grid, side_series, launch_time(c, launch), block_sides);
  const BlockSides<Real>* sides = &block_sides;
  const int parity = c.parity;
  const int lane = threadIdx.x & 31;
  const index_t gw = static_cast<index_t>(blockIdx.x) * kBlockWarps + (threadIdx.x >> 5);
  index_t chunk = 0;
  unsigned long long best = 0;
  if (warp_chunk(grid, launch.slot, gw, chunk)) {
    const index_t cy = chunk / grid.cg.strips;
    const index_t sx = chunk - cy * grid.cg.strips;
    const index_t i0 = sx * grid.cg.width;
    const index_t j0 = cy * grid.cg.rows;
    const index_t jend = min(j0 + static_cast<index_t>(grid.cg.rows), grid.ny);
    const index_t i = i0 - 1 + lane;
    const bool tile_lane = lane >= 1 && lane < 31 && i < grid.nx;
    const Real* __restrict__ h = grid.h[parity];
    const Real* __restrict__ hu = grid.hu[parity];
    const Real* __restrict__ hv = grid.hv[parity];
    const auto load = [&](index_t j) {
      return j <= jend ? load_cell(grid, h, hu, hv, i, j, static_cast<const SegmentCondition<Real>*>(nullptr), 0, sides)
                       : Cell<Real>{Real(0), Real(0), Real(0), math::quiet_nan(Real(0))};
    };
    // The line faces of cell (i, r) (Params::walls; none outside the padded grid).
    const auto walls_of = [&](index_t r) -> unsigned {
      return grid.walls && i >= -1 && i <= grid.nx && r >= -1 && r <= grid.ny ? grid.walls[grid.index(i, r)] : 0u;
    };
    // The edge of an axis between cells a and b: without a wall, one
    // evaluation for both; across a line's face, each side's own (wall_edge).
    const auto edge = [&](auto axis_c, const Cell<Real>& a, const Cell<Real>& b, bool wall, EdgeFluctuation<Real>& lo,
                          EdgeFluctuation<Real>& hi) {
      constexpr int axis = decltype(axis_c)::value;
      const CellPrimitive<Real> pa = cell_primitive(st(a), a.z, grid.phys), pb = cell_primitive(st(b), b.z, grid.phys);
      if (wall) {
        wall_edge<axis>(pa, pb, grid.phys, lo, hi);
      } else {
        lo = cartesian_edge<axis>(pa, pb, grid.phys);
        hi = lo;
      }
    };
    const auto both_active = [](const Cell<Real>& a, const Cell<Real>& b, bool wall) {
      return !wall && !math::is_nan(a.z) && !math::is_nan(b.z);
    };
    Cell<Real> b = load(j0);
    EdgeFluctuation<Real> fs;  // the south edge of row r, as row r sees it
    {
      const Cell<Real> a = load(j0 - 1);
      const bool wall = (walls_of(j0) & 4u) != 0;
      EdgeFluctuation<Real> below;
      edge(std::integral_constant<int, 1>{}, a, b, wall, below, fs);
      if (mass_fluxes.y[0] && tile_lane && j0 == 0)  // the south side's edge
        mass_fluxes.y[parity][grid.index(i, -1)] = edge_mass_flux(a.hv, b.hv, fs, both_active(a, b, wall));
    }
    Cell<Real> c1 = load(j0 + 1);
    for (index_t r = j0; r < jend; ++r) {
      const Cell<Real> d = load(r + 2);
      const Cell<Real> be = shfl_down(b, 1);
      const unsigned walls = walls_of(r);
      EdgeFluctuation<Real> fn, fn_above, fe, fe_east;
      edge(std::integral_constant<int, 1>{}, b, c1, (walls & 8u) != 0, fn, fn_above);
      edge(std::integral_constant<int, 0>{}, b, be, (walls & 2u) != 0, fe, fe_east);
      const Real w_speed = shfl_up(fe_east.speed, 1);
      const Real rate = (w_speed + fe.speed) * grid.half_inv_dx + (fs.speed + fn.speed) * grid.half_inv_dy;
      const State<Real> w = shfl_up(fe_east.to_right, 1);
      const State<Real> rhs = cell_rhs(grid, w, fe.to_left, fs.to_right, fn.to_left);
      const index_t k = grid.index(i, r);
      if (mass_fluxes.x[0]) {
        const Real m = edge_mass_flux(b.hu, be.hu, fe, both_active(b, be, (walls & 2u) != 0));
        if (tile_lane || i == -1) mass_fluxes.x[parity][k] = m;  // i = -1: the west side's edge
        if (tile_lane)
          mass_fluxes.y[parity][k] = edge_mass_flux(b.hv, c1.hv, fn, both_active(b, c1, (walls & 8u) != 0));
      }
      if (tile_lane) {
        grid.rh[parity][k] = rhs.h;
        grid.rhu[parity][k] = rhs.hu;
        grid.rhv[parity][k] = rhs.hv;
        // As slot_maxima_kernel grows them (MaximaOf::step).
        if (kMaxima && c.stepped)
          track_cell_maxima(st(b), c.maxima_time, grid.phys.h_dry, grid.arrival_threshold, grid.max_h[k],
                            grid.max_speed[k], grid.arrival[k]);
      }
      if (tile_lane && !math::is_nan(b.z) && grid.owned.contains(i, r)) {
        const unsigned long long e = encode_rate(rate);
        best = e > best ? e : best;
      }
      fs = fn_above;
      b = c1;
      c1 = d;
    }
  }
  block_max_to(best, &grid.ctrl[launch.slot].rate_bits);
}

// ---------------------------------------------------------------- lagged

// The march of one lagged chunk, columns i0 - 1 .. i0 + 30 (halo lanes 0
// and 31), rows j0 - 1 .. jend; returns the lane's largest encoded rate and
// whether its cells are dry fixed points.
// kRanked: a rank of a distributed run, whose rate counts its owned cells
// only (the halo's are another rank's, and stale at the block's edge).
// kMaxima: grows the maxima of the cells it writes with their state n, at
// t_now (the time the step that made it gave the maxima), then, if
// grow_next, with state n+1 at t_next (a kernel of its own: the benchmark's
// keeps its registers).
// kSourcesSeries: a run with sources or sides that follow a series; the
// ghosts of state n+1 take sides[] (its time's), not Params::bc.
// Growing with a state grown before changes nothing (grow_cell_maxima), so
// the host may launch it after a step of either kind.
// kForcing: forces each state n+1 cell over the step from t0 (march_forcing, rain;
// dt_full: the step's dt in double, as the forcing takes it).
// kScalars: stores the mass fluxes of state n+1's edges (mass_fluxes).
// kSolve: the forcing may hold Green-Ampt soil, whose implicit solve the
// instance then carries; false: none (a lighter instance for rain, a
// Manning map and the initial + constant loss).
template <class Real, bool kRanked, bool kMaxima, bool kForcing, bool kSourcesSeries, bool kScalars, bool kSolve = true>
__device__ __forceinline__ unsigned long long lagged_march(
    const Params<Real>& grid, int parity, Real dt, double t_next, int i0, int j0, int jend, int lane, bool& dry_all,
    Real& added_depth_sum, const forcing::MarchForcing<Real>& march_forcing, const StepRain& rain, double t0,
    double dt_full, double t_now, bool grow_next, const BlockSides<Real>* sides, const MassFluxes<Real>& mass_fluxes) {
  // The condition of side s for state n+1.
  const auto bc_of = [&](int s) {
    if constexpr (kSourcesSeries) return (*sides)[s];
    else return side_bc(grid, s);
  };
  // Column and row numbers in 32 bits (no device holds a grid 2^31 cells
  // wide), linear offsets in 64.
  const int nx = static_cast<int>(grid.nx), ny = static_cast<int>(grid.ny);
  const int i = i0 - 1 + lane;
  const bool tile_lane = lane >= 1 && lane < 31 && i < nx;
  const bool in_domain = i >= 0 && i < nx;
  const bool in_padded = i >= -Grid::ghost && i < nx + Grid::ghost;
  const Real* __restrict__ h = grid.h[parity];
  const Real* __restrict__ hu = grid.hu[parity];
  const Real* __restrict__ hv = grid.hv[parity];
  const Real* __restrict__ rh = grid.rh[parity];
  const Real* __restrict__ rhu = grid.rhu[parity];
  const Real* __restrict__ rhv = grid.rhv[parity];
  Real* __restrict__ ho = grid.h[1 - parity];
  Real* __restrict__ huo = grid.hu[1 - parity];
  Real* __restrict__ hvo = grid.hv[1 - parity];
  Real* __restrict__ rho = grid.rh[1 - parity];
  Real* __restrict__ rhuo = grid.rhu[1 - parity];
  Real* __restrict__ rhvo = grid.rhv[1 - parity];
  const bool west_strip = i0 == 0;
  const bool east_strip = i0 + 30 >= nx;
  const index_t pitch = grid.pitch;
  // The forcing's infiltration of state n and n+1, row-major interior cells.
  const double* __restrict__ F_in = kForcing ? march_forcing.infiltrated[parity] : nullptr;
  double* __restrict__ F_out = kForcing ? march_forcing.infiltrated[1 - parity] : nullptr;
  // This strip's parts of the rows' infiltration.
  double* __restrict__ strip_part =
      F_out ? march_forcing.part_infiltration + static_cast<index_t>(i0 / grid.cg.width) * ny : nullptr;

  // State n and its rhs of row j (offset k of (i, j)) for this lane's
  // interior cell (ghost rows and columns only need the bed).
  struct Row {
    Cell<Real> q;
    State<Real> rhs;
  };
  const auto load = [&](int j, index_t k, bool inside) {
    Row w{{Real(0), Real(0), Real(0), math::quiet_nan(Real(0))}, {Real(0), Real(0), Real(0)}};
    if (inside || (in_domain && j >= 0 && j < ny)) {
      w.q = {h[k], hu[k], hv[k], grid.z[k]};
      w.rhs = {rh[k], rhu[k], rhv[k]};
    } else if (in_padded && j >= -Grid::ghost && j < ny + Grid::ghost) {
      w.q.z = grid.z[k];
    }
    return w;
  };

  // Offset of (i, r), advanced a row per iteration (outside the padded grid
  // it is never dereferenced).
  index_t k_row = grid.index(i, j0 - 1);
  Row cur = load(j0 - 1, k_row, false);
  State<Real> q1_prev{Real(0), Real(0), Real(0)};
  Real z_prev = Real(0);
  // What the edges need of a state n+1 cell (velocities, square roots: its
  // divisions and roots), computed once per cell, not once per edge side.
  CellPrimitive<Real> p1_prev{};
  // Row r-1's fluctuations of state n+1 from its west and east x-edges and
  // south y-edge, and their speeds.
  State<Real> w_prev{Real(0), Real(0), Real(0)}, e_prev{Real(0), Real(0), Real(0)}, s_prev{Real(0), Real(0), Real(0)};
  Real xs_prev = Real(0), ys_prev = Real(0);
  unsigned long long best = 0;

  // Row r: state n+1 from state n and its rhs, the y-edge below it (which
  // completes row r - 1: its rhs is stored), its x-edges. `inside`
  // (std::true_type): a row of an interior chunk, whose lanes and rows are
  // all inside the domain, so that it carries no ghost cell, boundary
  // condition or range check. Nearly every chunk of a large grid is one, and
  // instructions are what this kernel is bound by.
  const auto row = [&](int r, auto inside_c) {
    constexpr bool inside = decltype(inside_c)::value;
    const index_t k = k_row;
    k_row += pitch;
    Row next{};
    // Prefetched; with forcing, after the cell's forcing (below), whose
    // doubles would otherwise spill the next row's values.
    if (!kForcing && r < jend) next = load(r + 1, k_row, inside);
    // The maxima of the cell this lane writes, loaded here so that their
    // latency hides behind the row's edges.
    Real max_h = Real(0), max_speed = Real(0);
    if (kMaxima && r >= j0 && r < jend && (inside ? lane >= 1 && lane < 31 : tile_lane)) {
      max_h = grid.max_h[k];
      max_speed = grid.max_speed[k];
    }
    const Real z = cur.q.z;
    State<Real> q1;
    Real added_depth = Real(0);
    // kForcing: this lane's infiltrated depth, if it owns the cell.
    [[maybe_unused]] double infiltrated = 0;
    if (inside || (r >= 0 && r < ny)) {
      if ((inside || in_domain) && !math::is_nan(z)) {
        q1 = advance_cell(st(cur.q), cur.rhs, dt, grid.phys, added_depth);
        if constexpr (kForcing) {
          const index_t cell = static_cast<index_t>(r) * nx + i;
          double F = F_in ? F_in[cell] : 0.0;
          ForcingDepths moved;
          using Capacity = std::conditional_t<kSolve, SolveGreenAmpt, forcing::WithoutGreenAmpt>;
          q1 = force_cell(march_forcing.cell.in, rain, cell, t0, dt_full, q1, march_forcing.cell.phys, F, moved,
                          Capacity{});
          if (r >= j0 && r < jend && (inside ? lane >= 1 && lane < 31 : tile_lane)) {
            if (F_out) F_out[cell] = F;
            if (march_forcing.taken) march_forcing.taken[cell] = moved.infiltration;
            // A rank's accounts count its own cells.
            infiltrated = !kRanked || grid.owned.contains(i, r) ? moved.infiltration : 0.0;
          }
        }
      } else {
        q1 = st(cur.q);
      }
      if (!inside && west_strip) {
        const State<Real> e1 = shfl_down(q1, 1);
        const Real ez = shfl_down(z, 1);
        if (i == -1) q1 = ghost_state(e1, ez, Side::west, bc_of(0), grid.phys);
      }
      if (!inside && east_strip) {
        const State<Real> w1 = shfl_up(q1, 1);
        const Real wz = shfl_up(z, 1);
        if (i == nx) q1 = ghost_state(w1, wz, Side::east, bc_of(1), grid.phys);
      }
    } else if (r < 0) {
      q1 = st(cur.q);  // south ghost row: set from row 0 below
    } else {
      q1 = ghost_state(q1_prev, z_prev, Side::north, bc_of(3), grid.phys);
    }
    if (kForcing && r < jend) next = load(r + 1, k_row, inside);
    if (!inside && r == 0) {
      q1_prev = ghost_state(q1, z, Side::south, bc_of(2), grid.phys);
      p1_prev = cell_primitive(q1_prev, z_prev, grid.phys);
    }
    if constexpr (kForcing) {
      // The row's part of the step's infiltration: this strip's cells, by a fixed tree.
      if (strip_part && r >= j0 && r < jend) {
        for (int d = 16; d > 0; d >>= 1) infiltrated += __shfl_down_sync(kFullMask, infiltrated, d);
        if (lane == 0) strip_part[r] = infiltrated;
      }
    }
    const CellPrimitive<Real> p1 = cell_primitive(q1, z, grid.phys);

    if (r >= j0) {
      const auto fy = cartesian_edge<1>(p1_prev, p1, grid.phys);
      if (r - 1 >= j0) {
        const State<Real> rhs = cell_rhs(grid, w_prev, e_prev, s_prev, fy.to_left);
        const Real rate = xs_prev * grid.half_inv_dx + (ys_prev + fy.speed) * grid.half_inv_dy;
        if (inside ? lane >= 1 && lane < 31 : tile_lane) {
          const index_t kb = k - pitch;
          rho[kb] = rhs.h;
          rhuo[kb] = rhs.hu;
          rhvo[kb] = rhs.hv;
          if (!math::is_nan(z_prev) && (!kRanked || grid.owned.contains(i, r - 1))) {
            const unsigned long long e = encode_rate(rate);
            best = e > best ? e : best;
          }
        }
      }
      if constexpr (kScalars) {
        // As the north edge of the cell below it (row -1: the south side's).
        if ((r - 1 >= j0 || r == 0) && (inside ? lane >= 1 && lane < 31 : tile_lane)) {
          mass_fluxes.y[1 - parity][k - pitch] =
              edge_mass_flux(q1_prev.hv, q1.hv, fy, !math::is_nan(z_prev) && !math::is_nan(z));
        }
      }
      s_prev = fy.to_right;
      ys_prev = fy.speed;
    }
    if (r >= j0 && r < jend) {
      const auto fx = cartesian_edge<0>(p1, shfl_down(p1, 1), grid.phys);
      if constexpr (kScalars) {
        const Real hu_e = shfl_down(q1.hu, 1), z_e = shfl_down(z, 1);
        // i = -1: the west side's edge.
        if ((inside ? lane >= 1 && lane < 31 : tile_lane) || (!inside && i == -1))
          mass_fluxes.x[1 - parity][k] = edge_mass_flux(q1.hu, hu_e, fx, !math::is_nan(z) && !math::is_nan(z_e));
      }
      w_prev = shfl_up(fx.to_right, 1);
      e_prev = fx.to_left;
      xs_prev = shfl_up(fx.speed, 1) + fx.speed;
      if (inside ? lane >= 1 && lane < 31 : tile_lane) {
        ho[k] = q1.h;
        huo[k] = q1.hu;
        hvo[k] = q1.hv;
        // Cells this chunk owns only (the ring is another chunk's); on a rank, its own (the halo's are another's).
        if (!kRanked || grid.owned.contains(i, r)) added_depth_sum += added_depth;
        dry_all = dry_all && (math::is_nan(z) || dry_fixed_point(q1, grid.phys.h_dry));
        if constexpr (kMaxima) {  // constexpr: the benchmark's instance compiles as without maxima
          // p1's velocity is grow_cell_maxima's (cell_primitive's) for a wet cell.
          double arrived_at;
          const int grew = track_cell_maxima_over_step(st(cur.q), t_now, grow_next, p1.h, p1.u, p1.v, t_next,
                                                       grid.phys.h_dry, grid.arrival_threshold, max_h, max_speed,
                                                       arrived_at);
          if (grew & kMaxDepthGrew) grid.max_h[k] = max_h;
          if (grew & kMaxSpeedGrew) grid.max_speed[k] = max_speed;
          if (grew & kArrived) grid.arrival[k] = arrived_at;
        }
      }
    }
    q1_prev = q1;
    z_prev = z;
    p1_prev = p1;
    cur = next;
  };

  // Two copies of the body only (the instruction cache), each in its own loop.
  if (i0 >= 1 && i0 + 31 <= nx && j0 >= 1 && jend <= ny - 1) {
    for (int r = j0 - 1; r <= jend; ++r) row(r, std::true_type{});
  } else {
    for (int r = j0 - 1; r <= jend; ++r) row(r, std::false_type{});
  }
  return best;
}

// One chunk of the lagged step: the rhs of state n was stored by the
// previous launch, so state n+1 is a point-wise update of the chunk plus a
// one-cell ring; the state n+1 edges then give the rhs of the chunk's cells
// for the next step, stored, and their CFL rate. Each edge is evaluated
// once (plus the ring's), at the price of 6 more values moved per cell.
// kSourcesSeries: see lagged_march; the chunks next to a source
// (MarchForcing::after_sources) leave out the new state's rate and maxima.
template <class Real, bool kRanked, bool kMaxima, bool kForcing, bool kSourcesSeries, bool kScalars, bool kSolve>
__device__ __forceinline__ unsigned long long lagged_chunk(const Params<Real>& grid, int parity, Real dt, double t_next,
                                                           index_t sx, index_t cy, int lane, index_t chunk,
                                                           const forcing::MarchForcing<Real>& march_forcing,
                                                           const StepRain& rain, double t0,
                                                           double dt_full, double t_now,
                                                           const BlockSides<Real>* sides,
                                                           const MassFluxes<Real>& mass_fluxes) {
  const int nx = static_cast<int>(grid.nx), ny = static_cast<int>(grid.ny);
  const int i0 = static_cast<int>(sx) * grid.cg.width;
  const int j0 = static_cast<int>(cy) * grid.cg.rows;
  const int jend = min(j0 + grid.cg.rows, ny);
  if (grid.dry_skip && neighbourhood_dry(grid, parity, sx, cy, lane)) {
    const int i = i0 - 1 + lane;
    skip_chunk(grid, parity, chunk, i, lane >= 1 && lane < 31 && i < nx, j0, jend, lane);
    return 0;
  }
  if (lane == 0 && grid.computed) atomicAdd(grid.computed, 1ull);

  // Next to a source: the new state's rate and maxima wait for the sources (MarchForcing::after_sources).
  const bool settled =
      !kSourcesSeries || march_forcing.after_sources == nullptr || march_forcing.after_sources[chunk] == 0;
  bool dry_all = true;
  Real added_depth = Real(0);
  const unsigned long long best = lagged_march<Real, kRanked, kMaxima, kForcing, kSourcesSeries, kScalars, kSolve>(
      grid, parity, dt, t_next, i0, j0, jend, lane, dry_all, added_depth, march_forcing, rain, t0, dt_full, t_now,
      settled, sides, mass_fluxes);
  warp_add_nonzero(grid.positivity_sum, static_cast<double>(added_depth));
  if (grid.dry_skip) {
    const bool d = __all_sync(kFullMask, dry_all) && !next_to_level_side(grid, sx, cy);
    if (lane == 0) {
      grid.dry[1 - parity][chunk] = d ? 1 : 0;
      grid.same[chunk] = 0;
    }
  }
  return settled ? best : 0;
}

// kMinBlocks: resident blocks per SM to compile for (0: MinBlocks<Real>),
// a tuning knob (CudaOptions::min_blocks); kRanked, kMaxima, kForcing:
// lagged_march (march_forcing: its forcing, unused without); kSourcesSeries:
// lagged_chunk; kScalars, kSolve: lagged_march (mass_fluxes: unused without).
template <class Real, int kMinBlocks, bool kRanked, bool kMaxima, bool kForcing, bool kSourcesSeries, bool kScalars,
          bool kSolve = true>
__global__ void __launch_bounds__(kBlockThreads, kMinBlocks > 0 ? kMinBlocks : MinBlocks<Real>::value)
    lagged_kernel(const Params<Real> grid, const Launch launch, const forcing::MarchForcing<Real> march_forcing,
                  const MassFluxes<Real> mass_fluxes) {
  const Ctrl c = grid.ctrl[launch.slot];
  double dt = 0, t = 0;
  if (!step_prologue<Real, kPingPong | kClearSlotAfter>(grid, launch, c, dt, t))
    return;                      // the whole grid, or none of it
  const double t_next = t + dt;  // state n+1's time as the maxima take it
  StepRain rain{};
  double t0 = 0;  // kForcing: the step's start
  if constexpr (kForcing) {
    t0 = t;
    __shared__ StepRain block_rain;
    if (threadIdx.x == 0) block_rain = step_rain(march_forcing.cell.in, t0, t0 + dt);
    __syncthreads();
    rain = block_rain;
  }
  const BlockSides<Real>* sides = nullptr;
  if constexpr (kSourcesSeries) {
    // The ghosts of the state this launch makes: the sides at its time.
    __shared__ BlockSides<Real> block_sides;
    block_sides_at(grid, march_forcing.sides, step_end_time(t, dt, launch.target), block_sides);
    sides = &block_sides;
  }
  const int lane = threadIdx.x & 31;
  const index_t gw = static_cast<index_t>(blockIdx.x) * kBlockWarps + (threadIdx.x >> 5);
  index_t chunk = 0;
  unsigned long long best = 0;
  if (warp_chunk(grid, launch.slot, gw, chunk)) {
    const index_t cy = chunk / grid.cg.strips;
    const index_t sx = chunk - cy * grid.cg.strips;
    best = lagged_chunk<Real, kRanked, kMaxima, kForcing, kSourcesSeries, kScalars, kSolve>(
        grid, c.parity, static_cast<Real>(dt), t_next, sx, cy, lane, chunk, march_forcing, rain, t0, dt, c.maxima_time,
        sides, mass_fluxes);
  }
  block_max_to(best, &grid.ctrl[(launch.slot + 1) % 3].rate_bits);
}

// ---------------------------------------------------------------- plain

constexpr int kPlainX = 32;
constexpr int kPlainY = 4;

template <class Real>
__device__ __forceinline__ bool plain_cell(const Params<Real>& grid, index_t& i, index_t& j) {
  const index_t tiles_x = (grid.nx + kPlainX - 1) / kPlainX;
  const index_t tile = blockIdx.x;
  const index_t ty = tile / tiles_x;
  const index_t tx = tile - ty * tiles_x;
  i = tx * kPlainX + (threadIdx.x % kPlainX);
  j = ty * kPlainY + (threadIdx.x / kPlainX);
  return i < grid.nx && j < grid.ny;
}

// The four neighbours of cell (i, j) as its edges see them: kWalls (a run
// with lines of weirs or walls), across a wall face an inactive image (z
// NaN), as the CPU's wall_edge gives each side of a wall; compiled out of
// the other runs' kernels, whose registers it would cost.
template <class Real>
struct Neighbours {
  Cell<Real> w, e, s, n;
};

template <bool kWalls, class Real>
__device__ __forceinline__ Neighbours<Real> load_neighbours(const Params<Real>& grid, const PlainExtras<Real>& extras,
                                                            const Real* __restrict__ h, const Real* __restrict__ hu,
                                                            const Real* __restrict__ hv, index_t i, index_t j) {
  Neighbours<Real> c{load_cell(grid, h, hu, hv, i - 1, j, extras.segments, extras.segment_count),
                     load_cell(grid, h, hu, hv, i + 1, j, extras.segments, extras.segment_count),
                     load_cell(grid, h, hu, hv, i, j - 1, extras.segments, extras.segment_count),
                     load_cell(grid, h, hu, hv, i, j + 1, extras.segments, extras.segment_count)};
  if constexpr (kWalls) {
    const unsigned m = grid.walls[grid.index(i, j)];
    if (m & 1u) c.w.z = math::quiet_nan(Real(0));
    if (m & 2u) c.e.z = math::quiet_nan(Real(0));
    if (m & 4u) c.s.z = math::quiet_nan(Real(0));
    if (m & 8u) c.n.z = math::quiet_nan(Real(0));
  }
  return c;
}

template <class Real, bool kWalls>
__global__ void __launch_bounds__(kBlockThreads)
    plain_rate_kernel(const Params<Real> grid, const PlainExtras<Real> extras, const Launch launch, int check_step) {
  const Ctrl c = grid.ctrl[launch.slot];
  if (check_step && !launch_takes_step(c, launch)) return;
  const Real* __restrict__ h = grid.h[c.parity];
  const Real* __restrict__ hu = grid.hu[c.parity];
  const Real* __restrict__ hv = grid.hv[c.parity];
  index_t i, j;
  unsigned long long best = 0;
  if (plain_cell(grid, i, j)) {
    const Cell<Real> q = load_cell(grid, h, hu, hv, i, j, extras.segments, extras.segment_count);
    if (!math::is_nan(q.z) && grid.owned.contains(i, j)) {
      const auto [w, e, s, n] = load_neighbours<kWalls>(grid, extras, h, hu, hv, i, j);
      const Real sw = cartesian_edge<0>(st(w), w.z, st(q), q.z, grid.phys).speed;
      const Real se = cartesian_edge<0>(st(q), q.z, st(e), e.z, grid.phys).speed;
      const Real ss = cartesian_edge<1>(st(s), s.z, st(q), q.z, grid.phys).speed;
      const Real sn = cartesian_edge<1>(st(q), q.z, st(n), n.z, grid.phys).speed;
      best = encode_rate((sw + se) * grid.half_inv_dx + (ss + sn) * grid.half_inv_dy);
    }
  }
  block_max_to(best, &grid.ctrl[launch.slot].rate_bits);
}

// The scalars of active cell (i, j) (padded index k) over a step of dt
// (scalar_transport.hpp, as the CPU executor's transport_scalars): its
// depth h and its neighbours' (hw..hn; a neighbour beyond a side brings its
// ghost concentration), the mass fluxes of its edges (mw..mn) and its new
// depth h1; h c of state n + 1 = the transported concentration times h1,
// then finish(scalar, h c) (the forcing's, or as it is).
template <class Real, class Finish>
__device__ __forceinline__ void transport_scalars(const Params<Real>& grid, const PlainExtras<Real>& extras, int parity,
                                                  index_t i, index_t j, index_t k, Real h, Real hw, Real he, Real hs,
                                                  Real hn, Real mw, Real me, Real ms, Real mn, Real h1, Real dt,
                                                  const Finish& finish) {
  for (int sc = 0; sc < extras.scalars; ++sc) {
    const Real* __restrict__ hc = extras.hc[2 * sc + parity];
    const ScalarSides<Real> sides{{grid.bc[0].kind, grid.bc[1].kind, grid.bc[2].kind, grid.bc[3].kind},
                                  extras.scalar_side + 4 * sc, extras.segments, extras.segment_count,
                                  extras.scalar_segment + sc * extras.segment_count};
    // The neighbours' depths, loaded by the caller.
    const auto depth = [&](Side side, index_t) {
      return side == Side::west ? hw : side == Side::east ? he : side == Side::south ? hs : hn;
    };
    const ScalarStencil<Real> stencil = grid_scalar_stencil(i, j, grid.nx, grid.ny, k, grid.pitch, hc,
                                                            concentration(hc[k], h), mw, me, ms, mn, sides, depth);
    extras.hc[2 * sc + 1 - parity][k] =
        finish(sc, transported_concentration(stencil, h, dt, grid.inv_dx, grid.inv_dy) * h1);
  }
}

// kScalars: compiled with the scalars' transport (a run with passive
// scalars) or without it (the kernel of every other plain run keeps its
// registers, which makes it faster in float); kWalls: load_neighbours.
template <class Real, bool kScalars, bool kWalls>
__global__ void __launch_bounds__(kBlockThreads)
    plain_update_kernel(const Params<Real> grid, const PlainExtras<Real> extras, const Launch launch) {
  const Ctrl c = grid.ctrl[launch.slot];
  double dt_d = 0, t = 0;
  if (!step_prologue<Real, kPingPong | kResetRate | kClearSlotAfter>(grid, launch, c, dt_d, t)) return;
  const Real dt = static_cast<Real>(dt_d);
  const Real* __restrict__ h = grid.h[c.parity];
  const Real* __restrict__ hu = grid.hu[c.parity];
  const Real* __restrict__ hv = grid.hv[c.parity];
  index_t i, j;
  Real added_depth = Real(0);
  // No early return: the whole warp adds its gains at the end.
  if (plain_cell(grid, i, j)) {
    const Cell<Real> q = load_cell(grid, h, hu, hv, i, j, extras.segments, extras.segment_count);
    State<Real> q1 = st(q);
    if (!math::is_nan(q.z)) {
      const auto [w, e, s, n] = load_neighbours<kWalls>(grid, extras, h, hu, hv, i, j);
      const auto fw = cartesian_edge<0>(st(w), w.z, st(q), q.z, grid.phys);
      const auto fe = cartesian_edge<0>(st(q), q.z, st(e), e.z, grid.phys);
      const auto fs = cartesian_edge<1>(st(s), s.z, st(q), q.z, grid.phys);
      const auto fn = cartesian_edge<1>(st(q), q.z, st(n), n.z, grid.phys);
      q1 = advance_cell(st(q), cell_rhs(grid, fw.to_right, fe.to_left, fs.to_right, fn.to_left), dt, grid.phys,
                        added_depth);
      if (!grid.owned.contains(i, j)) added_depth = Real(0);  // a rank's halo cell: its owner counts it
      if constexpr (kScalars) {
        transport_scalars(grid, extras, c.parity, i, j, grid.index(i, j), q.h, w.h, e.h, s.h, n.h,
                          edge_mass_flux(w.hu, q.hu, fw, !math::is_nan(w.z)),
                          edge_mass_flux(q.hu, e.hu, fe, !math::is_nan(e.z)),
                          edge_mass_flux(s.hv, q.hv, fs, !math::is_nan(s.z)),
                          edge_mass_flux(q.hv, n.hv, fn, !math::is_nan(n.z)), q1.h, dt,
                          [](int, Real hc) { return hc; });
      }
    }
    const index_t k = grid.index(i, j);
    grid.h[1 - c.parity][k] = q1.h;
    grid.hu[1 - c.parity][k] = q1.hu;
    grid.hv[1 - c.parity][k] = q1.hv;
  }
  warp_add_nonzero(grid.positivity_sum, static_cast<double>(added_depth));
}

// The passive scalars over the step the lagged kernel just took (first
// order), as plain_update_kernel<Real, true, ...> and cell_forcing_kernel
// transport and force them, from what the lagged kernel left: state n and
// its rhs (still in their buffers: the cell's new depth before the forcing)
// and its edges' mass fluxes (mass_fluxes, stored when state n was made); with cell
// forcing (kForced), the rain's concentration comes in and infiltration
// takes the water's own, with the rain depth and the infiltrated depth
// (MarchForcing::taken) the kernel's forcing moved. One thread per cell;
// the flow's state is not written. clock.window(): the step (StepClock).
template <class Real, class Clock, bool kForced>
__global__ void __launch_bounds__(kBlockThreads)
    lagged_scalars_kernel(const Params<Real> grid, const PlainExtras<Real> extras, const MassFluxes<Real> mass_fluxes,
                          const Clock clock, const forcing::MarchForcing<Real> march_forcing) {
  const forcing::StepWindow<Real> win = clock.window();
  if (!win.taken) return;  // the whole grid, or none of it
  [[maybe_unused]] __shared__ StepRain rain;
  if constexpr (kForced) {
    if (threadIdx.x == 0) rain = step_rain(march_forcing.cell.in, win.t0, win.t0 + win.dt);
    __syncthreads();
  }
  const int parity = 1 - win.parity;  // state n
  const Real dt = static_cast<Real>(win.dt);
  index_t i, j;
  if (!plain_cell(grid, i, j)) return;
  const index_t k = grid.index(i, j);
  if (math::is_nan(grid.z[k])) return;
  const Real* __restrict__ h = grid.h[parity];
  const Real* __restrict__ mx = mass_fluxes.x[parity];
  const Real* __restrict__ my = mass_fluxes.y[parity];
  Real added_depth;  // counted by the lagged kernel
  const Real h1 =
      explicit_update(State<Real>{h[k], Real(0), Real(0)}, State<Real>{grid.rh[parity][k], Real(0), Real(0)}, dt,
                      grid.phys, added_depth).h;
  // A neighbour beyond a side brings its ghost concentration (transport_scalars), not its depth.
  const Real hw = i > 0 ? h[k - 1] : Real(0), he = i < grid.nx - 1 ? h[k + 1] : Real(0);
  const Real hs = j > 0 ? h[k - grid.pitch] : Real(0), hn = j < grid.ny - 1 ? h[k + grid.pitch] : Real(0);
  const Real mw = mx[k - 1], me = mx[k], ms = my[k - grid.pitch], mn = my[k];
  [[maybe_unused]] ForcingDepths moved{};
  if constexpr (kForced) moved = forcing::moved_depths(march_forcing, rain, j * grid.nx + i, win.t0, win.dt);
  transport_scalars(grid, extras, parity, i, j, k, h[k], hw, he, hs, hn, mw, me, ms, mn, h1, dt, [&](int sc, Real hc) {
    if constexpr (kForced) {
      return static_cast<Real>(forced_scalar(static_cast<double>(hc), static_cast<double>(h1), moved,
                                             march_forcing.cell.scalars.rain_c[sc]));
    } else {
      return hc;
    }
  });
}

// ---------------------------------------------------------------- others

// Whether a chunk's cells in buffer `parity` are all dry fixed points (or
// inactive) and it lies next to no level side. kWarp: the calling warp
// decides together, a lane per column (a dry chunk reads every cell, which
// one thread does in one long chain of loads); else one thread (set-up).
template <bool kWarp, class Real>
__device__ __forceinline__ bool chunk_is_dry(const Params<Real>& grid, int parity, index_t chunk) {
  const index_t cy = chunk / grid.cg.strips;
  const index_t sx = chunk - cy * grid.cg.strips;
  const index_t i0 = sx * grid.cg.width;
  const index_t j0 = cy * grid.cg.rows;
  const index_t iend = min(i0 + static_cast<index_t>(grid.cg.width), grid.nx);
  const index_t jend = min(j0 + static_cast<index_t>(grid.cg.rows), grid.ny);
  bool dry = true;
  for (index_t i = i0 + (kWarp ? threadIdx.x & 31 : 0); i < iend && dry; i += kWarp ? 32 : 1) {
    for (index_t j = j0; j < jend && dry; ++j) {
      const index_t k = grid.index(i, j);
      dry = math::is_nan(grid.z[k]) ||
            dry_fixed_point(State<Real>{grid.h[parity][k], grid.hu[parity][k], grid.hv[parity][k]}, grid.phys.h_dry);
    }
  }
  if (kWarp) dry = __all_sync(0xffffffffu, dry);
  return dry && !next_to_level_side(grid, sx, cy);
}

// Dry flags of the state in buffer `parity`, one thread per chunk (set-up only).
template <class Real>
__global__ void dry_flags_kernel(const Params<Real> grid, int parity) {
  const index_t chunk = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (chunk >= grid.cg.chunks) return;
  grid.dry[parity][chunk] = chunk_is_dry<false>(grid, parity, chunk) ? 1 : 0;
}

// A rank's halo box written by an exchange into buffer `parity`: the dry
// flags of the chunks it touches from their new cells (a warp per chunk),
// and their output buffer no longer the same (a skipped one copies its
// cells again).
template <class Real>
__global__ void box_dry_flags_kernel(const Params<Real> grid, int parity, CellBox box) {
  const CellBox touched = grid.cg.chunks_over(box);
  const index_t n = (static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if (n >= touched.cells()) return;  // whole warps
  const index_t chunk = (touched.j0 + n / touched.nx()) * grid.cg.strips + touched.i0 + n % touched.nx();
  const bool dry = chunk_is_dry<true>(grid, parity, chunk);
  if ((threadIdx.x & 31) == 0) {
    grid.dry[parity][chunk] = dry ? 1 : 0;
    grid.same[chunk] = 0;
  }
}

// Which state slot_maxima_kernel grows the maxima with, at what time.
enum class MaximaOf : int {
  step,     // slot's state at its step's maxima_time; nothing if the launch that filled it took no step
  fixed,    // slot's state at t_fixed (the initial state)
  current,  // slot's state at its maxima_time, taken or not: the lagged kernel's catch-up
};

// Maxima as CpuBackend::update_maxima, for the states no step kernel grew
// them with (the initial one, the plain kernels' steps, the lagged kernel's
// steps between its kMaxima ones).
template <class Real>
__global__ void slot_maxima_kernel(const Params<Real> grid, int slot, MaximaOf of, double t_fixed) {
  const Ctrl c = grid.ctrl[slot];
  if (of == MaximaOf::step && !c.stepped) return;
  const double t = of == MaximaOf::fixed ? t_fixed : c.maxima_time;
  const index_t cells = grid.nx * grid.ny;
  const index_t stride = static_cast<index_t>(gridDim.x) * blockDim.x;
  for (index_t n = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; n < cells; n += stride) {
    const index_t j = n / grid.nx;
    const index_t k = grid.index(n - j * grid.nx, j);
    const State<Real> q{grid.h[c.parity][k], grid.hu[c.parity][k], grid.hv[c.parity][k]};
    // Stored only where a maximum grows (once the wave has passed, nowhere):
    // the kernel is bound by the bytes it moves.
    track_cell_maxima(q, t, grid.phys.h_dry, grid.arrival_threshold, grid.max_h[k], grid.max_speed[k], grid.arrival[k]);
  }
}

// Row sums of h in double, each row summed in order (group_water of GridCells, cell_layout.hpp).
template <class Real>
__global__ void row_volume_kernel(const Params<Real> grid, int slot, double* __restrict__ rows) {
  const index_t j = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= grid.ny) return;
  const Real* h = grid.h[grid.ctrl[slot].parity];
  double sum = 0;
  for (index_t i = 0; i < grid.nx; ++i) sum += static_cast<double>(h[grid.index(i, j)]);
  rows[j] = sum;
}

} // namespace shallows::gpu
