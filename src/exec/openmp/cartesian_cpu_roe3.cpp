// SPDX-License-Identifier: MIT
// CPU executor of the third-order scheme (scheme = "roe3", seed 003) on
// Cartesian grids: serial or OpenMP threads.
//
// A step is three SSP-RK3 stages (numerics/ssp_rk3.hpp). Each stage fills the
// two ghost layers of its input, evaluates the right-hand side of every cell
// (numerics/roe3.hpp) into rhs, and then combines. dt comes from the CFL rate
// of the first stage (seed 003 eq. 6), clipped to dt_max; the rates of the
// later stages are only checked for finiteness.
//
// The right-hand side sweeps rows like the first-order executor: for each row
// it reconstructs the cells of the row above (columns -1..nx), evaluates the
// x-edges of the row and the y-edges to the row above once, at their two Gauss
// points, and sums each cell's contributions in a fixed order (west, east,
// south, north, interior); the first y-edge of a block of rows is evaluated
// again by its block. Any thread count gives identical bits.
//
// The bed's reconstruction at the quadrature points is computed once, for the
// interior and the first ghost ring (the bed is static; ghost beds mirror the
// interior).
//
// Where a side is not a wall, each stage also accounts the water its
// right-hand side moves through the sides (account_boundary), weighted as
// SSP-RK3 weighs the stage's L in U^{n+1}: 1/6, 1/6, 2/3.
//
// Passive scalars go stage by stage with the flow, first order in space
// (combine_scalars): the mass fluxes of each stage's edges come from its
// traces and fluctuations (roe3::pair_mass_flux).
#include <omp.h>

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define SHALLOWS_HAVE_MXCSR 1
#endif

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu_grid_backend.hpp"
#include "shallows/exec/cpu_backend_roe3.hpp"
#include "shallows/exec/host_fields.hpp"
#include "shallows/mesh/structured/ghost_cells.hpp"
#include "shallows/numerics/roe3.hpp"
#include "shallows/numerics/ssp_rk3.hpp"
#include "shallows/solver/mass_balance.hpp"

namespace shallows {
namespace {

// Flush-to-zero and denormals-are-zero for the calling thread while in scope.
// The smooth tails that waves push ahead of them decay geometrically into
// subnormal numbers, which cost ~100 cycles each on x86; flushing them
// changes values below 1e-38 (float) / 1e-308 (double)
// only. The previous mode is restored, so other code on the thread is unaffected.
class FlushDenormals {
 public:
#ifdef SHALLOWS_HAVE_MXCSR
  FlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040u); }
  ~FlushDenormals() { _mm_setcsr(saved_); }

 private:
  unsigned saved_;
#endif
};

template <class Real>
class CpuRoe3Backend final : public detail::CpuGridBackend<Real> {
  using Base = detail::CpuGridBackend<Real>;
  using Base::grid_;
  using Base::physics_;
  using Base::cfl_;
  using Base::threads_;
  using Base::fields_;
  using Base::owned_;
  using Base::state_arrays;
  using Base::fill_ghosts;
  using Base::hc_;
  using Base::mass_;
  using Base::c_next_;

 public:
  CpuRoe3Backend(const Problem& p, const BackendOptions& o)
      : Base(p, o), prm_(roe3::make_params<Real>(physics_, p.grid.dx, p.grid.dy)) {
    stage_h_ = fields_.h;
    stage_hu_ = fields_.hu;
    stage_hv_ = fields_.hv;
    stage_hc_ = hc_;
    const auto cells = static_cast<std::size_t>(grid_.cells());
    rhs_h_.assign(cells, Real(0));
    rhs_hu_.assign(cells, Real(0));
    rhs_hv_.assign(cells, Real(0));
    row_gain_.assign(static_cast<std::size_t>(grid_.ny), 0.0);
    // About four blocks of rows per thread (results do not depend on the split).
    rows_per_block_ = std::max<index_t>(4, (grid_.ny + 4 * threads_ - 1) / (4 * threads_));
    compute_bed_points();
    this->start();
  }

  std::string name() const override { return threads_ == 1 ? "serial-roe3" : "openmp-roe3"; }

  double step(double t, double dt_max) override {
    this->boundary_at(t);
    double dt = 0;
    for (int k = 0; k < ssp_rk3::stages; ++k) {
      const bool last = k == ssp_rk3::stages - 1;
      const StateArrays<Real> src = k == 0 ? state_arrays() : stage_arrays();
      const StateArrays<Real> dst = last ? state_arrays() : stage_arrays();
      fill_ghosts(src);
      double rate = compute_rhs(src);
      if (!std::isfinite(rate)) {
        throw std::runtime_error("solution is no longer finite at t = " + std::to_string(t) + " s (roe3 stage " +
                                 std::to_string(k + 1) + ")");
      }
      if (k == 0) {
        rate = this->reduce_rate(rate);
        dt = cfl_time_step(rate, cfl_, this->dry_dt_, dt_max);
      }
      if (this->forcing_.sides_kept()) {
        account_boundary(src, ssp_rk3::rhs_weight(k) * static_cast<double>(static_cast<Real>(dt)));
      }
      if (!hc_.empty()) {
        this->transport_scalars(src.h, k == 0 ? hc_ : stage_hc_, static_cast<Real>(dt));
        combine_scalars(k, src.h, static_cast<Real>(dt));
      }
      apply_stage(k, src, dst, static_cast<Real>(dt));
      if (!hc_.empty()) this->store_scalars(dst.h, last ? hc_ : stage_hc_);
    }
    this->finish_step(t, dt);
    return dt;
  }

 private:
  StateArrays<Real> stage_arrays() { return {stage_h_.data(), stage_hu_.data(), stage_hv_.data(), fields_.z.data()}; }

  // Nine-cell stencil of a padded array around index c.
  void gather(const Real* a, index_t c, Real (&out)[9]) const {
    const index_t pitch = grid_.pitch();
    for (int dj = -1; dj <= 1; ++dj) {
      for (int di = -1; di <= 1; ++di) out[3 * (dj + 1) + (di + 1)] = a[c + dj * pitch + di];
    }
  }

  void compute_bed_points() {
    const Grid& g = grid_;
    bed_.assign(static_cast<std::size_t>(g.padded_size()), roe3::BedPoints<Real>{});
    const Real* z = fields_.z.data();
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (index_t j = -1; j <= g.ny; ++j) {
      for (index_t i = -1; i <= g.nx; ++i) {
        const index_t c = g.index(i, j);
        Real zs[9];
        gather(z, c, zs);
        bed_[static_cast<std::size_t>(c)] = roe3::bed_points(zs, prm_.rec);
      }
    }
  }

  roe3::CellTrace<Real> trace_at(const StateArrays<Real>& a, index_t c) const {
    Real h[9], hu[9], hv[9], z[9];
    gather(a.h, c, h);
    gather(a.hu, c, hu);
    gather(a.hv, c, hv);
    gather(a.z, c, z);
    return roe3::cell_trace(h, hu, hv, z, bed_[static_cast<std::size_t>(c)], prm_);
  }

  // Right-hand side of every interior cell into rhs; returns the largest CFL
  // rate over active owned cells (NaN if any of them is not finite). Row
  // blocks of columns i0..i1-1 (CpuGridBackend::first_sweep).
  double compute_rhs(const StateArrays<Real>& a) {
    const Grid& g = grid_;
    const auto rows = [&](const CellBox&) { return rows_per_block_; };
    return this->first_sweep(rows, [&] {
      const auto width = static_cast<std::size_t>(g.nx + 2);
      const bool mass = !hc_.empty();
      return [&, mass, row_here = std::vector<roe3::CellTrace<Real>>(width),
              row_above = std::vector<roe3::CellTrace<Real>>(width),
              from_south = std::vector<roe3::EdgePair<Real>>(static_cast<std::size_t>(g.nx)),
              south_mass = std::vector<Real>(mass ? static_cast<std::size_t>(g.nx) : 0)](
                 const typename Base::RowBlock& blk, double& max_rate, bool& finite) mutable {
        [[maybe_unused]] const FlushDenormals flush;
        const index_t i0 = blk.box.i0, n = blk.box.nx();
        // Row j, columns i0-1..i0+n, into buf[0..n+1]; column i at buf[i - i0 + 1].
        const auto load_row = [&](index_t j, std::vector<roe3::CellTrace<Real>>& buf) {
          const index_t first = g.index(i0 - 1, j);
          for (index_t k = 0; k < n + 2; ++k) buf[static_cast<std::size_t>(k)] = trace_at(a, first + k);
        };
        load_row(blk.j0 - 1, row_above);
        std::swap(row_here, row_above);
        load_row(blk.j0, row_above);
        for (index_t i = 0; i < n; ++i) {
          const auto k = static_cast<std::size_t>(i);
          from_south[k] = roe3::edge_pair<1>(row_here[k + 1], row_above[k + 1], physics_);
          if (mass) south_mass[k] = roe3::pair_mass_flux<1>(row_here[k + 1], row_above[k + 1], from_south[k]);
        }
        for (index_t j = blk.j0; j < blk.j1; ++j) {
          std::swap(row_here, row_above);
          load_row(j + 1, row_above);
          roe3::EdgePair<Real> west = roe3::edge_pair<0>(row_here[0], row_here[1], physics_);
          Real west_mass = mass ? roe3::pair_mass_flux<0>(row_here[0], row_here[1], west) : Real(0);
          for (index_t ii = 0; ii < n; ++ii) {
            const auto k = static_cast<std::size_t>(ii);
            const index_t i = i0 + ii;
            const roe3::EdgePair<Real> east = roe3::edge_pair<0>(row_here[k + 1], row_here[k + 2], physics_);
            const roe3::EdgePair<Real> north = roe3::edge_pair<1>(row_here[k + 1], row_above[k + 1], physics_);
            const State<Real> r = roe3::cell_rhs(row_here[k + 1], west, east, from_south[k], north, prm_);
            const auto out = static_cast<std::size_t>(j * g.nx + i);
            rhs_h_[out] = r.h;
            rhs_hu_[out] = r.hu;
            rhs_hv_[out] = r.hv;
            if (mass) {
              const Real east_mass = roe3::pair_mass_flux<0>(row_here[k + 1], row_here[k + 2], east);
              const Real north_mass = roe3::pair_mass_flux<1>(row_here[k + 1], row_above[k + 1], north);
              mass_[0][out] = west_mass;
              mass_[1][out] = east_mass;
              mass_[2][out] = south_mass[k];
              mass_[3][out] = north_mass;
              west_mass = east_mass;
              south_mass[k] = north_mass;
            }
            if (owned_.contains(i, j) && !math::is_nan(a.z[g.index(i, j)])) {
              const Real rate = roe3::cell_rate(west, east, from_south[k], north, prm_);
              finite = finite && std::isfinite(rate) && std::isfinite(r.h) && std::isfinite(r.hu) &&
                       std::isfinite(r.hv);
              max_rate = std::max(max_rate, static_cast<double>(rate));
            }
            west = east;
            from_south[k] = north;
          }
        }
      };
    });
  }

  // The water stage input a's right-hand side moves through each side over
  // `dt_weight` (the stage's weight times dt), added to the sides' account
  // (roe3::boundary_inflow per boundary edge). Summed over the cells, the
  // interior edges cancel, so the volume changes by the account to
  // round-off. Edges in a fixed order.
  void account_boundary(const StateArrays<Real>& a, double dt_weight) {
    this->for_side_edges([&](Side side, index_t in, index_t ghost, double length) {
      if (math::is_nan(a.z[in])) return;
      const bool ghost_first = side == Side::west || side == Side::south;
      const double rate = side == Side::west || side == Side::east
                              ? roe3::boundary_inflow<0>(trace_at(a, in), trace_at(a, ghost), ghost_first, physics_)
                              : roe3::boundary_inflow<1>(trace_at(a, in), trace_at(a, ghost), ghost_first, physics_);
      this->add_boundary(side, rate * length * dt_weight);
    });
  }

  // dst = stage k of SSP-RK3 from U^n (fields_), the stage input src and rhs.
  // In place is safe: rhs is complete and each cell reads only itself. The
  // stage's clamp gains (carried to U^{n+1}) go to the positivity account.
  void apply_stage(int k, const StateArrays<Real>& src, const StateArrays<Real>& dst, Real dt) {
    const Grid& g = grid_;
#pragma omp parallel num_threads(threads_)
    {
      [[maybe_unused]] const FlushDenormals flush;
#pragma omp for schedule(static)
      for (index_t j = 0; j < g.ny; ++j) {
        double row_gain = 0;
        for (index_t i = 0; i < g.nx; ++i) {
          const index_t c = g.index(i, j);
          if (math::is_nan(fields_.z[c])) continue;
          const auto n = static_cast<std::size_t>(j * g.nx + i);
          const State<Real> un{fields_.h[c], fields_.hu[c], fields_.hv[c]};
          const State<Real> uk{src.h[c], src.hu[c], src.hv[c]};
          Real added_depth;
          const State<Real> q =
              ssp_rk3::stage(k, un, uk, State<Real>{rhs_h_[n], rhs_hu_[n], rhs_hv_[n]}, dt, physics_, added_depth);
          dst.h[c] = q.h;
          dst.hu[c] = q.hu;
          dst.hv[c] = q.hv;
          if (owned_.contains(i, j)) row_gain += static_cast<double>(added_depth);  // a rank's own cells (not its halo)
        }
        row_gain_[static_cast<std::size_t>(j)] = row_gain;
      }
    }
    this->add_positivity(row_gain_);
  }

  // Passive scalars, stage by stage as the flow: the Euler step's
  // concentration c_E (transport_scalars, from the stage input) combined
  // with U^n's as SSP-RK3 combines the water (combined_concentration). The
  // scalars are first order in space whatever the flow's order. Before
  // apply_stage: U^n is still in fields_ and hc_.
  void combine_scalars(int k, const Real* src_h, Real dt) {
    if (k == 0) return;  // U_1 = E_0
    const Real b = ssp_rk3::stage_weight<Real>(k);
    const Real inv_dx = Real(1.0 / grid_.dx), inv_dy = Real(1.0 / grid_.dy);
    this->for_active_cells([&](index_t, index_t, index_t c, std::size_t n) {
      // Only the fluxes count for the water.
      const ScalarStencil<Real> fluxes{mass_[0][n], mass_[1][n], mass_[2][n], mass_[3][n], {}, {}, {}, {}, {}};
      const Real water = transported_water(fluxes, src_h[c], dt, inv_dx, inv_dy);
      for (std::size_t q = 0; q < hc_.size(); ++q) {
        const Real cn = concentration(hc_[q][c], fields_.h[c]);
        c_next_[q][n] = combined_concentration(cn, fields_.h[c], c_next_[q][n], water, b);
      }
    });
  }

  roe3::Params<Real> prm_;
  std::vector<Real> stage_h_, stage_hu_, stage_hv_;  // the stage state U_k, padded
  std::vector<std::vector<Real>> stage_hc_;         // the stage's h c of each scalar, padded
  std::vector<Real> rhs_h_, rhs_hu_, rhs_hv_;      // L(U_k), interior cells
  std::vector<double> row_gain_;                   // clamp gains of the last stage, per row
  std::vector<roe3::BedPoints<Real>> bed_;         // padded; interior and first ghost ring
  index_t rows_per_block_ = 1;
};

} // namespace

std::unique_ptr<Backend> make_cpu_roe3_backend(const Problem& problem, const BackendOptions& options) {
  if (problem.precision == Precision::single_precision) {
    return std::make_unique<CpuRoe3Backend<float>>(problem, options);
  }
  return std::make_unique<CpuRoe3Backend<double>>(problem, options);
}

} // namespace shallows
