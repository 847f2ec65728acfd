// SPDX-License-Identifier: MIT
// --set overrides: "section.key=value" written into the TOML tree before it
// is read, checked against the schema.
#include <algorithm>

#include "reader.hpp"

namespace shallows::io::case_reader {
namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t p = 0;
  while (true) {
    const std::size_t q = path.find('.', p);
    parts.push_back(trim(path.substr(p, q == std::string::npos ? std::string::npos : q - p)));
    if (q == std::string::npos) break;
    p = q + 1;
  }
  return parts;
}

} // namespace

std::set<std::string> apply_overrides(toml::table& root, const std::vector<std::string>& overrides) {
  const std::string src = "--set";
  std::set<std::string> done;
  for (const auto& o : overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos)
      throw InputError(src + ": expected section.key=value, found '" + clip(o) + "'");
    const std::vector<std::string> parts = split_path(o.substr(0, eq));
    const std::string value = trim(std::string_view(o).substr(eq + 1));
    std::string path;
    for (const auto& p : parts) {
      if (p.empty()) throw InputError(src + ": empty key in '" + clip(o) + "'");
      path = dotted(path, p);
    }

    // Validate the first two levels against the schema.
    if (std::find(top_level_keys.begin(), top_level_keys.end(), parts[0]) == top_level_keys.end()) {
      std::string msg = "unknown " + std::string(parts.size() > 1 ? "section" : "key") + " '" + parts[0] + "'";
      if (auto best = closest(parts[0], top_level_keys)) msg += " (did you mean '" + std::string(*best) + "'?)";
      throw InputError(src + ": " + msg);
    }
    // On a mesh, [boundary] keys are the mesh's group names, checked against the mesh when it is read.
    const bool mesh_group = parts[0] == "boundary" && root.contains("mesh");
    if (parts.size() > 1 && !mesh_group) {
      const Section* sec = find_section(parts[0]);
      if (!sec) throw InputError(src + ": '" + parts[0] + "' is not a section");
      if (std::find(sec->keys.begin(), sec->keys.end(), parts[1]) == sec->keys.end()) {
        std::string msg = "unknown key '" + parts[0] + "." + parts[1] + "'";
        if (auto best = closest(parts[1], sec->keys))
          msg += " (did you mean '" + parts[0] + "." + std::string(*best) + "'?)";
        else
          msg += " (valid: " + join(sec->keys) + ")";
        throw InputError(src + ": " + msg);
      }
    }

    // Walk to the parent table, creating tables on the way.
    toml::table* t = &root;
    std::string walked;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      walked = dotted(walked, parts[i]);
      toml::node* n = t->get(parts[i]);
      if (!n) {
        t->insert(parts[i], toml::table{});
        n = t->get(parts[i]);
      }
      if (!n->is_table())
        throw InputError(src + ": cannot set '" + path + "': '" + walked + "' is a " + describe(*n) +
                         ", not a table (set '" + walked + "' whole instead)");
      t = n->as_table();
    }

    // The value as TOML, else as a plain string.
    bool set = false;
    try {
      const std::string doc = "v = " + value;
      toml::table parsed = toml::parse(std::string_view(doc), std::string_view("--set"));
      if (parsed.size() == 1) {
        if (toml::node* v = parsed.get("v")) {
          v->visit([&](auto& node) { t->insert_or_assign(parts.back(), node); });
          set = true;
        }
      }
    } catch (const toml::parse_error&) {
    }
    if (!set) t->insert_or_assign(parts.back(), value);
    done.insert(path);
  }
  return done;
}

} // namespace shallows::io::case_reader
