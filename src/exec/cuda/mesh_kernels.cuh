// SPDX-License-Identifier: MIT
#pragma once
// Device side of the CUDA executor for unstructured meshes (first order).
// Every kernel evaluates an edge as mesh_edges.hpp does on the CPU: in its
// stored orientation (left cell, right cell or boundary, stored normal),
// with the same functions, and each cell sums its edges in its slot order,
// so that a GPU step gives the bits of a CPU step (src/exec/openmp/mesh_cpu.cpp).
//
// State: h, hu, hv and the rhs of the state, structure of arrays, one
// buffer each, updated in place. Time control as the Cartesian executor
// (Ctrl slots, step_kernels.cuh): the kernels accumulate the largest CFL
// rate of a state into its slot, the kernel that takes the step computes dt
// from it exactly as the CPU does and fills the next slot; a launch past
// the target does nothing, so the host launches batches of steps and
// synchronises once per batch.
//
// Designs (bytes moved per cell-update: mesh_bytes_per_cell_update in
// mesh_backend.cu, neighbour states assumed to come from the caches; for
// triangles in float (double)):
//  * cell loop, "slots" (the default), 120 (228) B: two passes,
//    cell_rhs_kernel (a thread per cell evaluates its 3-4 edges, each
//    interior edge twice per step, and stores the rhs; the largest rate is
//    reduced on the device) then update_kernel (advance_cell in place, the
//    maxima). Slots layout: the geometry per cell slot, structure of arrays
//    by slot (slot k of cell c at k * cells + c): the other cell or the
//    boundary code, the edge's stored normal, and its length, negated where
//    c is the edge's right cell. The loads of a warp are coalesced and none
//    waits for another (no cell_edges -> edge arrays chain). Left or right
//    is a select of the arguments, not a branch: the warp does not diverge.
//  * cell loop, "shared", 118 (208) B: two passes, the first the CPU's loop
//    body mesh_cell_sum itself on the mesh's edge arrays (cell_edges ->
//    edge_left/right, normal, length): the reference for the others.
//  * edge loop, 198 (372) B: one thread per edge evaluates it once and
//    stores its fluctuations and speed, each already multiplied by the edge
//    length (the product MeshCellSum::add forms, so the sums keep their
//    bits); a gather kernel sums each cell's edges in slot order;
//    update_kernel. Half the Roe solves of the cell loop, for 7 stored
//    values per edge: bound by memory bandwidth (0.9 of the bound).
// Dry skipping (dry_blocks.hpp), where the executor turns it on: the update
// pass marks each block of 32 cells (a warp) dry or not, and any_dry once a
// block is dry. From then on (the host looks between batches of steps) each
// step starts with decide_blocks_kernel, which lists the blocks needed
// (dry_block_needed); the first pass's kSkip instances and
// listed_update_kernel give a warp to each listed block alone (the edge
// loop evaluates an edge where the block of either of its cells is needed).
// Until then the passes are the plain ones: an all-wet run pays only for the
// dry marks.
// Slots is the default as the fastest of the three; float runs 8 resident
// blocks per SM (64 registers, no spills) and double unrolls the slots loop
// for the same reason (bench/cuda-notes.md, unstructured meshes).
#include <cuda_runtime.h>

#include <cfloat>
#include <climits>

#include "shallows/mesh/structured/grid.hpp"  // step_kernels.cuh uses it
#include "shallows/solver/cell_maxima.hpp"
#include "shallows/mesh/unstructured/dry_blocks.hpp"
#include "shallows/mesh/unstructured/mesh_edges.hpp"
#include "shallows/mesh/unstructured/mesh_transport.hpp"
#include "shallows/physics/cell_update.hpp"
#include "step_kernels.cuh"

namespace shallows::gpu::mesh {

// Slot of a cell with no edge (the fourth slot of a triangle, every slot of
// an inactive cell). Boundary codes are -1 - group, far above it.
constexpr mesh_index kNoEdge = INT_MIN;

constexpr int kUpdateThreads = 256;

// Tuning knobs, overridable at build time. UNROLL 1: the slots loop
// unrolled (a Roe solve inlined per slot); 0: one copy of the solve in a
// loop (a smaller kernel for the instruction cache). MIN_BLOCKS: resident
// blocks per SM the cell kernels are compiled for (a register cap).
#ifndef SHALLOWS_CUDA_MESH_UNROLL
#define SHALLOWS_CUDA_MESH_UNROLL 1
#endif
#ifndef SHALLOWS_CUDA_MESH_MIN_BLOCKS_FLOAT
#define SHALLOWS_CUDA_MESH_MIN_BLOCKS_FLOAT 8
#endif
#ifndef SHALLOWS_CUDA_MESH_MIN_BLOCKS_DOUBLE
#define SHALLOWS_CUDA_MESH_MIN_BLOCKS_DOUBLE 3
#endif
template <class Real>
struct MeshMinBlocks {
  static constexpr int value =
      sizeof(Real) == 4 ? SHALLOWS_CUDA_MESH_MIN_BLOCKS_FLOAT : SHALLOWS_CUDA_MESH_MIN_BLOCKS_DOUBLE;
};

template <class Real>
struct MeshParams {
  Real* h;                     // state
  Real* hu;
  Real* hv;
  Real* rh;                    // rhs of the state
  Real* rhu;
  Real* rhv;
  const Real* z;               // bed, NaN: inactive cell
  const Real* inv_area;
  const BoundaryCondition<Real>* boundary;  // by boundary group
  index_t cells;
  index_t edges;
  PhysicsParams<Real> phys;
  double cfl;
  double dry_dt;  // dry_time_step
  Ctrl* ctrl;
  double* positivity_sum;  // positivity account: the depths the clamps added times cell areas (m^3), summed

  // "shared" cell layout and edge loop: the mesh's own arrays (device
  // pointers), as the CPU loops read them.
  MeshArrays<Real> arrays;

  // "slots" cell layout: slot k of cell c at k * cells + c.
  const mesh_index* slot_cell;  // the other cell, a boundary code, or kNoEdge
  const Real* slot_nx;          // the edge's stored normal (out of its left cell)
  const Real* slot_ny;
  const Real* slot_length;      // |Gamma|, negative where the cell is the edge's right cell

  // Edge loop: per edge, length times to_left, to_right (interior edges
  // only) and speed; per cell slot, e if the cell is the edge's left, ~e if
  // its right, or kNoEdge.
  Real* fl_h;
  Real* fl_hu;
  Real* fl_hv;
  Real* fr_h;
  Real* fr_hu;
  Real* fr_hv;
  Real* f_speed;
  const mesh_index* slot_edge;

  // Maxima (null when not tracked).
  double* max_h;
  double* max_speed;
  double* arrival;
  double arrival_threshold;

  // Dry skipping (skip.start null: off): the flags, whether a block has been dry since the start, the
  // cells each listed_update_kernel block computed, summed, and each skipping step's list of the blocks it
  // computes (list_count: its length, one counter per Ctrl slot, as the grid's list).
  DryBlocks skip;
  int* any_dry;
  unsigned long long* computed;
  unsigned* list;
  unsigned* list_count;
};

// ---------------------------------------------------------------- helpers

__device__ __forceinline__ float ldg(const float* p) { return __ldg(p); }
__device__ __forceinline__ double ldg(const double* p) { return __ldg(p); }
__device__ __forceinline__ int ldg(const int* p) { return __ldg(p); }

__device__ __forceinline__ bool finite_value(float v) { return fabsf(v) <= FLT_MAX; }
__device__ __forceinline__ bool finite_value(double v) { return fabs(v) <= DBL_MAX; }

// The CPU's check before it takes dt (MeshCpuBackend::max_rate): the rate
// and the depth rhs of every cell finite. A cell failing it reports
// kNonFinite, which stops the step.
template <class Real>
__device__ __forceinline__ unsigned long long cell_rate_bits(const MeshCellSum<Real>& s, Real inv_area,
                                                             const State<Real>& rhs) {
  const unsigned long long e = encode_rate(s.rate(inv_area));
  return finite_value(rhs.h) ? e : kNonFinite;
}

// Stores cell i's rhs from the sum of its edges and returns its rate (cell_rate_bits).
template <class Real>
__device__ __forceinline__ unsigned long long store_cell_rhs(const MeshParams<Real>& mesh, index_t i,
                                                             const MeshCellSum<Real>& s) {
  const Real inv_area = ldg(mesh.inv_area + i);
  const State<Real> r = s.rhs(inv_area);
  mesh.rh[i] = r.h;
  mesh.rhu[i] = r.hu;
  mesh.rhv[i] = r.hv;
  return cell_rate_bits(s, inv_area, r);
}

// Cell c of the state, as the edges need it.
template <class Real>
__device__ __forceinline__ CellPrimitive<Real> load_primitive(const MeshParams<Real>& mesh, mesh_index c) {
  return cell_primitive(State<Real>{ldg(mesh.h + c), ldg(mesh.hu + c), ldg(mesh.hv + c)}, ldg(mesh.z + c), mesh.phys);
}

// Edge fluctuations seen from one cell of the edge: `me` is the cell,
// `other` the cell across (or the boundary state), `me_left` whether the cell
// is the edge's left. The Roe solve gets (left, right, stored normal) as on
// the CPU; for a boundary edge (me_left, other = boundary_primitive(me))
// this is mesh_boundary_edge's own expression.
template <class Real>
__device__ __forceinline__ EdgeFluctuation<Real> oriented_edge(const CellPrimitive<Real>& me,
                                                               const CellPrimitive<Real>& other, bool me_left, Real nx,
                                                               Real ny, const PhysicsParams<Real>& p) {
  return mesh_edge(me_left ? me : other, me_left ? other : me, nx, ny, p);
}

// The blocks this step computes, from the dry flags the last update left
// (skipping steps only, before the first pass): one thread per block, which
// sets the block's flag (the edge loop reads it) and lists the block. The
// passes that follow give a warp to each listed block alone, so that the
// blocks left out cost nothing there. The list's order (atomics) varies from
// run to run; the results do not: blocks are independent, the rate is a maximum.
template <class Real>
__global__ void decide_blocks_kernel(const MeshParams<Real> mesh, const Launch launch) {
  if (blockIdx.x == 0 && threadIdx.x == 0) mesh.list_count[(launch.slot + 1) % 3] = 0;
  if (!launch_takes_step(mesh.ctrl[launch.slot], launch)) return;
  const index_t b = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  bool need = false;
  if (b < (mesh.cells + kDryBlockCells - 1) / kDryBlockCells) {
    need = dry_block_needed(mesh.skip, b);
    mesh.skip.needed[b] = need;
  }
  warp_append(mesh.list, &mesh.list_count[launch.slot], need, static_cast<unsigned>(b));
}

// Calls block(b, i) for each block b on the step's list, a warp each in a
// grid-stride loop (the warps of an SM take neighbouring entries, mostly
// neighbouring blocks, whose cells share edges): i is the lane's cell of b
// (past the last cell in the last block). Every lane of the warp takes part.
// No more live values than this: the double cell pass runs at its register
// limit, and entries loaded ahead slowed it (bench/results.md).
template <class Real, class Block>
__device__ __forceinline__ void for_listed_blocks(const MeshParams<Real>& mesh, int slot, const Block& block) {
  const auto count = static_cast<index_t>(mesh.list_count[slot]);
  const auto warps_per_block = static_cast<index_t>(blockDim.x / 32);
  const index_t warps = static_cast<index_t>(gridDim.x) * warps_per_block;
  const auto lane = static_cast<index_t>(threadIdx.x & 31);
  for (index_t w = static_cast<index_t>(blockIdx.x) * warps_per_block + threadIdx.x / 32; w < count; w += warps) {
    const auto b = static_cast<index_t>(mesh.list[w]);
    block(b, b * kDryBlockCells + lane);
  }
}

// Calls cell(i) for the cells a grid-stride kernel computes this step: every
// cell, or with kSkip the cells of the listed blocks.
template <class Real, bool kSkip, class Cell>
__device__ __forceinline__ void for_step_cells(const MeshParams<Real>& mesh, int slot, const Cell& cell) {
  if constexpr (kSkip) {
    for_listed_blocks(mesh, slot, [&](index_t, index_t i) {
      if (i < mesh.cells) cell(i);
    });
  } else {
    const index_t stride = static_cast<index_t>(gridDim.x) * blockDim.x;
    for (index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < mesh.cells; i += stride) cell(i);
  }
}

// The boundary groups that follow a time series (Forcing::groups): their
// conditions at the start of the step the launch takes, as the CPU mesh
// executor sets them. One thread per group, before the first pass.
template <class Real>
__global__ void group_conditions_kernel(BoundaryCondition<Real>* boundary, const BoundaryCondition<Real>* constant,
                                        const SeriesView* series, int groups, const Ctrl* ctrl, const Launch launch) {
  const Ctrl c = ctrl[launch.slot];
  if (!launch_takes_step(c, launch)) return;
  const int g = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (g < groups) boundary[g] = condition_at_time(constant[g], series[g], launch_time(c, launch));
}

// ---------------------------------------------------------------- first pass: cells

// mesh_cell_sum on the slots layout: the same edges in the same slot order,
// each through the same Roe solve with the same arguments. me: the cell;
// neighbour(nb): the primitive of cell nb.
template <class Real, int kSlots, class Neighbour>
__device__ __forceinline__ MeshCellSum<Real> slot_cell_sum(const MeshParams<Real>& mesh, mesh_index c,
                                                           const CellPrimitive<Real>& me, const Neighbour& neighbour) {
  MeshCellSum<Real> s;
#if SHALLOWS_CUDA_MESH_UNROLL
#pragma unroll
#else
#pragma unroll 1
#endif
  for (int k = 0; k < kSlots; ++k) {
    const index_t o = static_cast<index_t>(k) * mesh.cells + c;
    const mesh_index nb = ldg(mesh.slot_cell + o);
    if (nb == kNoEdge) continue;
    const Real nx = ldg(mesh.slot_nx + o);
    const Real ny = ldg(mesh.slot_ny + o);
    const Real signed_length = ldg(mesh.slot_length + o);
    const bool me_left = math::sign_clear(signed_length);
    const CellPrimitive<Real> other =
        nb >= 0 ? neighbour(nb) : boundary_primitive(me, nx, ny, mesh.boundary[boundary_group(nb)], mesh.phys);
    const EdgeFluctuation<Real> f = oriented_edge(me, other, me_left, nx, ny, mesh.phys);
    s.add(me_left ? f.to_left : f.to_right, f.speed, math::abs(signed_length));
  }
  return s;
}

// The rhs and rate of the state (the first pass of the cell designs):
// cells in a grid-stride loop (a few blocks per SM, so that few blocks
// reach the rate's atomicMax), rhs stored, largest rate into slot launch.slot.
// kSlots: 3 or 4 for the slots layout, 0 for the shared body; kSkip: a
// skipping step (blocks not needed left out).
template <class Real, int kSlots, bool kSkip = false>
__global__ void __launch_bounds__(kBlockThreads, MeshMinBlocks<Real>::value)
    cell_rhs_kernel(const MeshParams<Real> mesh, const Launch launch) {
  const Ctrl c = mesh.ctrl[launch.slot];
  if (!launch_takes_step(c, launch)) return;  // the same on every thread: no block is left in block_max_to
  const MeshState<Real> q{mesh.h, mesh.hu, mesh.hv};
  unsigned long long best = 0;
  for_step_cells<Real, kSkip>(mesh, launch.slot, [&](index_t i) {
    const auto cell = static_cast<mesh_index>(i);
    MeshCellSum<Real> s;
    if constexpr (kSlots == 0) {
      s = mesh_cell_sum(mesh.arrays, q, cell, mesh.phys);
    } else {
      s = slot_cell_sum<Real, kSlots>(mesh, cell, load_primitive(mesh, cell),
                                      [&mesh](mesh_index nb) { return load_primitive(mesh, nb); });
    }
    const unsigned long long e = store_cell_rhs(mesh, i, s);
    best = e > best ? e : best;
  });
  block_max_to(best, &mesh.ctrl[launch.slot].rate_bits);
}

// ---------------------------------------------------------------- first pass: edges

// Each edge once, as evaluate_mesh_edge: the stored products length * F
// and length * speed (MeshCellSum::add's products; the gather adds them).
template <class Real, bool kSkip = false>
__global__ void __launch_bounds__(kBlockThreads, MeshMinBlocks<Real>::value)
    edge_flux_kernel(const MeshParams<Real> mesh, const Launch launch) {
  const Ctrl c = mesh.ctrl[launch.slot];
  if (!launch_takes_step(c, launch)) return;
  const index_t e = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= mesh.edges) return;
  const mesh_index l = ldg(mesh.arrays.edge_left + e);
  const mesh_index r = ldg(mesh.arrays.edge_right + e);
  // An edge is evaluated where the block of either of its cells is computed.
  if constexpr (kSkip) {
    if (!mesh.skip.needed[dry_block_of(l)] && (r < 0 || !mesh.skip.needed[dry_block_of(r)])) return;
  }
  const Real nx = ldg(mesh.arrays.edge_nx + e);
  const Real ny = ldg(mesh.arrays.edge_ny + e);
  const Real length = ldg(mesh.arrays.edge_length + e);
  const CellPrimitive<Real> left = load_primitive(mesh, l);
  // evaluate_mesh_edge, with the boundary state selected rather than branched to.
  const CellPrimitive<Real> right =
      r >= 0 ? load_primitive(mesh, r) : boundary_primitive(left, nx, ny, mesh.boundary[boundary_group(r)], mesh.phys);
  const EdgeFluctuation<Real> f = mesh_edge(left, right, nx, ny, mesh.phys);
  mesh.fl_h[e] = length * f.to_left.h;
  mesh.fl_hu[e] = length * f.to_left.hu;
  mesh.fl_hv[e] = length * f.to_left.hv;
  mesh.f_speed[e] = length * f.speed;
  if (r >= 0) {  // a boundary edge's to_right is never read
    mesh.fr_h[e] = length * f.to_right.h;
    mesh.fr_hu[e] = length * f.to_right.hu;
    mesh.fr_hv[e] = length * f.to_right.hv;
  }
}

// Each cell sums its edges' stored products in slot order (MeshCpuBackend::edge_pass).
template <class Real, int kSlots, bool kSkip = false>
__global__ void __launch_bounds__(kBlockThreads) edge_gather_kernel(const MeshParams<Real> mesh, const Launch launch) {
  const Ctrl c = mesh.ctrl[launch.slot];
  if (!launch_takes_step(c, launch)) return;
  unsigned long long best = 0;
  for_step_cells<Real, kSkip>(mesh, launch.slot, [&](index_t i) {
    MeshCellSum<Real> s;
#pragma unroll
    for (int k = 0; k < kSlots; ++k) {
      const mesh_index code = ldg(mesh.slot_edge + static_cast<index_t>(k) * mesh.cells + i);
      if (code == kNoEdge) continue;
      const bool me_left = code >= 0;
      const mesh_index e = me_left ? code : ~code;
      // s.add(F, speed, length) adds length * F: the products are stored.
      s.flux.h += ldg((me_left ? mesh.fl_h : mesh.fr_h) + e);
      s.flux.hu += ldg((me_left ? mesh.fl_hu : mesh.fr_hu) + e);
      s.flux.hv += ldg((me_left ? mesh.fl_hv : mesh.fr_hv) + e);
      s.wave += ldg(mesh.f_speed + e);
    }
    const unsigned long long e = store_cell_rhs(mesh, i, s);
    best = e > best ? e : best;
  });
  block_max_to(best, &mesh.ctrl[launch.slot].rate_bits);
}

// ---------------------------------------------------------------- second pass

// advance_cell for active cell i (MeshCpuBackend::apply_rhs), then its
// maxima at t + dt, as the CPU takes them after the step; volume: the depth
// the clamps added times the area. Returns whether the cell is left a dry
// fixed point or is inactive.
template <class Real>
__device__ __forceinline__ bool update_cell(const MeshParams<Real>& mesh, index_t i, double dt, double t,
                                            double& volume) {
  State<Real> q{mesh.h[i], mesh.hu[i], mesh.hv[i]};
  const bool active = !math::is_nan(mesh.z[i]);
  if (active) {  // inactive: no edges, no update
    Real added_depth;
    q = advance_cell(q, State<Real>{mesh.rh[i], mesh.rhu[i], mesh.rhv[i]}, static_cast<Real>(dt), mesh.phys,
                     added_depth);
    mesh.h[i] = q.h;
    mesh.hu[i] = q.hu;
    mesh.hv[i] = q.hv;
    // The area from its stored inverse: a relative difference of round-off in the added_depth.
    if (added_depth > Real(0)) volume += static_cast<double>(added_depth) / static_cast<double>(mesh.inv_area[i]);
  }
  if (mesh.max_h)
    track_cell_maxima(q, t + dt, mesh.phys.h_dry, mesh.arrival_threshold, mesh.max_h[i], mesh.max_speed[i],
                      mesh.arrival[i]);
  return !active || dry_fixed_point(q, mesh.phys.h_dry);
}

// Block b is dry where each lane's cell is (dry; lanes past the last cell
// pass true) and it has no open boundary edge. Every lane of the warp calls it.
template <class Real>
__device__ __forceinline__ void mark_block(const MeshParams<Real>& mesh, index_t b, bool dry) {
  const bool all_dry = __all_sync(kFullMask, dry);
  if ((threadIdx.x & 31) != 0) return;
  const bool marked = all_dry && !mesh.skip.open[b];
  mesh.skip.dry[b] = marked;
  if (marked && *mesh.any_dry == 0) *mesh.any_dry = 1;  // the same value from every writer
}

// The update of every cell, a thread each; with dry skipping on, each block
// is marked dry or not.
template <class Real>
__global__ void __launch_bounds__(kUpdateThreads) update_kernel(const MeshParams<Real> mesh, const Launch launch) {
  const Ctrl c = mesh.ctrl[launch.slot];
  double dt = 0, t = 0;
  // One state buffer; the next first pass accumulates into the next slot's rate.
  if (!step_prologue<Real, kResetRate>(mesh, launch, c, dt, t)) return;
  const index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  double volume = 0;
  bool dry = true;
  if (i < mesh.cells) dry = update_cell(mesh, i, dt, t, volume);
  // A warp's cells are one block; no early return above, so every lane is here.
  if (mesh.skip.on() && i - (threadIdx.x & 31) < mesh.cells) mark_block(mesh, dry_block_of(i), dry);
  warp_add_nonzero(mesh.positivity_sum, volume);
}

// The update of a skipping step: the listed blocks alone, a warp each, in a
// grid-stride loop; each block marked dry or not, and the cells counted.
template <class Real>
__global__ void __launch_bounds__(kUpdateThreads)
    listed_update_kernel(const MeshParams<Real> mesh, const Launch launch) {
  const Ctrl c = mesh.ctrl[launch.slot];
  double dt = 0, t = 0;
  if (!step_prologue<Real, kResetRate>(mesh, launch, c, dt, t)) return;
  double volume = 0;
  unsigned cells = 0;
  for_listed_blocks(mesh, launch.slot, [&](index_t b, index_t i) {
    bool dry = true;
    if (i < mesh.cells) {
      dry = update_cell(mesh, i, dt, t, volume);
      ++cells;
    }
    mark_block(mesh, b, dry);
  });
  warp_add_nonzero(mesh.positivity_sum, volume);
  cells = __reduce_add_sync(kFullMask, cells);
  if ((threadIdx.x & 31) == 0 && cells > 0)
    atomicAdd(&mesh.computed[blockIdx.x], static_cast<unsigned long long>(cells));
}

// ---------------------------------------------------------------- passive scalars

// The passive scalars on a mesh (one state buffer): h c of scalar s in
// hc[2 s] (and hc[2 s + 1]: both parities name the one buffer, as the
// forcing's ScalarArgs read them), its new concentration during a step in conc[s], the edges' mass
// fluxes, and the concentration boundary group g brings of it at
// group_c[s groups + g].
template <class Real>
struct MeshScalars {
  Real* const* hc;
  Real* const* conc;
  int count;
  Real* mass_flux;
  const Real* group_c;
  index_t groups;
};

// Each edge's mass flux (mesh_edge_mass_flux) from the state a step starts from.
template <class Real>
__global__ void scalar_flux_kernel(const MeshParams<Real> mesh, const MeshScalars<Real> scalars, const Launch launch) {
  if (!launch_takes_step(mesh.ctrl[launch.slot], launch)) return;
  const index_t e = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= mesh.edges) return;
  const MeshState<Real> q{mesh.h, mesh.hu, mesh.hv};
  const auto edge = static_cast<mesh_index>(e);
  const CellPrimitive<Real> left = mesh_cell_primitive(mesh.arrays, q, mesh.arrays.edge_left[e], mesh.phys);
  scalars.mass_flux[e] = mesh_edge_mass_flux(mesh.arrays, q, edge, evaluate_mesh_edge(mesh.arrays, q, edge, left,
                                                                                         mesh.phys));
}

// Each active cell's new concentrations over the step the launch takes
// (mesh_cell_concentrations), before the update changes the state.
template <class Real>
__global__ void scalar_concentration_kernel(const MeshParams<Real> mesh, const MeshScalars<Real> scalars,
                                            const Launch launch) {
  double dt = 0, t = 0;
  if (!step_of<Real>(mesh, launch, mesh.ctrl[launch.slot], dt, t)) return;
  const index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= mesh.cells || math::is_nan(mesh.z[i])) return;
  mesh_cell_concentrations(
      mesh.arrays, MeshState<Real>{mesh.h, mesh.hu, mesh.hv}, scalars.mass_flux, static_cast<mesh_index>(i),
      static_cast<Real>(dt), scalars.count, [&](int s) { return scalars.hc[2 * s]; }, scalars.group_c, scalars.groups,
      [&](int s, Real c) { scalars.conc[s][i] = c; });
}

// After the update of a step (the launch that filled `slot` took one): each
// scalar's h c is its new concentration times the new depth, on active cells.
template <class Real>
__global__ void scalar_store_kernel(const MeshParams<Real> mesh, const MeshScalars<Real> scalars, int slot) {
  if (!mesh.ctrl[slot].stepped) return;
  const index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= mesh.cells || math::is_nan(mesh.z[i])) return;
  for (int s = 0; s < scalars.count; ++s) scalars.hc[2 * s][i] = scalars.conc[s][i] * mesh.h[i];
}

// ---------------------------------------------------------------- maxima

// The maxima of the state after a step whose forcing came after the update
// (the launch that filled `slot` took one), at the time the CPU takes them.
template <class Real>
__global__ void step_maxima_kernel(const MeshParams<Real> mesh, int slot) {
  const Ctrl& c = mesh.ctrl[slot];
  if (!c.stepped) return;
  const index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= mesh.cells) return;
  track_cell_maxima(State<Real>{mesh.h[i], mesh.hu[i], mesh.hv[i]}, c.maxima_time, mesh.phys.h_dry,
                    mesh.arrival_threshold, mesh.max_h[i], mesh.max_speed[i], mesh.arrival[i]);
}

// The maxima of the state as it is, at time t (the initial state).
template <class Real>
__global__ void initial_maxima_kernel(const MeshParams<Real> mesh, double t) {
  const index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= mesh.cells) return;
  track_cell_maxima(State<Real>{mesh.h[i], mesh.hu[i], mesh.hv[i]}, t, mesh.phys.h_dry, mesh.arrival_threshold,
                    mesh.max_h[i], mesh.max_speed[i], mesh.arrival[i]);
}

} // namespace shallows::gpu::mesh
