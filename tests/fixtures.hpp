// SPDX-License-Identifier: Apache-2.0
// A small hand-built registry for unit tests, independent of the reference catalog.
#pragma once

#include <attnsel/all.hpp>

#include "catch.hpp"

#include <algorithm>
#include <initializer_list>
#include <set>
#include <string>
#include <vector>

namespace fixtures {

using namespace attnsel;

inline platform_constraint cuda_from(std::uint8_t major, std::uint8_t minor) {
  platform_constraint pc;
  pc.vendor = device_vendor::cuda;
  pc.min_capability = cuda_capability{major, minor};
  return pc;
}

inline platform_constraint rocm_family(gfx_family f) {
  platform_constraint pc;
  pc.vendor = device_vendor::rocm;
  pc.families = {f};
  return pc;
}

/// FAST (cuda >= 8.0, needs flashinfer >= 0.2, sinks), MEDIUM (cuda + rocm gfx9, alibi), SLOW (anywhere,
/// both domains, every attention type), LATENT (MLA on cuda), VISION (encoder only).
inline registry small_registry() {
  registry reg;

  backend_descriptor fast;
  fast.name = "FAST";
  fast.aliases = {"FAST_ATTN"};
  fast.caps.dtypes = {data_type::float16, data_type::bfloat16};
  fast.caps.kv_cache_dtypes = {cache_dtype::automatic, cache_dtype::float16, cache_dtype::bfloat16, cache_dtype::fp8};
  fast.caps.head_sizes = head_size_spec::set({64, 128, 256});
  fast.caps.block_size_multiples = {16};
  fast.caps.preferred_block_size = 16;
  fast.caps.features = {"sinks"};
  fast.caps.platforms = {cuda_from(8, 0)};
  fast.caps.requires_components = {{"flashinfer", parse_component_version("0.2")}};
  reg.add(fast);

  backend_descriptor medium;
  medium.name = "MEDIUM";
  medium.caps.head_sizes = head_size_spec::range(32, 256, 8);
  medium.caps.features = {"alibi"};
  medium.caps.platforms = {cuda_from(7, 0), rocm_family(gfx_family::gfx9)};
  reg.add(medium);

  backend_descriptor slow;
  slow.name = "SLOW";
  slow.domains = {attention_domain::decoder, attention_domain::encoder};
  slow.caps.attn_types = {attention_type::decoder, attention_type::encoder, attention_type::encoder_only,
                          attention_type::encoder_decoder};
  reg.add(slow);

  backend_descriptor latent;
  latent.name = "LATENT";
  latent.caps.mode = attention_mode::mla;
  latent.caps.value_head_sizes = head_size_spec::any();
  latent.caps.platforms = {cuda_from(9, 0)};
  reg.add(latent);

  backend_descriptor vision;
  vision.name = "VISION";
  vision.domains = {attention_domain::encoder};
  vision.caps.dtypes = {data_type::float16, data_type::bfloat16};
  vision.caps.attn_types = {attention_type::encoder_only};
  reg.add(vision);

  priority_policy policy;
  policy_rule cuda_decoder;
  cuda_decoder.domain = attention_domain::decoder;
  cuda_decoder.vendor = device_vendor::cuda;
  cuda_decoder.modes = {attention_mode::standard};
  cuda_decoder.note = "fastest first";
  cuda_decoder.order = {{"FAST", {}, {}, {}}, {"MEDIUM", {}, {}, {}}, {"SLOW", {}, {}, {}}};
  policy_rule cuda_mla = cuda_decoder;
  cuda_mla.modes = {attention_mode::mla};
  cuda_mla.note = "latent";
  cuda_mla.order = {{"LATENT", {}, {}, {}}};
  policy_rule rocm_decoder;
  rocm_decoder.domain = attention_domain::decoder;
  rocm_decoder.vendor = device_vendor::rocm;
  rocm_decoder.order = {{"MEDIUM", {"aiter"}, {}, {}}, {"SLOW", {}, {}, {}}};
  policy_rule encoder;
  encoder.domain = attention_domain::encoder;
  encoder.vendor = device_vendor::cuda;
  encoder.order = {{"VISION", {}, {}, {}}, {"SLOW", {}, {}, {}}};
  policy.rules = {cuda_decoder, cuda_mla, rocm_decoder, encoder};
  reg.set_policy(policy);
  return reg;
}

/// A Hopper (sm90) platform as detection reports a device: its name and component specs (`torch=2.11.0`,
/// `cudnn_preferred`).
inline platform hopper_device(const char* device_name, std::initializer_list<const char*> components) {
  auto p = platform::cuda(9, 0);
  for (const char* spec : components) p.add_component_spec(spec);
  p.set_device_name(device_name);
  return p;
}

inline platform hopper_with_flashinfer() {
  auto p = platform::cuda(9, 0);
  p.add_component_spec("flashinfer=0.2.5");
  return p;
}

/// A default query changed by `change(query&)`: one table row per field under test.
template <class Change>
query with(Change&& change) {
  query q;
  change(q);
  return q;
}

/// Checks that two answers to one query agree (the free select's and a bound selector's): the same
/// backend, override and fallback flags and fallback list, or the same error code.
inline void check_same_answer(const selection_result& a, const selection_result& b) {
  REQUIRE(a.ok() == b.ok());
  if (!a.ok()) {
    CHECK(a.error().code == b.error().code);
    return;
  }
  CHECK(a->name() == b->name());
  CHECK(a->rank == b->rank);
  CHECK(a->overridden == b->overridden);
  CHECK(a->fell_back == b->fell_back);
  CHECK(a->fallback.size() == b->fallback.size());
}

/// The set of reason codes in `reasons` (order and duplicates ignored).
inline std::set<std::string> codes(const std::vector<reason>& reasons) {
  std::set<std::string> out;
  for (const auto& r : reasons) out.insert(std::string(to_string(r.code)));
  return out;
}

inline const candidate_report* find_candidate(const std::vector<candidate_report>& cs, const std::string& name) {
  const auto it = std::find_if(cs.begin(), cs.end(), [&](const candidate_report& c) { return c.name == name; });
  return it == cs.end() ? nullptr : &*it;
}

}  // namespace fixtures
