// SPDX-License-Identifier: MIT
// _shallows: the library in a Python process (pybind11). Cases go through the
// library's case reader (a dict as TOML text, --set overrides, arrays as
// io::FieldArrays); a Simulation is the library's Simulation, its state
// copied to and from numpy on request; run() is run_case. No numerics here:
// python/shallows/ wraps this module with type hints, docstrings and xarray.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <dlfcn.h>
#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <filesystem>
#include <locale>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/io/ensemble.hpp"
#include "shallows/io/gmsh.hpp"
#include "shallows/io/output.hpp"
#include "shallows/mesh/unstructured/ordering.hpp"
#include "shallows/physics/scalar_transport.hpp"
#include "shallows/solver/backend.hpp"
#include "shallows/solver/capabilities.hpp"
#include "shallows/solver/ensemble_statistics.hpp"
#include "shallows/solver/run.hpp"
#include "shallows/solver/run_ensemble.hpp"
#include "shallows/solver/simulation.hpp"

namespace py = pybind11;
namespace fs = std::filesystem;
using namespace shallows;

namespace {

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

// A run that a signal stopped (RunSummary::stopped_by) as Python's KeyboardInterrupt.
void raise_if_stopped(int stopped_by) {
  if (stopped_by == 0) return;
  PyErr_SetNone(PyExc_KeyboardInterrupt);
  throw py::error_already_set();
}

// ---------------------------------------------------------------- Python values as TOML

std::string text_of(const py::handle& v) { return py::str(py::repr(v)).cast<std::string>(); }

bool is_ndarray(const py::handle& v) {
  return py::isinstance<py::array>(v) && py::reinterpret_borrow<py::array>(v).ndim() > 0;
}

toml::table to_toml_table(const py::dict& d, const std::string& prefix, io::FieldArrays& arrays);

// A Python value as TOML, appended to `out`; a numpy array (one value per
// cell) goes to `arrays` under its dotted key instead (returns false).
bool to_toml(const py::handle& v, const std::string& key, io::FieldArrays& arrays, toml::array& out) {
  const py::module_ np = py::module_::import("numpy");
  if (py::isinstance<py::bool_>(v) || py::isinstance(v, np.attr("bool_"))) {
    out.push_back(v.cast<bool>());
  } else if (py::isinstance<py::int_>(v) || py::isinstance(v, np.attr("integer"))) {
    out.push_back(v.cast<std::int64_t>());
  } else if (py::isinstance<py::float_>(v) || py::isinstance(v, np.attr("floating"))) {
    out.push_back(v.cast<double>());
  } else if (py::isinstance<py::str>(v)) {
    out.push_back(v.cast<std::string>());
  } else if (py::hasattr(v, "__fspath__")) {
    out.push_back(py::module_::import("os").attr("fspath")(v).cast<std::string>());
  } else if (py::isinstance<py::dict>(v)) {
    out.push_back(to_toml_table(v.cast<py::dict>(), key, arrays));
  } else if (is_ndarray(v)) {
    const Array a = Array::ensure(v);
    if (!a) throw py::type_error(key + ": the array must hold numbers");
    arrays[key] = std::vector<double>(a.data(), a.data() + a.size());
    return false;
  } else if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    toml::array items;
    std::size_t k = 0;
    for (const auto& item : v) {
      const std::string at = key + "[" + std::to_string(k++) + "]";
      if (is_ndarray(item)) throw py::type_error(at + ": values per cell go at a field's key, not in a list");
      to_toml(item, at, arrays, items);
    }
    out.push_back(std::move(items));
  } else {
    throw py::type_error(key + ": cannot be given as " + text_of(py::type::of(v)) +
                         " (numbers, strings, booleans, lists, dicts, numpy arrays)");
  }
  return true;
}

// The value to_toml appended to a one-element array, into table t at name.
void insert_single(toml::table& t, const std::string& name, toml::array& single) {
  single.get(0)->visit([&](auto& node) { t.insert_or_assign(name, std::move(node)); });
}

toml::table to_toml_table(const py::dict& d, const std::string& prefix, io::FieldArrays& arrays) {
  toml::table t;
  for (const auto& [k, v] : d) {
    if (!py::isinstance<py::str>(k))
      throw py::type_error((prefix.empty() ? std::string("case") : prefix) + ": keys must be strings, found " +
                           text_of(k));
    const std::string name = k.cast<std::string>();
    toml::array single;
    if (to_toml(v, prefix.empty() ? name : prefix + "." + name, arrays, single)) insert_single(t, name, single);
  }
  return t;
}

// A Python value as --set writes it: a string as it is (a TOML value, or
// else a plain string), anything else as its TOML text.
std::string set_text(const py::handle& v, const std::string& key) {
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  // Python's repr of a float is the shortest text that reads back to it (0.03, not 0.029999999999999999).
  if (py::isinstance<py::float_>(v)) return text_of(py::float_(v.cast<double>()));
  io::FieldArrays arrays;
  toml::array single;
  to_toml(v, key, arrays, single);
  if (!arrays.empty()) throw py::type_error(key + ": values per cell go as a whole array, not inside a list");
  toml::table t;
  insert_single(t, "v", single);
  std::ostringstream os;
  os << toml::toml_formatter(t);
  const std::string s = os.str();
  const auto b = s.find_first_not_of(' ', s.find('=') + 1);
  const auto e = s.find_last_not_of(" \n");
  return s.substr(b, e - b + 1);
}

// ---------------------------------------------------------------- Case

// Mesh fields go to and come from Python in the mesh file's element order, whatever mesh.ordering renumbers
// (the run's cells are not the user's): the run's cell c is the file's element file_cell(p, c).
bool renumbered(const Problem& p) { return p.on_mesh() && !p.mesh->cell_file_index.empty(); }

std::size_t file_cell(const Problem& p, std::size_t c) {
  return renumbered(p) ? static_cast<std::size_t>(p.mesh->cell_file_index[c]) : c;
}

// Values per cell of the run (grids: row-major) in the order Python gives them, and back.
std::vector<double> to_file_order(const Problem& p, std::vector<double> v) {
  return p.on_mesh() ? to_file_order(*p.mesh, v) : v;
}
std::vector<double> to_run_order(const Problem& p, std::vector<double> v) {
  return p.on_mesh() ? from_file_order(*p.mesh, v) : v;
}

// Grid fields as (ny, nx), row 0 the southern row; mesh fields as (cells,) in the file's element order.
// values: per cell of the run.
py::array_t<double> field_array(const Problem& p, std::vector<double> values) {
  values = to_file_order(p, std::move(values));
  auto* owned = new std::vector<double>(std::move(values));
  py::capsule free(owned, [](void* v) { delete static_cast<std::vector<double>*>(v); });
  if (p.on_mesh()) return py::array_t<double>({static_cast<py::ssize_t>(owned->size())}, owned->data(), free);
  return py::array_t<double>({static_cast<py::ssize_t>(p.grid.ny), static_cast<py::ssize_t>(p.grid.nx)},
                             owned->data(), free);
}

// The values of an array for a field of problem p, checked for its shape, as given (a mesh's in its file's order).
std::vector<double> field_values(const Problem& p, const py::handle& v, const std::string& key) {
  const Array a = Array::ensure(v);
  if (!a) throw py::type_error(key + ": expected an array of numbers, found " + text_of(py::type::of(v)));
  const auto shape = [&] {
    std::string s = "(";
    for (py::ssize_t d = 0; d < a.ndim(); ++d) s += (d ? ", " : "") + std::to_string(a.shape(d));
    return s + (a.ndim() == 1 ? ",)" : ")");
  }();
  if (p.on_mesh()) {
    if (a.ndim() != 1 || a.shape(0) != p.cells())
      throw py::value_error(key + ": the mesh has " + std::to_string(p.cells()) + " cells: expected shape (" +
                            std::to_string(p.cells()) + ",), found " + shape);
  } else if (a.ndim() != 2 || a.shape(0) != p.grid.ny || a.shape(1) != p.grid.nx) {
    throw py::value_error(key + ": the grid has ny x nx = " + std::to_string(p.grid.ny) + " x " +
                          std::to_string(p.grid.nx) + " cells: expected shape (" + std::to_string(p.grid.ny) + ", " +
                          std::to_string(p.grid.nx) + "), row 0 the southern row, found " + shape);
  }
  return std::vector<double>(a.data(), a.data() + a.size());
}

// A case as its TOML (a file or a dict), the overrides and arrays set on it,
// read again by the library's case reader at every change.
class PyCase {
 public:
  static PyCase from_toml(const fs::path& file) {
    PyCase c;
    c.file_ = file;
    c.read();
    return c;
  }
  static PyCase from_dict(const py::dict& d, const fs::path& base_dir) {
    PyCase c;
    const toml::table t = to_toml_table(d, "", c.arrays_);
    std::ostringstream os;
    os << toml::toml_formatter(t);
    c.text_ = os.str();
    c.base_dir_ = base_dir;
    c.read();
    return c;
  }

  // key = value as --set; an array: values per cell for a field key.
  void set(const std::string& key, const py::handle& value) {
    PyCase before = *this;
    try {
      if (is_ndarray(value)) {
        if (key.empty() || key.find('=') != std::string::npos) throw py::value_error("'" + key + "' is no key");
        arrays_[key] = field_values(c_.problem, value, key);
        // The latest word on a key wins, as with --set given twice.
        std::erase_if(overrides_, [&](const std::string& o) { return o.substr(0, o.find('=')) == key; });
      } else {
        overrides_.push_back(key + "=" + set_text(value, key));
        arrays_.erase(key);
      }
      read();
    } catch (...) {
      *this = std::move(before);  // the case stays as it was
      throw;
    }
  }

  void set_output_dir(const fs::path& dir) {
    output_dir_ = dir;
    c_.output.dir = dir;
  }

  const io::Case& get() const { return c_; }
  const std::vector<std::string>& overrides() const { return overrides_; }
  const io::FieldArrays& arrays() const { return arrays_; }

  // What the case is read from, for an ensemble's members (run_ensemble).
  EnsembleCase source() const {
    EnsembleCase s;
    if (file_) s.file = *file_;
    s.text = text_;
    s.source_name = "<dict>";
    s.base_dir = base_dir_;
    s.arrays = arrays_;
    return s;
  }
  // The case's TOML text (a file's as it is) and its name in messages.
  std::string source_text() const { return file_ ? c_.text : text_; }
  std::string source_name() const { return file_ ? file_->string() : "<dict>"; }
  std::vector<std::string> array_keys() const {
    std::vector<std::string> keys;
    for (const auto& kv : arrays_) keys.push_back(kv.first);
    return keys;
  }

 private:
  void read() {
    c_ = file_ ? io::load_case(*file_, overrides_, arrays_)
               : io::parse_case(text_, "<dict>", base_dir_, overrides_, arrays_);
    if (output_dir_) c_.output.dir = *output_dir_;
  }

  std::optional<fs::path> file_;
  std::string text_;
  fs::path base_dir_ = ".";
  std::vector<std::string> overrides_;
  io::FieldArrays arrays_;
  std::optional<fs::path> output_dir_;
  io::Case c_;
};

// ---------------------------------------------------------------- Simulation

class PySimulation {
 public:
  PySimulation(const PyCase& c, const std::string& backend, int threads)
      : case_(c.get()) {
    options_.kind = backend;
    options_.threads = threads;
    options_.track_maxima = true;
    options_.arrival_threshold = case_.output.arrival_threshold;
    if (backend != "cpu" && backend != "cuda" && backend != "auto")
      throw py::value_error("backend: '" + backend + "' is none of cpu, cuda, auto");
    if (threads < 0) throw py::value_error("threads: must be >= 0 (0: all cores), found " + std::to_string(threads));
    py::gil_scoped_release release;
    sim_ = std::make_unique<Simulation>(case_.problem, options_);
  }

  // Advances to time t exactly; Ctrl-C between batches of steps stops it,
  // at a step's end, with KeyboardInterrupt.
  void advance(double t) {
    if (!std::isfinite(t)) throw py::value_error("advance: t must be finite");
    if (t < sim_->time())
      throw py::value_error("advance: t = " + std::to_string(t) + " s is before the simulation's time " +
                            std::to_string(sim_->time()) + " s");
    bool interrupted = false;
    {
      py::gil_scoped_release release;
      sim_->advance_until(t, [&](double, double) {
        py::gil_scoped_acquire acquire;
        interrupted = PyErr_CheckSignals() != 0;
        return interrupted;
      });
    }
    if (interrupted) throw py::error_already_set();
  }

  void step(int n) {
    if (n < 1) throw py::value_error("step: n must be >= 1, found " + std::to_string(n));
    py::gil_scoped_release release;
    sim_->advance_steps(n);
  }

  py::dict run(const std::optional<py::function>& progress, bool quiet) {
    RunOptions options;
    options.backend = options_;
    options.quiet = quiet;
    options.progress = false;
    if (progress) {
      options.on_batch = [&progress](double t, double dt) {
        py::gil_scoped_acquire acquire;
        (*progress)(t, dt);
      };
    }
    RunSummary s;
    {
      py::gil_scoped_release release;
      s = run_case(case_, options, *sim_);
    }
    raise_if_stopped(s.stopped_by);
    py::dict d;
    d["case"] = s.case_name;
    d["backend"] = s.backend;
    d["precision"] = s.precision;
    d["cells"] = s.cells;
    d["steps"] = s.steps;
    d["t_end"] = s.t_end;
    d["wall_seconds"] = s.wall_seconds;
    d["stepping_seconds"] = s.stepping_seconds;
    d["cell_updates_per_second"] = s.cell_updates_per_second;
    d["initial_volume"] = s.initial_volume;
    d["final_volume"] = s.final_volume;
    d["relative_mass_change"] = s.relative_mass_change;
    d["mass_balance_ok"] = s.mass_balance.ok;
    d["output_dir"] = case_.output.dir;
    return d;
  }

  Fields state() const {
    py::gil_scoped_release release;
    return sim_->state();
  }

  py::array_t<double> field(const std::string& name) const {
    const Problem& p = case_.problem;
    const auto alone = [&](StateField which) {  // one field out of the backend, not the whole state
      py::gil_scoped_release release;
      return sim_->field(which);
    };
    if (name == "h") return field_array(p, alone(StateField::h));
    if (name == "hu") return field_array(p, alone(StateField::hu));
    if (name == "hv") return field_array(p, alone(StateField::hv));
    if (name == "eta") {
      // The free surface h + z: the bed in dry cells, NaN in inactive ones.
      std::vector<double> eta = alone(StateField::h);
      for (std::size_t k = 0; k < eta.size(); ++k) eta[k] += p.z[k];
      return field_array(p, std::move(eta));
    }
    Fields f = state();
    for (std::size_t s = 0; s < p.scalars.size(); ++s) {
      if (p.scalars[s].name != name) continue;
      std::vector<double> c(f.h.size());
      for (std::size_t k = 0; k < c.size(); ++k) c[k] = concentration(f.hc[s][k], f.h[k]);
      return field_array(p, std::move(c));
    }
    throw py::key_error("no field '" + name + "' (h, hu, hv, eta" + scalar_names() + ")");
  }

  // Writes a field of the state between steps (Backend::load_state).
  void set_field(const std::string& name, const py::handle& value) {
    const Problem& p = case_.problem;
    Fields f = state();
    std::vector<double> v = to_run_order(p, field_values(p, value, name));
    if (name == "h") {
      f.h = std::move(v);
    } else if (name == "hu") {
      f.hu = std::move(v);
    } else if (name == "hv") {
      f.hv = std::move(v);
    } else if (name == "eta") {
      for (std::size_t k = 0; k < v.size(); ++k)
        f.h[k] = std::isnan(p.z[k]) ? 0.0 : std::max(0.0, v[k] - p.z[k]);
    } else {
      throw py::key_error("cannot set '" + name + "' (h, hu, hv, eta)");
    }
    for (std::size_t k = 0; k < f.h.size(); ++k)
      if (!std::isfinite(f.h[k]) || f.h[k] < 0 || !std::isfinite(f.hu[k]) || !std::isfinite(f.hv[k]))
        if (!std::isnan(p.z[k]))
          throw py::value_error(name + ": cell " + std::to_string(file_cell(p, k)) + " would hold h = " +
                                std::to_string(f.h[k]) + ", hu = " + std::to_string(f.hu[k]) + ", hv = " + std::to_string(f.hv[k]) +
                                " (depths finite and >= 0, discharges finite)");
    py::gil_scoped_release release;
    sim_->backend().load_state(f);
  }

  // Writes the bed between steps (a breach, a dredged channel). The backend is built again on the new bed, so
  // that whatever an executor derives from the bed (slopes, wet/dry tests, blocks) is derived anew, and the
  // moment is put back as a restart puts it (time, steps, state, maxima, forcing). The depths stay, so the
  // volume does and the surface moves with the bed. The active cells stay those of the case.
  void set_bed(const py::handle& value) {
    Problem p = case_.problem;
    std::vector<double> z = to_run_order(p, field_values(p, value, "z"));
    for (std::size_t k = 0; k < z.size(); ++k) {
      if (std::isnan(p.z[k]) != std::isnan(z[k]) || std::isinf(z[k]))
        throw py::value_error("z: cell " + std::to_string(file_cell(p, k)) + " is " +
                              (std::isnan(p.z[k]) ? "inactive (NaN in the case's bed) and must stay NaN"
                                                  : "active and needs a finite bed") +
                              ", found " + std::to_string(z[k]));
    }
    const double t = sim_->time();
    const index_t steps = sim_->steps();
    const Fields f = state();
    Maxima m;
    ForcingState forcing;
    {
      py::gil_scoped_release release;
      m = sim_->maxima();
      sim_->backend().read_forcing_state(forcing);
    }
    p.z = std::move(z);
    {
      py::gil_scoped_release release;
      auto rebuilt = std::make_unique<Simulation>(p, options_);
      rebuilt->restore(t, steps, f, m);
      rebuilt->backend().load_forcing_state(forcing);
      sim_ = std::move(rebuilt);
    }
    case_.problem.z = std::move(p.z);
  }

  py::array_t<double> maximum(const std::string& name) const {
    Maxima m;
    {
      py::gil_scoped_release release;
      m = sim_->maxima();
    }
    const Problem& p = case_.problem;
    if (name == "max_h") return field_array(p, std::move(m.max_h));
    if (name == "max_speed") return field_array(p, std::move(m.max_speed));
    return field_array(p, std::move(m.arrival_time));
  }

  // The state in each gauge's cell (output.gauges), read alone (Backend::read_cells).
  py::dict gauges() {
    if (!gauge_cells_) gauge_cells_ = io::gauge_cells(case_.problem, case_.output);
    Fields f;
    {
      py::gil_scoped_release release;
      f = sim_->backend().read_cells(*gauge_cells_);
    }
    py::dict out;
    const auto& gauges = case_.output.gauges;
    for (std::size_t g = 0; g < gauges.size(); ++g) {
      const std::size_t k = (*gauge_cells_)[g];
      py::dict d;
      d["x"] = gauges[g].x;
      d["y"] = gauges[g].y;
      d["cell"] = file_cell(case_.problem, k);
      d["h"] = f.h[g];
      d["hu"] = f.hu[g];
      d["hv"] = f.hv[g];
      d["eta"] = f.h[g] + case_.problem.z[k];
      out[py::str(gauges[g].name)] = d;
    }
    return out;
  }

  py::array_t<double> bed() const { return field_array(case_.problem, case_.problem.z); }
  double time() const { return sim_->time(); }
  double dt() const { return sim_->last_dt(); }
  long long steps() const { return static_cast<long long>(sim_->steps()); }
  double volume() const { return sim_->volume(); }
  std::string backend_name() const { return sim_->backend().name(); }
  const io::Case& get_case() const { return case_; }

  std::string scalar_names() const {
    std::string s;
    for (const PassiveScalar& sc : case_.problem.scalars) s += ", " + sc.name;
    return s;
  }

 private:
  io::Case case_;
  BackendOptions options_;
  std::unique_ptr<Simulation> sim_;
  std::optional<std::vector<std::size_t>> gauge_cells_;  // found at the first gauges()
};

// Cell centres (x, y) of a case: 1-D coordinates on a grid, per cell on a mesh.
py::tuple centres(const io::Case& c) {
  const Problem& p = c.problem;
  std::vector<double> x, y;
  if (p.on_mesh()) {
    x = to_file_order(p, p.mesh->cell_x);
    y = to_file_order(p, p.mesh->cell_y);
  } else {
    for (index_t i = 0; i < p.grid.nx; ++i) x.push_back(p.grid.x_center(i));
    for (index_t j = 0; j < p.grid.ny; ++j) y.push_back(p.grid.y_center(j));
  }
  return py::make_tuple(py::array_t<double>(static_cast<py::ssize_t>(x.size()), x.data()),
                        py::array_t<double>(static_cast<py::ssize_t>(y.size()), y.data()));
}

py::dict case_info(const io::Case& c) {
  const Problem& p = c.problem;
  py::dict d;
  d["name"] = c.name;
  d["source"] = c.source;
  d["on_mesh"] = p.on_mesh();
  d["cells"] = p.cells();
  d["nx"] = p.on_mesh() ? 0 : p.grid.nx;
  d["ny"] = p.on_mesh() ? 0 : p.grid.ny;
  d["dx"] = p.on_mesh() ? 0.0 : p.grid.dx;
  d["dy"] = p.on_mesh() ? 0.0 : p.grid.dy;
  d["t_end"] = p.t_end;
  d["output_times"] = p.output_times;
  d["precision"] = p.precision == Precision::single_precision ? "float" : "double";
  d["scheme"] = p.scheme == Scheme::roe3 ? "roe3" : "roe1";
  d["output_dir"] = c.output.dir;
  d["arrival_threshold"] = c.output.arrival_threshold;
  d["crs_wkt"] = c.output.crs_wkt;
  std::vector<std::string> scalars;
  for (const PassiveScalar& s : p.scalars) scalars.push_back(s.name);
  d["scalars"] = scalars;
  d["notes"] = c.notes;
  return d;
}

// A mesh from arrays as a Gmsh file (the library's writer), for a case's [mesh] file: nodes (n, 2) or (n, 3)
// with z, cells (m, 3) or (m, 4) of node indices (-1 in the 4th column: a triangle), boundary groups by name as
// (k, 2) node index pairs.
void write_mesh(const fs::path& file, const py::handle& nodes_in, const py::handle& cells_in,
                const std::map<std::string, py::object>& boundaries, bool binary) {
  using Index = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;
  const Array nodes = Array::ensure(nodes_in);
  if (!nodes || nodes.ndim() != 2 || (nodes.shape(1) != 2 && nodes.shape(1) != 3))
    throw py::value_error("nodes: expected an array of shape (n, 2) or (n, 3): x, y and, optionally, z");
  const Index cells = Index::ensure(cells_in);
  if (!cells || cells.ndim() != 2 || (cells.shape(1) != 3 && cells.shape(1) != 4))
    throw py::value_error("cells: expected an array of shape (m, 3) or (m, 4) of node indices");
  io::GmshMesh g;
  const py::ssize_t n = nodes.shape(0), columns = nodes.shape(1);
  for (py::ssize_t k = 0; k < n; ++k) {
    g.node_x.push_back(nodes.at(k, 0));
    g.node_y.push_back(nodes.at(k, 1));
    if (columns == 3) g.node_z.push_back(nodes.at(k, 2));
  }
  const auto node = [&](std::int64_t v, const std::string& what) {
    if (v < 0 || v >= n)
      throw py::value_error(what + ": node index " + std::to_string(v) + " is not in [0, " + std::to_string(n) + ")");
    return v;
  };
  for (py::ssize_t c = 0; c < cells.shape(0); ++c) {
    std::array<std::int64_t, 4> ids{-1, -1, -1, -1};
    for (py::ssize_t j = 0; j < cells.shape(1); ++j) {
      const std::int64_t v = cells.at(c, j);
      ids[j] = (j == 3 && v == -1) ? -1 : node(v, "cells[" + std::to_string(c) + "]");
    }
    g.cell_nodes.push_back(ids);
  }
  int tag = 0;
  for (const auto& [name, edges_in] : boundaries) {
    const Index edges = Index::ensure(edges_in);
    if (!edges || edges.ndim() != 2 || edges.shape(1) != 2)
      throw py::value_error("boundaries['" + name + "']: expected an array of shape (k, 2) of node index pairs");
    g.line_physical_names[++tag] = name;
    for (py::ssize_t e = 0; e < edges.shape(0); ++e) {
      const std::string what = "boundaries['" + name + "'][" + std::to_string(e) + "]";
      g.line_nodes.push_back({node(edges.at(e, 0), what), node(edges.at(e, 1), what)});
      g.line_physical.push_back(tag);
    }
  }
  write_gmsh(file, g, binary);
}

// An ensemble as `shallows run case.toml` runs it (solver/run_ensemble.hpp); the GIL released while it runs.
py::dict run_ensemble_py(const std::filesystem::path& file, const std::vector<std::string>& sets,
                         const std::filesystem::path& output, int jobs, int threads, const std::string& backend,
                         bool quiet) {
  const io::Ensemble ensemble = io::load_ensemble(file);
  if (ensemble.empty()) throw io::InputError(file.string() + ": no [ensemble] section (docs/ensembles.md)");
  EnsembleOptions options;
  options.run.backend.kind = backend;
  options.run.backend.threads = threads;
  options.sets = sets;
  options.output_dir = output;
  options.jobs = jobs;
  options.quiet = quiet;
  options.progress = !quiet;
  EnsembleSummary s;
  {
    py::gil_scoped_release release;
    s = run_ensemble(file, ensemble, options);
  }
  raise_if_stopped(s.stopped_by);
  py::dict d;
  d["members"] = s.members;
  d["ran"] = s.ran;
  d["skipped"] = s.skipped;
  d["failed"] = s.failed;
  return d;
}

// ---------------------------------------------------------------- Ensemble

// Values per member as a numpy array.
py::array_t<double> per_member(const std::vector<double>& v) {
  return py::array_t<double>(static_cast<py::ssize_t>(v.size()), v.data());
}

// Fields of every member, (members, ...) with each member's field as field_array shapes it.
py::array_t<double> members_fields(const Problem& p, const std::vector<std::vector<double>>& fields) {
  const auto n = static_cast<std::size_t>(p.cells());
  std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(fields.size())};
  if (p.on_mesh()) shape.push_back(static_cast<py::ssize_t>(n));
  else shape.insert(shape.end(), {static_cast<py::ssize_t>(p.grid.ny), static_cast<py::ssize_t>(p.grid.nx)});
  py::array_t<double> out(shape);
  double* d = out.mutable_data();
  for (std::size_t m = 0; m < fields.size(); ++m) {
    const std::vector<double> v = fields[m].size() == n ? to_file_order(p, fields[m]) : std::vector<double>(n, NAN);
    std::copy(v.begin(), v.end(), d + m * n);
  }
  return out;
}

// An ensemble of a Python case: its members written as the case's [ensemble] table and read by the library's
// reader (read_ensemble: keys checked as --set checks them, errors naming the member), run by run_ensemble as
// `shallows run case.toml` runs them, the members' results kept in memory.
class PyEnsemble {
 public:
  // table: the [ensemble] section as a dict (members, thresholds, percentiles); none: the case's own.
  // arrays: per member, {key: numpy array} of fields given per cell, checked as Case.set checks them; the
  // member's key in `table` holds io::array_placeholder.
  PyEnsemble(const PyCase& c, const std::optional<py::dict>& table, const std::optional<py::list>& arrays)
      : case_(c) {
    toml::table root;
    const std::string text = c.source_text(), name = c.source_name();
    try {
      root = toml::parse(text, name);
    } catch (const toml::parse_error& e) {
      throw io::InputError(name + ": TOML syntax error: " + std::string(e.description()));
    }
    if (table) {
      io::FieldArrays in_table;
      toml::table t = to_toml_table(*table, "ensemble", in_table);
      if (!in_table.empty())
        throw py::type_error(in_table.begin()->first + ": a member's value is one value (a number, a string, ...), " +
                             "not an array per cell");
      // Thresholds or percentiles alone change those of the case's own members.
      if (!t.contains("members") && !t.contains("product") && !t.contains("sample")) {
        const toml::table* own = root.get_as<toml::table>("ensemble");
        if (!own) throw io::InputError(name + ": no [ensemble] section: give the members (docs/python.md#ensembles)");
        toml::table merged = *own;
        for (auto&& [k, v] : t) v.visit([&, &key = k](auto& node) { merged.insert_or_assign(key.str(), node); });
        t = std::move(merged);
      }
      root.insert_or_assign("ensemble", std::move(t));
    } else if (!root.contains("ensemble")) {
      throw io::InputError(name + ": no [ensemble] section: give the members (docs/python.md#ensembles)");
    }
    std::ostringstream os;
    os << toml::toml_formatter(root);
    ensemble_ = io::read_ensemble(os.str(), name);
    if (arrays) {
      if (arrays->size() != ensemble_.members.size())
        throw py::value_error("arrays: " + std::to_string(arrays->size()) + " members, the table " +
                              std::to_string(ensemble_.members.size()));
      member_arrays_.resize(arrays->size());
      for (std::size_t m = 0; m < arrays->size(); ++m)
        for (const auto& [k, v] : (*arrays)[m].cast<py::dict>()) {
          const std::string key = k.cast<std::string>();
          member_arrays_[m][key] = field_values(c.get().problem, v, "members[" + std::to_string(m) + "]: " + key);
        }
    }
    // An array on the case takes the place of its key's value, whatever a member sets but an array of its own.
    for (std::size_t m = 0; m < ensemble_.members.size(); ++m)
      for (const io::EnsembleValue& v : ensemble_.members[m].values)
        if (c.arrays().count(v.key) && (m >= member_arrays_.size() || !member_arrays_[m].count(v.key)))
          throw io::InputError(name + ": [ensemble]: '" + v.key +
                               "' is given to the case as an array, which members can vary only by arrays of their "
                               "own: set it on the case as a number or an expression, or give the members arrays");
  }

  py::dict run(const fs::path& output, int jobs, int threads, const std::string& backend, bool quiet) {
    if (jobs < 1) throw py::value_error("jobs: must be >= 1, found " + std::to_string(jobs));
    if (threads < 0) throw py::value_error("threads: must be >= 0 (0: all cores), found " + std::to_string(threads));
    if (backend != "cpu" && backend != "cuda" && backend != "auto")
      throw py::value_error("backend: '" + backend + "' is none of cpu, cuda, auto");
    EnsembleOptions options;
    options.run.backend.kind = backend == "auto" ? (cuda_available() ? "cuda" : "cpu") : backend;
    options.run.backend.threads = threads;
    options.sets = case_.overrides();
    options.output_dir = output.empty() ? case_.get().output.dir : output;
    options.jobs = jobs;
    options.quiet = quiet;
    options.progress = !quiet;
    std::vector<io::MemberReport> reports;
    options.reports = &reports;
    EnsembleCase source = case_.source();
    source.member_arrays = member_arrays_;
    EnsembleSummary s;
    {
      py::gil_scoped_release release;
      s = run_ensemble(source, ensemble_, options);
    }
    raise_if_stopped(s.stopped_by);
    reports_ = std::move(reports);
    output_dir_ = options.output_dir;
    py::dict d;
    d["members"] = s.members;
    d["ran"] = s.ran;
    d["skipped"] = s.skipped;
    d["failed"] = s.failed;
    d["output_dir"] = output_dir_;
    return d;
  }

  // The members' values: {key: [value per member]} (a number as a float, NaN where a member leaves the case's
  // value; other values as their text, "" where left), with "weight".
  py::dict members() const {
    py::dict d;
    for (const std::string& key : ensemble_.keys) {
      bool numbers = true;
      for (const io::EnsembleMember& m : ensemble_.members)
        if (const io::EnsembleValue* v = m.find(key); v && !v->number) numbers = false;
      py::list column;
      for (const io::EnsembleMember& m : ensemble_.members) {
        const io::EnsembleValue* v = m.find(key);
        if (numbers) column.append(v ? *v->number : NAN);
        else column.append(v ? v->text() : std::string());
      }
      d[py::str(key)] = column;
    }
    std::vector<double> weights;
    for (const io::EnsembleMember& m : ensemble_.members) weights.push_back(m.weight);
    d["weight"] = weights;
    return d;
  }

  // Member m's overrides, "key=value" as --set takes them.
  std::vector<std::string> overrides(std::size_t m) const {
    if (m >= ensemble_.members.size())
      throw py::index_error("member " + std::to_string(m) + ": the ensemble has " +
                            std::to_string(ensemble_.members.size()) + " members");
    return ensemble_.members[m].overrides();
  }

  // The results of the last run(): the members' maxima (file order on a mesh), outcome and water account, and
  // the statistics over the members that ran (ensemble_statistics, as ensemble.nc holds them).
  py::dict results() const {
    if (!reports_) throw py::value_error("the ensemble has not run: call run() first");
    const Problem& p = case_.get().problem;
    const std::size_t n = reports_->size();
    std::vector<std::vector<double>> max_h(n), max_speed(n), arrival(n);
    std::vector<double> initial(n, NAN), final_volume(n, NAN), residual(n, NAN), wall(n, NAN), steps(n, NAN);
    std::vector<bool> ok(n);
    std::vector<std::string> message(n);
    std::vector<const Maxima*> ran;
    std::vector<double> weights;
    for (std::size_t m = 0; m < n; ++m) {
      const io::MemberReport& r = (*reports_)[m];
      ok[m] = r.ok;
      message[m] = r.message;
      if (!r.ok) continue;
      max_h[m] = r.result.maxima.max_h;
      max_speed[m] = r.result.maxima.max_speed;
      arrival[m] = r.result.maxima.arrival_time;
      initial[m] = r.result.initial_volume;
      final_volume[m] = r.result.final_volume;
      residual[m] = r.result.mass_balance_residual;
      wall[m] = r.result.wall_seconds;
      steps[m] = static_cast<double>(r.result.steps);
      ran.push_back(&r.result.maxima);
      weights.push_back(ensemble_.members[m].weight);
    }
    py::dict d;
    d["max_h"] = members_fields(p, max_h);
    d["max_speed"] = members_fields(p, max_speed);
    d["arrival_time"] = members_fields(p, arrival);
    d["ok"] = ok;
    d["message"] = message;
    d["initial_volume"] = per_member(initial);
    d["final_volume"] = per_member(final_volume);
    d["mass_balance_residual"] = per_member(residual);
    d["wall_seconds"] = per_member(wall);
    d["steps"] = per_member(steps);
    d["thresholds"] = ensemble_.thresholds;
    d["percentiles"] = ensemble_.percentiles;
    if (ran.empty()) return d;
    const EnsembleStatistics st =
        ensemble_statistics(ran, weights, ensemble_.thresholds, ensemble_.percentiles);
    // Statistics per threshold or percentile, each a field: (k, ...) as members_fields shapes them.
    const auto per = [&](const std::vector<double>& v) {
      const std::size_t cells = st.cells;
      std::vector<std::vector<double>> rows;
      for (std::size_t k = 0; cells > 0 && k < v.size() / cells; ++k)
        rows.emplace_back(v.begin() + static_cast<std::ptrdiff_t>(k * cells),
                          v.begin() + static_cast<std::ptrdiff_t>((k + 1) * cells));
      return members_fields(p, rows);
    };
    d["exceedance"] = per(st.exceedance);
    d["max_h_mean"] = field_array(p, st.depth_mean);
    d["max_h_min"] = field_array(p, st.depth_min);
    d["max_h_max"] = field_array(p, st.depth_max);
    d["max_h_percentile"] = per(st.depth_percentile);
    d["max_speed_mean"] = field_array(p, st.speed_mean);
    d["max_speed_min"] = field_array(p, st.speed_min);
    d["max_speed_max"] = field_array(p, st.speed_max);
    d["max_speed_percentile"] = per(st.speed_percentile);
    d["arrival_time_earliest"] = field_array(p, st.arrival_earliest);
    d["arrival_time_median"] = field_array(p, st.arrival_median);
    return d;
  }

  std::size_t size() const { return ensemble_.members.size(); }
  const io::Ensemble& get() const { return ensemble_; }
  const PyCase& get_case() const { return case_; }
  fs::path output_dir() const { return output_dir_; }

 private:
  PyCase case_;
  io::Ensemble ensemble_;
  std::vector<io::FieldArrays> member_arrays_;
  std::optional<std::vector<io::MemberReport>> reports_;
  fs::path output_dir_;
};

// Whether libstdc++ is the shared library rather than a copy inside this
// module. A compiler whose lib folder holds libstdc++.a alone links a copy
// in, while toml++ and muParser, shared libraries, take the system's: the two
// copies number their locale facets apart, and the first number toml++
// formats calls the wrong facet and crashes the interpreter.
bool shared_libstdcxx() {
  Dl_info mine{}, lib{};
  if (dladdr(reinterpret_cast<void*>(&shared_libstdcxx), &mine) == 0 ||
      dladdr(reinterpret_cast<void*>(&std::locale::classic), &lib) == 0)
    return true;  // cannot tell: assume the usual build
  return mine.dli_fbase != lib.dli_fbase;
}

} // namespace

PYBIND11_MODULE(_shallows, m) {
  if (!shared_libstdcxx())
    throw py::import_error(
        "shallows: this module holds its own copy of libstdc++ (its compiler links the static library), while "
        "toml++ and muParser use the system's, which would crash the interpreter: build again, in a fresh build "
        "folder, with a compiler that links libstdc++.so, for C++ and for CUDA's host code alike, e.g. "
        "CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++ tools/setup.sh");
  m.doc() = "The shallows library in Python (compiled part; use the package `shallows`).";
#if PYBIND11_VERSION_MAJOR == 2 && PYBIND11_VERSION_MINOR < 12
  // pybind11 before 2.12 reads numpy 1's array structures: with numpy 2 its arrays would crash the interpreter.
  const auto numpy_version = py::module_::import("numpy").attr("__version__").cast<std::string>();
  if (numpy_version.rfind("1.", 0) != 0)
    throw py::import_error("shallows: built with pybind11 " + std::to_string(PYBIND11_VERSION_MAJOR) + "." +
                           std::to_string(PYBIND11_VERSION_MINOR) + ", which reads numpy 1's arrays only, and numpy " +
                           numpy_version + " is imported: build the module with pybind11 >= 2.12, or use numpy 1");
#endif
  static py::exception<io::InputError> case_error(m, "CaseError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const io::InputError& e) {
      case_error(e.what());
    } catch (const std::invalid_argument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  py::class_<PyCase>(m, "Case")
      .def_static("from_toml", &PyCase::from_toml, py::arg("path"))
      .def_static("from_dict", &PyCase::from_dict, py::arg("table"), py::arg("base_dir"))
      .def("set", &PyCase::set, py::arg("key"), py::arg("value"))
      .def("set_output_dir", &PyCase::set_output_dir, py::arg("dir"))
      .def("info", [](const PyCase& c) { return case_info(c.get()); })
      .def("centres", [](const PyCase& c) { return centres(c.get()); })
      .def("field",
           [](const PyCase& c, const std::string& name) {
             const Problem& p = c.get().problem;
             if (name == "z") return field_array(p, p.z);
             if (name == "h") return field_array(p, p.h);
             if (name == "hu") return field_array(p, p.hu);
             if (name == "hv") return field_array(p, p.hv);
             throw py::key_error("no initial field '" + name + "' (z, h, hu, hv)");
           })
      .def_property_readonly("text", [](const PyCase& c) { return c.get().text; })
      .def_property_readonly("overrides", &PyCase::overrides)
      .def_property_readonly("array_keys", &PyCase::array_keys)
      .def("copy", [](const PyCase& c) { return PyCase(c); });

  py::class_<PySimulation>(m, "Simulation")
      .def(py::init<const PyCase&, const std::string&, int>(), py::arg("case"), py::arg("backend"), py::arg("threads"))
      .def("advance", &PySimulation::advance, py::arg("t"))
      .def("step", &PySimulation::step, py::arg("n"))
      .def("run", &PySimulation::run, py::arg("progress"), py::arg("quiet"))
      .def("field", &PySimulation::field, py::arg("name"))
      .def("set_field", &PySimulation::set_field, py::arg("name"), py::arg("value"))
      .def("maximum", &PySimulation::maximum, py::arg("name"))
      .def("bed", &PySimulation::bed)
      .def("set_bed", &PySimulation::set_bed, py::arg("z"))
      .def("gauges", &PySimulation::gauges)
      .def("info", [](const PySimulation& s) { return case_info(s.get_case()); })
      .def("centres", [](const PySimulation& s) { return centres(s.get_case()); })
      .def_property_readonly("time", &PySimulation::time)
      .def_property_readonly("dt", &PySimulation::dt)
      .def_property_readonly("steps", &PySimulation::steps)
      .def_property_readonly("volume", &PySimulation::volume)
      .def_property_readonly("backend", &PySimulation::backend_name);

  m.attr("array_placeholder") = std::string(io::array_placeholder);
  py::class_<PyEnsemble>(m, "Ensemble")
      .def(py::init<const PyCase&, const std::optional<py::dict>&, const std::optional<py::list>&>(),
           py::arg("case"), py::arg("table"), py::arg("arrays") = py::none())
      .def("run", &PyEnsemble::run, py::arg("output"), py::arg("jobs"), py::arg("threads"), py::arg("backend"),
           py::arg("quiet"))
      .def("members", &PyEnsemble::members)
      .def("overrides", &PyEnsemble::overrides, py::arg("member"))
      .def("results", &PyEnsemble::results)
      .def("__len__", &PyEnsemble::size)
      .def_property_readonly("form", [](const PyEnsemble& e) { return e.get().form; })
      .def_property_readonly("keys", [](const PyEnsemble& e) { return e.get().keys; })
      .def_property_readonly("thresholds", [](const PyEnsemble& e) { return e.get().thresholds; })
      .def_property_readonly("percentiles", [](const PyEnsemble& e) { return e.get().percentiles; })
      .def_property_readonly("output_dir", [](const PyEnsemble& e) { return e.output_dir().string(); });

  m.def("write_mesh", &write_mesh, py::arg("path"), py::arg("nodes"), py::arg("cells"), py::arg("boundaries"),
        py::arg("binary"));
  m.def("run_ensemble", &run_ensemble_py, py::arg("path"), py::arg("sets"), py::arg("output"), py::arg("jobs"),
        py::arg("threads"), py::arg("backend"), py::arg("quiet"));
  m.def("cuda_available", &cuda_available, "Whether this build has the CUDA backend and a GPU answers.");
  m.def("features", &features_table, "What runs where (Markdown), as `shallows features` prints it.");
  m.def("netcdf_available", [] {
#if defined(SHALLOWS_HAVE_NETCDF)
    return true;
#else
    return false;
#endif
  }, "Whether this build writes NetCDF (output.nc): without it, a case's output.format must not name netcdf.");
  m.attr("__version__") = SHALLOWS_VERSION;
}
