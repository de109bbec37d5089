// SPDX-License-Identifier: Apache-2.0
// Catalog reading: a parsed JSON document to a catalog, strictly, with one precise error.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog/catalog.hpp>
#endif

#include <attnsel/catalog/impl/descriptor_reader.hpp>
#include <attnsel/catalog/impl/json_reader.hpp>
#include <attnsel/core/impl/text.hpp>

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

// Reads one catalog document on top of the typed reads of json_reader.
// Reads one catalog document: its policies, measured rules, stock and implications here, its backends
// through descriptor_reader.
class catalog_reader : public descriptor_reader {
 public:
  using descriptor_reader::descriptor_reader;

  policy_entry entry(const json& j, const std::string& ptr) const {
    policy_entry e;
    const auto backend_name = [&](const json& v, const std::string& p) {
      auto name = string(v, p);
      // The schema's spelling: canonical UPPER_SNAKE, as in backend names (look-ups ignore case).
      if (!is_valid_backend_name(name)) expected(p, "an UPPER_SNAKE backend name", v);
      return name;
    };
    if (j.is_string()) {
      e.backend = backend_name(j, ptr);
      return e;
    }
    static const auto keys = keys_of_fields<policy_entry>({});
    object(j, ptr, keys);
    e.backend = backend_name(required(j, ptr, "backend"), child(ptr, "backend"));
    if (const json* m = member(j, "when")) e.when = names(*m, child(ptr, "when"), "component names");
    if (const json* m = member(j, "unless")) e.unless = names(*m, child(ptr, "unless"), "component names");
    if (const json* m = member(j, "unless_features")) e.unless_features = features(*m, child(ptr, "unless_features"));
    e.phases = phases(j, ptr);
    read_shape(j, ptr, e.shape);
    return e;
  }

  // A rule's `measured` block (format 2): the fingerprint and the timings behind its order.
  measurement measured_of(const json& j, const std::string& ptr) const {
    needs_version_2(ptr);
    object(j, ptr, {"device", "components", "present", "absent", "times"});
    measurement m;
    if (const json* d = member(j, "device")) {
      m.device = string(*d, child(ptr, "device"));
      // An empty name would hold on every device (holds_on reads "" as "no device named").
      if (m.device.empty()) expected(child(ptr, "device"), "a device name (leave the key out for any device)", *d);
    }
    if (const json* c = member(j, "components")) {
      const auto cp = child(ptr, "components");
      list(*c, cp, R"(an array of "name=version" strings)", true);
      for (std::size_t i = 0; i < c->size(); ++i) {
        const auto p = child(cp, i);
        const auto spec = string((*c)[i], p);
        platform one;
        if (const auto why = add_component_text(one, spec); !why.empty())
          fail(p, "'" + printable(spec, 64) + "' " + why);
        const component& got = one.components().front();
        if (!got.version)
          expected(p, "an exact version, name=version (a measurement holds for that version only)", (*c)[i]);
        for (const auto& seen : m.components)
          if (seen.name == got.name) fail(p, "component " + got.name + " is listed twice");
        m.components.push_back(got);
      }
    }
    // Switches: component names the platform had (`present`) or lacked (`absent`), each named once in
    // the whole fingerprint.
    std::vector<std::string> named;
    for (const auto& c : m.components) named.push_back(c.name);
    for (auto [key, into] : {std::pair{"present", &m.present}, std::pair{"absent", &m.absent}}) {
      const json* s = member(j, key);
      if (s == nullptr) continue;
      const auto sp = child(ptr, key);
      *into = names(*s, sp, "component names");
      for (std::size_t i = 0; i < into->size(); ++i) {
        const auto& name = (*into)[i];
        platform one;
        const auto why = add_component_text(one, name);
        if (!why.empty()) fail(child(sp, i), "'" + printable(name, 64) + "' " + why);
        if (one.components().front().version)
          expected(child(sp, i), "a component name without a version (a switch)", (*s)[i]);
        if (std::find(named.begin(), named.end(), name) != named.end())
          fail(child(sp, i), "component " + name + " is named twice in the fingerprint");
        named.push_back(name);
      }
    }
    const auto tp = child(ptr, "times");
    const json& times = list(required(j, ptr, "times"), tp, "a non-empty array of {backend, median_us, spread_pct}");
    m.times.reserve(times.size());
    for (std::size_t i = 0; i < times.size(); ++i) {
      const auto p = child(tp, i);
      object(times[i], p, {"backend", "median_us", "spread_pct"});
      measured_time t;
      t.backend = string(required(times[i], p, "backend"), child(p, "backend"));
      if (!is_valid_backend_name(t.backend))
        expected(child(p, "backend"), "an UPPER_SNAKE backend name", times[i]["backend"]);
      t.median_us = non_negative(required(times[i], p, "median_us"), child(p, "median_us"), 1e12);
      if (const json* sp = member(times[i], "spread_pct"))
        t.spread_pct = non_negative(*sp, child(p, "spread_pct"), 1e6);
      for (const auto& seen : m.times)
        if (seen.backend == t.backend) fail(child(p, "backend"), "backend " + t.backend + " is timed twice");
      m.times.push_back(std::move(t));
    }
    return m;
  }

  policy_rule rule(const json& j, const std::string& ptr) const {
    static const auto keys = keys_of_fields<policy_rule>({});
    object(j, ptr, keys);
    policy_rule r;
    r.domain = enumerator<attention_domain>(required(j, ptr, "domain"), child(ptr, "domain"));
    r.vendor = enumerator<device_vendor>(required(j, ptr, "vendor"), child(ptr, "vendor"));
    static_cast<arch_filter&>(r) = arch_filter_of(j, ptr, r.vendor);
    if (const json* m = member(j, "modes")) r.modes = enum_list<attention_mode>(*m, child(ptr, "modes"), false);
    if (const json* m = member(j, "attn_types")) {
      needs_version_2(child(ptr, "attn_types"));
      r.attn_types = enum_list<attention_type>(*m, child(ptr, "attn_types"), false);
    }
    if (const json* m = member(j, "min_num_heads"))
      r.min_num_heads = uint32(*m, child(ptr, "min_num_heads"), 1, limits::num_heads);
    if (const json* m = member(j, "max_num_heads"))
      r.max_num_heads = uint32(*m, child(ptr, "max_num_heads"), 1, limits::num_heads);
    if (r.max_num_heads && r.min_num_heads > r.max_num_heads)
      fail(child(ptr, "max_num_heads"), "num_heads range is inverted (max < min)");
    if (const json* m = member(j, "kv_cache_dtypes"))
      r.kv_cache_dtypes = enum_list<cache_dtype>(*m, child(ptr, "kv_cache_dtypes"), false);
    if (const json* m = member(j, "dtypes")) r.dtypes = enum_list<data_type>(*m, child(ptr, "dtypes"), false);
    if (const json* m = member(j, "head_sizes")) {
      const auto hp = child(ptr, "head_sizes");
      needs_version_2(hp);
      list(*m, hp, "a non-empty array of head sizes");
      for (std::size_t i = 0; i < m->size(); ++i)
        r.head_sizes.push_back(uint32((*m)[i], child(hp, i), 1, max_head_size));
      std::sort(r.head_sizes.begin(), r.head_sizes.end());
      r.head_sizes.erase(std::unique(r.head_sizes.begin(), r.head_sizes.end()), r.head_sizes.end());
    }
    if (const json* m = member(j, "features")) r.features = features(*m, child(ptr, "features"));
    if (const json* m = member(j, "without_features"))
      r.without_features = features(*m, child(ptr, "without_features"));
    r.phases = phases(j, ptr);
    read_shape(j, ptr, r.shape);
    if (const json* m = member(j, "note")) r.note = string(*m, child(ptr, "note"));
    if (const json* m = member(j, "forced")) {
      needs_version_2(child(ptr, "forced"));
      r.forced = enumerator<forced_handling>(*m, child(ptr, "forced"));
    }
    const auto op = child(ptr, "order");
    const json& order = list(required(j, ptr, "order"), op, "a non-empty array of backend names");
    r.order.reserve(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) r.order.push_back(entry(order[i], child(op, i)));
    if (const json* m = member(j, "measured")) r.measured = measured_of(*m, child(ptr, "measured"));
    return r;
  }

  // A measured rule's times name known backends, each once (an alias counts as its backend), and its
  // order lists the timed backends fastest first: an order its own times contradict is refused at the
  // entry that is out of place. Entries without a time may stand anywhere. Linear (hashing).
  void check_measured_order(const policy_rule& r, const std::string& p, const registry& reg) const {
    const auto& times = r.measured->times;
    const auto tp = child(child(p, "measured"), "times");
    std::unordered_map<const backend_descriptor*, std::size_t> timed;
    timed.reserve(times.size());
    for (std::size_t k = 0; k < times.size(); ++k) {
      const backend_descriptor* b = reg.find(times[k].backend);
      if (b == nullptr) fail(child(tp, k), "unknown backend \"" + printable(times[k].backend, 64) + "\"");
      if (!timed.emplace(b, k).second) fail(child(child(tp, k), "backend"), "backend " + b->name + " is timed twice");
    }
    const measured_time* slowest = nullptr;  // the slowest timed backend ranked so far
    for (std::size_t e = 0; e < r.order.size(); ++e) {
      const auto it = timed.find(reg.find(r.order[e].backend));
      if (it == timed.end()) continue;
      const measured_time& t = times[it->second];
      if (slowest != nullptr && t.median_us < slowest->median_us)
        fail(child(child(p, "order"), e),
             t.backend + " (" + number_text(t.median_us) + " us) is ranked after " + slowest->backend + " (" +
                 number_text(slowest->median_us) +
                 " us): a measured order lists its timed backends fastest first, as its times say");
      if (slowest == nullptr || t.median_us >= slowest->median_us) slowest = &t;
    }
  }

  static std::string number_text(double v) { return nlohmann::json(v).dump(); }

  // Refuses a backend name used twice, or a name or alias two backends share, within the document
  // (hashing: linear in the names). Clashes with a base catalog's names are the registry's to find.
  void check_own_names(const std::vector<backend_descriptor>& list) const {
    std::unordered_map<std::string_view, std::size_t> owner;
    owner.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i)
      if (!owner.emplace(list[i].name, i).second)
        fail(child(child("/backends", i), "name"), "duplicate backend name " + list[i].name);
    for (std::size_t i = 0; i < list.size(); ++i)
      for (const auto& alias : list[i].aliases) {
        const auto [it, fresh] = owner.emplace(alias, i);
        if (!fresh && it->second != i)
          fail(child("/backends", std::max(i, it->second)), "name " + alias + " is used by both " +
                                                                list[std::min(i, it->second)].name + " and " +
                                                                list[std::max(i, it->second)].name);
        if (!fresh && it->second == i)
          fail(child("/backends", i), "name " + alias + " is used twice by backend " + list[i].name);
      }
  }

  // Reads a whole document. With `base`, the document is an overlay: its backends add to or replace
  // base's, its rules go in front, and its policies may name base's backends.
  catalog document(const json& j, const registry* base = nullptr) const {
    object(j, "",
           {"format", "version", "name", "description", "source", "commits", "stock", "model_rules", "hybrid_pages",
            "backends", "policies", "implications"});
    if (string(required(j, "", "format"), "/format") != "attnsel-catalog")
      expected("/format", "\"attnsel-catalog\"", j["format"]);
    const auto version = unsigned_int(required(j, "", "version"), "/version", 1, 1000);
    if (version < oldest_catalog_format_version || version > catalog_format_version)
      fail("/version", "unsupported catalog version " + std::to_string(version) + "; this library reads versions " +
                           std::to_string(oldest_catalog_format_version) + " to " +
                           std::to_string(catalog_format_version));
    version_ = static_cast<int>(version);
    catalog c;
    c.info.name = string(required(j, "", "name"), "/name");
    if (const json* m = member(j, "description")) c.info.description = string(*m, "/description");
    if (const json* m = member(j, "source")) c.info.source = string(*m, "/source");
    if (const json* m = member(j, "commits")) c.info.commits = names(*m, "/commits", "owner/repo@commit strings");
    if (const json* m = member(j, "stock")) c.info.stock = stock(*m);
    if (base) c.registry = *base;

    const json& backends = list(required(j, "", "backends"), "/backends", "an array of backends", true, false);
    std::vector<backend_descriptor> own;
    own.reserve(backends.size());
    for (std::size_t i = 0; i < backends.size(); ++i) own.push_back(backend(backends[i], child("/backends", i)));
    check_own_names(own);
    // Built, then indexed once: O(n log n) in the names, however many backends.
    try {
      c.registry.add_or_replace_all(std::move(own));
    } catch (const registry_error& e) {
      fail("/backends", e.what());
    }

    std::vector<policy_rule> rules;
    if (const json* m = member(j, "policies")) {
      list(*m, "/policies", "an array of rules", true, false);
      rules.reserve(m->size());
      for (std::size_t i = 0; i < m->size(); ++i) {
        const auto p = child("/policies", i);
        auto r = rule((*m)[i], p);
        for (std::size_t k = 0; k < r.order.size(); ++k)
          if (!c.registry.find(r.order[k].backend)) {
            const auto& all = c.registry.backends();
            fail(child(child(p, "order"), k),
                 "unknown backend \"" + printable(r.order[k].backend, 64) + "\"; known backends: " +
                     (all.empty() ? std::string("none")
                                  : join_limited(all, ", ", [](const backend_descriptor& b) { return b.name; })));
          }
        if (r.measured) check_measured_order(r, p, c.registry);
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
    if (const json* m = member(j, "model_rules")) c.info.model_rules = model_rules(*m, c.registry);
    if (const json* m = member(j, "hybrid_pages")) c.info.hybrid_pages = hybrid_pages_of(*m);
    return c;
  }

  // `"model_rules": [{"id", "architectures", "mixed_head_sizes", "platforms", "requires", "max_head_size",
  // "force", "because"}]`: a format-2 key; `force` names a backend of the catalog.
  std::vector<model_rule> model_rules(const json& j, const registry& reg) const {
    const std::string ptr = "/model_rules";
    needs_version_2(ptr);
    list(j, ptr, "an array of model rules", true);
    std::vector<model_rule> out;
    for (std::size_t i = 0; i < j.size(); ++i) {
      const auto p = child(ptr, i);
      object(j[i], p,
             {"id", "architectures", "mixed_head_sizes", "platforms", "requires", "max_head_size", "force", "because"});
      model_rule r;
      r.id = kebab_id(j[i], p);
      const json& arch = required(j[i], p, "architectures");
      if (!arch.is_array() || arch.empty())
        expected(child(p, "architectures"), "a non-empty array of architecture names", arch);
      r.architectures = names(arch, child(p, "architectures"), "architecture names");
      if (const json* m = member(j[i], "mixed_head_sizes"))
        r.mixed_head_sizes = boolean(*m, child(p, "mixed_head_sizes"));
      if (const json* m = member(j[i], "platforms")) r.platforms = platforms(*m, child(p, "platforms"));
      if (const json* m = member(j[i], "requires")) r.requires_components = requirements(*m, child(p, "requires"));
      if (const json* m = member(j[i], "max_head_size"))
        r.max_head_size = uint32(*m, child(p, "max_head_size"), 1, limits::head_size);
      if (const json* m = member(j[i], "force")) {
        r.force = string(*m, child(p, "force"));
        if (!reg.find(r.force)) fail(child(p, "force"), "unknown backend \"" + printable(r.force, 64) + "\"");
      }
      r.because = string(required(j[i], p, "because"), child(p, "because"));
      if (std::any_of(out.begin(), out.end(), [&](const model_rule& x) { return x.id == r.id; }))
        fail(child(p, "id"), "the id " + printable(r.id, 64) + " is used twice");
      out.push_back(std::move(r));
    }
    return out;
  }

  // `"hybrid_pages": {"checkpoint_alignments": [{"linear_modes", "platforms", "tokens"}], "because": "..."}`.
  hybrid_pages hybrid_pages_of(const json& j) const {
    const std::string ptr = "/hybrid_pages";
    needs_version_2(ptr);
    object(j, ptr, {"checkpoint_alignments", "because"});
    hybrid_pages out;
    out.because = string(required(j, ptr, "because"), child(ptr, "because"));
    if (const json* m = member(j, "checkpoint_alignments")) {
      const auto ap = child(ptr, "checkpoint_alignments");
      list(*m, ap, "an array of {linear_modes, platforms, tokens}", true);
      for (std::size_t i = 0; i < m->size(); ++i) {
        const auto p = child(ap, i);
        const json& a = (*m)[i];
        object(a, p, {"linear_modes", "platforms", "tokens"});
        checkpoint_alignment c;
        const json& modes =
            list(required(a, p, "linear_modes"), child(p, "linear_modes"), "a non-empty array of linear modes");
        for (std::size_t k = 0; k < modes.size(); ++k) {
          const auto at = child(child(p, "linear_modes"), k);
          const auto mode = enumerator<attention_mode>(modes[k], at);
          if (mode == attention_mode::standard || mode == attention_mode::mla || mode == attention_mode::sparse_mla)
            expected(at, "a linear layer's mode (gated_delta, mamba1, mamba2, short_conv, lightning)", modes[k]);
          c.linear_modes.push_back(mode);
        }
        c.platforms = platforms(required(a, p, "platforms"), child(p, "platforms"));
        c.tokens = uint32(required(a, p, "tokens"), child(p, "tokens"), 1, limits::block_size);
        out.checkpoint_alignments.push_back(std::move(c));
      }
    }
    return out;
  }

  // `"stock": {"cuda": {"components": ["flashinfer", "cuda_runtime=13.0"], "because": "..."}}`: a
  // format-2 key, one entry per vendor, each component as --component reads it.
  std::vector<stock_install> stock(const json& j) const {
    const std::string ptr = "/stock";
    needs_version_2(ptr);
    if (!j.is_object()) expected(ptr, R"(an object of vendor -> {"components": [...], "because": "..."})", j);
    std::vector<stock_install> out;
    for (const auto& item : j.items()) {
      const auto p = child(ptr, item.key());
      stock_install s;
      s.vendor = enumerator<device_vendor>(json(item.key()), p);
      object(item.value(), p, {"components", "because"});
      s.because = string(required(item.value(), p, "because"), child(p, "because"));
      const json& names = list(required(item.value(), p, "components"), child(p, "components"),
                               "a non-empty array of NAME or NAME=VERSION strings");
      platform scratch(s.vendor);
      for (std::size_t i = 0; i < names.size(); ++i) {
        const auto at = child(child(p, "components"), i);
        const auto text = string(names[i], at);
        if (const auto problem = add_component_text(scratch, text); !problem.empty())
          fail(at, "\"" + printable(text, 64) + "\" " + problem);
      }
      if (scratch.components().size() != names.size()) fail(child(p, "components"), "names a component twice");
      s.components = scratch.components();
      out.push_back(std::move(s));
    }
    return out;
  }

  // `"implications": {"aiter_mha": ["aiter_enabled"], ...}` layered on `reg`'s: an entry replaces the
  // one of the same component, others are added.
  void implications(const json& j, registry& reg) const {
    const std::string ptr = "/implications";
    if (!j.is_object()) expected(ptr, "an object of component name -> array of implied component names", j);
    if (j.size() > limits().max_list_elements)
      fail(ptr, "object of " + std::to_string(j.size()) + " members; the limit is " +
                    std::to_string(limits().max_list_elements) + " (catalog_limits::max_list_elements)");
    count_elements(j.size(), ptr);
    auto table = reg.implications();
    for (const auto& item : j.items()) {
      const auto p = child(ptr, item.key());
      if (!is_valid_feature_name(item.key()))
        fail(p, "\"" + printable(item.key(), 40) + "\" is not a lower_snake component name");
      component_implication imp{item.key(), {}};
      const json& names = list(item.value(), p, "a non-empty array of component names");
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
};

}  // namespace detail

ATTNSEL_INLINE catalog parse_catalog(const nlohmann::json& doc, std::string_view origin, const catalog_limits& limits) {
  return detail::catalog_reader(std::string(origin), limits).document(doc);
}

ATTNSEL_END_NAMESPACE
