// SPDX-License-Identifier: MIT
// [ensemble]: members listed, a Cartesian product of lists, or samples drawn
// with a seed (docs/ensembles.md). Each member becomes a list of --set
// overrides; their keys are checked here by apply_overrides on a copy of the
// case's tree, so that a misspelt key stops the study before any member runs.
#include "shallows/io/ensemble.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "reader.hpp"

namespace shallows::io {

using namespace case_reader;

unsigned long long SplitMix64::next() {
  unsigned long long z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double SplitMix64::unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

unsigned long long SplitMix64::below(unsigned long long n) {
  // Lemire's multiply-shift: the high word of a 64 x 64-bit product.
  __extension__ using wide = unsigned __int128;
  return static_cast<unsigned long long>((static_cast<wide>(next()) * n) >> 64);
}

namespace {

// The fewest digits that read back as v.
std::string shortest(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  // TOML reads "1e-05" and "2" as numbers; a float stays a float for readers that ask for one.
  if (s.find_first_of(".eE") == std::string::npos && s.find("inf") == std::string::npos &&
      s.find("nan") == std::string::npos)
    s += ".0";
  return s;
}

std::string toml_string(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

// A value as TOML text that parses back to the same value (floats exactly).
std::string toml_text(const toml::node& n) {
  if (const auto* i = n.as_integer()) return std::to_string(i->get());
  if (const auto* f = n.as_floating_point()) return shortest(f->get());
  if (const auto* s = n.as_string()) return toml_string(s->get());
  if (const auto* b = n.as_boolean()) return b->get() ? "true" : "false";
  if (const auto* a = n.as_array()) {
    std::string out = "[";
    for (std::size_t k = 0; k < a->size(); ++k) out += (k ? ", " : "") + toml_text(*a->get(k));
    return out + "]";
  }
  if (const auto* t = n.as_table()) {
    std::string out = "{";
    bool first = true;
    for (auto&& [k, v] : *t) {
      out += (first ? " " : ", ") + toml_string(k.str()) + " = " + toml_text(v);
      first = false;
    }
    return out + (first ? "}" : " }");
  }
  return describe(n);  // dates and times: no key takes them
}

EnsembleValue make_value(const std::string& key, const toml::node& n) {
  EnsembleValue v{key, toml_text(n), std::nullopt};
  if (n.is_number()) v.number = *n.value<double>();
  return v;
}

EnsembleValue number_value(const std::string& key, double x) { return {key, shortest(x), x}; }

class EnsembleReader {
 public:
  EnsembleReader(const toml::table& root, std::string source) : source_(std::move(source)), base_(root) {
    base_.erase("ensemble");
  }

  [[noreturn]] void fail(const std::string& where, const std::string& msg) const {
    throw InputError(source_ + ": [ensemble]" + (where.empty() ? "" : " " + where) + ": " + msg);
  }

  // The member's keys, checked against the schema as --set checks them.
  void check_keys(const std::string& where, const EnsembleMember& m) const {
    toml::table copy = base_;
    try {
      apply_overrides(copy, m.overrides());
    } catch (const InputError& e) {
      std::string what = e.what();
      const std::string prefix = "--set: ";
      if (what.rfind(prefix, 0) == 0) what = what.substr(prefix.size());
      fail(where, what);
    }
  }

  // A member's key: dotted, not [ensemble]'s own.
  void check_key(const std::string& where, const std::string& key) const {
    if (key.find('.') == std::string::npos && key != "name")
      fail(where, "'" + key + "' is not a case key (keys are --set keys, e.g. \"physics.manning\")");
    if (key.rfind("ensemble.", 0) == 0) fail(where, "'" + key + "': an ensemble's members cannot set [ensemble]");
  }

  double number(const std::string& where, const toml::node& n) const {
    if (!n.is_number()) fail(where, "expected a number, found " + describe(n));
    const double v = *n.value<double>();
    if (!std::isfinite(v)) fail(where, "must be a finite number, found " + num(v));
    return v;
  }

  std::vector<double> increasing(const toml::table& e, const char* key, double lo, double hi) const {
    const toml::node* n = e.get(key);
    const toml::array* a = n->as_array();
    if (!a || a->empty()) fail(key, "expected a non-empty array of numbers, found " + describe(*n));
    std::vector<double> out;
    for (std::size_t k = 0; k < a->size(); ++k) {
      const std::string where = std::string(key) + "[" + std::to_string(k) + "]";
      const double v = number(where, *a->get(k));
      if (v < lo || v > hi) fail(where, num(v) + " is outside [" + num(lo) + ", " + num(hi) + "]");
      if (!out.empty() && v <= out.back()) fail(key, "must increase (" + num(out.back()) + ", then " + num(v) + ")");
      out.push_back(v);
    }
    return out;
  }

  void read_members(const toml::node& n, Ensemble& en) const {
    const toml::array* a = n.as_array();
    if (!a || a->empty())
      fail("members", "expected a non-empty array of tables { \"physics.manning\" = 0.02, ... }, found " +
                          describe(n));
    for (std::size_t k = 0; k < a->size(); ++k) {
      const std::string where = "members[" + std::to_string(k) + "]";
      const toml::table* t = a->get(k)->as_table();
      if (!t) fail(where, "expected a table { \"physics.manning\" = 0.02, ... }, found " + describe(*a->get(k)));
      EnsembleMember m;
      for (auto&& [key, v] : *t) {
        const std::string name(key.str());
        if (name == "weight") {
          m.weight = number(where + ".weight", v);
          if (!(m.weight > 0)) fail(where, "weight must be > 0, found " + num(m.weight));
          continue;
        }
        check_key(where, name);
        m.values.push_back(make_value(name, v));
      }
      check_keys(where, m);
      en.members.push_back(std::move(m));
    }
  }

  // The Cartesian product; the first key (by name) varies slowest.
  void read_product(const toml::node& n, Ensemble& en) const {
    const toml::table* t = n.as_table();
    if (!t || t->empty())
      fail("product", "expected a table of lists { \"physics.manning\" = [0.02, 0.04], ... }, found " + describe(n));
    std::vector<std::vector<EnsembleValue>> lists;
    std::size_t count = 1;
    for (auto&& [key, v] : *t) {
      const std::string name(key.str());
      const std::string where = "product." + name;
      check_key("product", name);
      const toml::array* a = v.as_array();
      if (!a || a->empty()) fail(where, "expected a non-empty array of values, found " + describe(v));
      std::vector<EnsembleValue> list;
      for (std::size_t k = 0; k < a->size(); ++k) list.push_back(make_value(name, *a->get(k)));
      count *= list.size();
      if (count > max_members) fail("product", "more than " + std::to_string(max_members) + " members");
      lists.push_back(std::move(list));
    }
    for (std::size_t m = 0; m < count; ++m) {
      EnsembleMember member;
      std::size_t rest = m;
      std::vector<EnsembleValue> values(lists.size());
      for (std::size_t d = lists.size(); d-- > 0;) {
        values[d] = lists[d][rest % lists[d].size()];
        rest /= lists[d].size();
      }
      member.values = std::move(values);
      en.members.push_back(std::move(member));
    }
    check_keys("product", en.members.front());
  }

  // count members drawn with seed: "lhs" (Latin hypercube: for every key, each
  // of the count equal strata of its range holds exactly one member) or
  // "random" (independent uniform draws). Keys are drawn in name order.
  void read_sample(const toml::node& n, Ensemble& en) const {
    const toml::table* t = n.as_table();
    if (!t) fail("sample", "expected a table { count = 100, seed = 7, \"physics.manning\" = { uniform = [a, b] } }, "
                           "found " + describe(n));
    const toml::node* count_node = t->get("count");
    if (!count_node) fail("sample", "count missing (the number of members)");
    if (!count_node->is_integer() || *count_node->value<std::int64_t>() < 1 ||
        *count_node->value<std::int64_t>() > static_cast<std::int64_t>(max_members))
      fail("sample.count", "expected an integer in [1, " + std::to_string(max_members) + "], found " +
                               describe(*count_node));
    const auto count = static_cast<std::size_t>(*count_node->value<std::int64_t>());
    std::uint64_t seed = 1;
    if (const toml::node* s = t->get("seed")) {
      if (!s->is_integer() || *s->value<std::int64_t>() < 0)
        fail("sample.seed", "expected a non-negative integer, found " + describe(*s));
      seed = static_cast<std::uint64_t>(*s->value<std::int64_t>());
    }
    std::string method = "lhs";
    if (const toml::node* mth = t->get("method")) {
      if (!mth->is_string() || (*mth->value<std::string>() != "lhs" && *mth->value<std::string>() != "random"))
        fail("sample.method", "expected \"lhs\" or \"random\", found " + describe(*mth));
      method = *mth->value<std::string>();
    }
    struct Range {
      std::string key;
      double a, b;
    };
    std::vector<Range> ranges;
    for (auto&& [key, v] : *t) {
      const std::string name(key.str());
      if (name == "count" || name == "seed" || name == "method") continue;
      const std::string where = "sample." + name;
      check_key("sample", name);
      const toml::table* d = v.as_table();
      const toml::array* u = d ? d->get_as<toml::array>("uniform") : nullptr;
      if (!d || d->size() != 1 || !u || u->size() != 2)
        fail(where, "expected { uniform = [a, b] }, found " + (d ? toml_text(v) : describe(v)));
      const double a = number(where + ".uniform[0]", *u->get(0)), b = number(where + ".uniform[1]", *u->get(1));
      if (!(a < b)) fail(where, "uniform = [a, b] needs a < b, found [" + num(a) + ", " + num(b) + "]");
      ranges.push_back({name, a, b});
    }
    if (ranges.empty()) fail("sample", "no key to sample (e.g. \"physics.manning\" = { uniform = [0.02, 0.06] })");
    SplitMix64 rng(seed);
    en.members.assign(count, EnsembleMember{});
    for (const Range& r : ranges) {
      std::vector<std::size_t> stratum(count);
      for (std::size_t m = 0; m < count; ++m) stratum[m] = m;
      if (method == "lhs")
        for (std::size_t i = count; i-- > 1;) std::swap(stratum[i], stratum[rng.below(i + 1)]);
      for (std::size_t m = 0; m < count; ++m) {
        const double u = method == "lhs" ? (static_cast<double>(stratum[m]) + rng.unit()) / static_cast<double>(count)
                                         : rng.unit();
        en.members[m].values.push_back(number_value(r.key, r.a + u * (r.b - r.a)));
      }
    }
    check_keys("sample", en.members.front());
  }

  static constexpr std::size_t max_members = 100000;

 private:
  std::string source_;
  toml::table base_;
};

} // namespace

std::string EnsembleValue::text() const {
  if (number) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, *number);
    return std::string(buf, r.ptr);
  }
  if (toml.size() >= 2 && toml.front() == '"') {
    // A string with no escapes reads back as the text between its quotes.
    if (toml.find('\\') == std::string::npos) return toml.substr(1, toml.size() - 2);
  }
  return toml;
}

std::vector<std::string> EnsembleMember::overrides() const {
  std::vector<std::string> out;
  for (const EnsembleValue& v : values) out.push_back(v.key + "=" + v.toml);
  return out;
}

const EnsembleValue* EnsembleMember::find(std::string_view key) const {
  for (const EnsembleValue& v : values)
    if (v.key == key) return &v;
  return nullptr;
}

Ensemble read_ensemble(std::string_view toml_text, const std::string& source_name) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source_name);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw InputError(source_name + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) +
                     ": TOML syntax error: " + std::string(e.description()));
  }
  Ensemble en;
  const toml::node* node = root.get("ensemble");
  if (!node) return en;
  const EnsembleReader rd(root, source_name);
  const toml::table* e = node->as_table();
  if (!e) rd.fail("", "expected a table, found " + describe(*node));
  static const Keys valid{"members", "product", "sample", "thresholds", "percentiles"};
  for (auto&& [k, v] : *e) {
    if (std::find(valid.begin(), valid.end(), k.str()) != valid.end()) continue;
    std::string msg = "unknown key '" + std::string(k.str()) + "'";
    if (auto best = closest(k.str(), valid)) msg += " (did you mean '" + std::string(*best) + "'?)";
    rd.fail("", msg + " (valid: " + join(valid) + ")");
  }
  int forms = 0;
  for (const char* f : {"members", "product", "sample"})
    if (e->contains(f)) {
      ++forms;
      en.form = f;
    }
  if (forms != 1) rd.fail("", "give exactly one of members, product or sample");
  if (en.form == "members") rd.read_members(*e->get("members"), en);
  if (en.form == "product") rd.read_product(*e->get("product"), en);
  if (en.form == "sample") rd.read_sample(*e->get("sample"), en);
  if (e->contains("thresholds")) en.thresholds = rd.increasing(*e, "thresholds", 0, 1e30);
  if (e->contains("percentiles")) en.percentiles = rd.increasing(*e, "percentiles", 0, 100);

  std::map<std::string, bool> keys;
  for (EnsembleMember& m : en.members) {
    std::sort(m.values.begin(), m.values.end(),
              [](const EnsembleValue& a, const EnsembleValue& b) { return a.key < b.key; });
    for (const EnsembleValue& v : m.values) keys[v.key] = true;
  }
  for (const auto& kv : keys) en.keys.push_back(kv.first);
  return en;
}

Ensemble load_ensemble(const std::filesystem::path& case_file) {
  std::ifstream in(case_file, std::ios::binary);
  if (!in) throw InputError(case_file.string() + ": cannot open case file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return read_ensemble(ss.str(), case_file.string());
}

} // namespace shallows::io
