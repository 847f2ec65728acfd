// SPDX-License-Identifier: MIT
#pragma once
// What every CPU executor of a Cartesian grid shares, whatever its scheme:
// the padded state, boundary ghost cells, run maxima, read-back and volume.
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "cells_cpu.hpp"
#include "shallows/exec/host_fields.hpp"
#include "shallows/mesh/structured/boundary_flux.hpp"
#include "shallows/mesh/structured/ghost_cells.hpp"
#include "shallows/physics/scalar_transport.hpp"
#include "shallows/solver/backend.hpp"
#include "shallows/solver/cell_maxima.hpp"
#include "shallows/solver/mass_balance.hpp"
#include "shallows/solver/time_step.hpp"

namespace shallows::detail {

template <class Real>
class CpuGridBackend : public Backend, public HaloEndpoint {
 public:
  void read_state(Fields& out) const override {
    copy_interior(grid_, fields_.h.data(), out.h);
    copy_interior(grid_, fields_.hu.data(), out.hu);
    copy_interior(grid_, fields_.hv.data(), out.hv);
    out.hc.resize(hc_.size());
    for (std::size_t s = 0; s < hc_.size(); ++s) copy_interior(grid_, hc_[s].data(), out.hc[s]);
  }

  void read_maxima(Maxima& out) const override { maxima_.read(out); }

  void load_state(const Fields& in) override {
    const auto cells = static_cast<std::size_t>(grid_.cells());
    check_load_size(fields_sized(in, cells) && scalars_sized(in, hc_.size(), cells), "load_state");
    for (std::size_t s = 0; s < hc_.size(); ++s) copy_into_interior(grid_, in.hc[s], hc_[s].data());
    copy_into_interior(grid_, in.h, fields_.h.data());
    copy_into_interior(grid_, in.hu, fields_.hu.data());
    copy_into_interior(grid_, in.hv, fields_.hv.data());
    fill_ghosts(state_arrays());
  }

  void load_maxima(const Maxima& in) override { maxima_.load(in); }

  double volume() const override {
    return cell_volume(layout(), fields_.h.data(), static_cast<const Real*>(nullptr), threads_);
  }

  double positivity_volume() const override { return positivity_depth_ * grid_.dx * grid_.dy; }

  ForcingVolumes forcing_volumes() const override { return forcing_.volumes(); }
  void read_forcing_state(ForcingState& out) const override { forcing_.read(out); }
  void read_forcing_accounts(ForcingState& out) const override { forcing_.read_accounts(out); }
  void load_forcing_state(const ForcingState& in) override { forcing_.load(in); }
  BoundaryFlow boundary_flow() const override { return forcing_.side_flow(); }

  HaloEndpoint* halo() override { return this; }

  std::size_t box_bytes(const CellBox& box) const override {
    return (3 + hc_.size()) * static_cast<std::size_t>(box.cells()) * sizeof(Real) + forcing_.box_bytes(box);
  }

  void pack_box(const CellBox& box, std::byte* out) const override {
    const std::size_t at = copy_box(box, [&](Real* field, index_t c, std::size_t k) {
      std::memcpy(out + k * sizeof(Real), field + c, static_cast<std::size_t>(box.nx()) * sizeof(Real));
    });
    forcing_.pack_box(box, out + at * sizeof(Real));
  }

  void unpack_box(const CellBox& box, const std::byte* in) override {
    const std::size_t at = copy_box(box, [&](Real* field, index_t c, std::size_t k) {
      std::memcpy(field + c, in + k * sizeof(Real), static_cast<std::size_t>(box.nx()) * sizeof(Real));
    });
    forcing_.unpack_box(box, in + at * sizeof(Real));
  }

  // While an exchange runs beside the inner cells (first_sweep), the ghosts
  // are filled once it has returned, not while other threads read them.
  void refresh_ghosts() override {
    if (!exchanging_) fill_ghosts(state_arrays());
  }

  bool exchange_in_next_step(const CellBox& inner, std::function<void()> exchange) override {
    pending_inner_ = inner;
    pending_exchange_ = std::move(exchange);
    return true;
  }

 protected:
  // Derived constructors finish their own set-up, then call start().
  CpuGridBackend(const Problem& p, const BackendOptions& o)
      : grid_(p.grid),
        physics_(to_precision<Real>(p.physics)),
        cfl_(p.cfl),
        dry_dt_(dry_time_step(p)),
        threads_(o.threads > 0 ? o.threads : omp_get_max_threads()),
        track_maxima_(o.track_maxima),
        arrival_threshold_(o.arrival_threshold),
        owned_(p.owned_cells()),
        fields_(make_padded_fields<Real>(p)),
        hc_(make_padded_scalars<Real>(p)),
        inflow_(scalar_inflow<Real>(p)),
        forcing_(p, GridCells{p.grid, p.owned_cells()}, inflow_, threads_) {
    for (int s = 0; s < 4; ++s) bc_[s] = to_precision<Real>(p.boundary[s]);
    boundary_series_values_ = p.forcing.boundary;
    segment_specs_ = p.segments;
    segments_ = segments_at<Real>(p.segments, 0.0);
    boundary_series_ = p.forcing.has_boundary_series() || segments_follow_series(p.segments);
    if (!hc_.empty()) {
      const auto cells = static_cast<std::size_t>(grid_.cells());
      for (auto& m : mass_) m.assign(cells, Real(0));
      c_next_.assign(hc_.size(), std::vector<Real>(cells, Real(0)));
    }
    if (track_maxima_) maxima_.start(grid_.cells());
    // The water crossing the sides, where one may cross (on a rank, the sides facing other ranks are open).
    if (!closed_domain(p)) forcing_.keep_sides(4);
  }

  void start() {
    fill_ghosts(state_arrays());
    if (track_maxima_) update_maxima(0.0);
  }

  // A row block of a step's first sweep: rows j0..j1-1 of box's columns.
  struct RowBlock {
    CellBox box;
    index_t j0, j1;
  };

  // The first sweep of a step (the rhs and the CFL rate of its input state):
  // sweep(block, max_rate, finite) over row blocks of rows(box) rows each,
  // from each thread's own sweeper (make_sweeper()). Without a pending
  // exchange, over the whole grid, blocks dealt to threads in an
  // interleaved order. With one (exchange_in_next_step), thread 0 runs it
  // while the other threads sweep the inner box; then the boundary ghosts
  // are filled from the new halos, and every thread sweeps the rest.
  // Returns the largest rate, NaN if one was not finite.
  template <class Rows, class MakeSweeper>
  double first_sweep(Rows&& rows, MakeSweeper&& make_sweeper) {
    const CellBox all{0, 0, grid_.nx, grid_.ny};
    const std::function<void()> exchange = std::exchange(pending_exchange_, nullptr);
    std::vector<RowBlock> first, rest;
    const auto add = [&](std::vector<RowBlock>& out, const CellBox& box) {
      if (box.nx() <= 0 || box.ny() <= 0) return;
      const index_t n = std::max<index_t>(1, rows(box));
      for (index_t j = box.j0; j < box.j1; j += n) out.push_back({box, j, std::min(box.j1, j + n)});
    };
    if (!exchange) {
      add(first, all);
    } else {
      const CellBox in{std::max<index_t>(pending_inner_.i0, 0), std::max<index_t>(pending_inner_.j0, 0),
                       std::min(pending_inner_.i1, grid_.nx), std::min(pending_inner_.j1, grid_.ny)};
      if (in.nx() > 0 && in.ny() > 0) {
        add(first, in);
        add(rest, {0, 0, grid_.nx, in.j0});
        add(rest, {0, in.j0, in.i0, in.j1});
        add(rest, {in.i1, in.j0, grid_.nx, in.j1});
        add(rest, {0, in.j1, grid_.nx, grid_.ny});
      } else {
        add(rest, all);
      }
    }
    const auto count = [](const std::vector<RowBlock>& b) { return static_cast<std::ptrdiff_t>(b.size()); };
    double max_rate = 0;
    bool finite = true;
    std::exception_ptr failed;
    exchanging_ = static_cast<bool>(exchange);
#pragma omp parallel num_threads(threads_) reduction(max : max_rate) reduction(&& : finite)
    {
      auto sweep = make_sweeper();
      if (!exchange) {
#pragma omp for schedule(static, 1)
        for (std::ptrdiff_t b = 0; b < count(first); ++b) sweep(first[static_cast<std::size_t>(b)], max_rate, finite);
      } else {
        // Thread 0 is the one that called MPI_Init_thread (MPI_THREAD_FUNNELED).
        if (omp_get_thread_num() == 0) {
          try {
            exchange();
          } catch (...) {
            failed = std::current_exception();
          }
        }
#pragma omp for schedule(dynamic, 1)
        for (std::ptrdiff_t b = 0; b < count(first); ++b) sweep(first[static_cast<std::size_t>(b)], max_rate, finite);
#pragma omp single
        {
          exchanging_ = false;
          if (!failed) fill_ghosts(state_arrays());
        }
        if (!failed) {
#pragma omp for schedule(dynamic, 1)
          for (std::ptrdiff_t b = 0; b < count(rest); ++b) sweep(rest[static_cast<std::size_t>(b)], max_rate, finite);
        }
      }
    }
    exchanging_ = false;
    if (failed) std::rethrow_exception(failed);
    return finite ? max_rate : std::numeric_limits<double>::quiet_NaN();
  }

  // Adds the depths that the clamps of a pass over the rows added, summed
  // per row in the row's order (added_depth[j]; rows without any left at 0) and
  // then in row order: the same bits for any thread count.
  void add_positivity(const std::vector<double>& added_depth) {
    for (double g : added_depth) positivity_depth_ += g;
  }

  // Before a step from t: the sides and segments whose condition follows a
  // time series take its value at t, and the ghost cells are filled again.
  void boundary_at(double t) {
    if (!boundary_series_) return;
    for (std::size_t s = 0; s < 4; ++s) bc_[s] = condition_at_time(bc_[s], boundary_series_values_[s].view(), t);
    segments_ = segments_at<Real>(segment_specs_, t);
    fill_ghosts(state_arrays());
  }

  // f(side, inside, ghost, length) for each boundary edge whose water the
  // sides' account counts (padded indices of its cell and ghost, its
  // length), side by side in order (owned_side_cells: none on a side
  // facing another rank).
  template <class F>
  void for_side_edges(F&& f) const {
    const Grid& g = grid_;
    for (int s = 0; s < 4; ++s) {
      const SideCells cells = owned_side_cells(owned_, g.nx, g.ny, s);
      for (index_t k = cells.begin; k < cells.end; ++k) {
        const SideCell e = side_cell(s, k, g.nx, g.ny);
        f(static_cast<Side>(s), g.index(e.i, e.j), g.index(e.i + e.di, e.j + e.dj), s < 2 ? g.dy : g.dx);
      }
    }
  }

  // First order, before the update of a step of dt: the water it moves
  // across each side (boundary_flux.hpp), from the state it starts from.
  void account_boundary(double dt) {
    const auto at = [&](index_t c) { return State<Real>{fields_.h[c], fields_.hu[c], fields_.hv[c]}; };
    for_side_edges([&](Side side, index_t inside, index_t ghost, double length) {
      const double rate = boundary_inflow_rate(side, at(ghost), at(inside), fields_.z[inside], physics_);
      add_boundary(side, rate * (dt * length));
    });
  }

  void add_boundary(Side side, double volume) { forcing_.add_side(static_cast<std::size_t>(side), volume); }

  // After the scheme's step from t to t + dt: the forcing, then what the next step reads.
  void finish_step(double t, double dt) {
    forcing_.apply(state_arrays(), hc_, t, dt, physics_, sum_reducer());
    fill_ghosts(state_arrays());
    if (track_maxima_) update_maxima(t + dt);
  }

  // Passive scalars, before the update of a step (first order) or a stage
  // (roe3) of dt: each scalar's concentration after it, from the state it
  // starts from (depths h, scalars hc, padded) and the mass fluxes of its
  // edges (mass_, kept by the scheme's rhs; scalar_transport.hpp), into
  // c_next_.
  void transport_scalars(const Real* h, const std::vector<std::vector<Real>>& hcs, Real dt) {
    const Grid& g = grid_;
    const Real inv_dx = Real(1.0 / g.dx), inv_dy = Real(1.0 / g.dy);
    const auto depth = [&](Side, index_t x) { return h[x]; };
    for_active_cells([&](index_t i, index_t j, index_t c, std::size_t k) {
      for (std::size_t q = 0; q < hcs.size(); ++q) {
        const Real* hc = hcs[q].data();
        const ScalarSides<Real> sides{{bc_[0].kind, bc_[1].kind, bc_[2].kind, bc_[3].kind},
                                      inflow_.side.data() + 4 * q,
                                      segments_.data(),
                                      static_cast<int>(segments_.size()),
                                      inflow_.segment.data() + q * segments_.size()};
        const ScalarStencil<Real> st =
            grid_scalar_stencil(i, j, g.nx, g.ny, c, g.pitch(), hc, concentration(hc[c], h[c]), mass_[0][k],
                                mass_[1][k], mass_[2][k], mass_[3][k], sides, depth);
        c_next_[q][k] = transported_concentration(st, h[c], dt, inv_dx, inv_dy);
      }
    });
  }

  // f(column, row, padded index, interior index) of every active cell, rows split over the threads.
  template <class F>
  void for_active_cells(F&& f) const {
    const Grid& g = grid_;
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (index_t j = 0; j < g.ny; ++j) {
      for (index_t i = 0; i < g.nx; ++i) {
        const index_t c = g.index(i, j);
        if (!math::is_nan(fields_.z[c])) f(i, j, c, static_cast<std::size_t>(j * g.nx + i));
      }
    }
  }

  // After the update of a step or stage to depths h: each scalar's h c =
  // its concentration c_next_ times the new depth.
  void store_scalars(const Real* h, std::vector<std::vector<Real>>& hcs) {
    store_concentrations(layout(), h, fields_.z.data(), c_next_, hcs, threads_);
  }

  StateArrays<Real> state_arrays() {
    return {fields_.h.data(), fields_.hu.data(), fields_.hv.data(), fields_.z.data()};
  }

  // West/east first, then south/north over the full padded width (corners);
  // a segment's cells take its condition.
  void fill_ghosts(const StateArrays<Real>& a) const {
    const Grid& g = grid_;
    const int segments = static_cast<int>(segments_.size());
    const auto bc = [&](Side side, index_t s) {
      return condition_at(side, s, bc_[static_cast<int>(side)], segments_.data(), segments);
    };
    for (int k = 0; k < Grid::ghost; ++k) {
      for (index_t j = 0; j < g.ny; ++j) {
        fill_ghost_cell(a, g, Side::west, k, j, bc(Side::west, j), physics_);
        fill_ghost_cell(a, g, Side::east, k, j, bc(Side::east, j), physics_);
      }
    }
    for (int k = 0; k < Grid::ghost; ++k) {
      for (index_t i = -Grid::ghost; i < g.nx + Grid::ghost; ++i) {
        fill_ghost_cell(a, g, Side::south, k, i, bc(Side::south, i), physics_);
        fill_ghost_cell(a, g, Side::north, k, i, bc(Side::north, i), physics_);
      }
    }
  }

  // Calls row(field, padded index of the row's first cell, offset in the
  // buffer in values) for each row of box in h, hu, hv and each scalar's
  // h c; returns the values covered.
  template <class RowCopy>
  std::size_t copy_box(const CellBox& box, RowCopy&& row) const {
    std::vector<Real*> fields = {const_cast<Real*>(fields_.h.data()), const_cast<Real*>(fields_.hu.data()),
                                 const_cast<Real*>(fields_.hv.data())};
    for (const std::vector<Real>& f : hc_) fields.push_back(const_cast<Real*>(f.data()));
    std::size_t k = 0;
    for (Real* f : fields) {
      for (index_t j = box.j0; j < box.j1; ++j, k += static_cast<std::size_t>(box.nx())) row(f, grid_.index(box.i0, j), k);
    }
    return k;
  }

  GridCells layout() const { return {grid_, owned_}; }

  void update_maxima(double t) {
    maxima_.track(layout(), state_arrays(), t, physics_.h_dry, arrival_threshold_, threads_);
  }

  Grid grid_;
  PhysicsParams<Real> physics_;
  double cfl_;
  double dry_dt_;  // dry_time_step
  int threads_;
  bool track_maxima_;
  double arrival_threshold_;
  BoundaryCondition<Real> bc_[4];
  std::array<TimeSeries, 4> boundary_series_values_;  // Forcing::boundary
  std::vector<BoundarySegment> segment_specs_;        // Problem::segments
  std::vector<SegmentCondition<Real>> segments_;      // their conditions at the current step
  bool boundary_series_ = false;                      // a side or segment follows a time series
  CellBox owned_;  // the cells whose rates set dt (Problem::owned_cells)
  PaddedFields<Real> fields_;
  // Passive scalars: h c of each on the padded grid (ghosts
  // unused: scalar_transport.hpp's ghost_concentration), and the
  // concentrations of what enters.
  std::vector<std::vector<Real>> hc_;
  ScalarInflow<Real> inflow_;
  // With scalars: each interior cell's west, east, south, north mass flux
  // (positive along +x, +y) of the last rhs, and per scalar the
  // concentrations after the step or stage (transport_scalars).
  std::array<std::vector<Real>, 4> mass_;
  std::vector<std::vector<Real>> c_next_;
  CpuMaxima maxima_;
  double positivity_depth_ = 0;  // sum of clamp_added_depth over the owned cells and the steps
  // With the sides' account (account_boundary), kept when a side is not a
  // wall; on a rank, through its block's sides that are sides of the
  // domain, along its owned cells (the distributed executor sums the ranks'
  // accounts).
  CpuForcing<Real> forcing_;
  // A halo exchange for the next step's first sweep (exchange_in_next_step).
  std::function<void()> pending_exchange_;
  CellBox pending_inner_;
  bool exchanging_ = false;  // first_sweep runs the exchange beside the inner cells
};

} // namespace shallows::detail
