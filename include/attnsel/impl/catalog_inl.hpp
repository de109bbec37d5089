// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for catalog.hpp: the strict JSON reader and the writer.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog.hpp>
#endif

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

using json = nlohmann::json;

// RFC 6901: '~' becomes "~0" and '/' becomes "~1" inside a pointer token.
inline std::string pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

inline std::string child(const std::string& ptr, std::string_view key) { return ptr + "/" + pointer_token(key); }
inline std::string child(const std::string& ptr, std::size_t index) { return ptr + "/" + std::to_string(index); }

inline std::string kind_of(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "the string \"" + printable(j.get_ref<const std::string&>(), 40) + "\"";
    case json::value_t::boolean: return j.get<bool>() ? "true" : "false";
    case json::value_t::number_integer: return std::to_string(j.get<std::int64_t>());
    case json::value_t::number_unsigned: return std::to_string(j.get<std::uint64_t>());
    case json::value_t::number_float: return "the number " + j.dump();
    default: return "an unsupported value";
  }
}

// Reads one catalog document; every failure names the pointer and what was expected.
class catalog_reader {
 public:
  explicit catalog_reader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void fail(const std::string& ptr, const std::string& problem) const {
    throw catalog_error(origin_, ptr, problem);
  }
  [[noreturn]] void expected(const std::string& ptr, const std::string& what, const json& got) const {
    fail(ptr, "expected " + what + ", got " + kind_of(got));
  }

  void require_object(const json& j, const std::string& ptr, std::initializer_list<std::string_view> allowed) const {
    if (!j.is_object()) expected(ptr, "an object", j);
    for (const auto& item : j.items()) {
      const bool known = std::find(allowed.begin(), allowed.end(), item.key()) != allowed.end();
      if (!known) {
        std::string list;
        for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        fail(child(ptr, item.key()), "unknown key \"" + printable(item.key(), 40) + "\"; expected one of: " + list);
      }
    }
  }

  const json* member(const json& obj, std::string_view key) const {
    const auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }

  const json& required(const json& obj, const std::string& ptr, std::string_view key) const {
    const json* m = member(obj, key);
    if (m == nullptr) fail(ptr, "missing required key \"" + std::string(key) + "\"");
    return *m;
  }

  std::string string(const json& j, const std::string& ptr) const {
    if (!j.is_string()) expected(ptr, "a string", j);
    return j.get<std::string>();
  }

  std::uint64_t unsigned_int(const json& j, const std::string& ptr, std::uint64_t min, std::uint64_t max) const {
    // The expectation text is built only on failure: catalogs are read at every engine start.
    const auto range = [&] { return "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]"; };
    if (j.is_number_unsigned()) {
      const auto v = j.get<std::uint64_t>();
      if (v < min || v > max) expected(ptr, range(), j);
      return v;
    }
    if (j.is_number_integer()) {
      const auto v = j.get<std::int64_t>();
      if (v < 0 || static_cast<std::uint64_t>(v) < min || static_cast<std::uint64_t>(v) > max) expected(ptr, range(), j);
      return static_cast<std::uint64_t>(v);
    }
    expected(ptr, range(), j);
  }

  template <class E>
  E enumerator(const json& j, const std::string& ptr) const {
    // Catalogs are written by people but read by scripts: canonical names only, exact case.
    if (j.is_string())
      for (E v : enum_values<E>())
        if (to_string(v) == j.get_ref<const std::string&>()) return v;
    expected(ptr, "one of " + enum_names<E>(), j);
  }

  template <class E>
  enum_set<E> enum_list(const json& j, const std::string& ptr, bool allow_any) const {
    if (allow_any && j.is_string() && j.get_ref<const std::string&>() == "any") return {};
    if (!j.is_array() || j.empty())
      expected(ptr, std::string("a non-empty array of ") + std::string(enum_table<E>::type_name) + " names" +
                        (allow_any ? " or \"any\"" : ""),
               j);
    enum_set<E> out;
    for (std::size_t i = 0; i < j.size(); ++i) {
      const E v = enumerator<E>(j[i], child(ptr, i));
      if (out.contains(v)) fail(child(ptr, i), "duplicate value \"" + std::string(to_string(v)) + "\"");
      out.insert(v);
    }
    return out;
  }

  feature_set features(const json& j, const std::string& ptr) const {
    if (!j.is_array()) expected(ptr, "an array of feature names", j);
    feature_set out;
    for (std::size_t i = 0; i < j.size(); ++i) {
      const auto name = string(j[i], child(ptr, i));
      if (!is_valid_feature_name(name)) expected(child(ptr, i), "a lower_snake feature name", j[i]);
      out.insert(name);
    }
    return out;
  }

  std::vector<std::string> names(const json& j, const std::string& ptr, const char* what) const {
    if (!j.is_array()) expected(ptr, std::string("an array of ") + what, j);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < j.size(); ++i) {
      auto s = string(j[i], child(ptr, i));
      if (s.empty()) expected(child(ptr, i), std::string("a non-empty ") + what, j[i]);
      out.push_back(std::move(s));
    }
    return out;
  }

  cuda_capability capability(const json& j, const std::string& ptr) const {
    const std::string what = "a compute capability \"major.minor\" such as \"9.0\"";
    if (!j.is_string()) expected(ptr, what, j);
    const auto cc = parse_cuda_capability(j.get_ref<const std::string&>());
    if (!cc) expected(ptr, what, j);
    return *cc;
  }

  std::vector<gfx_arch> archs(const json& j, const std::string& ptr) const {
    if (!j.is_array() || j.empty()) expected(ptr, "a non-empty array of gfx targets", j);
    std::vector<gfx_arch> out;
    for (std::size_t i = 0; i < j.size(); ++i) {
      const auto s = string(j[i], child(ptr, i));
      const auto a = parse_gfx_arch(s);
      if (!a) expected(child(ptr, i), "a gfx target such as \"gfx942\"", j[i]);
      out.push_back(*a);
    }
    return out;
  }

  std::vector<gfx_family> families(const json& j, const std::string& ptr) const {
    if (!j.is_array() || j.empty()) expected(ptr, "a non-empty array of gfx families", j);
    std::vector<gfx_family> out;
    for (std::size_t i = 0; i < j.size(); ++i) out.push_back(enumerator<gfx_family>(j[i], child(ptr, i)));
    return out;
  }

  void capability_range(const json& obj, const std::string& ptr, std::optional<cuda_capability>& min,
                        std::optional<cuda_capability>& max) const {
    if (const json* m = member(obj, "min_capability")) min = capability(*m, child(ptr, "min_capability"));
    if (const json* m = member(obj, "max_capability")) max = capability(*m, child(ptr, "max_capability"));
    if (min && max && *max < *min) fail(child(ptr, "max_capability"), "capability range is inverted (max < min)");
  }

  head_size_spec head_sizes(const json& j, const std::string& ptr) const {
    constexpr std::uint64_t limit = 1u << 16;
    if (j.is_string() && j.get_ref<const std::string&>() == "any") return head_size_spec::any();
    if (j.is_array()) {
      if (j.empty()) expected(ptr, "a non-empty array of head sizes", j);
      std::vector<std::uint32_t> sizes;
      for (std::size_t i = 0; i < j.size(); ++i)
        sizes.push_back(static_cast<std::uint32_t>(unsigned_int(j[i], child(ptr, i), 1, limit)));
      return head_size_spec::set(std::move(sizes));
    }
    if (j.is_object()) {
      require_object(j, ptr, {"min", "max", "multiple_of"});
      if (j.empty()) expected(ptr, "a range with at least one of min, max, multiple_of", j);
      head_size_spec s;
      s.form = head_size_spec::kind::range;
      if (const json* m = member(j, "min")) s.min = static_cast<std::uint32_t>(unsigned_int(*m, child(ptr, "min"), 1, limit));
      if (const json* m = member(j, "max")) s.max = static_cast<std::uint32_t>(unsigned_int(*m, child(ptr, "max"), 1, limit));
      if (const json* m = member(j, "multiple_of"))
        s.multiple_of = static_cast<std::uint32_t>(unsigned_int(*m, child(ptr, "multiple_of"), 1, limit));
      if (s.min > s.max) fail(child(ptr, "min"), "head-size range is empty: min " + std::to_string(s.min) + " > max " +
                                                     std::to_string(s.max));
      return s;
    }
    expected(ptr, "\"any\", an array of head sizes or a {min, max, multiple_of} range", j);
  }

  std::vector<platform_constraint> platforms(const json& j, const std::string& ptr) const {
    if (j.is_string() && j.get_ref<const std::string&>() == "any") return {};
    if (!j.is_array() || j.empty()) expected(ptr, "a non-empty array of platforms or \"any\"", j);
    std::vector<platform_constraint> out;
    for (std::size_t i = 0; i < j.size(); ++i) {
      const auto p = child(ptr, i);
      require_object(j[i], p, {"vendor", "min_capability", "max_capability", "archs", "families"});
      platform_constraint pc;
      pc.vendor = enumerator<device_vendor>(required(j[i], p, "vendor"), child(p, "vendor"));
      capability_range(j[i], p, pc.min_capability, pc.max_capability);
      if (const json* m = member(j[i], "archs")) pc.archs = archs(*m, child(p, "archs"));
      if (const json* m = member(j[i], "families")) pc.families = families(*m, child(p, "families"));
      out.push_back(std::move(pc));
    }
    return out;
  }

  std::vector<component_requirement> requirements(const json& j, const std::string& ptr) const {
    if (!j.is_array()) expected(ptr, "an array of {component, min_version}", j);
    std::vector<component_requirement> out;
    for (std::size_t i = 0; i < j.size(); ++i) {
      const auto p = child(ptr, i);
      require_object(j[i], p, {"component", "min_version"});
      component_requirement r;
      r.name = string(required(j[i], p, "component"), child(p, "component"));
      if (r.name.empty()) expected(child(p, "component"), "a non-empty component name", j[i]["component"]);
      if (const json* m = member(j[i], "min_version")) {
        const auto text = string(*m, child(p, "min_version"));
        r.min_version = parse_component_version(text);
        if (!r.min_version) expected(child(p, "min_version"), "a version of 1-4 dot-separated numbers", *m);
      }
      out.push_back(std::move(r));
    }
    return out;
  }

  static constexpr std::array<std::string_view, 11> capability_keys{
      {"dtypes", "kv_cache_dtypes", "head_sizes", "value_head_sizes", "block_size_multiples",
       "preferred_block_size", "attn_types", "mode", "features", "platforms", "requires"}};

  // Applies the capability keys present in `j` onto `c` (variants start from the backend's values).
  void apply_capabilities(const json& j, const std::string& ptr, capabilities& c) const {
    if (const json* m = member(j, "dtypes")) c.dtypes = enum_list<data_type>(*m, child(ptr, "dtypes"), true);
    if (const json* m = member(j, "kv_cache_dtypes"))
      c.kv_cache_dtypes = enum_list<cache_dtype>(*m, child(ptr, "kv_cache_dtypes"), true);
    if (const json* m = member(j, "head_sizes")) c.head_sizes = head_sizes(*m, child(ptr, "head_sizes"));
    if (const json* m = member(j, "value_head_sizes")) {
      if (m->is_string() && m->get_ref<const std::string&>() == "equal")
        c.value_head_sizes.reset();
      else
        c.value_head_sizes = head_sizes(*m, child(ptr, "value_head_sizes"));
    }
    if (const json* m = member(j, "block_size_multiples")) {
      const auto p = child(ptr, "block_size_multiples");
      c.block_size_multiples.clear();
      if (!(m->is_string() && m->get_ref<const std::string&>() == "any")) {
        if (!m->is_array() || m->empty()) expected(p, "a non-empty array of block sizes or \"any\"", *m);
        for (std::size_t i = 0; i < m->size(); ++i)
          c.block_size_multiples.push_back(static_cast<std::uint32_t>(unsigned_int((*m)[i], child(p, i), 1, 1u << 20)));
      }
    }
    if (const json* m = member(j, "preferred_block_size"))
      c.preferred_block_size = static_cast<std::uint32_t>(unsigned_int(*m, child(ptr, "preferred_block_size"), 0, 1u << 20));
    if (const json* m = member(j, "attn_types"))
      c.attn_types = enum_list<attention_type>(*m, child(ptr, "attn_types"), true);
    if (const json* m = member(j, "mode")) c.mode = enumerator<attention_mode>(*m, child(ptr, "mode"));
    if (const json* m = member(j, "features")) c.features = features(*m, child(ptr, "features"));
    if (const json* m = member(j, "platforms")) c.platforms = platforms(*m, child(ptr, "platforms"));
    if (const json* m = member(j, "requires")) c.requires_components = requirements(*m, child(ptr, "requires"));
  }

  backend_descriptor backend(const json& j, const std::string& ptr) const {
    std::vector<std::string_view> keys = {"name", "aliases", "description", "domains", "variants"};
    keys.insert(keys.end(), capability_keys.begin(), capability_keys.end());
    check_keys(j, ptr, keys);
    backend_descriptor b;
    b.name = string(required(j, ptr, "name"), child(ptr, "name"));
    if (!is_valid_backend_name(b.name)) expected(child(ptr, "name"), "an UPPER_SNAKE backend name", j["name"]);
    if (const json* m = member(j, "aliases")) {
      b.aliases = names(*m, child(ptr, "aliases"), "UPPER_SNAKE aliases");
      for (std::size_t i = 0; i < b.aliases.size(); ++i)
        if (!is_valid_backend_name(b.aliases[i]))
          expected(child(child(ptr, "aliases"), i), "an UPPER_SNAKE alias", (*m)[i]);
    }
    if (const json* m = member(j, "description")) b.description = string(*m, child(ptr, "description"));
    b.domains = enum_list<attn_domain>(required(j, ptr, "domains"), child(ptr, "domains"), false);
    apply_capabilities(j, ptr, b.caps);
    if (const json* m = member(j, "variants")) {
      const auto vp = child(ptr, "variants");
      if (!m->is_array() || m->empty()) expected(vp, "a non-empty array of variants", *m);
      for (std::size_t i = 0; i < m->size(); ++i) {
        const auto p = child(vp, i);
        std::vector<std::string_view> vkeys = {"name", "domains"};
        vkeys.insert(vkeys.end(), capability_keys.begin(), capability_keys.end());
        check_keys((*m)[i], p, vkeys);
        capabilities v = b.caps;
        v.variant = string(required((*m)[i], p, "name"), child(p, "name"));
        if (v.variant.empty()) expected(child(p, "name"), "a non-empty variant name", (*m)[i]["name"]);
        for (const auto& other : b.variants)
          if (other.variant == v.variant) fail(child(p, "name"), "duplicate variant name \"" + v.variant + "\"");
        v.domains = {};
        if (const json* d = member((*m)[i], "domains")) {
          v.domains = enum_list<attn_domain>(*d, child(p, "domains"), false);
          bool inside = true;
          v.domains.for_each([&](attn_domain x) { inside = inside && b.domains.contains(x); });
          if (!inside) fail(child(p, "domains"), "variant serves a domain its backend does not");
        }
        apply_capabilities((*m)[i], p, v);
        b.variants.push_back(std::move(v));
      }
    }
    return b;
  }

  void check_keys(const json& j, const std::string& ptr, const std::vector<std::string_view>& allowed) const {
    if (!j.is_object()) expected(ptr, "an object", j);
    for (const auto& item : j.items()) {
      if (std::find(allowed.begin(), allowed.end(), item.key()) == allowed.end()) {
        std::string list;
        for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        fail(child(ptr, item.key()), "unknown key \"" + printable(item.key(), 40) + "\"; expected one of: " + list);
      }
    }
  }

  policy_entry entry(const json& j, const std::string& ptr) const {
    policy_entry e;
    if (j.is_string()) {
      e.backend = j.get<std::string>();
      return e;
    }
    require_object(j, ptr, {"backend", "when", "unless", "unless_features"});
    e.backend = string(required(j, ptr, "backend"), child(ptr, "backend"));
    if (const json* m = member(j, "when")) e.when = names(*m, child(ptr, "when"), "component names");
    if (const json* m = member(j, "unless")) e.unless = names(*m, child(ptr, "unless"), "component names");
    if (const json* m = member(j, "unless_features")) e.unless_features = features(*m, child(ptr, "unless_features"));
    return e;
  }

  policy_rule rule(const json& j, const std::string& ptr) const {
    require_object(j, ptr,
                   {"domain", "vendor", "min_capability", "max_capability", "archs", "families", "modes",
                    "min_num_heads", "max_num_heads", "kv_cache_dtypes", "dtypes", "features", "without_features",
                    "note", "order"});
    policy_rule r;
    r.domain = enumerator<attn_domain>(required(j, ptr, "domain"), child(ptr, "domain"));
    r.vendor = enumerator<device_vendor>(required(j, ptr, "vendor"), child(ptr, "vendor"));
    capability_range(j, ptr, r.min_capability, r.max_capability);
    if (const json* m = member(j, "archs")) r.archs = archs(*m, child(ptr, "archs"));
    if (const json* m = member(j, "families")) r.families = families(*m, child(ptr, "families"));
    if (const json* m = member(j, "modes")) r.modes = enum_list<attention_mode>(*m, child(ptr, "modes"), false);
    constexpr std::uint64_t heads = 1u << 20;
    if (const json* m = member(j, "min_num_heads"))
      r.min_num_heads = static_cast<std::uint32_t>(unsigned_int(*m, child(ptr, "min_num_heads"), 1, heads));
    if (const json* m = member(j, "max_num_heads"))
      r.max_num_heads = static_cast<std::uint32_t>(unsigned_int(*m, child(ptr, "max_num_heads"), 1, heads));
    if (r.max_num_heads && r.min_num_heads > r.max_num_heads)
      fail(child(ptr, "max_num_heads"), "num_heads range is inverted (max < min)");
    if (const json* m = member(j, "kv_cache_dtypes"))
      r.kv_cache_dtypes = enum_list<cache_dtype>(*m, child(ptr, "kv_cache_dtypes"), false);
    if (const json* m = member(j, "dtypes")) r.dtypes = enum_list<data_type>(*m, child(ptr, "dtypes"), false);
    if (const json* m = member(j, "features")) r.features = features(*m, child(ptr, "features"));
    if (const json* m = member(j, "without_features")) r.without_features = features(*m, child(ptr, "without_features"));
    if (const json* m = member(j, "note")) r.note = string(*m, child(ptr, "note"));
    const auto op = child(ptr, "order");
    const json& order = required(j, ptr, "order");
    if (!order.is_array() || order.empty()) expected(op, "a non-empty array of backend names", order);
    for (std::size_t i = 0; i < order.size(); ++i) r.order.push_back(entry(order[i], child(op, i)));
    return r;
  }

  // `"implications": {"aiter_mha": ["aiter_enabled"], ...}` layered on `reg`'s: an entry replaces the
  // one of the same component, others are added.
  void implications(const json& j, registry& reg) const {
    const std::string ptr = "/implications";
    if (!j.is_object()) expected(ptr, "an object of component name -> array of implied component names", j);
    auto table = reg.implications();
    for (const auto& item : j.items()) {
      const auto p = child(ptr, item.key());
      if (!is_valid_feature_name(item.key())) fail(p, "\"" + printable(item.key(), 40) + "\" is not a lower_snake component name");
      component_implication imp{item.key(), {}};
      const json& names = item.value();
      if (!names.is_array() || names.empty()) expected(p, "a non-empty array of component names", names);
      for (std::size_t i = 0; i < names.size(); ++i) {
        auto name = string(names[i], child(p, i));
        if (!is_valid_feature_name(name)) expected(child(p, i), "a lower_snake component name", names[i]);
        imp.implies.push_back(std::move(name));
      }
      const auto it = std::find_if(table.begin(), table.end(),
                                   [&](const component_implication& x) { return x.component == imp.component; });
      if (it != table.end())
        *it = std::move(imp);
      else
        table.push_back(std::move(imp));
    }
    try {
      reg.set_implications(std::move(table));
    } catch (const registry_error& e) {
      fail(ptr, e.what());
    }
  }

  // Reads a whole document. With `base`, the document is an overlay: its backends add to or replace
  // base's, its rules go in front, and its policies may name base's backends.
  catalog document(const json& j, const registry* base = nullptr) const {
    require_object(j, "", {"format", "version", "name", "description", "source", "commits", "backends", "policies",
                           "implications"});
    if (string(required(j, "", "format"), "/format") != "attnsel-catalog")
      expected("/format", "\"attnsel-catalog\"", j["format"]);
    const auto version = unsigned_int(required(j, "", "version"), "/version", 1, 1000);
    if (version != catalog_format_version)
      fail("/version", "unsupported catalog version " + std::to_string(version) + "; this library reads version " +
                           std::to_string(catalog_format_version));
    catalog c;
    c.info.name = string(required(j, "", "name"), "/name");
    if (const json* m = member(j, "description")) c.info.description = string(*m, "/description");
    if (const json* m = member(j, "source")) c.info.source = string(*m, "/source");
    if (const json* m = member(j, "commits")) c.info.commits = names(*m, "/commits", "owner/repo@commit strings");
    if (base) c.registry = *base;

    const json& backends = required(j, "", "backends");
    if (!backends.is_array()) expected("/backends", "an array of backends", backends);
    std::vector<std::string> own_names;
    for (std::size_t i = 0; i < backends.size(); ++i) {
      const auto p = child("/backends", i);
      auto b = backend(backends[i], p);
      if (std::find(own_names.begin(), own_names.end(), b.name) != own_names.end())
        fail(child(p, "name"), "duplicate backend name " + b.name);
      own_names.push_back(b.name);
      try {
        c.registry.add_or_replace(std::move(b));
      } catch (const registry_error& e) {
        fail(p, e.what());
      }
    }
    std::vector<policy_rule> rules;
    if (const json* m = member(j, "policies")) {
      if (!m->is_array()) expected("/policies", "an array of rules", *m);
      for (std::size_t i = 0; i < m->size(); ++i) {
        const auto p = child("/policies", i);
        auto r = rule((*m)[i], p);
        for (std::size_t k = 0; k < r.order.size(); ++k)
          if (!c.registry.find(r.order[k].backend)) {
            std::string names;
            for (const auto& b : c.registry.backends()) names += (names.empty() ? "" : ", ") + b.name;
            fail(child(child(p, "order"), k), "unknown backend \"" + printable(r.order[k].backend, 64) +
                                                  "\"; known backends: " + (names.empty() ? std::string("none") : names));
          }
        rules.push_back(std::move(r));
      }
    }
    try {
      if (base) {
        c.registry.prepend_rules(std::move(rules));
      } else {
        priority_policy policy;
        policy.rules = std::move(rules);
        c.registry.set_policy(std::move(policy));
      }
    } catch (const registry_error& e) {
      fail("/policies", e.what());
    }
    if (const json* m = member(j, "implications")) implications(*m, c.registry);
    return c;
  }

 private:
  std::string origin_;
};

// Refuses nesting deeper than `limit` before the recursive parts of a JSON library see it.
inline void check_depth(std::string_view text, std::size_t limit, const std::string& origin) {
  if (limit >= text.size()) return;  // no text this short can nest deeper than its length
  std::size_t depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > limit)
        throw catalog_error(origin, "", "nesting deeper than " + std::to_string(limit) + " levels at byte " +
                                            std::to_string(i));
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

// ---- writer -------------------------------------------------------------------------------------

template <class E>
json enum_list_json(enum_set<E> set) {
  if (set.empty()) return "any";
  json out = json::array();
  set.for_each([&](E v) { out.push_back(std::string(to_string(v))); });
  return out;
}

inline json head_sizes_json(const head_size_spec& s) {
  switch (s.form) {
    case head_size_spec::kind::any: return "any";
    case head_size_spec::kind::set: return s.values;
    case head_size_spec::kind::range: {
      json out = json::object();
      out["min"] = s.min;
      if (s.max != std::numeric_limits<std::uint32_t>::max()) out["max"] = s.max;
      out["multiple_of"] = s.multiple_of;
      return out;
    }
  }
  return "any";
}

inline std::string capability_text(cuda_capability c) {
  return std::to_string(c.major) + "." + std::to_string(c.minor);
}

inline json capabilities_json(const capabilities& c, json out) {
  out["dtypes"] = enum_list_json(c.dtypes);
  out["kv_cache_dtypes"] = enum_list_json(c.kv_cache_dtypes);
  out["head_sizes"] = head_sizes_json(c.head_sizes);
  out["value_head_sizes"] = c.value_head_sizes ? head_sizes_json(*c.value_head_sizes) : json("equal");
  out["block_size_multiples"] = c.block_size_multiples.empty() ? json("any") : json(c.block_size_multiples);
  out["preferred_block_size"] = c.preferred_block_size;
  out["attn_types"] = enum_list_json(c.attn_types);
  out["mode"] = std::string(to_string(c.mode));
  out["features"] = json::array();
  for (const auto& f : c.features) out["features"].push_back(f);
  if (c.platforms.empty()) {
    out["platforms"] = "any";
  } else {
    out["platforms"] = json::array();
    for (const auto& pc : c.platforms) {
      json p = {{"vendor", std::string(to_string(pc.vendor))}};
      if (pc.min_capability) p["min_capability"] = capability_text(*pc.min_capability);
      if (pc.max_capability) p["max_capability"] = capability_text(*pc.max_capability);
      if (!pc.archs.empty()) {
        p["archs"] = json::array();
        for (const auto& a : pc.archs) p["archs"].push_back(a.name());
      }
      if (!pc.families.empty()) {
        p["families"] = json::array();
        for (auto f : pc.families) p["families"].push_back(std::string(to_string(f)));
      }
      out["platforms"].push_back(std::move(p));
    }
  }
  out["requires"] = json::array();
  for (const auto& r : c.requires_components) {
    json req = {{"component", r.name}};
    if (r.min_version) req["min_version"] = r.min_version->str();
    out["requires"].push_back(std::move(req));
  }
  return out;
}

}  // namespace detail

ATTNSEL_INLINE catalog parse_catalog(const nlohmann::json& doc, std::string_view origin) {
  return detail::catalog_reader(std::string(origin)).document(doc);
}

namespace detail {
inline nlohmann::json parse_json_text(std::string_view text, const std::string& where, const catalog_limits& limits) {
  if (text.size() > limits.max_bytes)
    throw catalog_error(where, "", "file is " + std::to_string(text.size()) + " bytes; the limit is " +
                                       std::to_string(limits.max_bytes));
  check_depth(text, limits.max_depth, where);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    // parse_error, but also out_of_range for numbers no double holds ("1e999"): every failure of the
    // JSON parser is malformed input. nlohmann's text reads "[json.exception.parse_error.101] ...".
    std::string msg = e.what();
    const auto pos = msg.find("] ");
    throw catalog_error(where, "", "malformed JSON: " + (pos == std::string::npos ? msg : msg.substr(pos + 2)));
  }
  return doc;
}

inline std::string read_file_text(const std::string& path, const catalog_limits& limits) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw catalog_error(path, "", "no such file");
  if (std::filesystem::is_directory(status)) throw catalog_error(path, "", "is a directory, expected a JSON file");
  if (!std::filesystem::is_regular_file(status)) throw catalog_error(path, "", "is not a regular file");
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > limits.max_bytes)
    throw catalog_error(path, "", "file is " + std::to_string(size) + " bytes; the limit is " +
                                      std::to_string(limits.max_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw catalog_error(path, "", "cannot be opened for reading");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw catalog_error(path, "", "read error");
  return text;
}
}  // namespace detail

ATTNSEL_INLINE catalog parse_catalog_text(std::string_view text, std::string_view origin, const catalog_limits& limits) {
  const std::string where(origin);
  return detail::catalog_reader(where).document(detail::parse_json_text(text, where, limits));
}

ATTNSEL_INLINE catalog read_catalog_file(const std::string& path, const catalog_limits& limits) {
  return parse_catalog_text(detail::read_file_text(path, limits), path, limits);
}

ATTNSEL_INLINE void merge_catalog_file(registry& reg, const std::string& path, const catalog_limits& limits) {
  const auto doc = detail::parse_json_text(detail::read_file_text(path, limits), path, limits);
  // The merged registry is built aside and swapped in only when complete.
  auto merged = detail::catalog_reader(path).document(doc, &reg);
  reg = std::move(merged.registry);
}

ATTNSEL_INLINE nlohmann::json to_json(const catalog& c) {
  using detail::json;
  json out = {{"format", "attnsel-catalog"}, {"version", catalog_format_version}, {"name", c.info.name}};
  if (!c.info.description.empty()) out["description"] = c.info.description;
  if (!c.info.source.empty()) out["source"] = c.info.source;
  if (!c.info.commits.empty()) out["commits"] = c.info.commits;
  out["backends"] = json::array();
  for (const auto& b : c.registry.backends()) {
    json j = {{"name", b.name}};
    if (!b.aliases.empty()) j["aliases"] = b.aliases;
    if (!b.description.empty()) j["description"] = b.description;
    j["domains"] = detail::enum_list_json(b.domains);
    j = detail::capabilities_json(b.caps, std::move(j));
    if (!b.variants.empty()) {
      j["variants"] = json::array();
      for (const auto& v : b.variants) {
        json vj = {{"name", v.variant}};
        if (!v.domains.empty()) vj["domains"] = detail::enum_list_json(v.domains);
        j["variants"].push_back(detail::capabilities_json(v, std::move(vj)));
      }
    }
    out["backends"].push_back(std::move(j));
  }
  out["policies"] = json::array();
  for (const auto& r : c.registry.policy().rules) {
    json j = {{"domain", std::string(to_string(r.domain))}, {"vendor", std::string(to_string(r.vendor))}};
    if (r.min_capability) j["min_capability"] = detail::capability_text(*r.min_capability);
    if (r.max_capability) j["max_capability"] = detail::capability_text(*r.max_capability);
    if (!r.archs.empty()) {
      j["archs"] = json::array();
      for (const auto& a : r.archs) j["archs"].push_back(a.name());
    }
    if (!r.families.empty()) {
      j["families"] = json::array();
      for (auto f : r.families) j["families"].push_back(std::string(to_string(f)));
    }
    if (!r.modes.empty()) j["modes"] = detail::enum_list_json(r.modes);
    if (r.min_num_heads) j["min_num_heads"] = r.min_num_heads;
    if (r.max_num_heads) j["max_num_heads"] = r.max_num_heads;
    if (!r.kv_cache_dtypes.empty()) j["kv_cache_dtypes"] = detail::enum_list_json(r.kv_cache_dtypes);
    if (!r.dtypes.empty()) j["dtypes"] = detail::enum_list_json(r.dtypes);
    const auto names = [](const feature_set& f) {
      json a = json::array();
      for (const auto& n : f) a.push_back(n);
      return a;
    };
    if (!r.features.empty()) j["features"] = names(r.features);
    if (!r.without_features.empty()) j["without_features"] = names(r.without_features);
    if (!r.note.empty()) j["note"] = r.note;
    j["order"] = json::array();
    for (const auto& e : r.order) {
      if (e.when.empty() && e.unless.empty() && e.unless_features.empty()) {
        j["order"].push_back(e.backend);
        continue;
      }
      json ej = {{"backend", e.backend}};
      if (!e.when.empty()) ej["when"] = e.when;
      if (!e.unless.empty()) ej["unless"] = e.unless;
      if (!e.unless_features.empty()) ej["unless_features"] = names(e.unless_features);
      j["order"].push_back(std::move(ej));
    }
    out["policies"].push_back(std::move(j));
  }
  if (!c.registry.implications().empty()) {
    out["implications"] = json::object();
    for (const auto& imp : c.registry.implications()) out["implications"][imp.component] = imp.implies;
  }
  return out;
}

ATTNSEL_END_NAMESPACE
