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

#include "cpu_grid_backend.hpp"
#include "shallows/exec/cpu_backend.hpp"
#include "shallows/solver/mass_balance.hpp"
#include "shallows/exec/cpu_backend_roe3.hpp"
#include "shallows/exec/host_fields.hpp"
#include "shallows/mesh/structured/cartesian_edges.hpp"
#include "shallows/mesh/structured/ghost_cells.hpp"
#include "shallows/physics/cell_update.hpp"
#include "shallows/physics/scalar_transport.hpp"
#include "shallows/solver/structure_table.hpp"

namespace shallows {
namespace {

// Structure-of-arrays buffers of one thread for one row sweep, so that the
// edge loops vectorise. The loops read and write through restrict pointers
// taken outside them (a pointer re-read from a vector each iteration stops
// the vectoriser).
template <class Real>
struct Fluctuations {
  std::vector<Real> h, hu, hv, speed;
  explicit Fluctuations(std::size_t n) : h(n), hu(n), hv(n), speed(n) {}
  void swap(Fluctuations& o) {
    h.swap(o.h);
    hu.swap(o.hu);
    hv.swap(o.hv);
    speed.swap(o.speed);
  }
};

// Cell primitives of one row, columns -1..nx at indices 0..nx+1.
template <class Real>
struct Primitives {
  std::vector<Real> h, hu, hv, z, u, v, sqrt_h, c;
  explicit Primitives(std::size_t n) : h(n), hu(n), hv(n), z(n), u(n), v(n), sqrt_h(n), c(n) {}
  void swap(Primitives& o) {
    for (auto [a, b] : {std::pair{&h, &o.h}, {&hu, &o.hu}, {&hv, &o.hv}, {&z, &o.z}, {&u, &o.u}, {&v, &o.v},
                        {&sqrt_h, &o.sqrt_h}, {&c, &o.c}}) {
      a->swap(*b);
    }
  }
};

// The faces the lines of weirs and walls cross (Structure::crossings), walls
// for the scheme, by row: x-faces (column k: between columns k - 1 and k) of
// row j at x_cols[x_first[j] .. x_first[j + 1]), y-faces between rows j and
// j + 1 (column i) at y_cols[y_first[j] .. y_first[j + 1]). On a rank, the
// faces between two cells of its block, its halo's included, whose cells step
// as the owners' do; a face with a cell beyond the block touches only the
// halo's outer cells, which go wrong anyway until the next exchange.
struct GridWalls {
  std::vector<index_t> x_first, x_cols, y_first, y_cols;

  explicit GridWalls(const Problem& p) {
    const index_t nx = p.grid.nx, ny = p.grid.ny;
    std::vector<std::vector<index_t>> x(static_cast<std::size_t>(ny)), y(static_cast<std::size_t>(ny));
    bool any = false;
    for_each_line_face(p.forcing, nx, [&](index_t lo, index_t hi, bool across_x) {
      auto& row = across_x ? x[static_cast<std::size_t>(lo / nx)] : y[static_cast<std::size_t>(lo / nx)];
      row.push_back(across_x ? hi % nx : lo % nx);
      any = true;
    });
    if (!any) return;
    const auto flatten = [](std::vector<std::vector<index_t>>& rows, std::vector<index_t>& first,
                            std::vector<index_t>& cols) {
      first.push_back(0);
      for (std::vector<index_t>& r : rows) {
        std::sort(r.begin(), r.end());
        r.erase(std::unique(r.begin(), r.end()), r.end());
        cols.insert(cols.end(), r.begin(), r.end());
        first.push_back(static_cast<index_t>(cols.size()));
      }
    };
    flatten(x, x_first, x_cols);
    flatten(y, y_first, y_cols);
  }

  bool empty() const { return x_first.empty(); }
};

struct RowResult {
  double max_rate;
  bool finite;
};

// Over the columns i0..i0+n-1 of a row (columns()): the whole row unless
// an exchange in flight splits the sweep (CpuGridBackend::first_sweep).
template <class Real>
struct RowSweep {
  const Grid& g;
  index_t i0 = 0;
  std::size_t nx;  // n, the columns swept
  Primitives<Real> here, above;
  Fluctuations<Real> x_left, x_right;  // x-edge k (between columns i0+k-1 and i0+k, k = 0..n), to each side
  Fluctuations<Real> south;            // from the y-edges below the row, to the row
  Fluctuations<Real> north_to_here;    // from the y-edges above the row, to the row
  Fluctuations<Real> north_to_above;   // the same edges, to the row above
  std::vector<Real> rate;
  // With passive scalars: the edges' mass fluxes (edge_mass_flux), x-edge k
  // and the y-edges below and above the row.
  bool mass = false;
  std::vector<Real> mass_x, mass_south, mass_north;

  RowSweep(const Grid& grid, bool with_mass)
      : g(grid), nx(static_cast<std::size_t>(grid.nx)), here(nx + 2), above(nx + 2), x_left(nx + 1),
        x_right(nx + 1), south(nx), north_to_here(nx), north_to_above(nx), rate(nx), mass(with_mass) {
    if (!mass) return;
    mass_x.resize(nx + 1);
    mass_south.resize(nx);
    mass_north.resize(nx);
  }

  // Mass fluxes of the edges between cells a + k and b + k of two primitive
  // rows whose fluctuations are to_a, to_b (normal discharges ha, hb).
  static void mass_loop(const Real* __restrict na, const Real* __restrict nb, const Real* __restrict za,
                        const Real* __restrict zb, const Real* __restrict fa, const Real* __restrict fb,
                        Real* __restrict out, std::size_t n) {
    for (std::size_t k = 0; k < n; ++k) {
      EdgeFluctuation<Real> f{};
      f.to_left.h = fa[k];
      f.to_right.h = fb[k];
      out[k] = edge_mass_flux(na[k], nb[k], f, !math::is_nan(za[k]) & !math::is_nan(zb[k]));
    }
  }

  // After the row's edges (x_edges, y_edges): their mass fluxes.
  void mass_fluxes() {
    mass_loop(here.hu.data(), here.hu.data() + 1, here.z.data(), here.z.data() + 1, x_left.h.data(),
              x_right.h.data(), mass_x.data(), nx + 1);
    mass_loop(here.hv.data() + 1, above.hv.data() + 1, here.z.data() + 1, above.z.data() + 1,
              north_to_here.h.data(), north_to_above.h.data(), mass_north.data(), nx);
  }

  // Sweep columns first..last-1 from now on (at most the grid's width).
  void columns(index_t first, index_t last) {
    i0 = first;
    nx = static_cast<std::size_t>(last - first);
  }

  void load_row(const PaddedFields<Real>& f, index_t j, Primitives<Real>& out, const PhysicsParams<Real>& p) {
    const index_t first = g.index(i0 - 1, j);
    primitive_loop(f.h.data() + first, f.hu.data() + first, f.hv.data() + first, f.z.data() + first, out.h.data(),
                   out.hu.data(), out.hv.data(), out.z.data(), out.u.data(), out.v.data(), out.sqrt_h.data(),
                   out.c.data(), nx + 2, p);
  }

  // restrict is honoured on parameters, which is what lets these loops vectorise.
  static void primitive_loop(const Real* __restrict h, const Real* __restrict hu, const Real* __restrict hv,
                             const Real* __restrict z, Real* __restrict oh, Real* __restrict ohu,
                             Real* __restrict ohv, Real* __restrict oz, Real* __restrict ou, Real* __restrict ov,
                             Real* __restrict os, Real* __restrict oc, std::size_t n, const PhysicsParams<Real> p) {
    for (std::size_t k = 0; k < n; ++k) {
      const CellPrimitive<Real> q = cell_primitive(State<Real>{h[k], hu[k], hv[k]}, z[k], p);
      oh[k] = q.h;
      ohu[k] = q.hu;
      ohv[k] = q.hv;
      oz[k] = q.z;
      ou[k] = q.u;
      ov[k] = q.v;
      os[k] = q.sqrt_h;
      oc[k] = q.c;
    }
  }

  static void combine_loop(const Real* __restrict wh, const Real* __restrict whu, const Real* __restrict whv,
                           const Real* __restrict ws, const Real* __restrict eh, const Real* __restrict ehu,
                           const Real* __restrict ehv, const Real* __restrict es, const Real* __restrict sh,
                           const Real* __restrict shu, const Real* __restrict shv, const Real* __restrict ss,
                           const Real* __restrict nh, const Real* __restrict nhu, const Real* __restrict nhv,
                           const Real* __restrict ns, Real* __restrict out_h, Real* __restrict out_hu,
                           Real* __restrict out_hv, Real* __restrict out_rate, std::size_t n, Real inv_dx,
                           Real inv_dy, Real half_inv_dx, Real half_inv_dy) {
    for (std::size_t i = 0; i < n; ++i) {
      out_h[i] = -((wh[i] + eh[i]) * inv_dx + (sh[i] + nh[i]) * inv_dy);
      out_hu[i] = -((whu[i] + ehu[i]) * inv_dx + (shu[i] + nhu[i]) * inv_dy);
      out_hv[i] = -((whv[i] + ehv[i]) * inv_dx + (shv[i] + nhv[i]) * inv_dy);
      out_rate[i] = (ws[i] + es[i]) * half_inv_dx + (ss[i] + ns[i]) * half_inv_dy;
    }
  }

  // Edges between cells a + k and b + k of two primitive rows, k = 0..n-1.
  template <int axis>
  static void edges(const Primitives<Real>& pa, std::size_t a, const Primitives<Real>& pb, std::size_t b,
                    std::size_t n, Fluctuations<Real>& to_a, Fluctuations<Real>& to_b, const PhysicsParams<Real> p) {
    edge_loop<axis>(pa.h.data() + a, pa.hu.data() + a, pa.hv.data() + a, pa.z.data() + a, pa.u.data() + a,
                    pa.v.data() + a, pa.sqrt_h.data() + a, pa.c.data() + a, pb.h.data() + b, pb.hu.data() + b,
                    pb.hv.data() + b, pb.z.data() + b, pb.u.data() + b, pb.v.data() + b, pb.sqrt_h.data() + b,
                    pb.c.data() + b, to_a.h.data(), to_a.hu.data(), to_a.hv.data(), to_a.speed.data(), to_b.h.data(),
                    to_b.hu.data(), to_b.hv.data(), to_b.speed.data(), n, p);
  }

  template <int axis>
  static void edge_loop(const Real* __restrict ha, const Real* __restrict hua, const Real* __restrict hva,
                        const Real* __restrict za, const Real* __restrict ua, const Real* __restrict va,
                        const Real* __restrict sa, const Real* __restrict ca, const Real* __restrict hb,
                        const Real* __restrict hub, const Real* __restrict hvb, const Real* __restrict zb,
                        const Real* __restrict ub, const Real* __restrict vb, const Real* __restrict sb,
                        const Real* __restrict cb, Real* __restrict fa_h, Real* __restrict fa_hu,
                        Real* __restrict fa_hv, Real* __restrict fa_s, Real* __restrict fb_h, Real* __restrict fb_hu,
                        Real* __restrict fb_hv, Real* __restrict fb_s, std::size_t n, const PhysicsParams<Real> p) {
    for (std::size_t k = 0; k < n; ++k) {
      const auto f = cartesian_edge<axis>(CellPrimitive<Real>{ha[k], hua[k], hva[k], za[k], ua[k], va[k], sa[k], ca[k]},
                                          CellPrimitive<Real>{hb[k], hub[k], hvb[k], zb[k], ub[k], vb[k], sb[k], cb[k]}, p);
      fa_h[k] = f.to_left.h;
      fa_hu[k] = f.to_left.hu;
      fa_hv[k] = f.to_left.hv;
      fa_s[k] = f.speed;
      fb_h[k] = f.to_right.h;
      fb_hu[k] = f.to_right.hu;
      fb_hv[k] = f.to_right.hv;
      fb_s[k] = f.speed;
    }
  }

  void x_edges(const PhysicsParams<Real>& p) { edges<0>(here, 0, here, 1, nx + 1, x_left, x_right, p); }

  // The row's evaluated edges that are walls (GridWalls) replaced by the
  // walls' fluctuations: x-edges of row j, the y-edges above row j.
  void x_walls(const GridWalls& w, index_t j, const PhysicsParams<Real>& p) {
    if (j < 0 || j >= g.ny) return;
    for (index_t k = w.x_first[static_cast<std::size_t>(j)]; k < w.x_first[static_cast<std::size_t>(j) + 1]; ++k) {
      const index_t e = w.x_cols[static_cast<std::size_t>(k)] - i0;
      if (e < 0 || e > static_cast<index_t>(nx)) continue;
      const auto at = static_cast<std::size_t>(e);
      EdgeFluctuation<Real> l, r;
      wall_edge<0>(primitive(here, at), primitive(here, at + 1), p, l, r);
      store(x_left, at, l.to_left, l.speed);
      store(x_right, at, r.to_right, r.speed);
    }
  }
  void y_walls(const GridWalls& w, index_t j, const PhysicsParams<Real>& p) {
    if (j < 0 || j >= g.ny) return;
    for (index_t k = w.y_first[static_cast<std::size_t>(j)]; k < w.y_first[static_cast<std::size_t>(j) + 1]; ++k) {
      const index_t e = w.y_cols[static_cast<std::size_t>(k)] - i0;
      if (e < 0 || e >= static_cast<index_t>(nx)) continue;
      const auto at = static_cast<std::size_t>(e);
      EdgeFluctuation<Real> l, r;
      wall_edge<1>(primitive(here, at + 1), primitive(above, at + 1), p, l, r);
      store(north_to_here, at, l.to_left, l.speed);
      store(north_to_above, at, r.to_right, r.speed);
    }
  }
  // No mass crosses a wall (after mass_fluxes).
  void wall_mass(const GridWalls& w, index_t j) {
    if (j < 0 || j >= g.ny) return;
    for (index_t k = w.x_first[static_cast<std::size_t>(j)]; k < w.x_first[static_cast<std::size_t>(j) + 1]; ++k) {
      const index_t e = w.x_cols[static_cast<std::size_t>(k)] - i0;
      if (e >= 0 && e <= static_cast<index_t>(nx)) mass_x[static_cast<std::size_t>(e)] = Real(0);
    }
    for (index_t k = w.y_first[static_cast<std::size_t>(j)]; k < w.y_first[static_cast<std::size_t>(j) + 1]; ++k) {
      const index_t e = w.y_cols[static_cast<std::size_t>(k)] - i0;
      if (e >= 0 && e < static_cast<index_t>(nx)) mass_north[static_cast<std::size_t>(e)] = Real(0);
    }
  }
  static CellPrimitive<Real> primitive(const Primitives<Real>& r, std::size_t k) {
    return {r.h[k], r.hu[k], r.hv[k], r.z[k], r.u[k], r.v[k], r.sqrt_h[k], r.c[k]};
  }
  static void store(Fluctuations<Real>& f, std::size_t k, const State<Real>& q, Real speed) {
    f.h[k] = q.h;
    f.hu[k] = q.hu;
    f.hv[k] = q.hv;
    f.speed[k] = speed;
  }

  // Row j's cells' mass fluxes (west, east, south, north) into the per-cell arrays m.
  void store_mass(index_t j, const std::array<Real*, 4>& m) const {
    const auto o = static_cast<std::size_t>(j * g.nx + i0);
    for (std::size_t i = 0; i < nx; ++i) {
      m[0][o + i] = mass_x[i];
      m[1][o + i] = mass_x[i + 1];
      m[2][o + i] = mass_south[i];
      m[3][o + i] = mass_north[i];
    }
  }

  // The row above becomes the current one: what its y-edges below it carry.
  void next_row() {
    south.swap(north_to_above);
    if (mass) mass_south.swap(mass_north);
  }
  void y_edges(const PhysicsParams<Real>& p) { edges<1>(here, 1, above, 1, nx, north_to_here, north_to_above, p); }

  // rhs = -((W + E) / dx + (S + N) / dy) in this order for every cell.
  // The rates of the cells of `owned` in the row count.
  RowResult combine(index_t j, Real* rhs_h, Real* rhs_hu, Real* rhs_hv, const CellBox& owned) {
    const auto o = static_cast<std::size_t>(j * g.nx + i0);
    combine_loop(x_right.h.data(), x_right.hu.data(), x_right.hv.data(), x_right.speed.data(), x_left.h.data() + 1,
                 x_left.hu.data() + 1, x_left.hv.data() + 1, x_left.speed.data() + 1, south.h.data(),
                 south.hu.data(), south.hv.data(), south.speed.data(), north_to_here.h.data(),
                 north_to_here.hu.data(), north_to_here.hv.data(), north_to_here.speed.data(), rhs_h + o,
                 rhs_hu + o, rhs_hv + o, rate.data(), nx, Real(1.0 / g.dx), Real(1.0 / g.dy), Real(0.5 / g.dx),
                 Real(0.5 / g.dy));
    RowResult r{0.0, true};
    if (j < owned.j0 || j >= owned.j1) return r;
    const Real* z = here.z.data() + 1;
    const index_t to = std::min(owned.i1 - i0, static_cast<index_t>(nx));
    for (index_t i = std::max<index_t>(owned.i0 - i0, 0); i < to; ++i) {
      if (math::is_nan(z[i])) continue;  // inactive cells set no time step
      r.finite = r.finite && std::isfinite(rate[i]);
      r.max_rate = std::max(r.max_rate, static_cast<double>(rate[i]));
    }
    return r;
  }
};

template <class Real>
class CpuBackend final : public detail::CpuGridBackend<Real> {
  using Base = detail::CpuGridBackend<Real>;
  using Base::grid_, Base::physics_, Base::cfl_, Base::threads_, Base::fields_, Base::owned_, Base::hc_, Base::mass_;

 public:
  CpuBackend(const Problem& p, const BackendOptions& o) : Base(p, o), walls_(p) {
    const auto cells = static_cast<std::size_t>(grid_.cells());
    rhs_h_.assign(cells, Real(0));
    rhs_hu_.assign(cells, Real(0));
    rhs_hv_.assign(cells, Real(0));
    row_gain_.assign(static_cast<std::size_t>(grid_.ny), 0.0);
    this->start();
  }

  std::string name() const override { return threads_ == 1 ? "serial" : "openmp"; }

  double step(double t, double dt_max) override {
    this->boundary_at(t);
    const double local_rate = compute_rhs();
    if (!std::isfinite(local_rate)) {
      throw std::runtime_error("solution is no longer finite at t = " + std::to_string(t) + " s");
    }
    const double rate = this->reduce_rate(local_rate);
    const double dt = cfl_time_step(rate, cfl_, this->dry_dt_, dt_max);
    if (this->forcing_.sides_kept()) this->account_boundary(static_cast<double>(static_cast<Real>(dt)));
    if (!hc_.empty()) this->transport_scalars(fields_.h.data(), hc_, static_cast<Real>(dt));
    apply_rhs(static_cast<Real>(dt));
    if (!hc_.empty()) this->store_scalars(fields_.h.data(), hc_);
    this->finish_step(t, dt);
    return dt;
  }

 private:
  // First pass: rhs of every cell and the largest CFL rate
  // sum_edges |Gamma| |lambda| / (2 |V|) (seed 000 eq. 8).
  double compute_rhs() {
    const Grid& g = grid_;
    // About 16k cells per block: large enough for the caches, small enough to interleave.
    const auto rows = [](const CellBox& box) { return 16384 / std::max<index_t>(box.nx(), 1); };
    const GridWalls* walls = walls_.empty() ? nullptr : &walls_;
    return this->first_sweep(rows, [&] {
      return [&, sweep = RowSweep<Real>(g, !hc_.empty()),
              mass = std::array<Real*, 4>{mass_[0].data(), mass_[1].data(), mass_[2].data(), mass_[3].data()}](
                 const typename Base::RowBlock& b, double& max_rate, bool& finite) mutable {
        sweep.columns(b.box.i0, b.box.i1);
        sweep.load_row(fields_, b.j0 - 1, sweep.here, physics_);
        sweep.load_row(fields_, b.j0, sweep.above, physics_);
        sweep.y_edges(physics_);
        if (walls) sweep.y_walls(*walls, b.j0 - 1, physics_);
        if (sweep.mass) sweep.mass_fluxes();
        if (sweep.mass && walls) sweep.wall_mass(*walls, b.j0 - 1);
        sweep.next_row();
        for (index_t j = b.j0; j < b.j1; ++j) {
          sweep.here.swap(sweep.above);
          sweep.load_row(fields_, j + 1, sweep.above, physics_);
          sweep.x_edges(physics_);
          sweep.y_edges(physics_);
          if (walls) {
            sweep.x_walls(*walls, j, physics_);
            sweep.y_walls(*walls, j, physics_);
          }
          if (sweep.mass) {
            sweep.mass_fluxes();
            if (walls) sweep.wall_mass(*walls, j);
            sweep.store_mass(j, mass);
          }
          const RowResult r = sweep.combine(j, rhs_h_.data(), rhs_hu_.data(), rhs_hv_.data(), owned_);
          max_rate = std::max(max_rate, r.max_rate);
          finite = finite && r.finite;
          sweep.next_row();
        }
      };
    });
  }

  // Second pass: q += dt rhs, then the point-wise corrections.
  void apply_rhs(Real dt) {
    const Grid& g = grid_;
    const bool friction = physics_.n_manning > Real(0);
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (index_t j = 0; j < g.ny; ++j) {
      const index_t c = g.index(0, j);
      const index_t k = j * g.nx;
      const bool clamped = update_row(fields_.h.data() + c, fields_.hu.data() + c, fields_.hv.data() + c,
                                      fields_.z.data() + c, rhs_h_.data() + k, rhs_hu_.data() + k,
                                      rhs_hv_.data() + k, g.nx, dt, friction, physics_);
      // The row's clamp gains, left in rhs_h by update_row; rare, so summed only where there are any. A rank
      // counts its owned cells: the halo's are their owners'.
      double sum = 0;
      if (clamped && j >= owned_.j0 && j < owned_.j1) {
        for (index_t i = owned_.i0; i < owned_.i1; ++i)
          sum += static_cast<double>(rhs_h_[static_cast<std::size_t>(k + i)]);
      }
      row_gain_[static_cast<std::size_t>(j)] = sum;
    }
    this->add_positivity(row_gain_);
  }

  // Updates a row; rh[i] is overwritten by the depth the cell's clamp added (its rhs is
  // used up), so that the loop stays a vectorisable map. Returns whether any
  // added_depth is nonzero.
  static bool update_row(Real* __restrict h, Real* __restrict hu, Real* __restrict hv, const Real* __restrict z,
                         Real* __restrict rh, const Real* __restrict rhu, const Real* __restrict rhv, index_t n,
                         Real dt, bool friction, const PhysicsParams<Real> p) {
    // Without friction the loop has no call (cbrt) and vectorises; the
    // results are the same since apply_manning leaves q alone when n = 0.
    const auto update = [&](auto&& cell_update) {
      bool clamped = false;
      for (index_t i = 0; i < n; ++i) {
        const State<Real> q{h[i], hu[i], hv[i]};
        Real added_depth;
        const State<Real> out = cell_update(q, State<Real>{rh[i], rhu[i], rhv[i]}, added_depth);
        const bool active = !math::is_nan(z[i]);
        h[i] = active ? out.h : q.h;
        hu[i] = active ? out.hu : q.hu;
        hv[i] = active ? out.hv : q.hv;
        rh[i] = active ? added_depth : Real(0);
        clamped = clamped || rh[i] > Real(0);
      }
      return clamped;
    };
    if (friction) {
      return update(
          [&](State<Real> q, State<Real> rhs, Real& added_depth) { return advance_cell(q, rhs, dt, p, added_depth); });
    }
    return update(
        [&](State<Real> q, State<Real> rhs, Real& added_depth) { return explicit_update(q, rhs, dt, p, added_depth); });
  }

  std::vector<Real> rhs_h_, rhs_hu_, rhs_hv_;
  std::vector<double> row_gain_;  // clamp gains of the last step, per row
  GridWalls walls_;               // the lines' faces; empty: none
};

} // namespace

std::unique_ptr<Backend> make_cpu_backend(const Problem& problem, const BackendOptions& options) {
  if (problem.scheme == Scheme::roe3) return make_cpu_roe3_backend(problem, options);
  if (problem.precision == Precision::single_precision) {
    return std::make_unique<CpuBackend<float>>(problem, options);
  }
  return std::make_unique<CpuBackend<double>>(problem, options);
}

} // namespace shallows
