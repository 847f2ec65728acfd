// SPDX-License-Identifier: MIT
#pragma once
// A mesh Problem in the arrays every mesh executor starts from, in the run's
// precision: the geometry the loops read (MeshArrays) and the initial state.
// The CPU executor loops over these host arrays; the CUDA executor copies them.
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "shallows/mesh/unstructured/mesh_edges.hpp"
#include "shallows/solver/problem.hpp"

namespace shallows {

template <class Real>
struct HostMesh {
  index_t cells = 0, edges = 0;
  std::vector<mesh_index> cell_edges, edge_left, edge_right;
  std::vector<Real> edge_nx, edge_ny, edge_length, inv_area, z;
  std::vector<BoundaryCondition<Real>> boundary;
  std::vector<Real> h, hu, hv;  // initial state; zero in inactive cells
  std::vector<double> area;     // for volumes, in double

  MeshArrays<Real> arrays() const {
    return {cell_edges.data(), edge_left.data(), edge_right.data(), edge_nx.data(), edge_ny.data(),
            edge_length.data(), inv_area.data(),  z.data(),          boundary.data()};
  }
};

template <class Real>
HostMesh<Real> make_host_mesh(const Problem& p) {
  if (!p.mesh) throw std::invalid_argument("make_host_mesh: the problem has no mesh");
  const UnstructuredMesh& m = *p.mesh;
  const auto n = static_cast<std::size_t>(m.cells());
  for (const auto* v : {&p.z, &p.h, &p.hu, &p.hv})
    if (v->size() != n)
      throw std::invalid_argument("mesh problem: a field has " + std::to_string(v->size()) + " values, the mesh has " +
                                  std::to_string(n) + " cells");
  if (p.mesh_boundary.size() != m.boundary_names.size())
    throw std::invalid_argument("mesh problem: " + std::to_string(p.mesh_boundary.size()) +
                                " boundary conditions for " + std::to_string(m.boundary_names.size()) +
                                " boundary groups");
  HostMesh<Real> f;
  f.cells = m.cells();
  f.edges = m.edges();
  f.cell_edges = m.cell_edges;
  f.edge_left = m.edge_left;
  f.edge_right = m.edge_right;
  const auto to_real = [](const std::vector<double>& v) {
    std::vector<Real> out(v.size());
    for (std::size_t k = 0; k < v.size(); ++k) out[k] = static_cast<Real>(v[k]);
    return out;
  };
  f.edge_nx = to_real(m.edge_nx);
  f.edge_ny = to_real(m.edge_ny);
  f.edge_length = to_real(m.edge_length);
  f.z = to_real(p.z);
  f.area = m.cell_area;
  f.inv_area.resize(n);
  f.h.resize(n);
  f.hu.resize(n);
  f.hv.resize(n);
  for (std::size_t c = 0; c < n; ++c) {
    f.inv_area[c] = static_cast<Real>(1.0 / m.cell_area[c]);
    const bool active = !std::isnan(p.z[c]);
    f.h[c] = active ? static_cast<Real>(p.h[c]) : Real(0);
    f.hu[c] = active ? static_cast<Real>(p.hu[c]) : Real(0);
    f.hv[c] = active ? static_cast<Real>(p.hv[c]) : Real(0);
  }
  for (const BoundaryCondition<double>& bc : p.mesh_boundary)
    f.boundary.push_back({bc.kind, static_cast<Real>(bc.value)});
  return f;
}

// The concentration each boundary group brings of each passive scalar
// (PassiveScalar::groups: inflow and level groups), of scalar s and group g
// at [s groups + g]; 0 where a scalar lists none.
template <class Real>
std::vector<Real> group_concentrations(const Problem& p) {
  const std::size_t groups = p.mesh_boundary.size();
  std::vector<Real> c;
  for (const PassiveScalar& sc : p.scalars) {
    if (!sc.groups.empty() && sc.groups.size() != groups) {
      throw std::invalid_argument("scalar '" + sc.name + "': " + std::to_string(sc.groups.size()) +
                                  " boundary concentrations for " + std::to_string(groups) + " boundary groups");
    }
    for (std::size_t g = 0; g < groups; ++g) c.push_back(static_cast<Real>(sc.groups.empty() ? 0.0 : sc.groups[g]));
  }
  return c;
}

} // namespace shallows
