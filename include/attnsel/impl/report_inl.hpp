// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for report.hpp: JSON for platforms, queries and traces.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/report.hpp>
#endif

#include <attnsel/impl/json_reader.hpp>
#include <attnsel/impl/platform_inl.hpp>  // detail::arch_specific_refusal
#include <attnsel/override.hpp>           // printable

#include <stdexcept>
#include <string>

ATTNSEL_BEGIN_NAMESPACE

ATTNSEL_INLINE nlohmann::json to_json(const platform& p) {
  nlohmann::json j = {{"vendor", std::string(to_string(p.vendor()))}};
  if (!p.device_name().empty()) j["device"] = p.device_name();
  if (p.gfx())
    j["arch"] = p.gfx()->name();
  else if (p.capability())
    j["arch"] = to_string(*p.capability());
  else
    j["arch"] = nullptr;
  j["components"] = nlohmann::json::array();
  for (const auto& c : p.components())
    j["components"].push_back(
        {{"name", c.name}, {"version", c.version ? nlohmann::json(to_string(*c.version)) : nullptr}});
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
  const auto stated = [](std::uint32_t v) { return v ? nlohmann::json(v) : nlohmann::json(nullptr); };
  j["num_kv_heads"] = stated(q.num_kv_heads);
  j["phase"] =
      q.phase == attention_phase::unstated ? nlohmann::json(nullptr) : nlohmann::json(std::string(to_string(q.phase)));
  j["seq_len_q"] = stated(q.seq_len_q);
  j["seq_len_kv"] = stated(q.seq_len_kv);
  j["batch_size"] = stated(q.batch_size);
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
  if (c.measured)
    j["measured"] = {{"median_us", c.measured->median_us}, {"spread_pct", c.measured->spread_pct}};
  else
    j["measured"] = nullptr;
  j["warnings"] = nlohmann::json::array();
  for (const auto& r : c.warnings)
    j["warnings"].push_back({{"code", std::string(to_string(r.code))}, {"message", r.message}});
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
  const advisory* warning = ex.result.ok() ? ex.result->warning : nullptr;
  j["advisory"] = warning == nullptr ? nlohmann::json(nullptr)
                                     : nlohmann::json{{"id", warning->id},
                                                      {"action", std::string(to_string(warning->action))},
                                                      {"message", warning->message},
                                                      {"upstream", warning->upstream}};
  j["implied"] = nlohmann::json::array();
  for (const auto& i : ex.implied) j["implied"].push_back({{"component", i.name}, {"because", i.because}});
  j["candidates"] = nlohmann::json::array();
  for (const auto& c : ex.candidates) j["candidates"].push_back(to_json(c));
  j["unstated"] = nlohmann::json::array();
  for (const auto& u : ex.unstated)
    j["unstated"].push_back({{"subject", u.subject}, {"fields", u.fields}, {"condition", u.condition}});
  j["stale"] = nlohmann::json::array();
  for (const auto& s : ex.stale)
    j["stale"].push_back({{"rule", s.rule}, {"measured_on", s.measured_on}, {"differences", s.differences}});
  if (ex.result.ok()) {
    j["error"] = nullptr;
  } else {
    const auto& e = ex.result.error();
    j["error"] = {{"code", std::string(to_string(e.code))}, {"message", e.message}, {"suggestions", e.suggestions}};
  }
  return j;
}

ATTNSEL_INLINE platform platform_from_json(const nlohmann::json& j) {
  using detail::child;
  const detail::json_reader in("platform", detail::json_error_style::invalid_argument);
  in.object(j, "", {"vendor", "device", "arch", "capability", "components"});
  platform p(in.enumerator<device_vendor>(in.required(j, "", "vendor"), "/vendor"));
  if (const nlohmann::json* m = detail::json_reader::nullable_member(j, "device"))
    p.set_device_name(in.string(*m, "/device"));
  for (const char* key : {"arch", "capability"}) {
    const nlohmann::json* m = detail::json_reader::nullable_member(j, key);
    if (m == nullptr) continue;
    const auto text = in.string(*m, child("", key));
    if (const auto gfx = parse_gfx_arch(text); gfx && p.vendor() == device_vendor::rocm) {
      p.set_gfx(*gfx);
    } else if (const auto cc = parse_cuda_capability(text); cc && p.vendor() != device_vendor::rocm) {
      // The text a person types for --arch or Platform(): an arch-specific target (sm_100a) is refused.
      if (const auto why = detail::arch_specific_refusal(text, *cc); !why.empty())
        in.fail(child("", key), "'" + printable(text, 64) + "' " + why);
      p.set_capability(*cc);
    } else {
      in.expected(child("", key), p.vendor() == device_vendor::rocm ? "a gfx target" : "a compute capability", *m);
    }
  }
  if (const nlohmann::json* m = detail::json_reader::nullable_member(j, "components")) {
    in.list(*m, "/components", "an array of \"name[=version]\" or {name, version}", true);
    for (std::size_t i = 0; i < m->size(); ++i) {
      const auto& c = (*m)[i];
      const auto ptr = child("/components", i);
      std::string spec;
      if (c.is_string()) {
        spec = c.get<std::string>();
      } else {
        in.object(c, ptr, {"name", "version"});
        spec = in.string(in.required(c, ptr, "name"), child(ptr, "name"));
        if (const nlohmann::json* v = detail::json_reader::nullable_member(c, "version"))
          spec += "=" + in.string(*v, child(ptr, "version"));
      }
      try {
        p.add_component_spec(spec);
      } catch (const std::invalid_argument& e) {
        in.fail(ptr, e.what());
      }
    }
  }
  return p;
}

ATTNSEL_INLINE query query_from_json(const nlohmann::json& j) {
  const detail::json_reader in("query", detail::json_error_style::invalid_argument);
  // The field list's names, gathered once: a listed field is a known key.
  static const auto keys = detail::keys_of_fields<query>({});
  in.object(j, "", keys);
  query q;
  // Bounds from limits.hpp; a value in range but still invalid (head_size 0) is select()'s bad_query.
  if (const auto* m = detail::json_reader::nullable_member(j, "domain"))
    q.domain = in.enumerator<attention_domain>(*m, "/domain");
  if (const auto* m = detail::json_reader::nullable_member(j, "head_size"))
    q.head_size = in.uint32(*m, "/head_size", 0, limits::head_size);
  if (const auto* m = detail::json_reader::nullable_member(j, "head_size_v"))
    q.head_size_v = in.uint32(*m, "/head_size_v", 0, limits::head_size);
  if (const auto* m = detail::json_reader::nullable_member(j, "dtype"))
    q.dtype = in.enumerator<data_type>(*m, "/dtype");
  if (const auto* m = detail::json_reader::nullable_member(j, "kv_cache_dtype"))
    q.kv_cache_dtype = in.enumerator<cache_dtype>(*m, "/kv_cache_dtype");
  if (const auto* m = detail::json_reader::nullable_member(j, "block_size"))
    q.block_size = in.uint32(*m, "/block_size", 0, limits::block_size);
  if (const auto* m = detail::json_reader::nullable_member(j, "attn_type"))
    q.attn_type = in.enumerator<attention_type>(*m, "/attn_type");
  if (const auto* m = detail::json_reader::nullable_member(j, "mode"))
    q.mode = in.enumerator<attention_mode>(*m, "/mode");
  if (const auto* m = detail::json_reader::nullable_member(j, "num_heads"))
    q.num_heads = in.uint32(*m, "/num_heads", 0, limits::num_heads);
  if (const auto* m = detail::json_reader::nullable_member(j, "features")) q.required = in.features(*m, "/features");
  if (const auto* m = detail::json_reader::nullable_member(j, "num_kv_heads"))
    q.num_kv_heads = in.uint32(*m, "/num_kv_heads", 0, limits::num_heads);
  if (const auto* m = detail::json_reader::nullable_member(j, "phase"))
    q.phase = in.enumerator<attention_phase>(*m, "/phase");
  if (const auto* m = detail::json_reader::nullable_member(j, "seq_len_q"))
    q.seq_len_q = in.uint32(*m, "/seq_len_q", 0, limits::seq_len);
  if (const auto* m = detail::json_reader::nullable_member(j, "seq_len_kv"))
    q.seq_len_kv = in.uint32(*m, "/seq_len_kv", 0, limits::seq_len);
  if (const auto* m = detail::json_reader::nullable_member(j, "batch_size"))
    q.batch_size = in.uint32(*m, "/batch_size", 0, limits::batch_size);
  return q;
}

ATTNSEL_END_NAMESPACE
