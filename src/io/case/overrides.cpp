// SPDX-License-Identifier: MIT
// --set overrides: "section.key=value" written into the TOML tree before it
// is read, checked against the schema. A part "name[k]" or "name[label]"
// picks an entry of an array of tables ([[source]], [[boundary.segment]]):
// by its 0-based index, or the one whose `name` is label.
#include <algorithm>
#include <cctype>
#include <type_traits>

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

// A part of a key path: "source" or "source[2]" / "source[outfall]".
struct Part {
  std::string name;
  std::optional<std::string> entry;  // what the brackets hold
};

Part parse_part(const std::string& src, const std::string& text, const std::string& whole) {
  const std::size_t open = text.find('[');
  if (open == std::string::npos) {
    if (text.find(']') != std::string::npos) throw InputError(src + ": unbalanced ']' in '" + clip(whole) + "'");
    return {text, std::nullopt};
  }
  if (text.back() != ']' || text.find('[', open + 1) != std::string::npos || open == 0)
    throw InputError(src + ": expected name[index] or name[label] in '" + clip(whole) + "', found '" + clip(text) +
                     "'");
  const std::string entry = trim(std::string_view(text).substr(open + 1, text.size() - open - 2));
  if (entry.empty()) throw InputError(src + ": empty [] in '" + clip(whole) + "'");
  return {trim(std::string_view(text).substr(0, open)), entry};
}

// The entry of an array of tables that a part's brackets name; `path` is the array's dotted path. Returns its index.
std::size_t pick_entry(const std::string& src, toml::array& a, const std::string& path, const std::string& entry,
                       const std::string& whole) {
  const std::string what = "'" + clip(whole) + "': the case has " + std::to_string(a.size()) + " [[" + path + "]]";
  if (std::all_of(entry.begin(), entry.end(), [](unsigned char ch) { return std::isdigit(ch) != 0; })) {
    const std::size_t k = entry.size() > 9 ? a.size() : std::stoul(entry);
    if (k >= a.size())
      throw InputError(src + ": " + what +
                       (a.empty() ? "" : " (" + path + "[0] to " + path + "[" + std::to_string(a.size() - 1) + "])"));
    if (!a.get(k)->is_table()) throw InputError(src + ": " + what + ", and " + path + "[" + entry + "] is no table");
    return k;
  }
  std::string names;
  for (std::size_t k = 0; k < a.size(); ++k) {
    const toml::table* t = a.get(k)->as_table();
    const toml::node* n = t ? t->get("name") : nullptr;
    if (!n || !n->is_string()) continue;
    if (*n->value<std::string>() == entry) return k;
    names += (names.empty() ? "" : ", ") + *n->value<std::string>();
  }
  throw InputError(src + ": " + what + ", none named '" + clip(entry) + "'" +
                   (names.empty() ? " (none has a name: give its index, " + path + "[0])"
                                  : " (names: " + clip(names, 120) + ")"));
}

} // namespace

std::set<std::string> apply_overrides(toml::table& root, const std::vector<std::string>& overrides) {
  const std::string src = "--set";
  std::set<std::string> done;
  for (const auto& o : overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos)
      throw InputError(src + ": expected section.key=value, found '" + clip(o) + "'");
    const std::vector<std::string> texts = split_path(o.substr(0, eq));
    const std::string value = trim(std::string_view(o).substr(eq + 1));
    std::vector<Part> parts;
    for (const auto& p : texts) {
      if (p.empty()) throw InputError(src + ": empty key in '" + clip(o) + "'");
      parts.push_back(parse_part(src, p, o));
    }
    const std::string& head = parts[0].name;

    // Validate the first two levels against the schema.
    if (std::find(top_level_keys.begin(), top_level_keys.end(), head) == top_level_keys.end()) {
      std::string msg = "unknown " + std::string(parts.size() > 1 ? "section" : "key") + " '" + head + "'";
      if (auto best = closest(head, top_level_keys)) msg += " (did you mean '" + std::string(*best) + "'?)";
      throw InputError(src + ": " + msg);
    }
    // On a mesh, [boundary] keys are the mesh's group names, checked against the mesh when it is read.
    const bool mesh_group = head == "boundary" && root.contains("mesh");
    if (parts.size() > 1 && !mesh_group && !parts[0].entry) {
      const Section* sec = find_section(head);
      if (!sec) throw InputError(src + ": '" + head + "' is not a section");
      const std::string& key = parts[1].name;
      if (std::find(sec->keys.begin(), sec->keys.end(), key) == sec->keys.end()) {
        std::string msg = "unknown key '" + head + "." + key + "'";
        if (auto best = closest(key, sec->keys))
          msg += " (did you mean '" + head + "." + std::string(*best) + "'?)";
        else
          msg += " (valid: " + join(sec->keys) + ")";
        throw InputError(src + ": " + msg);
      }
    }
    // The key inside an entry of an array of tables whose keys are known.
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      if (!parts[i].entry) continue;
      std::string array_path;
      for (std::size_t j = 0; j <= i; ++j) array_path = dotted(array_path, parts[j].name);
      const Section* entry = find_entry_keys(array_path);
      const std::string& key = parts[i + 1].name;
      if (entry && std::find(entry->keys.begin(), entry->keys.end(), key) == entry->keys.end()) {
        std::string written;  // the entry as the key gives it: source[0], source[spring]
        for (std::size_t j = 0; j <= i; ++j) written = dotted(written, texts[j]);
        std::string msg = "unknown key '" + written + "." + key + "'";
        if (auto best = closest(key, entry->keys))
          msg += " (did you mean '" + written + "." + std::string(*best) + "'?)";
        else
          msg += " (valid: " + join(entry->keys) + ")";
        throw InputError(src + ": " + msg);
      }
    }

    // Walk to the parent table, creating tables on the way; path names an entry by its index.
    toml::table* t = &root;
    std::string walked, path;
    toml::array* leaf_array = nullptr;  // where the last part picks an entry: its array and index
    std::size_t leaf_index = 0;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const Part& p = parts[i];
      const bool last = i + 1 == parts.size();
      walked = dotted(walked, p.name);
      path = dotted(path, p.name);
      if (last && !p.entry) break;
      toml::node* n = t->get(p.name);
      if (p.entry) {
        toml::array* a = n ? n->as_array() : nullptr;
        if (!a)
          throw InputError(src + ": cannot set '" + clip(o) + "': '" + walked + "' is " +
                           (n ? "a " + describe(*n) : std::string("not in the case")) + ", not an array of tables");
        const std::size_t k = pick_entry(src, *a, walked, *p.entry, o);
        path += "[" + std::to_string(k) + "]";
        walked = path;
        if (last) {
          leaf_array = a;
          leaf_index = k;
          break;
        }
        t = a->get(k)->as_table();
        continue;
      }
      if (!n) {
        t->insert(p.name, toml::table{});
        n = t->get(p.name);
      }
      if (!n->is_table())
        throw InputError(src + ": cannot set '" + path + "': '" + walked + "' is a " + describe(*n) +
                         ", not a table (set '" + walked + "' whole instead)");
      t = n->as_table();
    }
    const std::string leaf = parts.back().name;
    const auto assign = [&](auto&& node) {
      if (leaf_array) {
        if constexpr (!std::is_same_v<std::remove_cvref_t<decltype(node)>, toml::table>)
          throw InputError(src + ": '" + clip(o) + "': an entry of [[" + walked.substr(0, walked.rfind('[')) +
                           "]] is a table { ... }, found " + describe(node));
        leaf_array->replace(leaf_array->cbegin() + static_cast<std::ptrdiff_t>(leaf_index), node);
      } else {
        t->insert_or_assign(leaf, node);
      }
    };

    // The value as TOML, else as a plain string.
    bool set = false;
    try {
      const std::string doc = "v = " + value;
      toml::table parsed = toml::parse(std::string_view(doc), std::string_view("--set"));
      if (parsed.size() == 1) {
        if (toml::node* v = parsed.get("v")) {
          v->visit([&](auto& node) { assign(node); });
          set = true;
        }
      }
    } catch (const toml::parse_error&) {
    }
    if (!set) assign(toml::value<std::string>(value));
    done.insert(path);
  }
  return done;
}

} // namespace shallows::io::case_reader
