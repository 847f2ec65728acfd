// SPDX-License-Identifier: MIT
// An ensemble's own files (docs/ensembles.md): each member's result
// (members/NNNN.done), ensemble.nc, ensemble.csv and the exceedance maps.
// They are rebuilt from the members' results every time, so that a resumed
// ensemble writes what an uninterrupted one writes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <stdexcept>

#include "netcdf_ugrid.hpp"
#include "output_detail.hpp"
#include "shallows/io/ensemble.hpp"

#if defined(SHALLOWS_HAVE_NETCDF)
#include <netcdf.h>
#endif

namespace shallows::io {

namespace fs = std::filesystem;
using detail::Context;

namespace {

constexpr char result_magic[8] = {'S', 'H', 'E', 'N', 'S', 'M', 'B', '1'};

void put(std::string& out, const void* data, std::size_t bytes) {
  out.append(static_cast<const char*>(data), bytes);
}

Context context_of(const fs::path& dir, const Case& c) {
  Context ctx;
  ctx.settings = c.output;
  ctx.settings.dir = dir;
  ctx.grid = c.problem.grid;
  ctx.mesh = c.problem.mesh;
  ctx.z = c.problem.z;
  ctx.inactive.resize(ctx.z.size());
  for (std::size_t k = 0; k < ctx.z.size(); ++k) ctx.inactive[k] = std::isnan(ctx.z[k]);
  ctx.h_dry = c.problem.physics.h_dry;
  return ctx;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (const char ch : s) {
    if (ch == '"') out += '"';
    out += ch == '\n' ? ' ' : ch;
  }
  return out + "\"";
}

// "%.10g" of a threshold for file names: 0.1 -> "0.1".
std::string threshold_name(double t) { return "exceedance_" + detail::format_number(t) + "m"; }

// A CSV row's next field.
void field(std::string& row, const std::string& value) {
  row += ',';
  row += value;
}

void write_csv(const fs::path& dir, const Context& ctx, const Ensemble& e, const std::vector<MemberReport>& members) {
  const std::vector<std::size_t> gauges = detail::gauge_cells(ctx);
  std::string out = "member";
  for (const std::string& key : e.keys) field(out, csv_field(key));
  out += ",weight,status,initial_volume,final_volume,mass_balance_residual,wall_seconds,steps";
  for (const Gauge& g : ctx.settings.gauges) field(out, csv_field("peak_depth_" + g.name));
  out += '\n';
  for (std::size_t m = 0; m < members.size(); ++m) {
    const MemberReport& r = members[m];
    out += std::to_string(m);
    for (const std::string& key : e.keys) {
      const EnsembleValue* v = e.members[m].find(key);
      field(out, v ? csv_field(v->text()) : std::string());
    }
    field(out, detail::format_number(e.members[m].weight, 17));
    field(out, csv_field(r.ok ? std::string("ok") : std::string("failed: ").append(r.message)));
    if (r.ok) {
      const MemberResult& x = r.result;
      field(out, detail::format_number(x.initial_volume, 17));
      field(out, detail::format_number(x.final_volume, 17));
      const double residual = x.mass_balance_residual;
      field(out, std::isnan(residual) ? std::string() : detail::format_number(residual, 6));
      field(out, detail::format_number(x.wall_seconds, 4));
      field(out, std::to_string(x.steps));
      for (const std::size_t c : gauges) field(out, detail::format_number(x.maxima.max_h[c], 10));
    } else {
      for (std::size_t k = 0; k < 5 + gauges.size(); ++k) out += ',';
    }
    out += '\n';
  }
  detail::write_file_atomic(dir / "ensemble.csv", out);
}

#if defined(SHALLOWS_HAVE_NETCDF)

class EnsembleNetcdf {
 public:
  explicit EnsembleNetcdf(const fs::path& file) : part_(detail::part_path(file)) {
    check(nc_create(part_.c_str(), NC_CLOBBER | NC_64BIT_OFFSET, &id_), "create");
  }
  ~EnsembleNetcdf() {
    if (id_ >= 0) nc_close(id_);
  }
  EnsembleNetcdf(const EnsembleNetcdf&) = delete;
  EnsembleNetcdf& operator=(const EnsembleNetcdf&) = delete;

  void check(int status, const std::string& what) const {
    if (status != NC_NOERR)
      throw std::runtime_error("cannot write " + part_.string() + ": " + what + ": " + nc_strerror(status));
  }
  int dim(const std::string& name, std::size_t n) {
    int d = 0;
    check(nc_def_dim(id_, name.c_str(), n, &d), "define dimension " + name);
    return d;
  }
  int var(const std::string& name, nc_type type, std::vector<int> dims, const std::string& long_name,
          const char* units) {
    int v = 0;
    check(nc_def_var(id_, name.c_str(), type, static_cast<int>(dims.size()), dims.data(), &v), "define " + name);
    text(v, "long_name", long_name);
    if (units) text(v, "units", units);
    if (type == NC_DOUBLE) {
      const double fill = NC_FILL_DOUBLE;
      check(nc_put_att_double(id_, v, "_FillValue", NC_DOUBLE, 1, &fill), name);
    }
    return v;
  }
  void text(int v, const char* name, const std::string& value) {
    check(nc_put_att_text(id_, v, name, value.size(), value.c_str()), name);
  }
  // NaN -> the fill value (inactive cells, never arrived, members that failed).
  void put(int v, const std::vector<double>& values, const char* what) {
    std::vector<double> out(values);
    for (double& x : out)
      if (std::isnan(x)) x = NC_FILL_DOUBLE;
    check(nc_put_var_double(id_, v, out.data()), what);
  }
  void put_text(int v, const std::vector<std::string>& rows, std::size_t width) {
    std::vector<char> out(rows.size() * width, '\0');
    for (std::size_t r = 0; r < rows.size(); ++r) std::memcpy(out.data() + r * width, rows[r].data(), rows[r].size());
    check(nc_put_var_text(id_, v, out.data()), "write text");
  }
  void enddef() { check(nc_enddef(id_), "end definitions"); }
  void commit(const fs::path& file) {
    check(nc_close(id_), "close");
    id_ = -1;
    detail::commit_part(part_, file);
  }

  int id() const { return id_; }

 private:
  fs::path part_;
  int id_ = -1;
};

void write_netcdf(const fs::path& dir, const Context& ctx, const Ensemble& e, const std::vector<MemberReport>& members,
                  const EnsembleStatistics* stats) {
  const fs::path file = dir / "ensemble.nc";
  const std::lock_guard lock(detail::netcdf_mutex());
  EnsembleNetcdf nc(file);
  const std::size_t n = ctx.cells(), nm = members.size();
  const int d_member = nc.dim("member", nm);
  const int d_threshold = nc.dim("threshold", e.thresholds.size());
  const int d_percentile = nc.dim("percentile", e.percentiles.size());
  std::vector<int> space;
  std::optional<detail::UgridMesh> ugrid;  // a mesh's topology, as in output.nc
  if (ctx.mesh) {
    ugrid.emplace(nc.id(), *ctx.mesh, [&nc](int status, const char* what) { nc.check(status, what); });
    space = {ugrid->face_dim()};
  } else {
    space = {nc.dim("y", static_cast<std::size_t>(ctx.grid.ny)), nc.dim("x", static_cast<std::size_t>(ctx.grid.nx))};
  }
  const auto over = [](std::vector<int> first, const std::vector<int>& rest) {
    first.insert(first.end(), rest.begin(), rest.end());
    return first;
  };

  const int v_member = nc.var("member", NC_INT, {d_member}, "member index (members/NNNN)", nullptr);
  const int v_weight = nc.var("weight", NC_DOUBLE, {d_member}, "member weight in the statistics", "1");
  const int v_ok = nc.var("member_ok", NC_INT, {d_member}, "1: the member ran to its end; 0: it failed", nullptr);
  // Each varied key: numbers as doubles, anything else as text.
  struct KeyVar {
    int id;
    bool numeric;
    std::size_t width;
  };
  std::vector<KeyVar> key_vars;
  for (const std::string& key : e.keys) {
    bool numeric = true;
    std::size_t width = 1;
    for (const EnsembleMember& m : e.members)
      if (const EnsembleValue* v = m.find(key)) {
        numeric = numeric && v->number.has_value();
        width = std::max(width, v->text().size());
      }
    if (numeric) {
      key_vars.push_back({nc.var(key, NC_DOUBLE, {d_member}, "the member's " + key + " (fill: the case's)", nullptr),
                          true, 0});
    } else {
      const int d_len = nc.dim(key + "_strlen", width);
      key_vars.push_back({nc.var(key, NC_CHAR, {d_member, d_len}, "the member's " + key + " (empty: the case's)",
                                 nullptr),
                          false, width});
    }
  }
  std::vector<int> v_coord;
  if (ctx.mesh) {
    ugrid->define();
  } else {
    v_coord = {nc.var("y", NC_DOUBLE, {space[0]}, "y coordinate of cell centre", "m"),
               nc.var("x", NC_DOUBLE, {space[1]}, "x coordinate of cell centre", "m")};
  }
  const int v_threshold = nc.var("threshold", NC_DOUBLE, {d_threshold}, "depth of the exceedance maps", "m");
  const int v_percentile = nc.var("percentile", NC_DOUBLE, {d_percentile}, "percentile of the members", "1");
  const int v_max_depth = nc.var("max_depth", NC_DOUBLE, over({d_member}, space),
                                 "maximum water depth over the run of each member (fill: failed)", "m");
  struct StatVar {
    const char* name;
    int dim;  // -1: none
    const std::vector<double> EnsembleStatistics::*field;
    const char* long_name;
    const char* units;
  };
  using S = EnsembleStatistics;
  const StatVar stat_vars[] = {
      {"exceedance", d_threshold, &S::exceedance, "weighted fraction of members whose max depth exceeds threshold",
       "1"},
      {"max_depth_mean", -1, &S::depth_mean, "weighted mean over members of max depth", "m"},
      {"max_depth_min", -1, &S::depth_min, "minimum over members of max depth", "m"},
      {"max_depth_max", -1, &S::depth_max, "maximum over members of max depth", "m"},
      {"max_depth_percentile", d_percentile, &S::depth_percentile,
       "weighted percentile over members of max depth (inverted CDF)", "m"},
      {"max_speed_mean", -1, &S::speed_mean, "weighted mean over members of max speed", "m s-1"},
      {"max_speed_min", -1, &S::speed_min, "minimum over members of max speed", "m s-1"},
      {"max_speed_max", -1, &S::speed_max, "maximum over members of max speed", "m s-1"},
      {"max_speed_percentile", d_percentile, &S::speed_percentile,
       "weighted percentile over members of max speed (inverted CDF)", "m s-1"},
      {"arrival_time_earliest", -1, &S::arrival_earliest, "earliest arrival time of any member (fill: none arrived)",
       "s"},
      {"arrival_time_median", -1, &S::arrival_median,
       "weighted median over members of the arrival time (fill: the median member never arrived)", "s"},
  };
  std::vector<int> v_stats;
  for (const StatVar& s : stat_vars)
    v_stats.push_back(nc.var(s.name, NC_DOUBLE, s.dim < 0 ? space : over({s.dim}, space), s.long_name, s.units));

  std::size_t ok = 0;
  for (const MemberReport& r : members) ok += r.ok ? 1 : 0;
  nc.text(NC_GLOBAL, "title", "shallows ensemble");
  nc.text(NC_GLOBAL, "source", "shallows " SHALLOWS_VERSION);
  if (ugrid) {  // the fields per face
    ugrid->tie(v_max_depth);
    for (const int v : v_stats) ugrid->tie(v);
  }
  nc.text(NC_GLOBAL, "Conventions", ctx.mesh ? "CF-1.8 UGRID-1.0" : "CF-1.8");
  nc.text(NC_GLOBAL, "history", detail::utc_now() + " created by shallows " SHALLOWS_VERSION);
  nc.text(NC_GLOBAL, "ensemble_form", e.form);
  nc.text(NC_GLOBAL, "members_ok", std::to_string(ok) + " of " + std::to_string(nm));
  nc.text(NC_GLOBAL, "comment",
          std::string("Statistics over the members that ran to their end, weighted by weight. Each member's own "
                      "outputs are in members/NNNN/. ") +
              (ctx.mesh ? "Fields per face of the mesh, in the order of a member's output.nc."
                        : "Fields (y, x) row-major with y = 0 at the south."));
  nc.enddef();

  std::vector<double> index(nm), weight(nm), okv(nm);
  for (std::size_t m = 0; m < nm; ++m) {
    index[m] = static_cast<double>(m);
    weight[m] = e.members[m].weight;
    okv[m] = members[m].ok ? 1 : 0;
  }
  std::vector<int> ints(index.begin(), index.end());
  nc.check(nc_put_var_int(nc.id(), v_member, ints.data()), "write member");
  nc.put(v_weight, weight, "write weight");
  ints.assign(okv.begin(), okv.end());
  nc.check(nc_put_var_int(nc.id(), v_ok, ints.data()), "write member_ok");
  for (std::size_t k = 0; k < e.keys.size(); ++k) {
    if (key_vars[k].numeric) {
      std::vector<double> v(nm, std::nan(""));
      for (std::size_t m = 0; m < nm; ++m)
        if (const EnsembleValue* x = e.members[m].find(e.keys[k])) v[m] = *x->number;
      nc.put(key_vars[k].id, v, "write a member key");
    } else {
      std::vector<std::string> rows(nm);
      for (std::size_t m = 0; m < nm; ++m)
        if (const EnsembleValue* x = e.members[m].find(e.keys[k])) rows[m] = x->text();
      nc.put_text(key_vars[k].id, rows, key_vars[k].width);
    }
  }
  if (ctx.mesh) {
    ugrid->put();
  } else {
    std::vector<double> y(static_cast<std::size_t>(ctx.grid.ny)), x(static_cast<std::size_t>(ctx.grid.nx));
    for (std::size_t j = 0; j < y.size(); ++j) y[j] = ctx.grid.y_center(static_cast<index_t>(j));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = ctx.grid.x_center(static_cast<index_t>(i));
    nc.put(v_coord[0], y, "write y");
    nc.put(v_coord[1], x, "write x");
  }
  nc.put(v_threshold, e.thresholds, "write threshold");
  nc.put(v_percentile, e.percentiles, "write percentile");
  std::vector<double> depth(nm * n, std::nan(""));
  for (std::size_t m = 0; m < nm; ++m)
    if (members[m].ok)
      for (std::size_t c = 0; c < n; ++c)
        depth[m * n + c] = ctx.inactive[c] ? std::nan("") : members[m].result.maxima.max_h[c];
  nc.put(v_max_depth, depth, "write max_depth");
  for (std::size_t k = 0; k < std::size(stat_vars); ++k) {
    const std::size_t layers = stat_vars[k].dim == d_threshold    ? e.thresholds.size()
                               : stat_vars[k].dim == d_percentile ? e.percentiles.size()
                                                                  : 1;
    nc.put(v_stats[k], stats ? stats->*stat_vars[k].field : std::vector<double>(layers * n, std::nan("")),
           stat_vars[k].name);
  }
  nc.commit(file);
}

#endif

} // namespace

void write_member_result(const fs::path& file, const MemberResult& r) {
  std::string out;
  put(out, result_magic, sizeof result_magic);
  const std::uint64_t cells = r.maxima.max_h.size();
  put(out, &cells, sizeof cells);
  const double scalars[] = {r.initial_volume, r.final_volume, r.mass_balance_residual, r.wall_seconds};
  put(out, scalars, sizeof scalars);
  const std::int64_t steps = r.steps;
  put(out, &steps, sizeof steps);
  const std::uint64_t fingerprint = r.fingerprint;
  put(out, &fingerprint, sizeof fingerprint);
  for (const std::vector<double>* v : {&r.maxima.max_h, &r.maxima.max_speed, &r.maxima.arrival_time}) {
    if (v->size() != cells) throw std::logic_error("write_member_result: maxima of different sizes");
    put(out, v->data(), cells * sizeof(double));
  }
  detail::write_file_atomic(file, out);
}

std::optional<MemberResult> read_member_result(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  char magic[sizeof result_magic];
  std::uint64_t cells = 0;
  double scalars[4];
  std::int64_t steps = 0;
  std::uint64_t fingerprint = 0;
  in.read(magic, sizeof magic);
  in.read(reinterpret_cast<char*>(&cells), sizeof cells);
  in.read(reinterpret_cast<char*>(scalars), sizeof scalars);
  in.read(reinterpret_cast<char*>(&steps), sizeof steps);
  in.read(reinterpret_cast<char*>(&fingerprint), sizeof fingerprint);
  if (!in || std::memcmp(magic, result_magic, sizeof magic) != 0 || cells > (std::uint64_t(1) << 40))
    return std::nullopt;
  MemberResult r;
  r.initial_volume = scalars[0];
  r.final_volume = scalars[1];
  r.mass_balance_residual = scalars[2];
  r.wall_seconds = scalars[3];
  r.steps = steps;
  r.fingerprint = fingerprint;
  for (std::vector<double>* v : {&r.maxima.max_h, &r.maxima.max_speed, &r.maxima.arrival_time}) {
    v->resize(cells);
    in.read(reinterpret_cast<char*>(v->data()), static_cast<std::streamsize>(cells * sizeof(double)));
  }
  if (!in || in.peek() != std::char_traits<char>::eof()) return std::nullopt;
  return r;
}

void write_ensemble_files(const fs::path& dir, const Case& reference, const Ensemble& ensemble,
                          const std::vector<MemberReport>& members, const EnsembleStatistics* stats) {
  const Context ctx = context_of(dir, reference);
  fs::create_directories(dir);
  write_csv(dir, ctx, ensemble, members);
#if defined(SHALLOWS_HAVE_NETCDF)
  write_netcdf(dir, ctx, ensemble, members, stats);
#endif
  if (!stats) return;
  const auto asks = [&](const char* f) {
    return std::find(ctx.settings.formats.begin(), ctx.settings.formats.end(), f) != ctx.settings.formats.end();
  };
  const std::size_t n = ctx.cells();
  for (std::size_t t = 0; t < ensemble.thresholds.size(); ++t) {
    const std::vector<double> map(stats->exceedance.begin() + static_cast<std::ptrdiff_t>(t * n),
                                  stats->exceedance.begin() + static_cast<std::ptrdiff_t>((t + 1) * n));
    const std::string name = threshold_name(ensemble.thresholds[t]);
    if (asks("geotiff") && !ctx.mesh) detail::write_geotiff_map(ctx, dir / (name + ".tif"), map, false);
    if (asks("png")) {
      fs::create_directories(dir / "png");
      const std::string title = "fraction of members deeper than " + detail::format_number(ensemble.thresholds[t]);
      detail::write_png_map(ctx, dir / "png" / (name + ".png"), map, title + " m", "fraction");
    }
  }
}

} // namespace shallows::io
