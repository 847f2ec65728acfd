// SPDX-License-Identifier: MIT
#include "shallows/solver/seed_problems.hpp"

#include <cmath>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>

namespace shallows::seeds {

Problem empty_grid(index_t nx, index_t ny, double x0, double lx, double y0, double ly) {
  Problem p;
  p.grid.nx = nx;
  p.grid.ny = ny;
  p.grid.x0 = x0;
  p.grid.y0 = y0;
  p.grid.dx = lx / static_cast<double>(nx);
  p.grid.dy = ly / static_cast<double>(ny);
  const auto cells = static_cast<std::size_t>(p.grid.cells());
  for (auto* f : {&p.z, &p.h, &p.hu, &p.hv}) f->assign(cells, 0.0);
  p.t_end = 1e30;
  return p;
}

Problem s000_t1(int level, double t_end, Precision precision) {
  const index_t s = index_t(1) << level;
  Problem p = empty_grid(100 * s, 10 * s, 0, 10, 0, 1);
  const double pi = std::acos(-1.0);
  for (index_t j = 0; j < p.grid.ny; ++j) {
    for (index_t i = 0; i < p.grid.nx; ++i) {
      const double x = p.grid.x_center(i);
      const auto k = static_cast<std::size_t>(j * p.grid.nx + i);
      p.z[k] = std::cos(2 * pi * x) / 2 - 1;
      p.h[k] = (x < 5 ? 2.0 : 0.0) - p.z[k];
    }
  }
  p.cfl = 0.9;
  p.precision = precision;
  p.t_end = t_end;
  return p;
}

Problem s000_t2(Precision precision) {
  Problem p = empty_grid(125, 25, 0, 25, 0, 5);
  for (index_t j = 0; j < p.grid.ny; ++j) {
    for (index_t i = 0; i < p.grid.nx; ++i) {
      const double x = p.grid.x_center(i);
      const auto k = static_cast<std::size_t>(j * p.grid.nx + i);
      p.z[k] = (x > 25.0 / 3 && x < 12.5) ? -9.0 : -10.0;
      p.h[k] = -p.z[k];
      p.hu[k] = x < 50.0 / 3 ? -350.0 : 350.0;
    }
  }
  p.bc(Side::west) = {BoundaryKind::open, 0};
  p.bc(Side::east) = {BoundaryKind::open, 0};
  p.cfl = 0.8;
  p.precision = precision;
  p.t_end = 0.65;
  return p;
}

Problem s003_t3(index_t n, Scheme scheme, Precision precision, bool walls_everywhere) {
  Problem p = empty_grid(n, n, 0, 2, 0, 2);
  const double pi = std::acos(-1.0);
  for (index_t j = 0; j < n; ++j) {
    for (index_t i = 0; i < n; ++i) {
      const double x = p.grid.x_center(i), y = p.grid.y_center(j);
      const bool bump = (x - 1.5) * (x - 1.5) + (y - 1) * (y - 1) <= 0.25;
      const double z = bump ? -(0.6 - (std::cos(2 * pi * (x - 0.5)) + 1) * (std::cos(2 * pi * y) + 1) / 8) : -0.6;
      const double eta = (x - 1.25) * (x - 1.25) + (y - 1) * (y - 1) <= 0.01 ? 0.5 : 0.0;
      const auto k = static_cast<std::size_t>(j * n + i);
      p.z[k] = z;
      p.h[k] = eta - z;
    }
  }
  const BoundaryKind x_sides = walls_everywhere ? BoundaryKind::wall : BoundaryKind::open;
  p.bc(Side::west) = {x_sides, 0};
  p.bc(Side::east) = {x_sides, 0};
  p.bc(Side::south) = {BoundaryKind::wall, 0};
  p.bc(Side::north) = {BoundaryKind::wall, 0};
  p.scheme = scheme;
  p.cfl = 0.9;
  p.precision = precision;
  p.t_end = 0.15;
  return p;
}

namespace {

// S004's initial depth at (x, y): T1 all wet, T2 dry beyond the hump (depths under the dry tolerance are 0).
double s004_depth(bool dynamic, double h_dry, double x, double y) {
  const double h = dynamic ? 16 * std::exp(-(x * x + y * y) / 5) : std::exp(-((x - 5) * (x - 5) + (y - 5) * (y - 5)) / 20);
  return h <= h_dry ? 0.0 : h;
}

} // namespace

Problem s004(const std::string& name, index_t n, Precision precision, int tiles_x, int tiles_y) {
  const bool dynamic = name == "s004-t2";
  const double x0 = dynamic ? -10 : 0, len = dynamic ? 20 : 10;
  Problem p = empty_grid(n * tiles_x, n * tiles_y, x0, len * tiles_x, x0, len * tiles_y);
  p.physics.h_dry = dynamic ? 1e-3 : 1e-6;
  for (index_t j = 0; j < p.grid.ny; ++j) {
    for (index_t i = 0; i < p.grid.nx; ++i) {
      p.h[static_cast<std::size_t>(j * p.grid.nx + i)] =
          s004_depth(dynamic, p.physics.h_dry, p.grid.x_center(i % n), p.grid.y_center(j % n));
    }
  }
  p.cfl = 0.9;
  p.precision = precision;
  return p;
}

Problem s004_mesh(const std::string& name, std::shared_ptr<const UnstructuredMesh> mesh, Precision precision) {
  const bool dynamic = name == "s004-t2-mesh";
  Problem p;
  p.physics.h_dry = dynamic ? 1e-3 : 1e-6;
  const auto n = static_cast<std::size_t>(mesh->cells());
  p.z.assign(n, 0.0);
  p.h.resize(n);
  p.hu.assign(n, 0.0);
  p.hv.assign(n, 0.0);
  for (std::size_t c = 0; c < n; ++c) p.h[c] = s004_depth(dynamic, p.physics.h_dry, mesh->cell_x[c], mesh->cell_y[c]);
  p.mesh_boundary.assign(mesh->boundary_names.size(), BoundaryCondition<double>{});
  p.mesh = std::move(mesh);
  p.cfl = 0.9;
  p.precision = precision;
  p.t_end = 1e30;
  if (name == "s004-t1-mesh-forcing") {
    // The grid's forcing row (tools/speed-compare.sh): rain 30 mm/h, Green-Ampt soil (Ks 20 mm/h, suction
    // 0.1 m, deficit 0.3), Manning 0.03 west of x = 5 and 0.06 east of it.
    Forcing& f = p.forcing;
    f.rain.rate = TimeSeries::constant(30 / 3.6e6);
    f.infiltration.model = InfiltrationModel::green_ampt;
    f.infiltration.p0 = {20 / 3.6e6};
    f.infiltration.p1 = {0.1};
    f.infiltration.p2 = {0.3};
    f.manning.resize(n);
    for (std::size_t c = 0; c < n; ++c) f.manning[c] = p.mesh->cell_x[c] < 5 ? 0.03 : 0.06;
  }
  return p;
}

} // namespace shallows::seeds
