// SPDX-License-Identifier: MIT
// Checkpoint files (docs/outputs.md#checkpoints). Layout, native byte order
// (an order marker refuses a file from a machine of the other order):
//   "SHLWCKPT", u32 format, u32 order marker, u64 file size,
//   string shallows version, u8 precision, u8 scheme, u8 mesh, u8 maxima,
//   u64 cells, u64 fingerprint, f64 t, u64 steps, u64 frames, f64 initial volume,
//   f64 positivity volume, string case text (strings: u32 length, bytes),
//   h, hu, hv in the run's precision, then max_h, max_speed, arrival_time in
//   double when the run tracks maxima (format 4: max_speed as the run's
//   precision gives it, solver/cell_maxima.hpp), then the forcing state (infiltration
//   per cell, rain and infiltration per row, volume per source, water in and
//   out per side: each a u64 count and that many f64), then the passive
//   scalars (format 3): a u64 count (the problem's), and per scalar its f64
//   initial mass and h c in the run's precision, then, in a run with hydraulic
//   structures only, their state (ForcingState::structures: a u64 count and
//   that many f64),
//   u64 checksum of everything before it.
#include "shallows/io/checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "output_detail.hpp"

namespace shallows::io {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'S', 'H', 'L', 'W', 'C', 'K', 'P', 'T'};
constexpr std::uint32_t kFormat = 4;
constexpr std::uint32_t kOrder = 0x01020304;
constexpr std::size_t kPrefix = 24;  // magic, format, order, size

// FNV-1a over 64-bit words with a final avalanche (splitmix64): each word
// step is a bijection, so any change of one word changes the result.
class Hasher {
 public:
  void bytes(const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    std::size_t k = 0;
    for (; k + 8 <= n; k += 8) {
      std::uint64_t w;
      std::memcpy(&w, p + k, 8);
      word(w);
    }
    std::uint64_t tail = 0;
    if (k < n) std::memcpy(&tail, p + k, n - k);  // an empty vector's data() may be null
    word(tail ^ (static_cast<std::uint64_t>(n - k) << 56));
  }
  template <class T>
  void value(const T& v) {
    bytes(&v, sizeof v);
  }
  template <class T>
  void vector(const std::vector<T>& v) {
    value(v.size());
    bytes(v.data(), v.size() * sizeof(T));
  }
  void string(const std::string& s) {
    value(s.size());
    bytes(s.data(), s.size());
  }
  std::uint64_t result() const {
    std::uint64_t z = h_ + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  void word(std::uint64_t w) { h_ = (h_ ^ w) * 0x100000001b3ULL; }
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

std::uint64_t checksum(const std::string& bytes, std::size_t n) {
  Hasher h;
  h.bytes(bytes.data(), n);
  return h.result();
}

class Writer {
 public:
  template <class T>
  void value(const T& v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void string(const std::string& s) {
    value(static_cast<std::uint32_t>(s.size()));
    out += s;
  }
  template <class Real>
  void field(const std::vector<double>& v) {
    for (double x : v) value(static_cast<Real>(x));
  }
  std::string out;
};

class Reader {
 public:
  Reader(const std::string& bytes, std::size_t end, const fs::path& file) : bytes_(bytes), end_(end), file_(file) {}
  template <class T>
  T value() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, bytes_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string string() {
    const auto n = value<std::uint32_t>();
    need(n);
    std::string s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }
  template <class Real>
  std::vector<double> field(std::size_t n) {
    need(n * sizeof(Real));
    std::vector<double> v(n);
    for (std::size_t k = 0; k < n; ++k) v[k] = static_cast<double>(value<Real>());
    return v;
  }
  std::size_t at() const { return at_; }

 private:
  void need(std::size_t n) const {
    if (n > end_ - at_) throw InputError(file_.string() + ": checkpoint is inconsistent (fields past its end)");
  }
  const std::string& bytes_;
  std::size_t end_;
  std::size_t at_ = kPrefix;
  const fs::path& file_;
};

std::string precision_name(int p) { return p == 0 ? "float" : "double"; }
std::string scheme_name(int s) { return s == 0 ? "roe1" : "roe3"; }

[[noreturn]] void io_fail(const std::string& what, const fs::path& path) {
  throw std::runtime_error("cannot " + what + " " + path.string() + ": " + std::strerror(errno));
}

// Whole file, fsync'ed before it is renamed into place.
void write_synced(const fs::path& part, const std::string& bytes) {
  const int fd = ::open(part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) io_fail("create", part);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      io_fail("write", part);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    io_fail("sync", part);
  }
  if (::close(fd) != 0) io_fail("close", part);
}

void sync_folder(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // best effort: the renames are done
  ::fsync(fd);
  ::close(fd);
}

Checkpoint read_file(const fs::path& file, const Case& c) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string() + ": cannot open the checkpoint");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw InputError(file.string() + ": not a shallows checkpoint");
  if (bytes.size() < kPrefix + 8)
    throw InputError(file.string() + ": checkpoint is truncated (" + std::to_string(bytes.size()) + " bytes)");
  std::uint32_t format = 0, order = 0;
  std::uint64_t size = 0;
  std::memcpy(&format, bytes.data() + 8, 4);
  std::memcpy(&order, bytes.data() + 12, 4);
  std::memcpy(&size, bytes.data() + 16, 8);
  if (order != kOrder) throw InputError(file.string() + ": checkpoint was written on a machine of another byte order");
  if (format != kFormat)
    throw InputError(file.string() + ": checkpoint format " + std::to_string(format) + ", this shallows reads format " +
                     std::to_string(kFormat));
  if (bytes.size() < size)
    throw InputError(file.string() + ": checkpoint is truncated (" + std::to_string(bytes.size()) + " of " +
                     std::to_string(size) + " bytes)");
  if (bytes.size() != size)
    throw InputError(file.string() + ": checkpoint is corrupted (" + std::to_string(bytes.size()) +
                     " bytes, its header says " + std::to_string(size) + ")");
  std::uint64_t stored = 0;
  std::memcpy(&stored, bytes.data() + size - 8, 8);
  if (stored != checksum(bytes, size - 8))
    throw InputError(file.string() + ": checkpoint is corrupted (checksum mismatch)");

  Reader r(bytes, size - 8, file);
  const std::string version = r.string();
  if (version != SHALLOWS_VERSION)
    throw InputError(file.string() + ": checkpoint of shallows " + version + ", this is shallows " SHALLOWS_VERSION +
                     "; restart with the version that wrote it");
  const Problem& p = c.problem;
  const int precision = r.value<std::uint8_t>(), scheme = r.value<std::uint8_t>(), mesh = r.value<std::uint8_t>();
  const bool maxima = r.value<std::uint8_t>() != 0;
  const int run_precision = p.precision == Precision::single_precision ? 0 : 1;
  const int run_scheme = p.scheme == Scheme::roe1 ? 0 : 1;
  if (precision != run_precision)
    throw InputError(file.string() + ": checkpoint of a " + precision_name(precision) + " run, this run is " +
                     precision_name(run_precision));
  if (scheme != run_scheme)
    throw InputError(file.string() + ": checkpoint of a " + scheme_name(scheme) + " run, this run is " +
                     scheme_name(run_scheme));
  const auto cells = r.value<std::uint64_t>();
  if ((mesh != 0) != p.on_mesh() || cells != static_cast<std::uint64_t>(p.cells()))
    throw InputError(file.string() + ": checkpoint of " + std::to_string(cells) + " cells on a " +
                     (mesh ? "mesh" : "grid") + ", this run has " + std::to_string(p.cells()) + " cells on a " +
                     (p.on_mesh() ? "mesh" : "grid"));
  if (r.value<std::uint64_t>() != case_fingerprint(c))
    throw InputError(file.string() + ": checkpoint of another case (its inputs, case text or --set values differ "
                                     "from " + c.source + ")");
  Checkpoint k;
  k.t = r.value<double>();
  k.steps = static_cast<index_t>(r.value<std::uint64_t>());
  k.frames = static_cast<std::size_t>(r.value<std::uint64_t>());
  k.initial_volume = r.value<double>();
  k.positivity_volume = r.value<double>();
  (void)r.string();  // the case text, for people and tools
  if (!(k.t >= 0 && k.t <= p.t_end) || k.frames < 1 || k.frames > p.output_times.size() + 1)
    throw InputError(file.string() + ": checkpoint is inconsistent (t = " + std::to_string(k.t) + " s, " +
                     std::to_string(k.frames) + " frames)");
  const auto n = static_cast<std::size_t>(cells);
  for (std::vector<double>* f : {&k.state.h, &k.state.hu, &k.state.hv})
    *f = precision == 0 ? r.field<float>(n) : r.field<double>(n);
  if (maxima)
    for (std::vector<double>* f : {&k.maxima.max_h, &k.maxima.max_speed, &k.maxima.arrival_time})
      *f = r.field<double>(n);
  // The forcing state: no longer than the run's cells, rows (a mesh: blocks
  // of cells), sources and sides (a mesh: boundary groups); the executor
  // checks the exact sizes when it loads them.
  const std::size_t rows = p.on_mesh() ? n : static_cast<std::size_t>(p.grid.ny);
  const std::size_t sides = p.on_mesh() ? 2 * p.mesh_boundary.size() : 8;
  const std::size_t limits[5] = {n, rows, rows, p.forcing.sources.size(), sides};
  std::vector<double>* parts[5] = {&k.forcing.infiltration, &k.forcing.rain_rows, &k.forcing.infiltration_rows,
                                   &k.forcing.sources, &k.forcing.boundary};
  for (int i = 0; i < 5; ++i) {
    const auto count = r.value<std::uint64_t>();
    if (count > limits[i]) throw InputError(file.string() + ": checkpoint is inconsistent (forcing state)");
    *parts[i] = r.field<double>(static_cast<std::size_t>(count));
  }
  if (r.value<std::uint64_t>() != p.scalars.size())
    throw InputError(file.string() + ": checkpoint is inconsistent (passive scalars)");
  for (std::size_t s = 0; s < p.scalars.size(); ++s) {
    k.initial_scalar_mass.push_back(r.value<double>());
    k.state.hc.push_back(precision == 0 ? r.field<float>(n) : r.field<double>(n));
  }
  if (!p.forcing.structures.empty()) {
    const std::size_t values = kTallyValues * p.forcing.structures.size();
    if (r.value<std::uint64_t>() != values)
      throw InputError(file.string() + ": checkpoint is inconsistent (structures)");
    k.forcing.structures = r.field<double>(values);
  }
  if (r.at() != size - 8) throw InputError(file.string() + ": checkpoint is inconsistent (bytes left over)");
  return k;
}

}  // namespace

fs::path checkpoint_path(const fs::path& dir) { return dir / "checkpoint.shck"; }
fs::path previous_checkpoint_path(const fs::path& dir) { return dir / "checkpoint.prev.shck"; }

std::uint64_t case_fingerprint(const Case& c) {
  const Problem& p = c.problem;
  Hasher h;
  h.string(c.text);
  h.value(p.grid.nx);
  h.value(p.grid.ny);
  h.value(p.grid.x0);
  h.value(p.grid.y0);
  h.value(p.grid.dx);
  h.value(p.grid.dy);
  if (p.mesh) {
    const UnstructuredMesh& m = *p.mesh;
    h.vector(m.node_x);
    h.vector(m.node_y);
    h.vector(m.cell_nodes);
    h.vector(m.edge_left);
    h.vector(m.edge_right);
    for (const auto& bc : p.mesh_boundary) {
      h.value(bc.kind);
      h.value(bc.value);
    }
  }
  for (const std::vector<double>* v : {&p.z, &p.h, &p.hu, &p.hv, &p.output_times}) h.vector(*v);
  for (const auto& bc : p.boundary) {
    h.value(bc.kind);
    h.value(bc.value);
  }
  h.value(p.physics.g);
  h.value(p.physics.h_dry);
  h.value(p.physics.n_manning);
  const Forcing& forcing = p.forcing;
  for (const std::vector<double>* v : {&forcing.rain.rate.t, &forcing.rain.rate.v, &forcing.rain.scale, &forcing.infiltration.p0,
                                       &forcing.infiltration.p1, &forcing.infiltration.p2, &forcing.manning})
    h.vector(*v);
  h.value(forcing.infiltration.model);
  // Only where there is a stack, so that checkpoints of runs without one keep their fingerprint.
  if (forcing.rain.has_frames()) {
    h.vector(forcing.rain.frame_times);
    h.vector(forcing.rain.frames);
  }
  for (const TimeSeries& ts : forcing.boundary) {
    h.vector(ts.t);
    h.vector(ts.v);
  }
  // Only where a mesh's group follows a series, so that other runs keep their fingerprint.
  if (forcing.has_boundary_series()) {
    for (const TimeSeries& ts : forcing.groups) {
      h.vector(ts.t);
      h.vector(ts.v);
    }
  }
  for (const VolumeSource& src : forcing.sources) {
    h.string(src.name);
    h.vector(src.cells);
    h.vector(src.discharge.t);
    h.vector(src.discharge.v);
  }
  // Nothing without structures, scalars or segments, so that such runs keep their fingerprint.
  for (const Structure& st : forcing.structures) {
    h.string(st.name);
    h.value(st.inlet);
    h.value(st.outlet);
    h.value(st.spec.kind);
    h.vector(st.discharge.t);
    h.vector(st.discharge.v);
    for (double v : {st.spec.on, st.spec.off, st.spec.width, st.spec.height, st.spec.length, st.spec.invert_in,
                     st.spec.invert_out, st.spec.n_manning, st.spec.entrance_loss, st.spec.exit_loss})
      h.value(v);
    h.value(static_cast<int>(st.spec.shape) + 2 * st.spec.controlled + 4 * st.spec.one_way);
    if (st.has_ends()) continue;
    for (const LineCrossing& x : st.crossings) {
      h.value(x.left);
      h.value(x.right);
      for (double v : {x.length, x.crest, x.s}) h.value(v);
    }
    h.vector(st.width.t);
    h.vector(st.width.v);
    const StructureSpec& b = st.spec;
    h.value(b.weir + 2 * b.sensor);
    h.value(static_cast<int>(b.growth) + 2 * b.triggered);
    for (double v : {b.coefficient, b.at, b.bottom, b.start, b.trigger_level, b.trigger_duration, b.width_initial,
                     b.width_final, b.f1, b.f2, b.critical_velocity})
      h.value(v);
  }
  for (const PassiveScalar& sc : p.scalars) {
    h.string(sc.name);
    h.vector(sc.c);
    h.value(sc.side);
    h.value(sc.rain);
    h.vector(sc.sources);
    h.vector(sc.segments);
  }
  for (const BoundarySegment& sg : p.segments) {
    h.string(sg.name);
    h.value(sg.where.side);
    h.value(sg.where.begin);
    h.value(sg.where.end);
    h.value(sg.where.bc.kind);
    h.value(sg.where.bc.value);
    h.vector(sg.value.t);
    h.vector(sg.value.v);
  }
  h.value(p.scheme);
  h.value(p.cfl);
  h.value(p.precision);
  h.value(p.t_end);
  const OutputSettings& o = c.output;
  for (const std::string& f : o.formats) h.string(f);
  for (const Gauge& g : o.gauges) {
    h.string(g.name);
    h.value(g.x);
    h.value(g.y);
  }
  for (const ScalarOutput& sc : o.scalars) {
    h.string(sc.name);
    h.string(sc.units);
  }
  h.value(o.arrival_threshold);
  h.value(o.precision);
  return h.result();
}

void write_checkpoint(const Case& c, const Checkpoint& k) {
  const Problem& p = c.problem;
  const bool single = p.precision == Precision::single_precision;
  const bool maxima = !k.maxima.max_h.empty();
  Writer w;
  w.out.append(kMagic, sizeof kMagic);
  w.value(kFormat);
  w.value(kOrder);
  w.value(std::uint64_t{0});  // file size, set below
  w.string(SHALLOWS_VERSION);
  w.value(static_cast<std::uint8_t>(single ? 0 : 1));
  w.value(static_cast<std::uint8_t>(p.scheme == Scheme::roe1 ? 0 : 1));
  w.value(static_cast<std::uint8_t>(p.on_mesh() ? 1 : 0));
  w.value(static_cast<std::uint8_t>(maxima ? 1 : 0));
  w.value(static_cast<std::uint64_t>(p.cells()));
  w.value(case_fingerprint(c));
  w.value(k.t);
  w.value(static_cast<std::uint64_t>(k.steps));
  w.value(static_cast<std::uint64_t>(k.frames));
  w.value(k.initial_volume);
  w.value(k.positivity_volume);
  w.string(c.text);
  for (const std::vector<double>* f : {&k.state.h, &k.state.hu, &k.state.hv}) {
    if (single) w.field<float>(*f);
    else w.field<double>(*f);
  }
  if (maxima)
    for (const std::vector<double>* f : {&k.maxima.max_h, &k.maxima.max_speed, &k.maxima.arrival_time})
      w.field<double>(*f);
  for (const std::vector<double>* f : {&k.forcing.infiltration, &k.forcing.rain_rows, &k.forcing.infiltration_rows,
                                       &k.forcing.sources, &k.forcing.boundary}) {
    w.value(static_cast<std::uint64_t>(f->size()));
    w.field<double>(*f);
  }
  if (k.state.hc.size() != p.scalars.size() || k.initial_scalar_mass.size() != p.scalars.size())
    throw std::logic_error("write_checkpoint: the state holds " + std::to_string(k.state.hc.size()) +
                           " passive scalars and " + std::to_string(k.initial_scalar_mass.size()) +
                           " initial masses, the problem " + std::to_string(p.scalars.size()));
  w.value(static_cast<std::uint64_t>(p.scalars.size()));
  for (std::size_t s = 0; s < p.scalars.size(); ++s) {
    w.value(k.initial_scalar_mass[s]);
    if (single) w.field<float>(k.state.hc[s]);
    else w.field<double>(k.state.hc[s]);
  }
  if (!p.forcing.structures.empty()) {
    if (k.forcing.structures.size() != kTallyValues * p.forcing.structures.size())
      throw std::logic_error("write_checkpoint: the forcing state holds " +
                             std::to_string(k.forcing.structures.size()) + " values for " +
                             std::to_string(p.forcing.structures.size()) + " structures");
    w.value(static_cast<std::uint64_t>(k.forcing.structures.size()));
    w.field<double>(k.forcing.structures);
  }
  const std::uint64_t size = w.out.size() + 8;
  std::memcpy(w.out.data() + 16, &size, 8);
  w.value(checksum(w.out, w.out.size()));

  const fs::path dir = c.output.dir, final_path = checkpoint_path(dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create output folder " + dir.string() + ": " + ec.message());
  const fs::path part = detail::part_path(final_path);
  write_synced(part, w.out);
  if (fs::exists(final_path)) detail::commit_part(final_path, previous_checkpoint_path(dir));
  detail::commit_part(part, final_path);
  sync_folder(dir);
}

Checkpoint read_checkpoint(const fs::path& file_or_dir, const Case& c) {
  std::error_code ec;
  if (!fs::is_directory(file_or_dir, ec)) {
    if (!fs::exists(file_or_dir, ec)) throw InputError(file_or_dir.string() + ": no such checkpoint file or folder");
    return read_file(file_or_dir, c);
  }
  const fs::path newest = checkpoint_path(file_or_dir), previous = previous_checkpoint_path(file_or_dir);
  if (!fs::exists(newest) && !fs::exists(previous))
    throw InputError(file_or_dir.string() + ": no checkpoint (" + newest.filename().string() + " or " +
                     previous.filename().string() + ") in this folder");
  std::string refused;
  for (const fs::path& f : {newest, previous}) {
    if (!fs::exists(f)) continue;
    try {
      Checkpoint k = read_file(f, c);
      if (!refused.empty())
        std::fprintf(stderr, "shallows: note: %s; restarting from %s\n", refused.c_str(), f.c_str());
      return k;
    } catch (const InputError& e) {
      if (!refused.empty()) throw InputError(refused + "; " + e.what());
      refused = e.what();
    }
  }
  throw InputError(refused);
}

}  // namespace shallows::io
