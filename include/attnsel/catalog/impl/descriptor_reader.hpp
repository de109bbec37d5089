// SPDX-License-Identifier: Apache-2.0
// Catalog reading, the backends' half: head sizes, platforms, shapes, conditions, call rules, variants,
// capabilities and advisories, each read strictly from its JSON with one precise error.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog/catalog.hpp>
#endif

#include <attnsel/catalog/impl/json_reader.hpp>
#include <attnsel/core/impl/text.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};

// Reads the parts of a catalog document that describe backends, on top of the typed reads of json_reader.
class descriptor_reader : public json_reader {
 public:
  explicit descriptor_reader(std::string origin, const catalog_limits& limits = {})
      : json_reader(std::move(origin), json_error_style::catalog, limits) {}

  head_size_spec head_sizes(const json& j, const std::string& ptr) const {
    constexpr std::uint32_t limit = limits::head_size;
    if (j.is_string() && j.get_ref<const std::string&>() == "any") return head_size_spec::any();
    if (j.is_array()) {
      list(j, ptr, "a non-empty array of head sizes");
      std::vector<std::uint32_t> sizes;
      sizes.reserve(j.size());
      for (std::size_t i = 0; i < j.size(); ++i) sizes.push_back(uint32(j[i], child(ptr, i), 1, limit));
      return head_size_spec::set(std::move(sizes));
    }
    if (j.is_object()) {
      object(j, ptr, {"min", "max", "multiple_of"});
      if (j.empty()) expected(ptr, "a range with at least one of min, max, multiple_of", j);
      head_size_spec s;
      s.form = head_size_spec::kind::range;
      if (const json* m = member(j, "min")) s.min = uint32(*m, child(ptr, "min"), 1, limit);
      if (const json* m = member(j, "max")) s.max = uint32(*m, child(ptr, "max"), 1, limit);
      if (const json* m = member(j, "multiple_of")) s.multiple_of = uint32(*m, child(ptr, "multiple_of"), 1, limit);
      if (s.min > s.max)
        fail(child(ptr, "min"),
             "head-size range is empty: min " + std::to_string(s.min) + " > max " + std::to_string(s.max));
      return s;
    }
    expected(ptr, "\"any\", an array of head sizes or a {min, max, multiple_of} range", j);
  }

  // The required "id" of the object `j` at `p`: lower-kebab, as advisory and model-rule ids are.
  std::string kebab_id(const json& j, const std::string& p) const {
    auto id = string(required(j, p, "id"), child(p, "id"));
    if (!is_valid_advisory_id(id))
      expected(child(p, "id"),
               "a lower-kebab id ([a-z0-9] then [a-z0-9.-]) of at most " + std::to_string(limits::name_length) +
                   " characters",
               j["id"]);
    return id;
  }

  std::vector<platform_constraint> platforms(const json& j, const std::string& ptr) const {
    if (j.is_string() && j.get_ref<const std::string&>() == "any") return {};
    list(j, ptr, "a non-empty array of platforms or \"any\"");
    std::vector<platform_constraint> out;
    out.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) {
      const auto p = child(ptr, i);
      object(j[i], p, {"vendor", "min_capability", "max_capability", "archs", "families"});
      platform_constraint pc;
      pc.vendor = enumerator<device_vendor>(required(j[i], p, "vendor"), child(p, "vendor"));
      static_cast<arch_filter&>(pc) = arch_filter_of(j[i], p, pc.vendor);
      out.push_back(std::move(pc));
    }
    return out;
  }

  std::vector<component_requirement> requirements(const json& j, const std::string& ptr) const {
    list(j, ptr, "an array of {component, min_version, below_version}", true);
    std::vector<component_requirement> out;
    out.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) out.push_back(component_condition_of(j[i], child(ptr, i)));
    return out;
  }

  // `{component, min_version, below_version}`: a component and an optional version range.
  component_condition component_condition_of(const json& j, const std::string& p) const {
    object(j, p, {"component", "min_version", "below_version"});
    component_condition r;
    r.name = string(required(j, p, "component"), child(p, "component"));
    if (r.name.empty() || r.name.size() > limits::name_length || !is_printable_name(r.name))
      expected(child(p, "component"),
               "a non-empty component name of at most " + std::to_string(limits::name_length) +
                   " characters, without control characters",
               j["component"]);
    const auto version = [&](std::string_view key) -> std::optional<component_version> {
      const json* m = member(j, key);
      if (m == nullptr) return std::nullopt;
      const auto kp = child(p, key);
      auto v = parse_component_version(string(*m, kp));
      if (!v) expected(kp, "a version of 1-4 dot-separated numbers", *m);
      return v;
    };
    r.min_version = version("min_version");
    if (member(j, "below_version")) needs_version_2(child(p, "below_version"));
    r.below_version = version("below_version");
    if (r.min_version && r.below_version && !(*r.min_version < *r.below_version))
      fail(child(p, "below_version"), "version range is empty: below_version " + to_string(*r.below_version) +
                                          " is not above min_version " + to_string(*r.min_version));
    return r;
  }

  // Format 2 keys in a version-1 document are refused by name, never ignored.
  void needs_version_2(const std::string& ptr) const {
    if (version_ < 2)
      fail(ptr, "this key needs catalog version 2; the document says version " + std::to_string(version_));
  }

  // `{"min": N, "max": M}` (at least one), each in [1, limit].
  count_range range(const json& j, const std::string& ptr, std::uint32_t limit) const {
    object(j, ptr, {"min", "max"});
    if (j.empty()) expected(ptr, "a range with min, max or both", j);
    count_range r;
    if (const json* m = member(j, "min")) r.min = uint32(*m, child(ptr, "min"), 1, limit);
    if (const json* m = member(j, "max")) r.max = uint32(*m, child(ptr, "max"), 1, limit);
    if (r.min > r.max) fail(ptr, "range is empty: min " + std::to_string(r.min) + " > max " + std::to_string(r.max));
    return r;
  }

  static constexpr std::uint32_t shape_limit(shape_field f) noexcept {
    switch (f) {
      case shape_field::seq_len_q:
      case shape_field::seq_len_kv:
        return limits::seq_len;
      case shape_field::batch_size:
        return limits::batch_size;
      case shape_field::gqa_group:
        return limits::num_heads;
    }
    return 0;
  }

  // The shape-field keys of `obj` (format 2), onto `out`; "any" clears an inherited range.
  void read_shape(const json& obj, const std::string& ptr, shape_limits& out) const {
    for (shape_field f : shape_fields)
      if (const json* m = member(obj, to_string(f))) {
        const auto p = child(ptr, to_string(f));
        needs_version_2(p);
        if (m->is_string() && m->get_ref<const std::string&>() == "any")
          out[f].reset();
        else
          out[f] = range(*m, p, shape_limit(f));
      }
  }

  // A call condition; `require` conditions may be `{"never": true}`.
  call_condition condition(const json& j, const std::string& ptr, bool require) const {
    static const auto keys = keys_of_fields<call_condition>({});
    object(j, ptr, keys);
    call_condition c;
    if (const json* m = member(j, "phases")) c.phases = enum_list<attention_phase>(*m, child(ptr, "phases"), false);
    if (c.phases.contains(attention_phase::unstated))
      fail(child(ptr, "phases"), "\"unstated\" is not a phase a condition can name");
    if (const json* m = member(j, "dtypes")) c.dtypes = enum_list<data_type>(*m, child(ptr, "dtypes"), false);
    if (const json* m = member(j, "attn_types"))
      c.attn_types = enum_list<attention_type>(*m, child(ptr, "attn_types"), false);
    if (const json* m = member(j, "features")) c.features = features(*m, child(ptr, "features"));
    if (const json* m = member(j, "without_features"))
      c.without_features = features(*m, child(ptr, "without_features"));
    read_shape(j, ptr, c.shape);
    if (const json* m = member(j, "equal_seq_lens")) {
      if (!m->is_boolean() || !m->get<bool>()) expected(child(ptr, "equal_seq_lens"), "true", *m);
      c.equal_seq_lens = true;
    }
    if (const json* m = member(j, "head_sizes")) c.head_sizes = head_sizes(*m, child(ptr, "head_sizes"));
    if (const json* m = member(j, "value_head_sizes"))
      c.value_head_sizes = head_sizes(*m, child(ptr, "value_head_sizes"));
    if (const json* m = member(j, "components")) {
      const auto cp = child(ptr, "components");
      list(*m, cp, "a non-empty array of {component, min_version, below_version}");
      for (std::size_t i = 0; i < m->size(); ++i) c.components.push_back(component_condition_of((*m)[i], child(cp, i)));
    }
    if (const json* m = member(j, "never")) {
      if (!require) fail(child(ptr, "never"), R"("never" belongs in a rule's "require", not its "when")");
      if (!m->is_boolean() || !m->get<bool>()) expected(child(ptr, "never"), "true", *m);
      if (j.size() != 1) fail(ptr, R"("never" stands alone: a require that forbids its when has no other key)");
      c.never = true;
    }
    if (require && c.empty()) expected(ptr, R"(a non-empty condition (or {"never": true}))", j);
    return c;
  }

  std::vector<call_rule> call_rules(const json& j, const std::string& ptr) const {
    needs_version_2(ptr);
    list(j, ptr, "an array of {when, require, note} rules", true);
    std::vector<call_rule> out;
    out.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) {
      const auto p = child(ptr, i);
      object(j[i], p, {"when", "require", "note"});
      call_rule r;
      if (const json* m = member(j[i], "when")) r.when = condition(*m, child(p, "when"), false);
      r.require = condition(required(j[i], p, "require"), child(p, "require"), true);
      if (const json* m = member(j[i], "note")) r.note = string(*m, child(p, "note"));
      out.push_back(std::move(r));
    }
    return out;
  }

  // `{"float32": <head sizes>, ...}`.
  std::vector<dtype_head_sizes> head_sizes_by_dtype(const json& j, const std::string& ptr) const {
    needs_version_2(ptr);
    if (!j.is_object()) expected(ptr, "an object of dtype name -> head sizes", j);
    std::vector<dtype_head_sizes> out;
    for (const auto& item : j.items()) {
      const auto p = child(ptr, item.key());
      const auto dtype = parse_enum<data_type>(item.key());
      if (!dtype || to_string(*dtype) != item.key())
        fail(p,
             "\"" + printable(item.key(), 40) + "\" is not a dtype name; expected one of " + enum_names<data_type>());
      out.push_back(dtype_head_sizes{*dtype, head_sizes(item.value(), p)});
    }
    return out;
  }

  // One value, by its type: the codec the capability fields share (field_list<capabilities>). `bound` is
  // the field's largest count; "any" is an empty list of block sizes, "equal" an unset value head size.
  template <class E>
  void read_value(const json& j, const std::string& ptr, std::uint32_t, enum_set<E>& out) const {
    out = enum_list<E>(j, ptr, true);
  }
  template <class E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
  void read_value(const json& j, const std::string& ptr, std::uint32_t, E& out) const {
    out = enumerator<E>(j, ptr);
  }
  void read_value(const json& j, const std::string& ptr, std::uint32_t, std::string& out) const {
    out = string(j, ptr);
  }
  void read_value(const json& j, const std::string& ptr, std::uint32_t, head_size_spec& out) const {
    out = head_sizes(j, ptr);
  }
  void read_value(const json& j, const std::string& ptr, std::uint32_t, std::optional<head_size_spec>& out) const {
    if (j.is_string() && j.get_ref<const std::string&>() == "equal")
      out.reset();
    else
      out = head_sizes(j, ptr);
  }
  void read_value(const json& j, const std::string& ptr, std::uint32_t bound, std::vector<std::uint32_t>& out) const {
    out.clear();
    if (j.is_string() && j.get_ref<const std::string&>() == "any") return;
    list(j, ptr, "a non-empty array of block sizes or \"any\"");
    for (std::size_t i = 0; i < j.size(); ++i) out.push_back(uint32(j[i], child(ptr, i), 1, bound_or_max(bound)));
  }
  static constexpr std::uint32_t bound_or_max(std::uint32_t bound) noexcept {
    return bound == 0 ? std::numeric_limits<std::uint32_t>::max() : bound;
  }
  void read_value(const json& j, const std::string& ptr, std::uint32_t bound, std::uint32_t& out) const {
    out = uint32(j, ptr, 0, bound_or_max(bound));
  }
  void read_value(const json& j, const std::string& ptr, std::uint32_t, feature_set& out) const {
    out = features(j, ptr);
  }
  void read_value(const json& j, const std::string& ptr, std::uint32_t, std::vector<platform_constraint>& out) const {
    out = platforms(j, ptr);
  }
  void read_value(const json& j, const std::string& ptr, std::uint32_t, std::vector<component_condition>& out) const {
    out = requirements(j, ptr);
  }
  void read_value(const json& j, const std::string& ptr, std::uint32_t, std::vector<dtype_head_sizes>& out) const {
    out = head_sizes_by_dtype(j, ptr);
  }
  void read_value(const json& j, const std::string& ptr, std::uint32_t, std::vector<call_rule>& out) const {
    out = call_rules(j, ptr);
  }

  // One capability field of the object `obj`, when its key is there (a shape: its own keys); a key of
  // a later catalog format than the document's is refused.
  template <class T>
  void read_field(const json& obj, const std::string& ptr, const capability_field& f, T& out) const {
    if (const json* m = member(obj, f.name)) {
      const auto p = child(ptr, f.name);
      if (f.since >= 2) needs_version_2(p);
      read_value(*m, p, f.bound, out);
    }
  }
  void read_field(const json& obj, const std::string& ptr, const capability_field&, shape_limits& out) const {
    read_shape(obj, ptr, out);
  }

  // Applies the capability keys present in `j` onto `c` (variants start from the backend's values).
  void apply_capabilities(const json& j, const std::string& ptr, capabilities& c) const {
    field_list<capabilities>::members([&](const capability_field& f, auto m) {
      if (!f.own_key) this->read_field(j, ptr, f, c.*decltype(m)::value);
    });
  }

  // How many list elements a variant copies from its backend when it leaves the key out. The feature
  // list is shared (feature_set is copy-on-write); values that are no lists copy none.
  static std::size_t inherited_elements(const head_size_spec& s) { return s.values.size(); }
  static std::size_t inherited_elements(const std::optional<head_size_spec>& s) { return s ? s->values.size() : 0; }
  static std::size_t inherited_elements(const std::vector<std::uint32_t>& v) { return v.size(); }
  static std::size_t inherited_elements(const std::vector<component_condition>& v) { return v.size(); }
  static std::size_t inherited_elements(const std::vector<platform_constraint>& v) {
    std::size_t n = 0;
    for (const auto& pc : v) n += 1 + pc.archs.size() + pc.families.size();
    return n;
  }
  template <class T>
  static std::size_t inherited_elements(const T&) {
    static_assert(!detail::is_vector<T>::value, "a list-valued capability field needs its inherited_elements");
    return 0;
  }
  // Lists the count leaves out: the entries are few and bounded by their key (dtypes, call rules).
  static std::size_t inherited_elements(const std::vector<dtype_head_sizes>&) { return 0; }
  static std::size_t inherited_elements(const std::vector<call_rule>&) { return 0; }

  // A variant starts as a copy of its backend's capabilities: the inherited lists count against the total.
  void count_inherited(const json& j, const std::string& ptr, const capabilities& base) const {
    std::size_t n = 0;
    field_list<capabilities>::members([&](const capability_field& f, auto m) {
      if (!f.own_key && !member(j, f.name)) n += inherited_elements(base.*decltype(m)::value);
    });
    count_elements(n, ptr);
  }

  capabilities variant(const json& j, const std::string& ptr, const backend_descriptor& b) const {
    static const auto keys = keys_of_fields<capabilities>({"name", "domains"}, {"variant", "domains"});
    object(j, ptr, keys);
    capabilities v = b.caps;
    v.variant = string(required(j, ptr, "name"), child(ptr, "name"));
    if (v.variant.empty() || v.variant.size() > limits::name_length)
      expected(child(ptr, "name"),
               "a non-empty variant name of at most " + std::to_string(limits::name_length) + " characters", j["name"]);
    v.domains = {};
    if (const json* d = member(j, "domains")) {
      v.domains = enum_list<attention_domain>(*d, child(ptr, "domains"), false);
      bool inside = true;
      v.domains.for_each([&](attention_domain x) { inside = inside && b.domains.contains(x); });
      if (!inside) fail(child(ptr, "domains"), "variant serves a domain its backend does not");
    }
    count_inherited(j, ptr, b.caps);
    apply_capabilities(j, ptr, v);
    return v;
  }

  // A backend's `advisories` (format 2), read after its variants, which an advisory may name.
  std::vector<advisory> advisories(const json& j, const std::string& ptr, const backend_descriptor& b) const {
    needs_version_2(ptr);
    list(j, ptr, "an array of advisories", true);
    static const auto keys = keys_of_fields<advisory>({});
    std::vector<advisory> out;
    out.reserve(j.size());
    std::unordered_set<std::string> seen;
    for (std::size_t i = 0; i < j.size(); ++i) {
      const auto p = child(ptr, i);
      object(j[i], p, keys);
      advisory a;
      a.id = kebab_id(j[i], p);
      if (!seen.insert(a.id).second) fail(child(p, "id"), "duplicate advisory id \"" + a.id + "\" in this backend");
      if (const json* m = member(j[i], "variant")) {
        a.variant = string(*m, child(p, "variant"));
        if (std::none_of(b.variants.begin(), b.variants.end(),
                         [&](const capabilities& v) { return v.variant == a.variant; }))
          fail(child(p, "variant"),
               "backend " + b.name + " has no variant \"" + printable(a.variant, limits::echoed_text) + "\"");
      }
      if (const json* m = member(j[i], "platforms")) a.platforms = platforms(*m, child(p, "platforms"));
      if (const json* m = member(j[i], "kv_cache_dtypes"))
        a.kv_cache_dtypes = enum_list<cache_dtype>(*m, child(p, "kv_cache_dtypes"), false);
      if (const json* m = member(j[i], "when")) a.when = condition(*m, child(p, "when"), false);
      a.action = enumerator<advisory_action>(required(j[i], p, "action"), child(p, "action"));
      a.message = string(required(j[i], p, "message"), child(p, "message"));
      if (a.message.empty()) expected(child(p, "message"), "a non-empty sentence", j[i]["message"]);
      const auto up = child(p, "upstream");
      const json& urls = required(j[i], p, "upstream");
      list(urls, up, "a non-empty array of upstream issue URLs", false);
      for (std::size_t k = 0; k < urls.size(); ++k) {
        auto url = string(urls[k], child(up, k));
        if (url.rfind("https://", 0) != 0 || url.size() > limits::url_length || !is_printable_name(url))
          expected(child(up, k),
                   "an https:// URL of the upstream issue or pull request, at most " +
                       std::to_string(limits::url_length) + " characters",
                   urls[k]);
        a.upstream.push_back(std::move(url));
      }
      out.push_back(std::move(a));
    }
    return out;
  }

  backend_descriptor backend(const json& j, const std::string& ptr) const {
    static const auto keys = keys_of_fields<capabilities>(
        {"name", "aliases", "description", "domains", "forced_only", "variants", "advisories"}, {"variant", "domains"});
    object(j, ptr, keys);
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
    b.domains = enum_list<attention_domain>(required(j, ptr, "domains"), child(ptr, "domains"), false);
    if (const json* m = member(j, "forced_only")) {
      needs_version_2(child(ptr, "forced_only"));
      if (!m->is_boolean()) expected(child(ptr, "forced_only"), "true or false", *m);
      b.forced_only = m->get<bool>();
    }
    apply_capabilities(j, ptr, b.caps);
    if (const json* m = member(j, "variants")) {
      const auto vp = child(ptr, "variants");
      list(*m, vp, "a non-empty array of variants");
      if (m->size() > limits().max_variants_per_backend)
        fail(vp, std::to_string(m->size()) + " variants; the limit is " +
                     std::to_string(limits().max_variants_per_backend) + " (catalog_limits::max_variants_per_backend)");
      std::unordered_set<std::string> seen;
      b.variants.reserve(m->size());
      for (std::size_t i = 0; i < m->size(); ++i) {
        const auto p = child(vp, i);
        auto v = variant((*m)[i], p, b);
        if (!seen.insert(v.variant).second)
          fail(child(p, "name"), "duplicate variant name \"" + printable(v.variant, limits::echoed_text) + "\"");
        b.variants.push_back(std::move(v));
      }
    }
    if (const json* m = member(j, "advisories")) b.advisories = advisories(*m, child(ptr, "advisories"), b);
    // The registry's own checks (the same for descriptors built in C++) with this backend's pointer.
    try {
      validate_descriptor(b);
    } catch (const registry_error& e) {
      fail(ptr, e.what());
    }
    return b;
  }

  // The `phases` key of a rule or entry (format 2): named phases, never "unstated".
  phase_set phases(const json& obj, const std::string& ptr) const {
    const json* m = member(obj, "phases");
    if (m == nullptr) return {};
    const auto p = child(ptr, "phases");
    needs_version_2(p);
    const auto out = enum_list<attention_phase>(*m, p, false);
    if (out.contains(attention_phase::unstated)) fail(p, "\"unstated\" is not a phase a policy can name");
    return out;
  }

 protected:
  mutable int version_ = catalog_format_version;  // of the document being read
};

}  // namespace detail

ATTNSEL_END_NAMESPACE
