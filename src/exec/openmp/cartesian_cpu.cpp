// SPDX-License-Identifier: MIT
// CPU executor for Cartesian grids: serial or OpenMP threads.
//
// A step has two passes. The first sweeps rows: for each row it evaluates
// the x-edges of the row and the y-edges to the row above once, and sums the
// four fluctuations of every cell in a fixed order (west, east, south, north)
// into rhs; the y-edge below a block's first row is evaluated again by its
// block. The second pass applies rhs with the global dt. Cells therefore see
// bit-identical sums whatever the thread count. Rows are dealt to threads in
// interleaved blocks (seed 004 section 4.3) to balance partly dry domains.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "shallows/exec/cpu_backend.hpp"
#include "shallows/exec/host_fields.hpp"
#include "shallows/mesh/structured/cartesian_edges.hpp"
#include "shallows/mesh/structured/ghost_cells.hpp"
#include "shallows/physics/cell_update.hpp"

namespace shallows {
namespace {

template <class Real>
class CpuBackend final : public Backend {
 public:
  CpuBackend(const Problem& p, const BackendOptions& o)
      : grid_(p.grid),
        physics_(to_precision<Real>(p.physics)),
        cfl_(p.cfl),
        threads_(o.threads > 0 ? o.threads : omp_get_max_threads()),
        track_maxima_(o.track_maxima),
        arrival_threshold_(o.arrival_threshold) {
    for (int s = 0; s < 4; ++s) bc_[s] = to_precision<Real>(p.boundary[s]);
    fields_ = make_padded_fields<Real>(p);
    const auto cells = static_cast<std::size_t>(grid_.cells());
    rhs_h_.assign(cells, Real(0));
    rhs_hu_.assign(cells, Real(0));
    rhs_hv_.assign(cells, Real(0));
    // About 16k cells per block: large enough for the caches, small enough to interleave.
    rows_per_block_ = std::max<index_t>(1, 16384 / std::max<index_t>(grid_.nx, 1));
    if (track_maxima_) {
      max_h_.assign(cells, 0.0);
      max_speed_.assign(cells, 0.0);
      arrival_.assign(cells, std::numeric_limits<double>::quiet_NaN());
    }
    fill_ghosts();
    if (track_maxima_) update_maxima(0.0);
  }

  std::string name() const override { return threads_ == 1 ? "serial" : "openmp"; }

  double step(double t, double dt_max) override {
    const double rate = compute_rhs();
    if (!std::isfinite(rate)) {
      throw std::runtime_error("solution is no longer finite at t = " + std::to_string(t) + " s");
    }
    double dt = rate > 0 ? cfl_ / rate : dt_max;
    dt = std::min(dt, dt_max);
    apply_rhs(static_cast<Real>(dt));
    fill_ghosts();
    if (track_maxima_) update_maxima(t + dt);
    return dt;
  }

  void read_state(Fields& out) const override {
    copy_interior(grid_, fields_.h.data(), out.h);
    copy_interior(grid_, fields_.hu.data(), out.hu);
    copy_interior(grid_, fields_.hv.data(), out.hv);
  }

  void read_maxima(Maxima& out) const override {
    out.max_h = max_h_;
    out.max_speed = max_speed_;
    out.arrival_time = arrival_;
  }

  double volume() const override {
    std::vector<double> rows(static_cast<std::size_t>(grid_.ny), 0.0);
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (index_t j = 0; j < grid_.ny; ++j) {
      double sum = 0;
      for (index_t i = 0; i < grid_.nx; ++i) sum += static_cast<double>(fields_.h[grid_.index(i, j)]);
      rows[static_cast<std::size_t>(j)] = sum;
    }
    double total = 0;
    for (double r : rows) total += r;
    return total * grid_.dx * grid_.dy;
  }

 private:
  StateArrays<Real> arrays() {
    return {fields_.h.data(), fields_.hu.data(), fields_.hv.data(), fields_.z.data()};
  }

  void fill_ghosts() {
    const StateArrays<Real> a = arrays();
    const Grid& g = grid_;
    for (int k = 0; k < Grid::ghost; ++k) {
      for (index_t j = 0; j < g.ny; ++j) {
        fill_ghost_cell(a, g, Side::west, k, j, bc_[0]);
        fill_ghost_cell(a, g, Side::east, k, j, bc_[1]);
      }
    }
    for (int k = 0; k < Grid::ghost; ++k) {
      for (index_t i = -Grid::ghost; i < g.nx + Grid::ghost; ++i) {
        fill_ghost_cell(a, g, Side::south, k, i, bc_[2]);
        fill_ghost_cell(a, g, Side::north, k, i, bc_[3]);
      }
    }
  }

  // First pass: rhs of every cell and the largest CFL rate
  // sum_edges |Gamma| |lambda| / (2 |V|) (seed 000 eq. 8).
  double compute_rhs() {
    const Grid& g = grid_;
    const index_t blocks = (g.ny + rows_per_block_ - 1) / rows_per_block_;
    const Real inv_dx = Real(1.0 / g.dx);
    const Real inv_dy = Real(1.0 / g.dy);
    const Real half_inv_dx = Real(0.5 / g.dx);
    const Real half_inv_dy = Real(0.5 / g.dy);
    const Real* h = fields_.h.data();
    const Real* hu = fields_.hu.data();
    const Real* hv = fields_.hv.data();
    const Real* z = fields_.z.data();
    double max_rate = 0;
    bool finite = true;

#pragma omp parallel num_threads(threads_) reduction(max : max_rate) reduction(&& : finite)
    {
      // Per thread: primitives of the current row and the row above, and the
      // fluctuations from the y-edges below the current row.
      const auto width = static_cast<std::size_t>(g.nx + 2);
      std::vector<CellPrimitive<Real>> row_here(width), row_above(width);
      std::vector<State<Real>> from_south(static_cast<std::size_t>(g.nx));
      std::vector<Real> speed_south(static_cast<std::size_t>(g.nx));
      // Row j, columns -1..nx, into buf[0..nx+1].
      const auto load_row = [&](index_t j, std::vector<CellPrimitive<Real>>& buf) {
        const index_t first = g.index(-1, j);
        for (std::size_t k = 0; k < width; ++k) {
          const index_t c = first + static_cast<index_t>(k);
          buf[k] = cell_primitive(State<Real>{h[c], hu[c], hv[c]}, z[c], physics_);
        }
      };

#pragma omp for schedule(static, 1)
      for (index_t b = 0; b < blocks; ++b) {
        const index_t j0 = b * rows_per_block_;
        const index_t j1 = std::min(g.ny, j0 + rows_per_block_);
        load_row(j0 - 1, row_above);
        std::swap(row_here, row_above);
        load_row(j0, row_above);
        for (index_t i = 0; i < g.nx; ++i) {
          const auto k = static_cast<std::size_t>(i);
          const auto f = cartesian_edge<1>(row_here[k + 1], row_above[k + 1], physics_);
          from_south[k] = f.to_right;
          speed_south[k] = f.speed;
        }
        for (index_t j = j0; j < j1; ++j) {
          std::swap(row_here, row_above);
          load_row(j + 1, row_above);
          // x-edge west of cell 0.
          const auto fw = cartesian_edge<0>(row_here[0], row_here[1], physics_);
          State<Real> from_west = fw.to_right;
          Real speed_west = fw.speed;
          for (index_t i = 0; i < g.nx; ++i) {
            const auto k = static_cast<std::size_t>(i);
            const auto fe = cartesian_edge<0>(row_here[k + 1], row_here[k + 2], physics_);
            const auto fn = cartesian_edge<1>(row_here[k + 1], row_above[k + 1], physics_);
            const State<Real> fs = from_south[k];
            const Real rate = (speed_west + fe.speed) * half_inv_dx + (speed_south[k] + fn.speed) * half_inv_dy;
            const auto out = static_cast<std::size_t>(j * g.nx + i);
            rhs_h_[out] = -((from_west.h + fe.to_left.h) * inv_dx + (fs.h + fn.to_left.h) * inv_dy);
            rhs_hu_[out] = -((from_west.hu + fe.to_left.hu) * inv_dx + (fs.hu + fn.to_left.hu) * inv_dy);
            rhs_hv_[out] = -((from_west.hv + fe.to_left.hv) * inv_dx + (fs.hv + fn.to_left.hv) * inv_dy);
            if (!math::is_nan(row_here[k + 1].z)) {
              finite = finite && std::isfinite(rate);
              max_rate = std::max(max_rate, static_cast<double>(rate));
            }
            from_west = fe.to_right;
            speed_west = fe.speed;
            from_south[k] = fn.to_right;
            speed_south[k] = fn.speed;
          }
        }
      }
    }
    return finite ? max_rate : std::numeric_limits<double>::quiet_NaN();
  }

  // Second pass: q += dt rhs, then the point-wise corrections.
  void apply_rhs(Real dt) {
    const Grid& g = grid_;
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (index_t j = 0; j < g.ny; ++j) {
      for (index_t i = 0; i < g.nx; ++i) {
        const index_t c = g.index(i, j);
        if (math::is_nan(fields_.z[c])) continue;
        const auto k = static_cast<std::size_t>(j * g.nx + i);
        const State<Real> q = advance_cell(State<Real>{fields_.h[c], fields_.hu[c], fields_.hv[c]},
                                           State<Real>{rhs_h_[k], rhs_hu_[k], rhs_hv_[k]}, dt, physics_);
        fields_.h[c] = q.h;
        fields_.hu[c] = q.hu;
        fields_.hv[c] = q.hv;
      }
    }
  }

  void update_maxima(double t) {
    const Grid& g = grid_;
    const double h_dry = static_cast<double>(physics_.h_dry);
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (index_t j = 0; j < g.ny; ++j) {
      for (index_t i = 0; i < g.nx; ++i) {
        const index_t c = g.index(i, j);
        const auto k = static_cast<std::size_t>(j * g.nx + i);
        const double hc = static_cast<double>(fields_.h[c]);
        if (hc <= h_dry) continue;
        const double speed = std::hypot(static_cast<double>(fields_.hu[c]), static_cast<double>(fields_.hv[c])) / hc;
        max_h_[k] = std::max(max_h_[k], hc);
        max_speed_[k] = std::max(max_speed_[k], speed);
        if (std::isnan(arrival_[k]) && hc > arrival_threshold_) arrival_[k] = t;
      }
    }
  }

  Grid grid_;
  PhysicsParams<Real> physics_;
  double cfl_;
  int threads_;
  bool track_maxima_;
  double arrival_threshold_;
  BoundaryCondition<Real> bc_[4];
  PaddedFields<Real> fields_;
  std::vector<Real> rhs_h_, rhs_hu_, rhs_hv_;
  index_t rows_per_block_ = 1;
  std::vector<double> max_h_, max_speed_, arrival_;
};

} // namespace

std::unique_ptr<Backend> make_cpu_backend(const Problem& problem, const BackendOptions& options) {
  if (problem.precision == Precision::single_precision) {
    return std::make_unique<CpuBackend<float>>(problem, options);
  }
  return std::make_unique<CpuBackend<double>>(problem, options);
}

} // namespace shallows
