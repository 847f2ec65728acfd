// SPDX-License-Identifier: MIT
#pragma once
// Conversion between a Problem's interior double fields and the padded
// arrays of precision Real that every backend starts from.
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "shallows/mesh/structured/grid.hpp"
#include "shallows/solver/problem.hpp"

namespace shallows {

template <class Real>
struct PaddedFields {
  std::vector<Real> h, hu, hv, z;
};

// Interior copied in; ghost beds mirror the interior (no step at a boundary);
// ghost states are left zero for the backend's first ghost fill.
template <class Real>
PaddedFields<Real> make_padded_fields(const Problem& p) {
  const Grid& g = p.grid;
  PaddedFields<Real> f;
  const auto n = static_cast<std::size_t>(g.padded_size());
  f.h.assign(n, Real(0));
  f.hu.assign(n, Real(0));
  f.hv.assign(n, Real(0));
  f.z.assign(n, Real(0));
  for (index_t j = 0; j < g.ny; ++j) {
    for (index_t i = 0; i < g.nx; ++i) {
      const auto src = static_cast<std::size_t>(j * g.nx + i);
      const auto dst = static_cast<std::size_t>(g.index(i, j));
      const bool active = !std::isnan(p.z[src]);
      f.z[dst] = static_cast<Real>(p.z[src]);
      f.h[dst] = active ? static_cast<Real>(p.h[src]) : Real(0);
      f.hu[dst] = active ? static_cast<Real>(p.hu[src]) : Real(0);
      f.hv[dst] = active ? static_cast<Real>(p.hv[src]) : Real(0);
    }
  }
  const auto at = [&](index_t i, index_t j) { return static_cast<std::size_t>(g.index(i, j)); };
  for (int k = 0; k < Grid::ghost; ++k) {
    for (index_t j = 0; j < g.ny; ++j) {
      f.z[at(-1 - k, j)] = f.z[at(k, j)];
      f.z[at(g.nx + k, j)] = f.z[at(g.nx - 1 - k, j)];
    }
  }
  for (int k = 0; k < Grid::ghost; ++k) {
    for (index_t i = -Grid::ghost; i < g.nx + Grid::ghost; ++i) {
      f.z[at(i, -1 - k)] = f.z[at(i, k)];
      f.z[at(i, g.ny + k)] = f.z[at(i, g.ny - 1 - k)];
    }
  }
  return f;
}

// The passive scalars' initial amounts h c per cell (row-major on a grid,
// cell order on a mesh): c h on the active cells, 0 on the inactive ones,
// one vector per scalar. Throws std::invalid_argument when a scalar's
// initial concentration has neither one value nor one per cell.
inline std::vector<std::vector<double>> initial_scalars(const Problem& p) {
  const std::size_t cells = p.z.size();
  std::vector<std::vector<double>> out;
  for (const PassiveScalar& s : p.scalars) {
    if (s.c.size() != 1 && s.c.size() != cells) {
      throw std::invalid_argument("scalar '" + s.name + "': " + std::to_string(s.c.size()) +
                                  " initial concentrations for " + std::to_string(cells) + " cells");
    }
    std::vector<double>& hc = out.emplace_back(cells, 0.0);
    for (std::size_t k = 0; k < cells; ++k)
      if (!std::isnan(p.z[k])) hc[k] = (s.c.size() == 1 ? s.c[0] : s.c[k]) * p.h[k];
  }
  return out;
}

// The same on a grid's padded arrays (zero outside the interior).
template <class Real>
std::vector<std::vector<Real>> make_padded_scalars(const Problem& p) {
  const Grid& g = p.grid;
  std::vector<std::vector<Real>> out;
  for (const std::vector<double>& hc : initial_scalars(p)) {
    std::vector<Real>& padded = out.emplace_back(static_cast<std::size_t>(g.padded_size()), Real(0));
    for (index_t j = 0; j < g.ny; ++j) {
      for (index_t i = 0; i < g.nx; ++i)
        padded[static_cast<std::size_t>(g.index(i, j))] = static_cast<Real>(hc[static_cast<std::size_t>(j * g.nx + i)]);
    }
  }
  return out;
}

// What the water entering a grid run brings of each passive scalar, checked
// and laid out as every executor reads it: for scalar s, side k at
// side[4 s + k], Problem::segments entry g at segment[n s + g] (n segments),
// Forcing::sources entry k at source[m s + k] (m sources; 0 where the scalar
// lists none), the rain's at rain[s]. Throws std::invalid_argument when a
// scalar lists neither none nor one concentration per source or segment.
template <class Real>
struct ScalarInflow {
  std::vector<Real> side, segment;
  std::vector<double> source, rain;
};

template <class Real>
ScalarInflow<Real> scalar_inflow(const Problem& p) {
  const std::size_t sources = p.forcing.sources.size(), segments = p.segments.size();
  const auto per = [](const PassiveScalar& s, const std::vector<double>& given, std::size_t count, const char* what) {
    if (!given.empty() && given.size() != count) {
      throw std::invalid_argument("scalar '" + s.name + "': " + std::to_string(given.size()) + " " + what +
                                  " concentrations for " + std::to_string(count) + " " + what + "s");
    }
    return given.empty() ? std::vector<double>(count, 0.0) : given;
  };
  ScalarInflow<Real> in;
  for (const PassiveScalar& s : p.scalars) {
    for (double c : s.side) in.side.push_back(static_cast<Real>(c));
    for (double c : per(s, s.segments, segments, "segment")) in.segment.push_back(static_cast<Real>(c));
    for (double c : per(s, s.sources, sources, "source")) in.source.push_back(c);
    in.rain.push_back(s.rain);
  }
  return in;
}

// Interior of padded arrays back to row-major double.
template <class Real>
void copy_interior(const Grid& g, const Real* padded, std::vector<double>& out) {
  out.resize(static_cast<std::size_t>(g.cells()));
  for (index_t j = 0; j < g.ny; ++j) {
    for (index_t i = 0; i < g.nx; ++i) {
      out[static_cast<std::size_t>(j * g.nx + i)] = static_cast<double>(padded[g.index(i, j)]);
    }
  }
}

// Row-major double values into the interior of a padded array (the inverse of copy_interior).
template <class Real>
void copy_into_interior(const Grid& g, const std::vector<double>& in, Real* padded) {
  for (index_t j = 0; j < g.ny; ++j) {
    for (index_t i = 0; i < g.nx; ++i) {
      padded[g.index(i, j)] = static_cast<Real>(in[static_cast<std::size_t>(j * g.nx + i)]);
    }
  }
}

template <class Real>
BoundaryCondition<Real> to_precision(const BoundaryCondition<double>& bc) {
  return {bc.kind, static_cast<Real>(bc.value)};
}

template <class Real>
PhysicsParams<Real> to_precision(const PhysicsParams<double>& p) {
  return {static_cast<Real>(p.g), static_cast<Real>(p.h_dry), static_cast<Real>(p.n_manning)};
}

} // namespace shallows
