// SPDX-License-Identifier: MIT
#pragma once
// Problems built in code for property and exact-solution tests, so that they
// do not depend on the case-file loader.
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "shallows/solver/problem.hpp"

namespace shallows::test_support {

// Grid over [x0, x0 + nx dx] x [y0, y0 + ny dy] with fields from point functions
// of the cell centre: z(x, y) and eta(x, y) (h = max(eta - z, 0); NaN z marks an
// inactive cell, left dry), at rest.
inline Problem make_problem(index_t nx, index_t ny, double x0, double x1, double y0, double y1,
                            const std::function<double(double, double)>& z,
                            const std::function<double(double, double)>& eta) {
  Problem p;
  p.grid.nx = nx;
  p.grid.ny = ny;
  p.grid.x0 = x0;
  p.grid.y0 = y0;
  p.grid.dx = (x1 - x0) / static_cast<double>(nx);
  p.grid.dy = (y1 - y0) / static_cast<double>(ny);
  const auto n = static_cast<std::size_t>(p.grid.cells());
  p.z.resize(n);
  p.h.resize(n);
  p.hu.assign(n, 0.0);
  p.hv.assign(n, 0.0);
  for (index_t j = 0; j < ny; ++j) {
    for (index_t i = 0; i < nx; ++i) {
      const double x = p.grid.x_center(i), y = p.grid.y_center(j);
      const auto k = static_cast<std::size_t>(j * nx + i);
      p.z[k] = z(x, y);
      p.h[k] = std::isnan(p.z[k]) ? 0.0 : std::max(eta(x, y) - p.z[k], 0.0);  // NaN bed: inactive
    }
  }
  p.t_end = 1e30;
  return p;
}

// S003-T1: lake at rest over a rough bowl on [0,1]^2; with islands, three
// bumps pierce the surface (dry cells inside the lake).
inline Problem lake_at_rest(bool islands, Precision precision, index_t n = 100) {
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> noise(-0.05, 0.05);
  const double dx = 1.0 / static_cast<double>(n);
  std::vector<double> bumps(static_cast<std::size_t>(n * n));
  for (double& b : bumps) b = noise(rng);
  auto z = [&, dx, n](double x, double y) {
    const auto i = static_cast<index_t>(x / dx), j = static_cast<index_t>(y / dx);
    double depth = 2 - (x - 0.5) * (x - 0.5) - (y - 0.5) * (y - 0.5) + bumps[static_cast<std::size_t>(j * n + i)];
    double bed = -depth;
    if (islands) {
      const double r1 = std::hypot(x - 0.3, y - 0.3), r2 = std::hypot(x - 0.7, y - 0.6);
      if (r1 < 0.12) bed = 0.3 * (1 - r1 / 0.12) + 0.05;
      if (r2 < 0.08) bed = 0.02;
    }
    return bed;
  };
  Problem p = make_problem(n, n, 0, 1, 0, 1, z, [](double, double) { return 0.0; });
  p.precision = precision;
  p.cfl = 0.9;
  return p;
}

// A passive scalar with its initial concentration (one value: uniform), the
// rain's and the sources' (Problem::forcing.sources order).
inline PassiveScalar scalar(const std::string& name, std::vector<double> c, double rain = 0,
                            std::vector<double> sources = {}) {
  PassiveScalar s;
  s.name = name;
  s.c = std::move(c);
  s.rain = rain;
  s.sources = std::move(sources);
  return s;
}

// A condition on boundary cells [begin, end) of a side; a level's value may follow a series.
inline BoundarySegment segment(Side side, index_t begin, index_t end, BoundaryKind kind, double value,
                               TimeSeries series = {}) {
  BoundarySegment s;
  s.name = "segment";
  s.where = {side, begin, end, {kind, value}};
  s.value = std::move(series);
  return s;
}

} // namespace shallows::test_support
