// SPDX-License-Identifier: Apache-2.0
// Build-time generator: loads catalog JSON with attnsel's own loader and writes constant C++ tables of it.
//
// Usage: attnsel_catalog_codegen OUTPUT NAME=PATH [NAME=PATH ...]
// The tables have the shape of include/attnsel/catalog/impl/catalog_tables.hpp; detail::tables::build_registry
// turns one into the registry parse_catalog would build. OUTPUT is rewritten only when it changes.
// A new catalog field needs one line here (in the emitter of its struct) and one in catalog_tables.hpp.
#include <attnsel/catalog/catalog.hpp>

#include <cstdio>
#include <exception>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace attnsel;

// A C++ string literal: printable ASCII as is, everything else as 3-digit octal escapes (which,
// unlike \x escapes, cannot swallow the digits that follow).
std::string literal(std::string_view text) {
  std::string out = "\"";
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c >= 0x20 && c < 0x7f && c != '?') {  // '?' kept out of trigraph reach
      out += ch;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    }
  }
  return out + "\"";
}

// A C++ identifier made from a catalog name (`vllm@1a2b-c` -> `vllm_1a2b_c`); the generator prefixes
// it with the catalog's position, so two names that map to the same text still differ.
std::string identifier(std::string_view name) {
  std::string out;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += ok ? c : '_';
  }
  return out;
}

class emitter {
 public:
  explicit emitter(std::string prefix) : prefix_(std::move(prefix)) {}

  // Defines `inline constexpr TYPE NAME[] = {items};` (before its first use) and returns the
  // `list` initializer naming it; `{}` when empty. Equal lists of one type are defined once, and each
  // distinct feature list gets a number, so the registry builder makes one feature_set of each
  // (feature_interner).
  std::string list(std::string_view type, const std::vector<std::string>& items) {
    if (items.empty()) return "{}";
    std::string body;
    for (std::size_t i = 0; i < items.size(); ++i) body += (i ? ", " : "") + items[i];
    const auto key = std::string(type) + "[] = {" + body + "}";
    auto it = defined_.find(key);
    if (it == defined_.end()) {
      it = defined_.emplace(key, prefix_ + std::to_string(next_++)).first;
      defs_ << "inline constexpr " << type << " " << it->second << "[] = {" << body << "};\n";
    }
    return "{" + it->second + ", " + std::to_string(items.size()) + "}";
  }

  std::string strings(const std::vector<std::string>& names) {
    std::vector<std::string> items;
    items.reserve(names.size());
    for (const auto& n : names) items.push_back(literal(n));
    return list("std::string_view", items);
  }
  // A feature list: its names and its number among the catalog's distinct feature lists.
  std::string strings(const feature_set& names) {
    if (names.empty()) return "{}";
    const auto names_list = strings(std::vector<std::string>(names.begin(), names.end()));
    const auto it = feature_ids_.emplace(names_list, feature_ids_.size()).first;
    return "{" + names_list + ", " + std::to_string(it->second) + "U}";
  }

  std::string uints(const std::vector<std::uint32_t>& values) {
    std::vector<std::string> items;
    items.reserve(values.size());
    for (auto v : values) items.push_back(std::to_string(v) + "U");
    return list("std::uint32_t", items);
  }

  // Enum sets, optionals and shape limits are written as the values themselves (constant-initialized),
  // so the registry builder copies them instead of converting.
  template <class E>
  static std::string set(enum_set<E> values, std::string_view type) {
    std::string out;
    const std::uint32_t bits = values.bits();
    for (unsigned v = 0; v < 32; ++v)
      if ((bits >> v) & 1U)
        out += (out.empty() ? "" : ", ") + ("static_cast<" + std::string(type)) + ">(" + std::to_string(v) + ")";
    return "{" + out + "}";
  }

  static std::string capability(const std::optional<cuda_capability>& c) {
    if (!c) return "{}";
    return "cuda_capability{" + std::to_string(c->major) + ", " + std::to_string(c->minor) + "}";
  }

  std::string arch(const std::optional<cuda_capability>& min, const std::optional<cuda_capability>& max,
                   const std::vector<gfx_arch>& archs, const std::vector<gfx_family>& families) {
    std::vector<std::string> a, f;
    for (const auto& g : archs)
      a.push_back("{" + std::to_string(g.major) + ", " + std::to_string(g.minor) + ", " + std::to_string(g.stepping) +
                  "}");
    for (const auto fam : families)
      f.push_back("static_cast<gfx_family>(" + std::to_string(static_cast<unsigned>(fam)) + ")");
    return "{" + capability(min) + ", " + capability(max) + ", " + list("gfx_arch", a) + ", " + list("gfx_family", f) +
           "}";
  }

  std::string head_sizes(const head_size_spec& h) {
    return "{static_cast<head_size_spec::kind>(" + std::to_string(static_cast<unsigned>(h.form)) + "), " +
           uints(h.values) + ", " + std::to_string(h.min) + "U, " + std::to_string(h.max) + "U, " +
           std::to_string(h.multiple_of) + "U}";
  }

  static std::string version(const std::optional<component_version>& v) {
    if (!v) return "{}";
    std::string out = "component_version{{{";
    for (std::size_t i = 0; i < v->parts.size(); ++i) out += (i ? ", " : "") + std::to_string(v->parts[i]) + "U";
    return out + "}}, " + std::to_string(v->count) + "}";
  }

  std::string requirements(const std::vector<component_condition>& list_of) {
    std::vector<std::string> items;
    items.reserve(list_of.size());
    for (const auto& r : list_of)
      items.push_back("{" + literal(r.name) + ", " + version(r.min_version) + ", " + version(r.below_version) + "}");
    return list("requirement", items);
  }

  static std::string shape(const shape_limits& s) {
    std::string out = "{{{";
    for (std::size_t i = 0; i < s.ranges.size(); ++i) {
      const auto& r = s.ranges[i];
      out += (i == 0 ? "" : ", ");
      out += r ? "count_range{" + std::to_string(r->min) + "U, " + std::to_string(r->max) + "U}" : std::string("{}");
    }
    return out + "}}}";
  }

  std::string condition(const call_condition& c) {
    return "{" + set(c.phases, "attention_phase") + ", " + set(c.dtypes, "data_type") + ", " +
           set(c.attn_types, "attention_type") + ", " + strings(c.features) + ", " + strings(c.without_features) +
           ", " + shape(c.shape) + ", " + (c.equal_seq_lens ? "true" : "false") + ", " +
           (c.head_sizes ? "true, " + head_sizes(*c.head_sizes) : std::string("false, {}")) + ", " +
           (c.value_head_sizes ? "true, " + head_sizes(*c.value_head_sizes) : std::string("false, {}")) + ", " +
           requirements(c.components) + ", " + (c.never ? "true" : "false") + "}";
  }

  std::string constraints(const std::vector<platform_constraint>& list_of) {
    std::vector<std::string> items;
    items.reserve(list_of.size());
    for (const auto& pc : list_of)
      items.push_back("{static_cast<device_vendor>(" + std::to_string(static_cast<unsigned>(pc.vendor)) + "), " +
                      arch(pc.min_capability, pc.max_capability, pc.archs, pc.families) + "}");
    return list("constraint", items);
  }

  std::string advisory_entry(const advisory& a) {
    return "{" + literal(a.id) + ", " + literal(a.variant) + ", " + constraints(a.platforms) + ", " +
           set(a.kv_cache_dtypes, "cache_dtype") + ", " + condition(a.when) + ", static_cast<advisory_action>(" +
           std::to_string(static_cast<unsigned>(a.action)) + "), " + literal(a.message) + ", " + strings(a.upstream) +
           "}";
  }

  std::string caps(const capabilities& c) {
    std::vector<std::string> by_dtype, rules;
    by_dtype.reserve(c.head_sizes_by_dtype.size());
    rules.reserve(c.call_rules.size());
    for (const auto& d : c.head_sizes_by_dtype)
      by_dtype.push_back("{static_cast<data_type>(" + std::to_string(static_cast<unsigned>(d.dtype)) + "), " +
                         head_sizes(d.head_sizes) + "}");
    for (const auto& r : c.call_rules)
      rules.push_back("{" + condition(r.when) + ", " + condition(r.require) + ", " + literal(r.note) + "}");
    std::ostringstream out;
    out << "{" << literal(c.variant) << ", " << set(c.domains, "attention_domain") << ", " << set(c.dtypes, "data_type")
        << ", " << set(c.kv_cache_dtypes, "cache_dtype") << ", " << head_sizes(c.head_sizes) << ", "
        << (c.value_head_sizes ? "true" : "false") << ", "
        << (c.value_head_sizes ? head_sizes(*c.value_head_sizes) : std::string("{}")) << ", "
        << uints(c.block_size_multiples) << ", " << c.preferred_block_size << "U, "
        << set(c.attn_types, "attention_type") << ", "
        << "static_cast<attention_mode>(" << static_cast<unsigned>(c.mode) << "), " << strings(c.features) << ", "
        << constraints(c.platforms) << ", " << requirements(c.requires_components) << ", "
        << list("dtype_heads", by_dtype) << ", " << shape(c.shape) << ", " << list("call_rule", rules) << "}";
    return out.str();
  }

  std::string backend(const backend_descriptor& b) {
    std::vector<std::string> variants, advisories;
    for (const auto& v : b.variants) variants.push_back(caps(v));
    for (const auto& a : b.advisories) advisories.push_back(advisory_entry(a));
    return "{" + literal(b.name) + ", " + strings(b.aliases) + ", " + literal(b.description) + ", " +
           set(b.domains, "attention_domain") + ", " + (b.forced_only ? "true" : "false") + ", " + caps(b.caps) + ", " +
           list("caps", variants) + ", " + list("advisory", advisories) + "}";
  }

  std::string rule(const policy_rule& r) {
    // Timings hold for one machine: a measured rule is an overlay the user loads, never compiled in.
    if (r.measured)
      throw std::runtime_error("a built-in catalog has a measured rule (" + to_string(r) +
                               "); load measured rules as an overlay (--catalog FILE)");
    std::vector<std::string> order;
    for (const auto& e : r.order)
      order.push_back("{" + literal(e.backend) + ", " + strings(e.when) + ", " + strings(e.unless) + ", " +
                      strings(e.unless_features) + ", " + set(e.phases, "attention_phase") + ", " + shape(e.shape) +
                      "}");
    std::ostringstream out;
    out << "{static_cast<attention_domain>(" << static_cast<unsigned>(r.domain) << "), static_cast<device_vendor>("
        << static_cast<unsigned>(r.vendor) << "), " << arch(r.min_capability, r.max_capability, r.archs, r.families)
        << ", " << set(r.modes, "attention_mode") << ", " << set(r.attn_types, "attention_type") << ", "
        << r.min_num_heads << "U, " << r.max_num_heads << "U, " << set(r.kv_cache_dtypes, "cache_dtype") << ", "
        << set(r.dtypes, "data_type") << ", " << uints(r.head_sizes) << ", " << strings(r.features) << ", "
        << strings(r.without_features) << ", " << set(r.phases, "attention_phase") << ", " << shape(r.shape) << ", "
        << literal(r.note) << ", static_cast<forced_handling>(" << static_cast<unsigned>(r.forced) << "), "
        << list("entry", order) << "}";
    return out.str();
  }

  std::string catalog_tables(std::string_view name, const registry& reg) {
    std::vector<std::string> backends, rules;
    for (const auto& b : reg.backends()) backends.push_back(backend(b));
    for (const auto& r : reg.policy().rules) rules.push_back(rule(r));
    std::vector<std::string> implications;
    for (const auto& i : reg.implications())
      implications.push_back("{" + literal(i.component) + ", " + strings(i.implies) + "}");
    const auto b = list("backend", backends);
    const auto r = list("rule", rules);
    const auto imp = list("implication", implications);
    // The name index and the resolved policy, as reindex built them for `reg`.
    std::vector<std::string> names;
    for (const auto& n : reg.all_names())
      names.push_back("{" + literal(n) + ", " + std::to_string(*reg.index_of(n)) + "U}");
    std::vector<std::string> resolved, starts;
    for (std::size_t i = 0; i < reg.policy().rules.size(); ++i) {
      starts.push_back(std::to_string(resolved.size()) + "U");
      for (std::size_t k = 0; k < reg.policy().rules[i].order.size(); ++k)
        resolved.push_back(std::to_string(reg.resolved(i, k)) + "U");
    }
    return "{" + literal(name) + ", " + b + ", " + r + ", " + imp + ", " + std::to_string(feature_ids_.size()) + "U, " +
           list("name_entry", names) + ", " + list("std::size_t", resolved) + ", " + list("std::size_t", starts) + "}";
  }

  [[nodiscard]] std::string definitions() const { return defs_.str(); }

 private:
  std::string prefix_;
  std::size_t next_ = 0;
  std::ostringstream defs_;
  std::map<std::string, std::string> defined_;      // "TYPE[] = {items}" -> the array's name
  std::map<std::string, std::size_t> feature_ids_;  // a feature list's `list` initializer -> its id
};

int run(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: attnsel_catalog_codegen OUTPUT NAME=PATH [NAME=PATH ...]\n");
    return 2;
  }
  std::ostringstream body;
  std::vector<std::string> catalogs;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "attnsel_catalog_codegen: expected NAME=PATH, got '%s'\n", arg.c_str());
      return 2;
    }
    const std::string name = arg.substr(0, eq);
    const auto loaded = read_catalog_file(arg.substr(eq + 1));
    const std::string id = "c" + std::to_string(i - 2) + "_" + identifier(name);
    emitter e(id + "_");
    const auto tables = e.catalog_tables(name, loaded.registry);
    const std::string path = arg.substr(eq + 1);
    body << "// " << literal(name) << " (" << literal(path.substr(path.find_last_of("/\\") + 1)) << ")\n"
         << e.definitions() << "inline constexpr catalog " << id << " = " << tables << ";\n\n";
    catalogs.push_back("&" + id);
  }
  std::ostringstream out;
  out << "// SPDX-License-Identifier: Apache-2.0\n"
         "// Generated by tools/codegen/catalog_tables.cpp from catalog/*.json at build time; do not edit.\n"
         "#pragma once\n\n"
         "#include <attnsel/catalog/impl/catalog_tables.hpp>\n\n"
         "#include <array>\n#include <cstdint>\n#include <string_view>\n\n"
         "ATTNSEL_BEGIN_NAMESPACE\nnamespace detail::tables {\n\n"
      << body.str() << "/// Every compiled-in catalog, in the order of ATTNSEL_CATALOGS.\n"
      << "inline constexpr std::array<const catalog*, " << catalogs.size() << "> builtin{{";
  for (std::size_t i = 0; i < catalogs.size(); ++i) out << (i ? ", " : "") << catalogs[i];
  out << "}};\n\n}  // namespace detail::tables\nATTNSEL_END_NAMESPACE\n";

  const std::string path = argv[1];
  const std::string content = out.str();
  {
    std::ifstream old(path, std::ios::binary);
    std::stringstream existing;
    existing << old.rdbuf();
    if (old && existing.str() == content) return 0;
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << content;
  if (!file) {
    std::fprintf(stderr, "attnsel_catalog_codegen: cannot write %s\n", path.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnsel_catalog_codegen: %s\n", e.what());
    return 1;
  }
}
