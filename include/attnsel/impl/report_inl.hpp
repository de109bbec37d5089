// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for report.hpp: JSON for platforms, queries and traces.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/report.hpp>
#endif

#include <stdexcept>
#include <string>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

template <class E>
E enum_from_json(const nlohmann::json& j, const char* key) {
  if (!j.is_string()) throw std::invalid_argument(std::string(key) + ": expected a string");
  const auto v = parse_enum<E>(j.get_ref<const std::string&>());
  if (!v)
    throw std::invalid_argument(std::string(key) + ": '" + printable(j.get_ref<const std::string&>()) +
                                "' is not one of " + enum_names<E>());
  return *v;
}

inline std::uint32_t uint_from_json(const nlohmann::json& j, const char* key, std::uint32_t max) {
  if (!j.is_number_integer() || j.get<std::int64_t>() < 0 || j.get<std::int64_t>() > max)
    throw std::invalid_argument(std::string(key) + ": expected an integer in [0, " + std::to_string(max) + "]");
  return static_cast<std::uint32_t>(j.get<std::int64_t>());
}

inline void only_keys(const nlohmann::json& j, std::initializer_list<std::string_view> keys, const char* what) {
  if (!j.is_object()) throw std::invalid_argument(std::string(what) + ": expected an object");
  for (const auto& item : j.items())
    if (std::find(keys.begin(), keys.end(), item.key()) == keys.end())
      throw std::invalid_argument(std::string(what) + ": unknown key '" + printable(item.key()) + "'");
}

}  // namespace detail

ATTNSEL_INLINE nlohmann::json to_json(const platform& p) {
  nlohmann::json j = {{"vendor", std::string(to_string(p.vendor()))}};
  if (p.gfx())
    j["arch"] = p.gfx()->name();
  else if (p.capability())
    j["arch"] = std::to_string(p.capability()->major) + "." + std::to_string(p.capability()->minor);
  else
    j["arch"] = nullptr;
  j["components"] = nlohmann::json::array();
  for (const auto& c : p.components())
    j["components"].push_back({{"name", c.name}, {"version", c.version ? nlohmann::json(c.version->str()) : nullptr}});
  return j;
}

ATTNSEL_INLINE nlohmann::json to_json(const query& q) {
  nlohmann::json j = {
      {"domain", std::string(to_string(q.domain))},
      {"head_size", q.head_size},
      {"head_size_v", q.value_head_size()},
      {"dtype", std::string(to_string(q.dtype))},
      {"kv_cache_dtype", std::string(to_string(q.kv_cache_dtype))},
      {"block_size", q.block_size ? nlohmann::json(q.block_size) : nlohmann::json(nullptr)},
      {"attn_type", std::string(to_string(q.attn_type))},
      {"mode", std::string(to_string(q.mode))},
      {"num_heads", q.num_heads ? nlohmann::json(q.num_heads) : nlohmann::json(nullptr)},
  };
  j["features"] = nlohmann::json::array();
  for (const auto& f : q.required) j["features"].push_back(f);
  return j;
}

ATTNSEL_INLINE nlohmann::json to_json(const candidate_report& c) {
  nlohmann::json j = {{"name", c.name},
                      {"variant", c.variant.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.variant)},
                      {"rank", c.rank},
                      {"verdict", std::string(to_string(c.outcome))},
                      {"forced", c.forced}};
  j["reasons"] = nlohmann::json::array();
  for (const auto& r : c.reasons)
    j["reasons"].push_back({{"code", std::string(to_string(r.code))}, {"message", r.message}});
  return j;
}

ATTNSEL_INLINE nlohmann::json to_json(const explanation& ex, const query& q, const platform& p,
                                      const override_request& ovr) {
  const auto spec = detail::trim(ovr.spec);
  nlohmann::json j;
  j["backend"] = ex.result.ok() ? nlohmann::json(std::string(ex.result->name())) : nlohmann::json(nullptr);
  j["variant"] = ex.result.ok() && !ex.result->variant_name().empty()
                     ? nlohmann::json(std::string(ex.result->variant_name()))
                     : nlohmann::json(nullptr);
  j["domain"] = std::string(to_string(q.domain));
  j["platform"] = to_json(p);
  j["query"] = to_json(q);
  j["override"] = {{"spec", spec.empty() ? nlohmann::json(nullptr) : nlohmann::json(std::string(spec))},
                   {"source", std::string(to_string(spec.empty() ? override_source::none : ovr.source))}};
  j["rule"] = ex.rule.empty() ? nlohmann::json(nullptr) : nlohmann::json(ex.rule);
  j["implied"] = nlohmann::json::array();
  for (const auto& i : ex.implied) j["implied"].push_back({{"component", i.name}, {"because", i.because}});
  j["candidates"] = nlohmann::json::array();
  for (const auto& c : ex.candidates) j["candidates"].push_back(to_json(c));
  if (ex.result.ok()) {
    j["error"] = nullptr;
  } else {
    const auto& e = ex.result.error();
    j["error"] = {{"code", std::string(to_string(e.code))}, {"message", e.message}, {"suggestions", e.suggestions}};
  }
  return j;
}

ATTNSEL_INLINE platform platform_from_json(const nlohmann::json& j) {
  detail::only_keys(j, {"vendor", "arch", "capability", "components"}, "platform");
  if (!j.contains("vendor")) throw std::invalid_argument("platform: missing 'vendor'");
  platform p(detail::enum_from_json<device_vendor>(j["vendor"], "platform.vendor"));
  for (const char* key : {"arch", "capability"}) {
    if (!j.contains(key) || j[key].is_null()) continue;
    if (!j[key].is_string()) throw std::invalid_argument(std::string("platform.") + key + ": expected a string");
    const auto& text = j[key].get_ref<const std::string&>();
    if (const auto gfx = parse_gfx_arch(text); gfx && p.vendor() == device_vendor::rocm) {
      p.set_gfx(*gfx);
    } else if (const auto cc = parse_cuda_capability(text); cc && p.vendor() != device_vendor::rocm) {
      p.set_capability(*cc);
    } else {
      throw std::invalid_argument(std::string("platform.") + key + ": '" + printable(text) + "' is not a " +
                                  (p.vendor() == device_vendor::rocm ? "gfx target" : "compute capability"));
    }
  }
  if (j.contains("components")) {
    if (!j["components"].is_array()) throw std::invalid_argument("platform.components: expected an array");
    for (const auto& c : j["components"]) {
      if (c.is_string()) {
        p.add_component_spec(c.get<std::string>());
      } else if (c.is_object() && c.contains("name") && c["name"].is_string()) {
        std::string spec = c["name"].get<std::string>();
        if (c.contains("version") && c["version"].is_string()) spec += "=" + c["version"].get<std::string>();
        p.add_component_spec(spec);
      } else {
        throw std::invalid_argument("platform.components: expected \"name[=version]\" or {name, version}");
      }
    }
  }
  return p;
}

ATTNSEL_INLINE query query_from_json(const nlohmann::json& j) {
  detail::only_keys(j,
                    {"domain", "head_size", "head_size_v", "dtype", "kv_cache_dtype", "block_size", "attn_type",
                     "mode", "num_heads", "features"},
                    "query");
  query q;
  constexpr std::uint32_t limit = 1u << 20;
  const auto has = [&](const char* k) { return j.contains(k) && !j[k].is_null(); };
  if (has("domain")) q.domain = detail::enum_from_json<attn_domain>(j["domain"], "query.domain");
  if (has("head_size")) q.head_size = detail::uint_from_json(j["head_size"], "query.head_size", limit);
  if (has("head_size_v")) q.head_size_v = detail::uint_from_json(j["head_size_v"], "query.head_size_v", limit);
  if (has("dtype")) q.dtype = detail::enum_from_json<data_type>(j["dtype"], "query.dtype");
  if (has("kv_cache_dtype")) q.kv_cache_dtype = detail::enum_from_json<cache_dtype>(j["kv_cache_dtype"], "query.kv_cache_dtype");
  if (has("block_size")) q.block_size = detail::uint_from_json(j["block_size"], "query.block_size", limit);
  if (has("attn_type")) q.attn_type = detail::enum_from_json<attention_type>(j["attn_type"], "query.attn_type");
  if (has("mode")) q.mode = detail::enum_from_json<attention_mode>(j["mode"], "query.mode");
  if (has("num_heads")) q.num_heads = detail::uint_from_json(j["num_heads"], "query.num_heads", limit);
  if (has("features")) {
    if (!j["features"].is_array()) throw std::invalid_argument("query.features: expected an array");
    for (const auto& f : j["features"]) {
      if (!f.is_string() || !is_valid_feature_name(f.get<std::string>()))
        throw std::invalid_argument("query.features: expected lower_snake feature names");
      q.required.insert(f.get<std::string>());
    }
  }
  return q;
}

ATTNSEL_END_NAMESPACE
