// SPDX-License-Identifier: MIT
#pragma once
// The services of the CPU executors over a cell layout (GridCells, MeshCells:
// cell_layout.hpp): the volume, the scalars' h c, the run maxima, and the
// forcing (Problem::forcing: after each full step, every active cell's
// forcing, apply_cell_forcing, then the volume sources in their order) with
// the sides' account. The reference the CUDA executors follow. On a rank of
// a distributed run (Problem::owned set) its accounts hold the owned cells
// only, and a source's cells outside the rank's block are -1.
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "shallows/bc/side_account.hpp"
#include "shallows/exec/host_fields.hpp"
#include "shallows/mesh/structured/ghost_cells.hpp"
#include "shallows/physics/cell_forcing.hpp"
#include "shallows/physics/scalar_transport.hpp"
#include "shallows/physics/structures.hpp"
#include "shallows/solver/backend.hpp"
#include "shallows/solver/cell_layout.hpp"
#include "shallows/solver/cell_maxima.hpp"
#include "shallows/solver/structure_table.hpp"

namespace shallows::detail {

// The water of a layout's cells (depths h, beds z: cell_layout.hpp's
// layout_volume), groups summed in parallel, then in order.
template <class Cells, class Real>
double cell_volume(const Cells& cells, const Real* h, const Real* z, int threads) {
  std::vector<double> sums(static_cast<std::size_t>(cells.groups()), 0.0);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (index_t g = 0; g < cells.groups(); ++g) sums[static_cast<std::size_t>(g)] = group_water(cells, g, h, z);
  return layout_volume(cells, sums);
}

// After the update of a step or stage to depths h: each scalar's h c = its
// new concentration conc[s] (by problem cell) times the new depth, on the
// active cells (beds z not NaN).
template <class Cells, class Real>
void store_concentrations(const Cells& cells, const Real* h, const Real* z, const std::vector<std::vector<Real>>& conc,
                          std::vector<std::vector<Real>>& hc, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (index_t g = 0; g < cells.groups(); ++g) {
    for_group(cells, g, [&](index_t c, index_t cell, bool) {
      if (math::is_nan(z[c])) return;
      for (std::size_t s = 0; s < hc.size(); ++s) hc[s][c] = conc[s][static_cast<std::size_t>(cell)] * h[c];
    });
  }
}

// A CPU executor's run maxima by problem cell, grown over its layout after
// each step (track_cell_maxima); empty where not tracked.
struct CpuMaxima {
  std::vector<double> max_h, max_speed, arrival;

  void start(index_t cells) {
    const auto n = static_cast<std::size_t>(cells);
    max_h.assign(n, 0.0);
    max_speed.assign(n, 0.0);
    arrival.assign(n, std::numeric_limits<double>::quiet_NaN());
  }

  template <class Cells, class Real>
  void track(const Cells& cells, const StateArrays<Real>& a, double t, Real h_dry, double threshold, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (index_t g = 0; g < cells.groups(); ++g) {
      for_group(cells, g, [&](index_t c, index_t cell, bool) {
        const auto k = static_cast<std::size_t>(cell);
        track_cell_maxima(State<Real>{a.h[c], a.hu[c], a.hv[c]}, t, h_dry, threshold, max_h[k], max_speed[k],
                          arrival[k]);
      });
    }
  }

  void read(Maxima& out) const {
    out.max_h = max_h;
    out.max_speed = max_speed;
    out.arrival_time = arrival;
  }

  void load(const Maxima& in) {
    if (!max_h.empty()) copy_maxima(in, max_h, max_speed, arrival);
  }
};

template <class Real, class Cells = GridCells>
class CpuForcing {
 public:
  // inflow: scalar_inflow(p), whose rain and source concentrations the forcing brings.
  CpuForcing(const Problem& p, const Cells& layout, const ScalarInflow<Real>& inflow, int threads)
      : cells_of_(layout), forcing_(p.forcing), threads_(threads), cells_(p.forcing.forces_cells()),
        scalar_rain_(inflow.rain), scalar_source_(inflow.source) {
    if (!p.forcing.active()) return;
    const auto cells = static_cast<std::size_t>(cells_of_.cells());
    check_forcing_sizes(forcing_, cells);
    if (forcing_.infiltration.model != InfiltrationModel::none) state_.infiltration.assign(cells, 0.0);
    state_.rain_rows.assign(static_cast<std::size_t>(cells_of_.groups()), 0.0);
    state_.infiltration_rows.assign(static_cast<std::size_t>(cells_of_.groups()), 0.0);
    state_.sources.assign(forcing_.sources.size(), 0.0);
    structures_ = structure_table(forcing_.structures, forcing_.replica, cells_of_, p.z);  // viewing forcing_'s series
    tallies_.assign(forcing_.structures.size(), StructureTally{});
    weir_work_ = WeirWork(structures_, static_cast<int>(p.scalars.size()));
    if (!forcing_.replica.empty()) replica_.emplace(forcing_.replica.size(), static_cast<int>(p.scalars.size()));
    read_tallies(state_);
  }

  // The forcing of the step from t to t + dt on the padded state a and the
  // scalars' h c (what the water brings or takes of them). reduce: empty in
  // one process, else Backend::set_sum_reducer's.
  void apply(const StateArrays<Real>& a, std::vector<std::vector<Real>>& hc, double t, double dt,
             const PhysicsParams<Real>& p, const Backend::SumReducer& reduce) {
    if (cells_) apply_cells(a, hc, t, dt, p);
    for (std::size_t s = 0; s < forcing_.sources.size(); ++s) apply_source(a, hc, s, t, dt, p, reduce);
    if (!structures_.empty()) apply_structures_of_step(a, hc, t, dt, p, reduce);
  }

  // The infiltrated depth of a rectangle of cells, for halo exchange
  // (HaloEndpoint::pack_box); nothing without infiltration.
  std::size_t box_bytes(const CellBox& box) const {
    return state_.infiltration.empty() ? 0 : static_cast<std::size_t>(box.cells()) * sizeof(double);
  }
  void pack_box(const CellBox& box, std::byte* out) const {
    copy_rows(box, [&](std::size_t k, std::size_t at) {
      std::memcpy(out + at, state_.infiltration.data() + k, static_cast<std::size_t>(box.nx()) * sizeof(double));
    });
  }
  void unpack_box(const CellBox& box, const std::byte* in) {
    copy_rows(box, [&](std::size_t k, std::size_t at) {
      std::memcpy(state_.infiltration.data() + k, in + at, static_cast<std::size_t>(box.nx()) * sizeof(double));
    });
  }

  ForcingVolumes volumes() const { return state_.volumes(cells_of_.account_scale()); }

  // The water in and out through each of `groups` sides (grids) or boundary
  // groups (meshes), in m^3, kept with the forcing's state where one is not a
  // wall (ForcingState::boundary).
  void keep_sides(std::size_t groups) { state_.boundary.assign(2 * groups, 0.0); }
  bool sides_kept() const { return !state_.boundary.empty(); }
  void add_side(std::size_t group, double volume) {
    account_side(state_.boundary[2 * group], state_.boundary[2 * group + 1], volume);
  }
  BoundaryFlow side_flow() const {
    return sides_kept() ? BoundaryFlow::of_pairs(state_.boundary.data(), state_.boundary.size() / 2) : BoundaryFlow{};
  }

  void read(ForcingState& out) const {
    out = state_;
    read_tallies(out);
  }
  void read_accounts(ForcingState& out) const {
    out.infiltration.clear();
    out.rain_rows = state_.rain_rows;
    out.infiltration_rows = state_.infiltration_rows;
    out.sources = state_.sources;
    out.boundary = state_.boundary;
    read_tallies(out);
  }

  void load(const ForcingState& in) {
    const auto sized = [](const std::vector<double>& a, const std::vector<double>& b) { return a.size() == b.size(); };
    check_load_size(sized(in.infiltration, state_.infiltration) && sized(in.rain_rows, state_.rain_rows) &&
                        sized(in.infiltration_rows, state_.infiltration_rows) && sized(in.sources, state_.sources) &&
                        sized(in.boundary, state_.boundary) &&
                        in.structures.size() == kTallyValues * tallies_.size(),
                    "load_forcing_state");
    state_ = in;
    tallies_ = tallies_of(in.structures);
  }

 private:
  // Every active cell's forcing (apply_cell_forcing), groups (rows) in parallel.
  void apply_cells(const StateArrays<Real>& a, std::vector<std::vector<Real>>& hc, double t, double dt,
                   const PhysicsParams<Real>& p) {
    const ForcingInputs in = inputs();
    const StepRain rain_now = step_rain(in, t, t + dt);
    const index_t groups = cells_of_.groups();
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (index_t j = 0; j < groups; ++j) {
      double rain = 0, taken = 0;  // this group's counted cells, summed in cell order
      for_group(cells_of_, j, [&](index_t c, index_t cell, bool counted) {
        if (math::is_nan(a.z[c])) return;
        double unused = 0;
        double& F = state_.infiltration.empty() ? unused : state_.infiltration[static_cast<std::size_t>(cell)];
        ForcingDepths moved;
        const double h_before = static_cast<double>(a.h[c]);
        const State<Real> q = force_cell(in, rain_now, cell, t, dt, State<Real>{a.h[c], a.hu[c], a.hv[c]}, p, F, moved);
        for (std::size_t s = 0; s < hc.size(); ++s) {
          hc[s][c] = static_cast<Real>(forced_scalar(static_cast<double>(hc[s][c]), h_before, moved, scalar_rain_[s]));
        }
        a.h[c] = q.h;
        a.hu[c] = q.hu;
        a.hv[c] = q.hv;
        if (counted) {
          const double w = cells_of_.account_weight(cell);
          rain += moved.rain * w;
          taken += moved.infiltration * w;
        }
      });
      state_.rain_rows[static_cast<std::size_t>(j)] += rain;
      state_.infiltration_rows[static_cast<std::size_t>(j)] += taken;
    }
  }

  // Source s: its volume over the step shared among its cells by their
  // weights (source_depth). A source of several cells on a rank of a
  // distributed run takes each cell's weight and depth from the rank that
  // owns it (reduce), so that every rank holding one of its cells shares the
  // volume as one process does, and accounts the whole of it.
  void apply_source(const StateArrays<Real>& a, std::vector<std::vector<Real>>& hc, std::size_t s, double t,
                    double dt, const PhysicsParams<Real>& p, const Backend::SumReducer& reduce) {
    const VolumeSource& src = forcing_.sources[s];
    const double volume = series_integral(src.discharge.view(), t, t + dt);
    if (volume == 0 || src.cells.empty()) return;
    const std::size_t n = src.cells.size();
    // Weights, then depths, of the source's cells; spread over ranks, 0 for
    // the cells another rank owns before the reduction.
    const bool spread = reduce && n > 1;
    std::vector<double>& wh = source_buffer_;
    wh.assign(2 * n, 0.0);
    for (std::size_t q = 0; q < n; ++q) {
      const index_t k = src.cells[q];
      if (k < 0 || (spread && !cells_of_.owns(k))) continue;
      const double h = static_cast<double>(a.h[cells_of_.state_index(k)]);
      wh[q] = source_weight(h);
      wh[n + q] = h;
    }
    if (spread) reduce(wh);  // each cell has one owner: its values arrive exact
    double sum_w = 0;
    for (std::size_t q = 0; q < n; ++q) sum_w += wh[q];
    const int cells = static_cast<int>(n);
    double moved = 0;
    for (std::size_t q = 0; q < n; ++q) {
      const index_t k = src.cells[q];
      // Another rank's cell: the grid's area (a mesh runs in one process).
      const double area = cells_of_.area(k);
      // An owned cell's own depth is its wh entry: one source_depth serves
      // the account and the update; another rank's cell is accounted by its
      // owner's values and stepped (as a halo cell) by its own depth.
      const bool owned = k >= 0 && cells_of_.owns(k);
      if (spread && !owned)
        moved += source_depth(volume, wh[q], sum_w, cells, area, wh[n + q]) * cells_of_.account_weight(k);
      if (k < 0) continue;
      const index_t c = cells_of_.state_index(k);
      const double h = static_cast<double>(a.h[c]);
      const double d = source_depth(volume, source_weight(h), sum_w, cells, area, h);
      if (owned) moved += d * cells_of_.account_weight(k);
      const Real hn = static_cast<Real>(h + d);
      a.h[c] = hn;
      for (std::size_t m = 0; m < hc.size(); ++m) {
        const double given = scalar_source_[m * forcing_.sources.size() + s];
        hc[m][c] = static_cast<Real>(sourced_scalar(static_cast<double>(hc[m][c]), h, d, given));
      }
      sourced_discharge(h, d, hn, p.h_dry, a.hu[c], a.hv[c]);
    }
    state_.sources[s] += moved * cells_of_.account_scale();
  }

  // The structures' pass after the sources (apply_structures). On a rank, on
  // the replica of their cells, filled from the cells' owners by reduce (an
  // all-reduce) and written back to the rank's block after: every rank runs
  // them alike, with the one-rank arithmetic, and keeps the one-rank tallies.
  void apply_structures_of_step(const StateArrays<Real>& a, std::vector<std::vector<Real>>& hc, double t, double dt,
                                const PhysicsParams<Real>& p, const Backend::SumReducer& reduce) {
    hc_views_.clear();
    for (std::vector<Real>& v : hc) hc_views_.push_back(v.data());
    StructureCells<Real> cells;
    cells.h = a.h;
    cells.hu = a.hu;
    cells.hv = a.hv;
    cells.hc = hc_views_.data();
    cells.scalars = static_cast<int>(hc_views_.size());
    cells.h_dry = p.h_dry;
    const StructureView view = host_view(structures_, tallies_, weir_work_);
    if (!replica_) {
      apply_structures(view, cells, t, dt, static_cast<double>(p.g));
      return;
    }
    if (!reduce) {
      throw std::logic_error("CpuForcing: structure '" + forcing_.structures.front().name +
                             "' on a rank without the ranks' sum (set_sum_reducer)");
    }
    const StructureReplica& r = forcing_.replica;
    const StructureCells<Real> replica = replica_->arrays(p.h_dry);
    std::vector<double>& shares = replica_->shares;
    replica_pack(r.cells.data(), r.size(), cells_of_, cells, shares.data());
    reduce(shares);
    replica_unpack(shares.data(), r.size(), replica);
    apply_structures(view, replica, t, dt, static_cast<double>(p.g));
    replica_write_back(r.cells.data(), r.size(), cells_of_, replica, cells);
  }

  // The structures' tallies as ForcingState::structures.
  void read_tallies(ForcingState& out) const { out.structures = tally_values(tallies_); }

  // The forcing's inputs as views of its vectors.
  ForcingInputs inputs() const {
    const Rain& rain = forcing_.rain;
    const Infiltration& inf = forcing_.infiltration;
    const auto values = [](const std::vector<double>& v) {
      return CellValues{v.data(), static_cast<index_t>(v.size())};
    };
    ForcingInputs in;
    in.rain = rain.rate.view();
    in.rain_scale = values(rain.scale);
    in.frames = {rain.frame_times.data(), rain.frames.data(), static_cast<int>(rain.frame_times.size()),
                 cells_of_.cells()};
    in.manning = values(forcing_.manning);
    in.model = inf.model;
    in.p0 = values(inf.p0);
    in.p1 = values(inf.p1);
    in.p2 = values(inf.p2);
    return in;
  }

  // Calls row(first value of the row in the cell order, its offset in bytes in a box buffer) for each row of box.
  template <class RowCopy>
  void copy_rows(const CellBox& box, RowCopy&& row) const {
    if (state_.infiltration.empty()) return;
    std::size_t at = 0;
    for (index_t j = box.j0; j < box.j1; ++j, at += static_cast<std::size_t>(box.nx()) * sizeof(double))
      row(static_cast<std::size_t>(j * cells_of_.g.nx + box.i0), at);
  }

  Cells cells_of_;
  Forcing forcing_;
  int threads_;
  bool cells_;  // rain, infiltration or a Manning map: the pass over the cells
  ForcingState state_;
  // The concentration of the rain (per scalar) and of each source's water (ScalarInflow::source).
  std::vector<double> scalar_rain_, scalar_source_;
  std::vector<double> source_buffer_;  // apply_source's weights and depths
  // The structures (their series viewing forcing_'s) and their tallies.
  StructureTable structures_;
  std::vector<StructureTally> tallies_;
  WeirWork weir_work_;
  std::vector<Real*> hc_views_;
  std::optional<ReplicaState<Real>> replica_;  // a rank's (Forcing::replica)
};

}  // namespace shallows::detail
