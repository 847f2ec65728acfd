// SPDX-License-Identifier: MIT
#pragma once
// The forcing (Problem::forcing: rain, infiltration, a Manning map, volume
// sources) on the GPU over a cell layout (solver/cell_layout.hpp: a grid's
// rows or a mesh's blocks of cells), shared by the CUDA executors, grids and
// meshes. After the scheme's full step from t to t + dt:
//
//  1. cell_forcing_kernel, one block per group of the layout: every active
//     cell gets force_cell (physics/cell_forcing.hpp, as on the CPU), the
//     step's rain found once per block; the group's rain and infiltration,
//     summed by a fixed reduction tree, are added to per-group double
//     accumulators, so the account is the same run after run.
//  2. source_kernel, one block per VolumeSource: its volume over the step,
//     the weights h^(5/3) of its cells summed in cell order (the CPU's
//     bits), then each cell's depth (source_depth). Sources follow the order of
//     Problem::forcing.sources: those that share no cell with an earlier one
//     of the same launch run side by side (a launch per "level", normally
//     one), a source that shares a cell waits for the launch after.
//  3. the structures' pass (apply_structures, physics/structures.hpp, as on
//     the CPU), after the sources, in one launch of structures_kernel (three
//     for long lines): its parts one after another. The tallies
//     stay on the device until read. On a rank, on the
//     replica of their cells (StructureReplica): replica_pack_kernel puts
//     the rank's shares on the device, the host all-reduces them, and
//     ranked_structures_kernel runs the whole pass on one thread on the sums
//     and writes the replica back to the rank's block, as the CPU does.
//
// The executor supplies a Clock: a small struct whose window() says, on the
// device, whether a step was taken, its t and dt, and where the state after
// it lies. t and dt stay on the device (batched advance), so nothing
// synchronises per step. The kernels are launched only for a problem with
// forcing; a plain run does none of this work.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuda_check.cuh"
#include "device_array.cuh"
#include "shallows/core/math.hpp"
#include "shallows/exec/host_fields.hpp"
#include "shallows/mesh/structured/grid.hpp"
#include "shallows/physics/cell_forcing.hpp"
#include "shallows/physics/scalar_transport.hpp"
#include "shallows/physics/structures.hpp"
#include "shallows/solver/backend.hpp"
#include "shallows/solver/cell_layout.hpp"
#include "shallows/solver/problem.hpp"
#include "shallows/solver/structure_table.hpp"

namespace shallows::gpu::forcing {

constexpr int kThreads = 128;
// The structures' pass's blocks (structures_kernel).
constexpr int kPassThreads = 512;
// The shared memory it may take for the structures' specs and tallies.
constexpr std::size_t kStagedBytes = 40 * 1024;

// The step just taken, as a Clock gives it to the kernels.
template <class Real>
struct StepWindow {
  bool taken;      // false: no step was taken by this launch (target reached, or the run failed)
  double t0, dt;   // the step went from t0 to t0 + dt
  Real* h;         // the state after the step (by the layout's state index)
  Real* hu;
  Real* hv;
  int parity = 0;  // buffer parity of that state (the scalars': ScalarArgs)
};

// The passive scalars the forcing carries (first order): h c of scalar s in
// hc[2 s + parity], the rain's concentration, and each source's at
// source_c[s * sources + k]. scalars = 0: none.
template <class Real>
struct ScalarArgs {
  Real* const* hc = nullptr;
  int scalars = 0;
  const double* rain_c = nullptr;
  const double* source_c = nullptr;
  int sources = 0;
  __device__ __forceinline__ Real* at(int s, int parity) const { return hc[2 * s + parity]; }
};

template <class Real, class Cells = GridCells>
struct CellArgs {
  Cells cells;               // where the cells are, which the accounts count (a rank's own), the account groups
  const Real* z;             // by state index; NaN: inactive
  PhysicsParams<Real> phys;
  ForcingInputs in;          // device arrays
  double* infiltrated;       // cumulative infiltration F per problem cell (null without infiltration)
  double* group_rain;        // per group: the rain of its counted cells over the steps (layout account units)
  double* group_infiltration;  // per group: the infiltration, likewise
  ScalarArgs<Real> scalars;
};

template <class Real, class Cells = GridCells>
struct SourceArgs {
  Cells cells;
  Real h_dry;
  const int* order;           // sources by launch (level), each launch's in Problem order
  const index_t* cell_start;  // source k's cells: cells[cell_start[k] .. cell_start[k + 1])
  const index_t* cell;        // problem cells
  const int* knot_start;      // source k's discharge: knots knot_start[k] .. knot_start[k + 1] of t, v
  const double* t;
  const double* v;
  double* moved;              // per source: the volume it added (m^3, sinks negative), summed over steps
  ScalarArgs<Real> scalars;
};

// The structures (StructureTable's arrays on the device), their tallies, and
// the scalars' h c of the state in buffer parity p: hc[p][m] for scalar m.
template <class Real>
struct StructureArgs {
  StructureView view;
  Real h_dry = 0;
  double g = 0;  // the run's precision's g, in double, as the CPU passes it
  Real* const* hc[2] = {};
  int scalars = 0;
  // Whether structures_kernel copies the specs and tallies into shared
  // memory (kStagedBytes hold them), and its blocks' tickets (last_block).
  bool staged = false;
  unsigned* tickets = nullptr;
};

// A rank's replica of the structures' cells on the device (StructureReplica):
// each one's problem cell in the block (-1 outside it), the ranks' shares and
// then their sums (replica_pack's layout), and the replica's state, which
// apply_structures runs on.
template <class Real>
struct ReplicaArgs {
  const index_t* cells = nullptr;
  index_t n = 0;
  double* shares = nullptr;
  StructureCells<Real> state{};
};

// The sum of v over the block by a fixed tree, the same bits on every run.
// Every thread of the block calls it; s holds kThreads doubles.
__device__ __forceinline__ double block_sum(double v, double* s) {
  s[threadIdx.x] = v;
  __syncthreads();
#pragma unroll
  for (int o = kThreads / 2; o > 0; o >>= 1) {
    if (static_cast<int>(threadIdx.x) < o) s[threadIdx.x] += s[threadIdx.x + o];
    __syncthreads();
  }
  const double r = s[0];
  __syncthreads();  // s may be reused at once
  return r;
}

// A forcing without Green-Ampt soil, for a kernel instance that leaves out
// the implicit solve (its registers and instructions); the host launches it
// for no other.
struct WithoutGreenAmpt {
  __device__ __forceinline__ double operator()(const CellForcing&, double, double) const {
    __trap();  // unreachable: the instance runs without Green-Ampt only
    return 0.0;
  }
};

// Sides whose condition follows a time series (Forcing::boundary), as the
// step kernels take them (n = 0: a side that keeps its constant value),
// each evaluated at the time of the state whose ghosts it makes.
struct SideSeries {
  SeriesView side[4];
};

// Forcing::boundary uploaded, and its views (a grid executor's).
class SideSeriesDevice {
 public:
  SideSeriesDevice() = default;
  explicit SideSeriesDevice(const std::array<TimeSeries, 4>& boundary) {
    for (std::size_t s = 0; s < 4; ++s) {
      const TimeSeries& ts = boundary[s];
      t_[s] = DeviceArray<double>(ts.t.size());
      v_[s] = DeviceArray<double>(ts.v.size());
      t_[s].upload(ts.t.data(), ts.t.size());
      v_[s].upload(ts.v.data(), ts.v.size());
      views_.side[s] = {t_[s].get(), v_[s].get(), static_cast<int>(ts.t.size())};
    }
  }
  const SideSeries& views() const { return views_; }

 private:
  std::array<DeviceArray<double>, 4> t_, v_;
  SideSeries views_{};
};

// The cell forcing as the first-order lagged step kernel applies it, to each
// state it makes (step_kernels.cuh), so that the rhs it stores is the forced
// state's. The kernel computes a ring of cells around its chunk that the
// neighbouring chunks compute too, so the cumulative infiltration ping-pongs
// with the state: read from infiltrated[parity of the input], written to the
// other. The rain a row gets does not depend on the state: march_rows_kernel
// adds the step's depth times the row's sum of rain scales over its active
// cells (or, from a stack, each overlapping frame's row sum of rates times
// the overlap). Each step's infiltration comes in parts, one per strip of
// chunks, added in strip order to the rows by march_rows_kernel: the same
// bits run after run.
template <class Real>
struct MarchForcing {
  CellArgs<Real> cell;                      // its `infiltrated` unused
  double* infiltrated[2] = {};              // null without infiltration
  double* part_infiltration = nullptr;      // [strip * ny + row]: this step's infiltrated depth over the strip's cells
  const double* row_rain_scale = nullptr;   // per row: the rain scales of its active cells summed (no stack)
  const double* row_frame_rate = nullptr;   // [frame * ny + row]: a frame's rates over the row's active cells
  index_t strips = 0;                       // 0: no cell forcing in the kernel
  // Per chunk, 1 where a cell of the chunk or of its one-cell ring belongs to
  // a source: the kernel's rhs, rate and maxima of the new state there are
  // made from the state before the sources, so first_rhs_kernel makes them
  // again after them, and the kernel leaves out the rate and the maxima.
  // Null without sources; set with or without cell forcing.
  const unsigned char* after_sources = nullptr;
  // The sides' time series: the ghosts of the state the kernel makes take
  // their values at that state's time (its kSourcesSeries instance).
  SideSeries sides;
  // Per cell (row-major): the depth the step's infiltration took, kept for
  // the scalars' pass after the kernel (moved_depths); null without
  // infiltration or scalars.
  double* taken = nullptr;
};

// What the forcing of the lagged kernel's step from t0 over dt moved in
// `cell`, as force_cell's `moved` (the scalars' pass).
template <class Real>
__device__ __forceinline__ ForcingDepths moved_depths(const MarchForcing<Real>& march_forcing, const StepRain& rain,
                                                      index_t cell, double t0, double dt) {
  return {cell_rain(march_forcing.cell.in, rain, cell, t0, dt), march_forcing.taken ? march_forcing.taken[cell] : 0.0};
}

// Group blockIdx.x of the layout: friction from the map, rain, infiltration
// of its active cells.
template <class Real, class Cells, class Clock>
__global__ void __launch_bounds__(kThreads)
    cell_forcing_kernel(const CellArgs<Real, Cells> cell_forcing, const Clock clock) {
  const StepWindow<Real> w = clock.window();
  if (!w.taken) return;
  __shared__ StepRain rain;
  __shared__ double sum_buf[kThreads];
  if (threadIdx.x == 0) rain = step_rain(cell_forcing.in, w.t0, w.t0 + w.dt);
  __syncthreads();
  const Cells& cells = cell_forcing.cells;
  const index_t group = blockIdx.x;
  double rain_sum = 0, infiltration_sum = 0;
  for (index_t i = threadIdx.x; i < cells.group_size(group); i += kThreads) {
    const LayoutCell at = cells.at(group, i);
    const index_t k = at.state;
    if (math::is_nan(cell_forcing.z[k])) continue;
    double F = cell_forcing.infiltrated ? cell_forcing.infiltrated[at.cell] : 0.0;
    ForcingDepths moved;
    const double h_before = static_cast<double>(w.h[k]);
    const State<Real> q = force_cell(cell_forcing.in, rain, at.cell, w.t0, w.dt, State<Real>{w.h[k], w.hu[k], w.hv[k]},
                                     cell_forcing.phys, F, moved);
    for (int s = 0; s < cell_forcing.scalars.scalars; ++s) {
      Real* hc = cell_forcing.scalars.at(s, w.parity);
      hc[k] =
          static_cast<Real>(forced_scalar(static_cast<double>(hc[k]), h_before, moved, cell_forcing.scalars.rain_c[s]));
    }
    w.h[k] = q.h;
    w.hu[k] = q.hu;
    w.hv[k] = q.hv;
    if (cell_forcing.infiltrated) cell_forcing.infiltrated[at.cell] = F;
    if (at.counted) {
      const double weight = cells.account_weight(at.cell);
      rain_sum += moved.rain * weight;
      infiltration_sum += moved.infiltration * weight;
    }
  }
  rain_sum = block_sum(rain_sum, sum_buf);
  infiltration_sum = block_sum(infiltration_sum, sum_buf);
  if (threadIdx.x == 0) {
    cell_forcing.group_rain[group] += rain_sum;
    cell_forcing.group_infiltration[group] += infiltration_sum;
  }
}

// After a lagged step with forcing: each row's rain, and its infiltration
// parts (strips in order), added to the row's accounts.
template <class Real, class Clock>
__global__ void __launch_bounds__(kThreads)
    march_rows_kernel(const MarchForcing<Real> march_forcing, const Clock clock) {
  const StepWindow<Real> w = clock.window();
  if (!w.taken) return;
  const index_t ny = march_forcing.cell.cells.g.ny;
  const index_t j = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (j >= ny) return;
  const double t1 = w.t0 + w.dt;
  const StepRain rain = step_rain(march_forcing.cell.in, w.t0, t1);
  // A stack's row sums are a stack of ny "cells": a row's rain is a cell's.
  const RainFrames rows{march_forcing.cell.in.frames.t, march_forcing.row_frame_rate, march_forcing.cell.in.frames.n,
                        ny};
  march_forcing.cell.group_rain[j] += march_forcing.cell.in.frames.n > 0
                                          ? frames_rain_depth(rows, rain.over, j, w.t0, t1)
                                          : rain.depth * march_forcing.row_rain_scale[j];
  if (march_forcing.part_infiltration) {
    double infiltration = 0;
    for (index_t s = 0; s < march_forcing.strips; ++s) infiltration += march_forcing.part_infiltration[s * ny + j];
    march_forcing.cell.group_infiltration[j] += infiltration;
  }
}

// Source order[first + blockIdx.x]: its volume over the step shared between
// its cells. kSpread (a rank of a distributed run, one block): source
// `first`, whose cells' weights and depths, every rank's, are spread[q] and
// spread[n + q] (spread_gather_kernel, then the all-reduce); its cells
// outside the rank's block are -1. The account counts every cell, from
// those values, as one process does; a cell of the block is stepped by its
// own depth.
template <class Real, class Cells, class Clock, bool kSpread = false>
__global__ void __launch_bounds__(kThreads) source_kernel(const SourceArgs<Real, Cells> sources, const Clock clock,
                                                          int first, const double* spread = nullptr) {
  const StepWindow<Real> w = clock.window();
  if (!w.taken) return;
  const int src = kSpread ? first : sources.order[first + static_cast<int>(blockIdx.x)];
  const index_t c0 = sources.cell_start[src], c1 = sources.cell_start[src + 1];
  __shared__ double volume;
  __shared__ double sum_buf[kThreads];
  if (threadIdx.x == 0) {
    const int k0 = sources.knot_start[src];
    const SeriesView q{sources.t + k0, sources.v + k0, sources.knot_start[src + 1] - k0};
    volume = series_integral(q, w.t0, w.t0 + w.dt);
  }
  __syncthreads();
  if (volume == 0 || c0 == c1) return;  // the whole block: nothing moves
  const Cells& cells = sources.cells;
  const index_t n = c1 - c0;
  // The weights, computed side by side, summed in cell order by one thread
  // as the CPU sums them: the depths get the CPU's bits.
  __shared__ double weights;
  if (threadIdx.x == 0) weights = 0;
  for (index_t base = c0; base < c1; base += kThreads) {
    const index_t c = base + threadIdx.x;
    if (c < c1)
      sum_buf[threadIdx.x] =
          kSpread ? spread[c - c0] : source_weight(static_cast<double>(w.h[cells.state_index(sources.cell[c])]));
    __syncthreads();
    if (threadIdx.x == 0) {
      const int chunk = static_cast<int>(min(static_cast<index_t>(kThreads), c1 - base));
      for (int k = 0; k < chunk; ++k) weights += sum_buf[k];
    }
    __syncthreads();
  }
  const double sum_w = weights;
  const int count = static_cast<int>(n);
  double added = 0;
  // A source's cells are distinct (checked on the host): each thread owns its cells.
  for (index_t c = c0 + threadIdx.x; c < c1; c += kThreads) {
    const index_t cell = sources.cell[c];
    // A rank's cells outside its block (-1) have the grid's area.
    const double area = cells.area(cell);
    if constexpr (kSpread) {
      added += source_depth(volume, spread[c - c0], sum_w, count, area, spread[n + c - c0]);
      if (cell < 0) continue;
    }
    const index_t k = cells.state_index(cell);
    const double h = static_cast<double>(w.h[k]);
    const double d = source_depth(volume, source_weight(h), sum_w, count, area, h);
    const Real hn = static_cast<Real>(h + d);
    w.h[k] = hn;
    for (int s = 0; s < sources.scalars.scalars; ++s) {
      Real* hc = sources.scalars.at(s, w.parity);
      const double given = sources.scalars.source_c[s * sources.scalars.sources + src];
      hc[k] = static_cast<Real>(sourced_scalar(static_cast<double>(hc[k]), h, d, given));
    }
    sourced_discharge(h, d, hn, sources.h_dry, w.hu[k], w.hv[k]);
    if constexpr (!kSpread) added += d * cells.account_weight(cell);
  }
  added = block_sum(added, sum_buf);
  if (threadIdx.x == 0) sources.moved[src] += added * cells.account_scale();
}

// The cells of the state after the step (window w), for the structures.
template <class Real>
__device__ __forceinline__ StructureCells<Real> structure_cells(const StructureArgs<Real>& s,
                                                                const StepWindow<Real>& w) {
  StructureCells<Real> cells;
  cells.h = w.h;
  cells.hu = w.hu;
  cells.hv = w.hv;
  cells.hc = w.parity != 0 ? s.hc[1] : s.hc[0];
  cells.scalars = s.scalars;
  cells.h_dry = s.h_dry;
  return cells;
}

// What a launch of structures_kernel runs: the whole pass in one block, or
// its parts in three launches (the breaches and the weir crossings' flows
// over several blocks; the weir cells over several blocks; the rest in one
// block): a block never reads what another block of its launch wrote.
enum class PassPart { whole, flows, cells, rest };

// Whether this block is the last of the launch to arrive here (a ticket:
// every other block has done all it does before its call). Every thread of
// every block calls it; the last block resets the tickets for the next launch.
__device__ __forceinline__ bool last_block(unsigned* tickets) {
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(tickets, 1u) == gridDim.x - 1;
  __syncthreads();
  if (last && threadIdx.x == 0) *tickets = 0;
  return last;
}

// The structures' pass (apply_structures' parts), a barrier between them:
// every breach; every weir crossing's flow; every weir cell; each weir's and
// breach's tally by kSumLanes lanes of a group of the block (sum_lanes'
// tree); the pumps, gates and culverts round by round
// (StructureSpec::end_round), a thread each. Each block copies the specs and
// tallies into shared memory where they fit (StructureArgs::staged; without
// room, one block runs the whole pass on the global arrays). kPart whole:
// one block runs it all. flows: each block advances every breach in its
// copy (the same values in every block) and takes its share of the
// crossings; the last to take a ticket, when every block has made its copy,
// writes the tallies back. cells: each block takes its share of the weir
// cells. rest: one block, the tallies' sums and the pumps, gates and
// culverts. Structures are few, their pass a chain of dependent reads: one
// launch, or three for long lines, cost less than a launch per part.
template <class Real, class Clock, PassPart kPart>
__global__ void __launch_bounds__(kPassThreads) structures_kernel(const StructureArgs<Real> s, const Clock clock) {
  static_assert(kPassThreads % kSumLanes == 0, "the tallies' sums take groups of kSumLanes threads");
  constexpr int kGroups = kPassThreads / kSumLanes;
  __shared__ double lanes[kPassThreads];
  extern __shared__ double staged[];  // the specs, then the tallies (both of 8-byte words)
  const StepWindow<Real> w = clock.window();
  if (!w.taken) return;  // the whole grid
  StructureView v = s.view;
  const int t = static_cast<int>(threadIdx.x);
  const auto copy = [&](void* to, const void* from, std::size_t bytes) {
    for (std::size_t k = t; k < bytes / 8; k += kPassThreads)
      static_cast<unsigned long long*>(to)[k] = static_cast<const unsigned long long*>(from)[k];
  };
  if (s.staged && kPart != PassPart::cells) {
    StructureSpec* specs = reinterpret_cast<StructureSpec*>(staged);
    StructureTally* tally = reinterpret_cast<StructureTally*>(specs + v.count);
    copy(specs, v.specs, v.count * sizeof(StructureSpec));
    copy(tally, v.tally, v.count * sizeof(StructureTally));
    v.specs = specs;
    v.tally = tally;
    __syncthreads();
  }
  const StructureCells<Real> cells = structure_cells(s, w);
  const double dt = static_cast<double>(w.dt);
  const int first = static_cast<int>(blockIdx.x) * kPassThreads + t, stride = static_cast<int>(gridDim.x) * kPassThreads;
  if constexpr (kPart == PassPart::whole || kPart == PassPart::flows) {
    for (int k = t; k < v.count; k += kPassThreads) advance_breach_of(v, cells, k, w.t0, dt, s.g);
    __syncthreads();
    for (int c = first; c < v.crossing_count; c += stride) weir_flow(v, cells, c, dt);
    if constexpr (kPart == PassPart::flows) {
      if (last_block(s.tickets)) copy(s.view.tally, v.tally, v.count * sizeof(StructureTally));
      return;
    }
    __syncthreads();
  }
  if constexpr (kPart == PassPart::whole || kPart == PassPart::cells) {
    for (int k = first; k < v.weir_cell_count; k += stride) apply_weir_cell(v, cells, k);
    if constexpr (kPart == PassPart::cells) return;
    __syncthreads();
  }
  const int group = t / kSumLanes, lane = t % kSumLanes;
  double* sum = lanes + group * kSumLanes;
  for (int from = 0; from < v.count; from += kGroups) {
    const int k = from + group;
    const bool sums = k < v.count && sums_crossings(v.specs[k].kind);
    sum[lane] = sums ? weir_lane_sum(v, k, lane) : 0.0;
    __syncthreads();
    for (int o = kSumLanes / 2; o > 0; o >>= 1) {  // sum_lanes' tree
      if (lane < o) sum[lane] += sum[lane + o];
      __syncthreads();
    }
    if (sums && lane == 0) settle_weir_tally(v, k, sum[0], dt);
    __syncthreads();  // sum[0] read before the next round writes it
  }
  for (int round = 0; round < v.end_rounds; ++round) {
    for (int k = t; k < v.count; k += kPassThreads)
      if (joins_ends(v.specs[k].kind) && v.specs[k].end_round == round) apply_end_structure(v, cells, k, w.t0, dt, s.g);
    __syncthreads();
  }
  if (s.staged) copy(s.view.tally, v.tally, v.count * sizeof(StructureTally));
}

// A rank's shares of the replica of the state after the step (replica_pack),
// one thread. Without a step every rank leaves them: the sums go unused.
template <class Real, class Clock>
__global__ void replica_pack_kernel(const StructureArgs<Real> structures, const ReplicaArgs<Real> replica,
                                    const GridCells cells, const Clock clock) {
  const StepWindow<Real> w = clock.window();
  if (!w.taken) return;
  replica_pack(replica.cells, replica.n, cells, structure_cells(structures, w), replica.shares);
}

// A rank's structures over the step, one thread: on the replica of their
// cells, from the ranks' summed shares, then back into the rank's block
// (CpuForcing's order).
template <class Real, class Clock>
__global__ void ranked_structures_kernel(const StructureArgs<Real> structures, const ReplicaArgs<Real> replica,
                                         const GridCells cells, const Clock clock) {
  const StepWindow<Real> w = clock.window();
  if (!w.taken) return;
  replica_unpack(replica.shares, replica.n, replica.state);
  apply_structures(structures.view, replica.state, w.t0, w.dt, structures.g);
  replica_write_back(replica.cells, replica.n, cells, replica.state, structure_cells(structures, w));
}

// A rank's weights and depths of source src's cells (kSpread above): its
// owned cells' after the step, 0 for the others (another rank's, or outside
// the block), so that an all-reduce sum gives every cell its owner's values.
template <class Real, class Clock>
__global__ void spread_gather_kernel(const SourceArgs<Real, GridCells> sources, const Clock clock, int src,
                                     double* spread) {
  const StepWindow<Real> w = clock.window();
  const index_t c0 = sources.cell_start[src], n = sources.cell_start[src + 1] - c0;
  for (index_t q = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < n;
       q += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t cell = sources.cell[c0 + q];
    double wq = 0, hq = 0;
    if (w.taken && sources.cells.owns(cell)) {
      hq = static_cast<double>(w.h[sources.cells.state_index(cell)]);
      wq = source_weight(hq);
    }
    spread[q] = wq;
    spread[n + q] = hq;
  }
}

// The forcing's data on the device and its launches over a cell layout,
// owned by an executor (a default-constructed one is inactive: a problem
// without forcing). The lagged kernel's forcing (MarchForcing) and sources
// on ranks are a grid's.
template <class Real, class Cells = GridCells>
class ForcingDevice {
  static constexpr bool kGrid = std::is_same_v<Cells, GridCells>;


 public:
  ForcingDevice() = default;

  // Whether the lagged step kernel can run with f: it applies the cell
  // forcing itself (MarchForcing); the sources run after it, and the chunks
  // next to them take their rhs and rate again (MarchForcing::after_sources);
  // it evaluates the sides' series itself (MarchForcing::sides). Not on a
  // rank with sources or structures, which wait for every rank's cell
  // values, or side series.
  static bool marches(const Forcing& f, bool ranked) {
    return !ranked || (f.sources.empty() && f.structures.empty() && !f.has_boundary_series());
  }

  // Checks and uploads p.forcing for the executor's cells (a mesh's areas
  // in device memory); waits for the copies. march_strips > 0 (a grid): the
  // lagged step kernel applies the cell forcing (f.forces_cells() and
  // marches), with that many strips of chunks. host_layout: the same cells
  // with their areas on the host, for the structures' ends (a mesh's; a
  // grid's layout is its own).
  ForcingDevice(const Problem& p, const Cells& layout, index_t march_strips = 0, const Cells* host_layout = nullptr)
      : layout_(layout) {
    const Forcing& f = p.forcing;
    active_ = f.active();
    if (!active_) return;
    cell_pass_ = f.forces_cells();
    const auto cells = static_cast<std::size_t>(layout_.cells());
    check_forcing_sizes(f, cells);

    cell_.cells = layout_;
    cell_.phys = to_precision<Real>(p.physics);
    cell_.in.model = f.infiltration.model;
    rain_t_ = upload(f.rain.rate.t);
    rain_v_ = upload(f.rain.rate.v);
    cell_.in.rain = {rain_t_.get(), rain_v_.get(), static_cast<int>(f.rain.rate.t.size())};
    cell_.in.rain_scale = per_cell(f.rain.scale, rain_scale_);
    frame_t_ = upload(f.rain.frame_times);
    frames_ = upload(f.rain.frames);
    cell_.in.frames = {frame_t_.get(), frames_.get(), static_cast<int>(f.rain.frame_times.size()), layout_.cells()};
    cell_.in.manning = per_cell(f.manning, manning_);
    if (f.infiltration.model != InfiltrationModel::none) {
      cell_.in.p0 = per_cell(f.infiltration.p0, p_[0]);
      cell_.in.p1 = per_cell(f.infiltration.p1, p_[1]);
      cell_.in.p2 = per_cell(f.infiltration.p2, p_[2]);
      infiltrated_ = DeviceArray<double>(cells);
      SHALLOWS_CUDA_CHECK(cudaMemset(infiltrated_.get(), 0, cells * sizeof(double)));
    }
    cell_.infiltrated = infiltrated_.get();
    const auto groups = static_cast<std::size_t>(layout_.groups());
    groups_ = DeviceArray<double>(2 * groups);
    SHALLOWS_CUDA_CHECK(cudaMemset(groups_.get(), 0, 2 * groups * sizeof(double)));
    cell_.group_rain = groups_.get();
    cell_.group_infiltration = groups_.get() + groups;
    if constexpr (kGrid) {
      if (march_strips > 0) start_march(p, march_strips);
    } else if (march_strips > 0) {
      throw std::logic_error("ForcingDevice: the lagged kernel's forcing is a grid's");
    }
    ranked_sources_ = p.owned.cells() > 0 && !f.sources.empty();
    upload_sources(f.sources);
    if (!f.structures.empty()) {
      if (!kGrid && host_layout == nullptr)
        throw std::logic_error("ForcingDevice: a mesh's structures need its areas on the host");
      upload_structures(p, host_layout ? *host_layout : layout_);
    }
    // Pageable copies may still be in flight; the executor's stream does not wait for the legacy stream.
    SHALLOWS_CUDA_CHECK(cudaDeviceSynchronize());
  }

  // Device memory the forcing of p takes on `cells` (for require_free_memory),
  // with what the sizes would be before they are checked.
  static std::size_t bytes(const Problem& p, const Cells& cells, index_t march_strips = 0) {
    const Forcing& f = p.forcing;
    if (!f.active()) return 0;
    const auto groups = static_cast<std::size_t>(cells.groups());
    std::size_t doubles = 2 * f.rain.rate.t.size() + f.rain.scale.size() + f.rain.frame_times.size() +
                          f.rain.frames.size() + f.manning.size() + 2 * groups;
    if (march_strips > 0) doubles += (static_cast<std::size_t>(march_strips) + 1 + f.rain.frame_times.size()) * groups;
    if (f.infiltration.model != InfiltrationModel::none) {
      // The lagged kernel's: infiltration in two buffers, and the depth taken for the scalars.
      const std::size_t per_cell = march_strips > 0 ? (p.scalars.empty() ? 2 : 3) : 1;
      doubles += f.infiltration.p0.size() + f.infiltration.p1.size() + f.infiltration.p2.size() +
                 static_cast<std::size_t>(cells.cells()) * per_cell;
    }
    std::size_t other = 0;
    for (const VolumeSource& s : f.sources) {
      doubles += 2 * s.discharge.t.size() + 1;
      other += s.cells.size() * sizeof(index_t) + sizeof(index_t) + 2 * sizeof(int);
    }
    for (const Structure& s : f.structures) {
      doubles += 2 * (s.discharge.t.size() + s.width.t.size());
      // Each crossing: itself, its work (volume, breach, mass per scalar), at most two weir cells and entries.
      other += sizeof(StructureSpec) + 2 * sizeof(StructureEnd) + sizeof(StructureTally) +
               s.crossings.size() * (sizeof(WeirCrossing) + sizeof(double) * (1 + p.scalars.size()) +
                                     sizeof(int) + 2 * (sizeof(WeirCell) + sizeof(int)));
    }
    if (!f.structures.empty()) other += 2 * p.scalars.size() * sizeof(Real*);
    // A rank's replica of the structures' cells: its cells, state and shares.
    other += f.replica.cells.size() * (sizeof(index_t) + (3 + p.scalars.size()) * (sizeof(Real) + sizeof(double))) +
             p.scalars.size() * sizeof(Real*);
    return doubles * sizeof(double) + other + 2 * sizeof(index_t) + sizeof(int);
  }

 private:
  // The lagged kernel's part (MarchForcing).
  void start_march(const Problem& p, index_t march_strips) {
    const Forcing& f = p.forcing;
    const auto cells = static_cast<std::size_t>(layout_.cells());
    const auto ny = static_cast<std::size_t>(layout_.g.ny);
    if (!f.forces_cells() || !marches(f, p.owned.cells() > 0))
      throw std::logic_error("ForcingDevice: this forcing cannot be applied by the lagged kernel");
    march_.strips = march_strips;
    upload_row_rain(p);
    if (infiltrated_.size() > 0) {
      const auto parts = static_cast<std::size_t>(march_strips) * ny;
      parts_ = DeviceArray<double>(parts);
      SHALLOWS_CUDA_CHECK(cudaMemset(parts_.get(), 0, parts * sizeof(double)));
      march_.part_infiltration = parts_.get();
      infiltrated_next_ = DeviceArray<double>(cells);
      SHALLOWS_CUDA_CHECK(cudaMemset(infiltrated_next_.get(), 0, cells * sizeof(double)));
      march_.infiltrated[0] = infiltrated_.get();
      march_.infiltrated[1] = infiltrated_next_.get();
    }
  }

 public:
  bool active() const { return active_; }
  // A rank's volume sources or structures: host all-reduces in each step
  // (one per source, one for the structures), which launch makes.
  bool host_reduces() const { return ranked_sources_ || ranked_structures_; }

  // The infiltrated depths of the state in buffer `parity` (the lagged
  // kernel's follow the state's parity); null without infiltration.
  double* infiltrated(int parity = 0) const {
    const DeviceArray<double>& F = parity != 0 && infiltrated_next_.size() > 0 ? infiltrated_next_ : infiltrated_;
    return F.size() > 0 ? F.get() : nullptr;
  }

  // What the lagged step kernel takes (constructed with march_strips > 0).
  MarchForcing<Real> march() const {
    MarchForcing<Real> m = march_;
    m.cell = cell_;
    return m;
  }

  // The executor's bed by state index (NaN: an inactive cell, which gets no forcing), once it is allocated.
  void set_bed(const Real* z) { cell_.z = z; }

  // The executor's scalar buffers (hc[2 s + parity], device pointers) and
  // the concentrations the rain and the sources bring (scalar_inflow).
  void set_scalars(Real* const* hc, const ScalarInflow<Real>& inflow) {
    const std::size_t count = inflow.rain.size();
    if (count == 0 || !active_) return;
    scalar_rain_ = upload(inflow.rain);
    scalar_sources_ = upload(inflow.source);
    const ScalarArgs<Real> a{hc, static_cast<int>(count), scalar_rain_.get(), scalar_sources_.get(),
                             static_cast<int>(source_count_)};
    cell_.scalars = a;
    source_.scalars = a;
    if (structures_.view.count > 0) {
      crossing_mass_ = DeviceArray<double>(count * static_cast<std::size_t>(structures_.view.crossing_count));
      structures_.view.mass = crossing_mass_.get();
      // The structures' pass takes one array of h c pointers per state buffer.
      std::vector<Real*> all(2 * count), by_parity[2];
      SHALLOWS_CUDA_CHECK(cudaMemcpy(all.data(), hc, all.size() * sizeof(Real*), cudaMemcpyDeviceToHost));
      for (std::size_t m = 0; m < count; ++m) {
        by_parity[0].push_back(all[2 * m]);
        by_parity[1].push_back(all[2 * m + 1]);
      }
      for (int b = 0; b < 2; ++b) {
        structure_hc_[b] = DeviceArray<Real*>(count);
        structure_hc_[b].upload(by_parity[b].data(), count);
        structures_.hc[b] = structure_hc_[b].get();
      }
      structures_.scalars = static_cast<int>(count);
      if constexpr (kGrid) {
        if (ranked_structures_) allocate_replica(static_cast<int>(count));
      }
    }
    if (march_.strips > 0 && infiltrated_.size() > 0) {
      taken_ = DeviceArray<double>(infiltrated_.size());
      march_.taken = taken_.get();
    }
    SHALLOWS_CUDA_CHECK(cudaDeviceSynchronize());
  }

  // The kernels of one step's forcing on stream (also inside a graph capture,
  // but for a rank's sources and structures: reduce, Backend::set_sum_reducer's,
  // is called for each source and for the structures each step, synchronising
  // stream).
  template <class Clock>
  void launch(const Clock& clock, cudaStream_t stream, const Backend::SumReducer& reduce = {}) const {
    if (!active_) return;
    if (cell_pass_ && march_.strips > 0) {
      // The lagged kernel forced the cells; its row parts go into the accounts.
      if constexpr (kGrid) {
        const auto blocks = static_cast<unsigned>((layout_.g.ny + kThreads - 1) / kThreads);
        march_rows_kernel<Real, Clock><<<blocks, kThreads, 0, stream>>>(march(), clock);
        SHALLOWS_CUDA_CHECK_LAUNCH("forcing march_rows_kernel");
      }
    } else if (cell_pass_) {
      cell_forcing_kernel<Real, Cells, Clock>
          <<<static_cast<unsigned>(layout_.groups()), kThreads, 0, stream>>>(cell_, clock);
      SHALLOWS_CUDA_CHECK_LAUNCH("forcing cell_forcing_kernel");
    }
    if constexpr (kGrid) {
      if (ranked_sources_) launch_ranked_sources(clock, stream, reduce);
    }
    for (std::size_t l = 0; !ranked_sources_ && l + 1 < level_start_.size(); ++l) {
      const int first = level_start_[l];
      const auto count = static_cast<unsigned>(level_start_[l + 1] - first);
      source_kernel<Real, Cells, Clock><<<count, kThreads, 0, stream>>>(source_, clock, first);
      SHALLOWS_CUDA_CHECK_LAUNCH("forcing source_kernel");
    }
    // After the sources, as on the CPU (CpuForcing::apply).
    if (structures_.view.count == 0) return;
    if constexpr (kGrid) {
      if (ranked_structures_) return launch_ranked_structures(clock, stream, reduce);
    }
    launch_structures(clock, stream);
  }

 private:
  template <class Clock>
  void launch_structures(const Clock& clock, cudaStream_t stream) const {
    const StructureView& v = structures_.view;
    const std::size_t staged = structures_.staged ? structure_shared_bytes_ : 0;
    const auto blocks = [](int n) { return static_cast<unsigned>(std::max(1, (n + kPassThreads - 1) / kPassThreads)); };
    // One block while its threads take the crossings and the weir cells in
    // two rounds at most; else three launches, the flows and the weir cells
    // each over a block per kPassThreads of them.
    if (!structures_.staged || (v.crossing_count <= 2 * kPassThreads && v.weir_cell_count <= 2 * kPassThreads)) {
      structures_kernel<Real, Clock, PassPart::whole><<<1, kPassThreads, staged, stream>>>(structures_, clock);
      SHALLOWS_CUDA_CHECK_LAUNCH("forcing structures_kernel");
      return;
    }
    structures_kernel<Real, Clock, PassPart::flows>
        <<<blocks(v.crossing_count), kPassThreads, staged, stream>>>(structures_, clock);
    SHALLOWS_CUDA_CHECK_LAUNCH("forcing structures_kernel (flows)");
    structures_kernel<Real, Clock, PassPart::cells>
        <<<blocks(v.weir_cell_count), kPassThreads, 0, stream>>>(structures_, clock);
    SHALLOWS_CUDA_CHECK_LAUNCH("forcing structures_kernel (cells)");
    structures_kernel<Real, Clock, PassPart::rest><<<1, kPassThreads, staged, stream>>>(structures_, clock);
    SHALLOWS_CUDA_CHECK_LAUNCH("forcing structures_kernel (rest)");
  }

  // A rank's sources (a grid's): one after another, in Problem order (each
  // rank makes the same all-reduces), each with every rank's cell values.
  template <class Clock>
  void launch_ranked_sources(const Clock& clock, cudaStream_t stream, const Backend::SumReducer& reduce) const {
    {
      // A rank: the sources one after another, in Problem order (each rank
      // makes the same all-reduces), each with every rank's cell values.
      for (std::size_t k = 0; k < source_count_; ++k) {
        const auto src = static_cast<int>(k);
        const auto n = static_cast<std::size_t>(source_cells_[k + 1] - source_cells_[k]);
        spread_gather_kernel<Real, Clock><<<static_cast<unsigned>(std::max<std::size_t>(1, (n + 255) / 256)), 256, 0,
                                            stream>>>(source_, clock, src, spread_.get());
        SHALLOWS_CUDA_CHECK_LAUNCH("forcing spread_gather_kernel");
        std::vector<double>& v = spread_host_;
        v.resize(2 * n);
        SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(v.data(), spread_.get(), 2 * n * sizeof(double), cudaMemcpyDeviceToHost,
                                            stream));
        SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream));
        if (reduce) reduce(v);  // each cell has one owner: its values arrive exact
        SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(spread_.get(), v.data(), 2 * n * sizeof(double), cudaMemcpyHostToDevice,
                                            stream));
        SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream));  // v is reused
        source_kernel<Real, Cells, Clock, true><<<1, kThreads, 0, stream>>>(source_, clock, src, spread_.get());
        SHALLOWS_CUDA_CHECK_LAUNCH("forcing source_kernel (spread)");
      }
    }
  }

  // A rank's structures (a grid's): its shares of their cells' values to the
  // host, all-reduced there (every rank makes the same all-reduce each step),
  // back to the device, and the structures run on the sums (CpuForcing's way).
  template <class Clock>
  void launch_ranked_structures(const Clock& clock, cudaStream_t stream, const Backend::SumReducer& reduce) const {
    if (!reduce) {
      throw std::logic_error("ForcingDevice: structure '" + structure_names_.front() +
                             "' on a rank without the ranks' sum (set_sum_reducer)");
    }
    replica_pack_kernel<Real, Clock><<<1, 1, 0, stream>>>(structures_, replica_, layout_, clock);
    SHALLOWS_CUDA_CHECK_LAUNCH("forcing replica_pack_kernel");
    std::vector<double>& v = replica_host_;
    const std::size_t bytes = v.size() * sizeof(double);
    SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(v.data(), replica_.shares, bytes, cudaMemcpyDeviceToHost, stream));
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream));
    reduce(v);  // each cell has one owner: its values arrive exact (replica_share)
    SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(replica_.shares, v.data(), bytes, cudaMemcpyHostToDevice, stream));
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream));  // v is reused
    ranked_structures_kernel<Real, Clock><<<1, 1, 0, stream>>>(structures_, replica_, layout_, clock);
    SHALLOWS_CUDA_CHECK_LAUNCH("forcing ranked_structures_kernel");
  }

 public:

  // Backend::read_forcing_state: each cell's infiltration (empty without
  // infiltration), the per-row accounts and the per-source volumes, as the
  // CPU executor keeps them (all empty without forcing). Synchronises stream.
  // parity: the buffer parity of the current state (the lagged kernel's
  // infiltration follows it).
  void read(ForcingState& out, cudaStream_t stream, int parity = 0) const { read(out, true, stream, parity); }

  // Backend::forcing_volumes: the accounts summed on the host in row and
  // source order (ForcingState::volumes, as on the CPU). Synchronises stream.
  ForcingVolumes volumes(cudaStream_t stream) const {
    ForcingState s;
    read(s, false, stream);
    return s.volumes(layout_.account_scale());
  }

  // Backend::load_forcing_state: a state read_forcing_state gave (sizes must match).
  void load(const ForcingState& in, cudaStream_t stream) {
    const auto groups = static_cast<std::size_t>(active_ ? layout_.groups() : 0);
    check_load_size(in.infiltration.size() == infiltrated_.size() && in.rain_rows.size() == groups &&
                        in.infiltration_rows.size() == groups && in.sources.size() == moved_.size() &&
                        in.structures.size() == kTallyValues * static_cast<std::size_t>(structures_.view.count),
                    "load_forcing_state");
    if (!active_) return;
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream));
    infiltrated_.upload(in.infiltration.data(), in.infiltration.size());
    if (infiltrated_next_.size() > 0) infiltrated_next_.upload(in.infiltration.data(), in.infiltration.size());
    groups_.upload(in.rain_rows.data(), groups);
    SHALLOWS_CUDA_CHECK(cudaMemcpy(cell_.group_infiltration, in.infiltration_rows.data(), groups * sizeof(double),
                                   cudaMemcpyHostToDevice));
    moved_.upload(in.sources.data(), in.sources.size());
    if (structures_.view.count > 0) {
      const std::vector<StructureTally> k = tallies_of(in.structures);
      tallies_.upload(k.data(), k.size());
    }
    // Pageable copies may still be in flight; stream does not wait for the legacy stream.
    SHALLOWS_CUDA_CHECK(cudaDeviceSynchronize());
  }

 private:
  void read(ForcingState& out, bool with_infiltration, cudaStream_t stream, int parity = 0) const {
    out = {};
    if (!active_) return;
    const auto groups = static_cast<std::size_t>(layout_.groups());
    const auto fetch = [&](std::vector<double>& v, const double* d, std::size_t n) {
      v.resize(n);
      if (n > 0) SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(v.data(), d, n * sizeof(double), cudaMemcpyDeviceToHost, stream));
    };
    if (with_infiltration) fetch(out.infiltration, infiltrated(parity), infiltrated_.size());
    fetch(out.rain_rows, cell_.group_rain, groups);
    fetch(out.infiltration_rows, cell_.group_infiltration, groups);
    fetch(out.sources, moved_.get(), moved_.size());
    std::vector<StructureTally> k(static_cast<std::size_t>(structures_.view.count));
    if (!k.empty())
      SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(k.data(), tallies_.get(), k.size() * sizeof(StructureTally),
                                          cudaMemcpyDeviceToHost, stream));
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream));
    out.structures = tally_values(k);
  }

  static DeviceArray<double> upload(const std::vector<double>& v) {
    DeviceArray<double> d(v.size());
    d.upload(v.data(), v.size());
    return d;
  }

  // A per-cell input (1 value: the same everywhere), sized by check_forcing_sizes.
  static CellValues per_cell(const std::vector<double>& v, DeviceArray<double>& d) {
    d = upload(v);
    return {d.get(), static_cast<index_t>(v.size())};
  }

  // MarchForcing's row sums of the rain's scales (or of each frame's rates)
  // over the active cells.
  void upload_row_rain(const Problem& p) {
    const Rain& r = p.forcing.rain;
    const auto nx = static_cast<std::size_t>(layout_.g.nx), ny = static_cast<std::size_t>(layout_.g.ny);
    const std::size_t frames = r.has_frames() ? r.frame_times.size() : 0;
    std::vector<double> sums((frames > 0 ? frames : 1) * ny, 0.0);
    const CellBox owned = p.owned_cells();  // a rank's accounts count its own cells
    for (std::size_t j = 0; j < ny; ++j) {
      for (std::size_t i = 0; i < nx; ++i) {
        const std::size_t c = j * nx + i;
        if (std::isnan(p.z[c]) || !owned.contains(static_cast<index_t>(i), static_cast<index_t>(j))) continue;
        if (frames > 0) {
          for (std::size_t k = 0; k < frames; ++k) sums[k * ny + j] += r.frames[k * nx * ny + c];
        } else {
          sums[j] += shallows::per_cell(r.scale, c, 1.0);
        }
      }
    }
    row_rain_ = upload(sums);
    if (frames > 0) march_.row_frame_rate = row_rain_.get(); else march_.row_rain_scale = row_rain_.get();
  }

  // The sources' cells and discharges, concatenated, and the launches: a
  // source runs in the launch after the last one holding an earlier source
  // that shares a cell with it, so each cell sees the sources in order.
  void upload_sources(const std::vector<VolumeSource>& sources) {
    source_count_ = sources.size();
    std::vector<index_t> cell_start{0}, cells;
    std::vector<int> knot_start{0}, level(sources.size(), 0);
    std::vector<double> t, v;
    // Per cell: the launch after the last that touched it.
    std::map<index_t, int> touched;
    int levels = sources.empty() ? 0 : 1;
    for (std::size_t k = 0; k < sources.size(); ++k) {
      const VolumeSource& s = sources[k];
      const std::string name = "CUDA backend: source '" + s.name + "'";
      std::vector<index_t> own;
      for (index_t c : s.cells)
        if (!(ranked_sources_ && c < 0)) own.push_back(c);  // a rank: -1 for the cells outside its block
      std::sort(own.begin(), own.end());
      const auto twice = std::adjacent_find(own.begin(), own.end());
      if (twice != own.end()) throw std::invalid_argument(name + " lists " + cell_name(*twice) + " twice");
      for (index_t c : own) {
        if (c < 0 || c >= layout_.cells()) {
          throw std::invalid_argument(name + " names cell " + std::to_string(c) + ", outside the " +
                                      std::to_string(layout_.cells()) + " cells");
        }
        const auto it = touched.find(c);
        if (it != touched.end()) level[k] = std::max(level[k], it->second);
      }
      for (index_t c : own) touched[c] = level[k] + 1;
      levels = std::max(levels, level[k] + 1);
      cells.insert(cells.end(), s.cells.begin(), s.cells.end());
      cell_start.push_back(static_cast<index_t>(cells.size()));
      t.insert(t.end(), s.discharge.t.begin(), s.discharge.t.end());
      v.insert(v.end(), s.discharge.v.begin(), s.discharge.v.end());
      knot_start.push_back(static_cast<int>(t.size()));
    }
    std::vector<int> order;
    level_start_.assign(1, 0);
    for (int l = 0; l < levels; ++l) {
      for (std::size_t k = 0; k < sources.size(); ++k) {
        if (level[k] == l) order.push_back(static_cast<int>(k));
      }
      level_start_.push_back(static_cast<int>(order.size()));
    }
    order_ = DeviceArray<int>(order.size());
    order_.upload(order.data(), order.size());
    cell_start_ = DeviceArray<index_t>(cell_start.size());
    cell_start_.upload(cell_start.data(), cell_start.size());
    cells_ = DeviceArray<index_t>(cells.size());
    cells_.upload(cells.data(), cells.size());
    knot_start_ = DeviceArray<int>(knot_start.size());
    knot_start_.upload(knot_start.data(), knot_start.size());
    source_t_ = upload(t);
    source_v_ = upload(v);
    source_cells_ = cell_start;
    if (ranked_sources_) {
      std::size_t widest = 1;
      for (std::size_t k = 0; k + 1 < cell_start.size(); ++k)
        widest = std::max(widest, static_cast<std::size_t>(cell_start[k + 1] - cell_start[k]));
      spread_ = DeviceArray<double>(2 * widest);
    }
    moved_ = DeviceArray<double>(sources.size());
    if (!sources.empty()) SHALLOWS_CUDA_CHECK(cudaMemset(moved_.get(), 0, sources.size() * sizeof(double)));
    source_ = {layout_,      cell_.phys.h_dry,  order_.get(),    cell_start_.get(), cells_.get(),
               knot_start_.get(), source_t_.get(), source_v_.get(), moved_.get()};
  }

  // The structures (structure_table over host_layout) with their series
  // concatenated on the device, and zero tallies.
  void upload_structures(const Problem& p, const Cells& host_layout) {
    StructureTable table = structure_table(p.forcing.structures, p.forcing.replica, host_layout, p.z);
    std::vector<double> t, v;
    std::vector<std::size_t> at;  // where each series starts in t, v: discharge and width of each structure
    for (const Structure& st : p.forcing.structures) {
      for (const TimeSeries* ts : {&st.discharge, &st.width}) {
        at.push_back(t.size());
        t.insert(t.end(), ts->t.begin(), ts->t.end());
        v.insert(v.end(), ts->v.begin(), ts->v.end());
      }
    }
    structure_t_ = upload(t);
    structure_v_ = upload(v);
    for (std::size_t k = 0; k < table.specs.size(); ++k) {
      StructureSpec& spec = table.specs[k];
      spec.discharge = {structure_t_.get() + at[2 * k], structure_v_.get() + at[2 * k], spec.discharge.n};
      spec.breach_width = {structure_t_.get() + at[2 * k + 1], structure_v_.get() + at[2 * k + 1], spec.breach_width.n};
    }
    const auto copy = [](auto& d, const auto& host) {
      d = std::remove_reference_t<decltype(d)>(host.size());
      d.upload(host.data(), host.size());
    };
    copy(specs_, table.specs);
    copy(inlets_, table.inlets);
    copy(outlets_, table.outlets);
    copy(crossings_, table.crossings);
    copy(weir_cells_, table.weir_cells);
    copy(weir_entries_, table.weir_entries);
    copy(tallies_, std::vector<StructureTally>(table.specs.size()));
    crossing_volume_ = DeviceArray<double>(table.crossings.size());
    crossing_breach_ = DeviceArray<int>(table.crossings.size());
    StructureView& view = structures_.view;
    view.specs = specs_.get();
    view.inlets = inlets_.get();
    view.outlets = outlets_.get();
    view.tally = tallies_.get();
    view.count = table.count();
    view.crossings = crossings_.get();
    view.crossing_count = static_cast<int>(table.crossings.size());
    view.weir_cells = weir_cells_.get();
    view.weir_entries = weir_entries_.get();
    view.weir_cell_count = static_cast<int>(table.weir_cells.size());
    view.volume = crossing_volume_.get();
    view.breach = crossing_breach_.get();
    view.end_rounds = table.end_rounds;
    structure_shared_bytes_ = table.specs.size() * (sizeof(StructureSpec) + sizeof(StructureTally));
    structures_.staged = structure_shared_bytes_ <= kStagedBytes;
    copy(structure_tickets_, std::vector<unsigned>(1, 0u));
    structures_.tickets = structure_tickets_.get();
    structures_.h_dry = cell_.phys.h_dry;
    structures_.g = static_cast<double>(cell_.phys.g);
    for (const Structure& st : p.forcing.structures) structure_names_.push_back(st.name);
    const StructureReplica& r = p.forcing.replica;
    if (r.empty()) return;
    if constexpr (kGrid) {
      ranked_structures_ = true;
      copy(replica_cells_, r.cells);
      replica_.cells = replica_cells_.get();
      replica_.n = r.size();
      allocate_replica(0);  // the scalars' part once set_scalars knows them
    } else {
      throw std::logic_error("ForcingDevice: structure '" + structure_names_.front() + "' of a mesh on a rank");
    }
  }

  // A rank's replica state and shares for `scalars` scalars (ReplicaArgs).
  void allocate_replica(int scalars) {
    const auto n = static_cast<std::size_t>(replica_.n), fields = 3 + static_cast<std::size_t>(scalars);
    replica_values_ = DeviceArray<Real>(fields * n);
    replica_shares_ = DeviceArray<double>(fields * n);
    replica_host_.assign(fields * n, 0.0);
    Real* values = replica_values_.get();
    std::vector<Real*> hc;
    for (std::size_t m = 0; m < static_cast<std::size_t>(scalars); ++m) hc.push_back(values + (3 + m) * n);
    replica_hc_ = DeviceArray<Real*>(hc.size());
    replica_hc_.upload(hc.data(), hc.size());
    replica_.shares = replica_shares_.get();
    replica_.state = {values, values + n, values + 2 * n, replica_hc_.get(), scalars, cell_.phys.h_dry};
  }

  // A problem cell in messages: on a grid with its (i, j).
  std::string cell_name(index_t c) const {
    std::string name = "cell " + std::to_string(c);
    if constexpr (kGrid)
      name += " (i = " + std::to_string(c % layout_.g.nx) + ", j = " + std::to_string(c / layout_.g.nx) + ")";
    return name;
  }

  Cells layout_{};
  bool active_ = false;
  bool cell_pass_ = false;  // Forcing::forces_cells: the pass over the cells
  CellArgs<Real, Cells> cell_{};
  MarchForcing<Real> march_{};  // strips = 0: the cell pass is cell_forcing_kernel's
  SourceArgs<Real, Cells> source_{};
  std::size_t source_count_ = 0;
  std::vector<int> level_start_;  // launch l runs order[level_start_[l] .. level_start_[l + 1])
  std::vector<index_t> source_cells_;  // source k's cells: [source_cells_[k], source_cells_[k + 1]) of cells_
  // A rank of a distributed run with sources (launch): every rank's weights
  // and depths of one source's cells, on the device and on the host.
  bool ranked_sources_ = false;
  DeviceArray<double> spread_;
  mutable std::vector<double> spread_host_;
  DeviceArray<double> rain_t_, rain_v_, rain_scale_, frame_t_, frames_, manning_, p_[3], infiltrated_, groups_;
  DeviceArray<double> infiltrated_next_, parts_, row_rain_, taken_;  // the lagged kernel's (MarchForcing)
  DeviceArray<int> order_, knot_start_;
  DeviceArray<index_t> cell_start_, cells_;
  DeviceArray<double> source_t_, source_v_, moved_;
  DeviceArray<double> scalar_rain_, scalar_sources_;
  // The structures' arrays (StructureArgs views them); count = 0: none.
  StructureArgs<Real> structures_{};
  DeviceArray<StructureSpec> specs_;
  DeviceArray<StructureEnd> inlets_, outlets_;
  DeviceArray<WeirCrossing> crossings_;
  DeviceArray<WeirCell> weir_cells_;
  DeviceArray<int> weir_entries_, crossing_breach_;
  DeviceArray<unsigned> structure_tickets_;  // StructureArgs::tickets
  std::size_t structure_shared_bytes_ = 0;   // the specs and tallies, as structures_kernel copies them
  DeviceArray<double> crossing_volume_, crossing_mass_;  // StructureView's work arrays
  DeviceArray<StructureTally> tallies_;
  DeviceArray<double> structure_t_, structure_v_;
  DeviceArray<Real*> structure_hc_[2];
  std::vector<std::string> structure_names_;  // for messages
  // A rank's structures (launch_ranked_structures): the replica of their
  // cells on the device, and the shares on the host for the all-reduce.
  bool ranked_structures_ = false;
  ReplicaArgs<Real> replica_{};
  DeviceArray<index_t> replica_cells_;
  DeviceArray<Real> replica_values_;
  DeviceArray<double> replica_shares_;
  DeviceArray<Real*> replica_hc_;
  mutable std::vector<double> replica_host_;
};

} // namespace shallows::gpu::forcing
