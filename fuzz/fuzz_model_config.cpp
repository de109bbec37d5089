// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: Hugging Face config.json text through the model-config reader and model_config::to_query.
#include <attnsel/all.hpp>

#include "selection_invariants.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace attnsel;
using fuzz_support::violated;

constexpr std::string_view origin = "fuzz.json";

std::string describe(const model_config& c) {
  return "part=" + std::string(to_string(c.part)) + " section='" + c.section +
         "' head_size=" + std::to_string(c.head_size) + " head_size_v=" + std::to_string(c.head_size_v) +
         " num_heads=" + std::to_string(c.num_heads) + " num_kv_heads=" + std::to_string(c.num_kv_heads) +
         " kv_lora_rank=" + std::to_string(c.kv_lora_rank) + " qk_rope_head_dim=" + std::to_string(c.qk_rope_head_dim) +
         " layers=" + std::to_string(c.layers.size()) + " linear_mode=" + std::string(to_string(c.linear_mode));
}

// The reader's documented failure: model_config_error (a std::invalid_argument) whose what() reads
// `ORIGIN: POINTER: problem`, the pointer empty or an RFC 6901 pointer. Anything else escaping is a bug.
std::optional<model_config> read(std::string_view text, model_part part, model_dtype_keys keys) {
  try {
    return parse_model_config(text, part, origin, keys);
  } catch (const model_config_error& e) {
    const std::string what = e.what();
    if (e.origin() != origin) violated("model_config_error names the origin given", {}, what);
    if (!e.pointer().empty() && e.pointer().front() != '/') violated("the pointer is RFC 6901 (or empty)", {}, what);
    if (e.problem().empty()) violated("the problem is not empty", {}, what);
    if (what.rfind(std::string(origin) + ": ", 0) != 0) violated("what() reads 'ORIGIN: POINTER: problem'", {}, what);
    // Values in messages are cut to 40 characters and pointers name keys the reader knows.
    if (what.size() > 1024) violated("a model_config_error message is at most 1 KiB", {}, what.substr(0, 300));
    return std::nullopt;
  } catch (const std::exception& e) {
    violated("parse_model_config throws only model_config_error", {}, e.what());
  }
}

void check_config(const model_config& c, model_part part, std::string_view text) {
  const auto detail = describe(c);
  if (c.part != part) violated("the config is of the part asked for", {}, detail);
  const bool section_ok =
      part == model_part::vision ? c.section == "/vision_config" : (c.section.empty() || c.section == "/text_config");
  if (!section_ok) violated("the section read is the part's", {}, detail);
  if (c.num_heads == 0 || c.num_kv_heads == 0 || c.num_heads % c.num_kv_heads != 0)
    violated("num_kv_heads divides num_heads, both >= 1", {}, detail);
  if (c.head_size == 0 || c.head_size > limits::head_size || c.head_size_v == 0 || c.head_size_v > limits::head_size)
    violated("head sizes are in [1, limits::head_size]", {}, detail);
  if ((c.mode == attention_mode::standard) != (c.kv_lora_rank == 0))
    violated("MLA exactly when kv_lora_rank is read", {}, detail);
  if (c.mode != attention_mode::standard &&
      (c.qk_rope_head_dim == 0 || std::uint64_t{c.kv_lora_rank} + c.qk_rope_head_dim > limits::head_size))
    violated("an MLA latent head fits limits::head_size", {}, detail);
  if (part == model_part::vision && (c.sliding_window != 0 || c.softcap != 0 || c.sinks))
    violated("the vision part reads no decoder features", {}, detail);
  if (!(c.softcap >= 0)) violated("softcap >= 0", {}, detail);

  // Every query it gives is valid, for any tensor-parallel size, and reads back from its JSON.
  for (const std::uint32_t tp : {1u, 2u, 3u, 8u, 1u << 20}) {
    query q;
    try {
      q = c.to_query({}, tp);
    } catch (const std::exception& e) {
      violated("to_query succeeds for tensor_parallel >= 1", {}, detail + "\n" + e.what());
    }
    if (!is_valid(q)) violated("to_query gives a valid query", {}, detail + "\n" + validation_message(q));
    if ((q.domain == attention_domain::encoder) != (part == model_part::vision))
      violated("the query's domain is the part's", {}, detail);
    if (q.mode != c.mode) violated("the query's mode is the config's", {}, detail);
    try {
      if (!(query_from_json(to_json(q)) == q)) violated("query_from_json(to_json(q)) == q", {}, to_json(q).dump());
    } catch (const std::invalid_argument& e) {
      violated("to_json(q) reads back", {}, e.what());
    }
  }
  try {
    (void)c.to_query({}, 0);
    violated("to_query refuses tensor_parallel 0", {}, detail);
  } catch (const std::invalid_argument&) {
  }

  // Stating the dtype (the dtype keys ignored) never turns a read into a failure, and changes nothing else.
  const auto ignored = read(text, part, model_dtype_keys::ignore);
  if (!ignored) violated("a config read with its dtype also reads with the dtype keys ignored", {}, detail);
  if (ignored->dtype || describe(*ignored) != detail)
    violated("ignoring the dtype keys changes only the dtype", {}, detail + "\n" + describe(*ignored));
}

// The plan's text groups hold each layer as its kind says: a hybrid layer in the full and the linear group,
// an mlp layer in none, any other in the one group of its kind; every group's layers ascend.
void check_plan(const model_config& c) {
  if (c.layers.size() > 512) return;  // a bound on the work per input, not on the plan
  const auto plan = plan_model(fuzz_support::reference(), c, c.to_query(), platform::cuda(9, 0));
  std::vector<std::vector<layer_kind>> seen(c.layers.size());
  for (const auto& g : plan.groups) {
    if (g.part != model_part::text || g.kind == layer_kind::cross) continue;
    if (!std::is_sorted(g.layers.begin(), g.layers.end())) violated("a group's layers ascend", {}, describe(c));
    for (const auto i : g.layers)
      if (i < seen.size()) seen[i].push_back(g.kind);
    if (g.kind == layer_kind::linear && g.plan.prefill_query.mode != c.linear_mode)
      violated("a linear group asks in the model's linear mode", {}, describe(c));
  }
  for (std::size_t i = 0; i < c.layers.size(); ++i) {
    const auto kind = c.layers[i];
    const std::size_t expected = kind == layer_kind::mlp ? 0 : kind == layer_kind::hybrid ? 2 : 1;
    if (seen[i].size() != expected) violated("each layer is in the groups its kind says", {}, describe(c));
    if (expected == 1 && seen[i][0] != kind) violated("a layer's group is of its kind", {}, describe(c));
  }
}

}  // namespace

// Input: the text of a config.json, read for the text part and for the vision part.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const auto part : {model_part::text, model_part::vision}) {
    if (const auto c = read(text, part, model_dtype_keys::read)) {
      check_config(*c, part, text);
      // One selection per text config that reads: the query is usable as it stands.
      if (part == model_part::text) {
        fuzz_support::check(fuzz_support::reference(), c->to_query(), platform::cuda(9, 0), override_request{},
                            select_options{});
        check_plan(*c);
      }
    }
  }
  return 0;
}
