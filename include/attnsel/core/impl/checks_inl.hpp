// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for checks.hpp: one small check per question, shared by both paths.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/checks.hpp>
#endif

#include <attnsel/core/impl/hot.hpp>

#include <algorithm>
#include <attnsel/core/impl/shape_inl.hpp>
#include <attnsel/core/impl/value_text.hpp>

#include <array>
#include <cstddef>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

inline std::string capability_text(const platform& p) {
  if (p.gfx()) return p.gfx()->name();
  if (p.capability()) return "compute capability " + to_string(*p.capability());
  return "an unknown device";
}

inline bool kv_cache_dtype_ok(const capabilities& c, const query& q) noexcept {
  if (c.kv_cache_dtypes.empty() || c.kv_cache_dtypes.contains(q.kv_cache_dtype)) return true;
  if (q.kv_cache_dtype != cache_dtype::automatic) return false;
  // "auto" stores the cache in the compute dtype, so a backend listing that dtype accepts it.
  switch (q.dtype) {
    case data_type::float16:
      return c.kv_cache_dtypes.contains(cache_dtype::float16);
    case data_type::bfloat16:
      return c.kv_cache_dtypes.contains(cache_dtype::bfloat16);
    case data_type::float32:
      return c.kv_cache_dtypes.contains(cache_dtype::float32);
  }
  return false;
}

inline bool block_size_ok(const capabilities& c, const query& q) noexcept {
  if (q.block_size == 0 || c.block_size_multiples.empty()) return true;
  return std::any_of(c.block_size_multiples.begin(), c.block_size_multiples.end(),
                     [&](std::uint32_t base) { return base != 0 && q.block_size % base == 0; });
}

// Collects reasons on the explain path; on the fast path (`out == nullptr`) it only remembers the
// first code, and the message builders are never called, so nothing is allocated.
class reason_sink {
 public:
  explicit reason_sink(std::vector<reason>* out) noexcept : out_(out) {}
  [[nodiscard]] bool collecting() const noexcept { return out_ != nullptr; }
  [[nodiscard]] bool failed() const noexcept { return failed_; }
  [[nodiscard]] std::optional<reason_code> first() const noexcept {
    return failed_ ? std::optional<reason_code>(first_) : std::nullopt;
  }

  // Records a failure; returns true when the caller should stop (fast path).
  template <class MakeMessage>
  bool fail(reason_code code, MakeMessage&& make_message) {
    if (!failed_) {
      first_ = code;
      failed_ = true;
    }
    if (out_ == nullptr) return true;
    record(code, make_message);
    return false;
  }

 private:
  // Out of line and cold: a flattened fast path (first_failure, query_gates_pass) would otherwise
  // inline every message builder, which it never calls, and cost the compiler more than all the rest.
  template <class MakeMessage>
  ATTNSEL_INTERNAL_COLD void record(reason_code code, MakeMessage& make_message) {
    out_->push_back(reason{code, make_message()});
  }

  std::vector<reason>* out_;
  // A flag and a code rather than an optional: GCC's -Wmaybe-uninitialized misfires on the optional
  // once the gates are flattened into one body.
  reason_code first_ = reason_code::domain;
  bool failed_ = false;
};

// Calls visit(constraint) for every platform constraint of the variants serving `domain`.
template <class Visit>
void for_each_constraint(const backend_descriptor& b, attention_domain domain, Visit&& visit) {
  const auto each = [&](const capabilities& c) {
    if (!c.domains.empty() && !c.domains.contains(domain)) return;
    for (const auto& pc : c.platforms) visit(pc);
  };
  if (b.variants.empty()) each(b.caps);
  for (const auto& v : b.variants) each(v);
}

// What every gate sees. `variant` is null until the platform gates resolved one (they stop the walk
// when none does, so the gates after them can rely on it).
struct gate_context {
  const backend_descriptor& backend;
  const capabilities* variant;
  const query& q;
  const platform& p;
};

// One signature for every gate: record failures in the sink; return false when the gate failed.
// A gate that can fail several times (components, features) stops at the first on the fast path.
using gate_fn = bool (*)(const gate_context&, reason_sink&);

ATTNSEL_INTERNAL_ALWAYS_INLINE bool gate_domain(const gate_context& g, reason_sink& sink) {
  if (g.backend.domains.contains(g.q.domain)) return true;
  sink.fail(reason_code::domain, [&] {
    return "serves " + format_enum_set(g.backend.domains) + ", not the " + std::string(to_string(g.q.domain)) +
           " domain";
  });
  return false;
}

ATTNSEL_INTERNAL_ALWAYS_INLINE bool gate_platform(const gate_context& g, reason_sink& sink) {
  if (g.variant != nullptr) return true;
  bool vendor_known = false;
  for_each_constraint(g.backend, g.q.domain,
                      [&](const platform_constraint& pc) { vendor_known |= pc.vendor == g.p.vendor(); });
  if (vendor_known) return true;
  sink.fail(reason_code::platform, [&] {
    std::string vendors;
    for_each_constraint(g.backend, g.q.domain, [&](const platform_constraint& pc) {
      const auto v = std::string(to_string(pc.vendor));
      if (vendors.find(v) == std::string::npos) vendors += (vendors.empty() ? "" : ", ") + v;
    });
    return "runs on " + (vendors.empty() ? std::string("no platform") : vendors) + ", not " +
           std::string(to_string(g.p.vendor()));
  });
  return false;
}

ATTNSEL_INTERNAL_ALWAYS_INLINE bool gate_capability(const gate_context& g, reason_sink& sink) {
  if (g.variant != nullptr) return true;
  sink.fail(reason_code::capability, [&] {
    std::string supported;
    for_each_constraint(g.backend, g.q.domain, [&](const platform_constraint& pc) {
      if (pc.vendor == g.p.vendor()) supported += (supported.empty() ? "" : "; ") + to_string(pc);
    });
    return capability_text(g.p) + " is outside " + supported;
  });
  return false;
}

ATTNSEL_INTERNAL_ALWAYS_INLINE bool gate_component(const gate_context& g, reason_sink& sink) {
  bool ok = true;
  for (const auto& req : g.variant->requires_components) {
    const component* found = g.p.find_component(req.name);
    if (found == nullptr) {
      ok = false;
      if (sink.fail(reason_code::component, [&] { return "needs component " + req.name + ", which is not present"; }))
        return false;
    } else if (!req.admits(found->version)) {
      ok = false;
      if (sink.fail(reason_code::component, [&] {
            return "needs " + component_condition_text(req) + ", found " +
                   (found->version ? to_string(*found->version) : std::string("no version"));
          }))
        return false;
    }
  }
  return ok;
}

ATTNSEL_INTERNAL_ALWAYS_INLINE bool gate_mode(const gate_context& g, reason_sink& sink) {
  if (g.variant->mode == g.q.mode) return true;
  sink.fail(reason_code::mode, [&] {
    return "mode " + std::string(to_string(g.q.mode)) + " not supported (backend is " +
           std::string(to_string(g.variant->mode)) + ")";
  });
  return false;
}

ATTNSEL_INTERNAL_ALWAYS_INLINE bool gate_attn_type(const gate_context& g, reason_sink& sink) {
  const auto& types = g.variant->attn_types;
  if (types.empty() || types.contains(g.q.attn_type)) return true;
  sink.fail(reason_code::attn_type, [&] {
    return "attention type " + std::string(to_string(g.q.attn_type)) + " not in " + format_enum_set(types);
  });
  return false;
}

ATTNSEL_INTERNAL_ALWAYS_INLINE bool gate_dtype(const gate_context& g, reason_sink& sink) {
  const auto& dtypes = g.variant->dtypes;
  if (dtypes.empty() || dtypes.contains(g.q.dtype)) return true;
  sink.fail(reason_code::dtype,
            [&] { return "dtype " + std::string(to_string(g.q.dtype)) + " not in " + format_enum_set(dtypes); });
  return false;
}

ATTNSEL_INTERNAL_ALWAYS_INLINE bool gate_kv_cache_dtype(const gate_context& g, reason_sink& sink) {
  if (kv_cache_dtype_ok(*g.variant, g.q)) return true;
  sink.fail(reason_code::kv_cache_dtype, [&] {
    return "kv-cache dtype " + std::string(to_string(g.q.kv_cache_dtype)) + " not in " +
           format_enum_set(g.variant->kv_cache_dtypes);
  });
  return false;
}

// The head size, then the value head size (which must equal it unless the variant lists its own).
ATTNSEL_INTERNAL_ALWAYS_INLINE bool gate_head_size(const gate_context& g, reason_sink& sink) {
  const capabilities& c = *g.variant;
  const query& q = g.q;
  const head_size_spec& sizes = c.head_sizes_for(q.dtype);
  const bool by_dtype = &sizes != &c.head_sizes;
  const auto for_dtype = [&] { return by_dtype ? " for " + std::string(to_string(q.dtype)) : std::string(); };
  bool ok = true;
  if (!sizes.accepts(q.head_size)) {
    ok = false;
    if (sink.fail(reason_code::head_size, [&] {
          return "head size " + std::to_string(q.head_size) + " not in " + to_string(sizes) + for_dtype();
        }))
      return false;
  }
  if (q.value_head_size() == q.head_size) return ok;
  if (!c.value_head_sizes) {
    sink.fail(reason_code::head_size, [&] {
      return "value head size " + std::to_string(q.value_head_size()) + " differs from head size " +
             std::to_string(q.head_size) + " (backend needs them equal)";
    });
    return false;
  }
  // A per-dtype entry replaces the value head sizes too (the alignment applies to every head dim).
  const head_size_spec& values = by_dtype ? sizes : *c.value_head_sizes;
  if (values.accepts(q.value_head_size())) return ok;
  sink.fail(reason_code::head_size, [&] {
    return "value head size " + std::to_string(q.value_head_size()) + " not in " + to_string(values) + for_dtype();
  });
  return false;
}

ATTNSEL_INTERNAL_ALWAYS_INLINE bool gate_block_size(const gate_context& g, reason_sink& sink) {
  if (block_size_ok(*g.variant, g.q)) return true;
  sink.fail(reason_code::block_size, [&] {
    return "block size " + std::to_string(g.q.block_size) + " is not a multiple of any of " +
           format_uints(g.variant->block_size_multiples);
  });
  return false;
}

// A stated shape field outside the variant's range. An unstated field is never checked here.
template <shape_field F>
bool shape_field_ok(const gate_context& g, reason_sink& sink, reason_code code) {
  const auto& range = g.variant->shape[F];
  if (!range) return true;
  const auto v = shape_value(g.q, F);
  if (!v || range->contains(*v)) return true;
  sink.fail(code, [&] {
    std::string what = std::string(to_string(F)) + " " + std::to_string(*v);
    if (F == shape_field::gqa_group)
      what +=
          " (num_heads " + std::to_string(g.q.num_heads) + " / num_kv_heads " + std::to_string(g.q.num_kv_heads) + ")";
    return what + " is outside " + to_string(*range);
  });
  return false;
}

ATTNSEL_INTERNAL_ALWAYS_INLINE bool gate_seq_len(const gate_context& g, reason_sink& sink) {
  const bool q_ok = shape_field_ok<shape_field::seq_len_q>(g, sink, reason_code::seq_len);
  if (!q_ok && !sink.collecting()) return false;
  return shape_field_ok<shape_field::seq_len_kv>(g, sink, reason_code::seq_len) && q_ok;
}

ATTNSEL_INTERNAL_ALWAYS_INLINE bool gate_batch_size(const gate_context& g, reason_sink& sink) {
  return shape_field_ok<shape_field::batch_size>(g, sink, reason_code::batch_size);
}

ATTNSEL_INTERNAL_ALWAYS_INLINE bool gate_gqa_group(const gate_context& g, reason_sink& sink) {
  return shape_field_ok<shape_field::gqa_group>(g, sink, reason_code::gqa_group);
}

// The stated values a call condition reads, for a message: `seq_len_q 1, seq_len_kv 256`.
inline std::string stated_values(const call_condition& c, const query& q) {
  std::string out;
  const auto add = [&out](std::string_view name, std::uint32_t v) {
    const auto part = std::string(name) + " " + std::to_string(v);
    if (out.find(part) == std::string::npos) out += (out.empty() ? "" : ", ") + part;
  };
  for (shape_field f : shape_fields)
    if (const auto v = shape_value(q, f); v && c.shape[f]) add(to_string(f), *v);
  if (c.equal_seq_lens) {
    add("seq_len_q", q.seq_len_q);
    add("seq_len_kv", q.seq_len_kv);
  }
  if (!c.phases.empty()) out += std::string(out.empty() ? "" : ", ") + "phase " + std::string(to_string(q.phase));
  return out;
}

// Each call rule whose `when` holds for the stated call must have its `require` hold. A rule that
// hangs on an unstated field is not applied (explain lists it).
ATTNSEL_INTERNAL_ALWAYS_INLINE bool gate_call_rule(const gate_context& g, reason_sink& sink) {
  bool ok = true;
  for (const auto& rule : g.variant->call_rules) {
    // Most rules' `when` is ruled out by a cheap test, without the out-of-line evaluate.
    if (rule.when.rules_out(g.q) || rule.when.evaluate(g.q, g.p) != truth::yes ||
        rule.require.evaluate(g.q, g.p) != truth::no)
      continue;
    ok = false;
    if (sink.fail(reason_code::call_rule, [&] {
          std::string msg = to_string(rule);
          const auto values = stated_values(rule.require.never ? rule.when : rule.require, g.q);
          if (!values.empty()) msg += ": " + values;
          if (!rule.note.empty()) msg += " (" + rule.note + ")";
          return msg;
        }))
      return false;
  }
  return ok;
}

// One reason per missing feature.
ATTNSEL_INTERNAL_ALWAYS_INLINE bool gate_feature(const gate_context& g, reason_sink& sink) {
  bool ok = true;
  for (const auto& f : g.q.required) {
    if (g.variant->features.contains(f)) continue;
    ok = false;
    if (sink.fail(reason_code::feature, [&] {
          return "feature " + f + " not supported (supports: " + format_names(g.variant->features) + ")";
        }))
      return false;
  }
  return ok;
}

ATTNSEL_INTERNAL_ALWAYS_INLINE bool gate_custom(const gate_context& g, reason_sink& sink) {
  if (!g.backend.extra_check) return true;
  std::string why;
  bool ok = false;
  try {
    ok = g.backend.extra_check(*g.variant, g.q, g.p, sink.collecting() ? &why : nullptr);
  } catch (...) {
    // A throwing predicate is a bug in that backend, not a reason to abort selection of the others.
    ok = false;
    if (sink.collecting() && why.empty()) why = "custom check threw an exception";
  }
  if (ok) return true;
  sink.fail(reason_code::custom, [&] { return why.empty() ? std::string("custom check failed") : why; });
  return false;
}

// An advisory that demotes its backend and holds for the stated call refuses it. One that hangs on an
// unstated field is not applied (explain lists it); a warning never fails the gate.
ATTNSEL_INTERNAL_ALWAYS_INLINE bool gate_advisory(const gate_context& g, reason_sink& sink) {
  bool ok = true;
  for (const auto& a : g.backend.advisories) {
    if (a.action != advisory_action::demote || a.holds(*g.variant, g.q, g.p) != truth::yes) continue;
    ok = false;
    if (sink.fail(reason_code::advisory, [&] { return advisory_message(a); })) return false;
  }
  return ok;
}

// Whether a gate can refuse any query for a backend and its variant: false when the variant leaves
// unconstrained everything the gate compares (an empty list, an unset range), so a walk bound to that
// variant may skip the gate. Each stands beside its gate's row below; a test checks that skipping the
// gates a variant leaves dead never changes an answer.
using gate_live_fn = bool (*)(const backend_descriptor&, const capabilities&) noexcept;
constexpr bool always_live(const backend_descriptor&, const capabilities&) noexcept { return true; }
constexpr bool live_attn_type(const backend_descriptor&, const capabilities& c) noexcept {
  return !c.attn_types.empty();
}
constexpr bool live_dtype(const backend_descriptor&, const capabilities& c) noexcept { return !c.dtypes.empty(); }
inline bool live_kv_cache_dtype(const backend_descriptor&, const capabilities& c) noexcept {
  return !c.kv_cache_dtypes.empty();
}
inline bool live_block_size(const backend_descriptor&, const capabilities& c) noexcept {
  return !c.block_size_multiples.empty();
}
inline bool live_seq_len(const backend_descriptor&, const capabilities& c) noexcept {
  return c.shape[shape_field::seq_len_q].has_value() || c.shape[shape_field::seq_len_kv].has_value();
}
inline bool live_batch_size(const backend_descriptor&, const capabilities& c) noexcept {
  return c.shape[shape_field::batch_size].has_value();
}
inline bool live_gqa_group(const backend_descriptor&, const capabilities& c) noexcept {
  return c.shape[shape_field::gqa_group].has_value();
}
inline bool live_call_rule(const backend_descriptor&, const capabilities& c) noexcept { return !c.call_rules.empty(); }
inline bool live_custom(const backend_descriptor& b, const capabilities&) noexcept {
  return static_cast<bool>(b.extra_check);
}
inline bool live_advisory(const backend_descriptor& b, const capabilities&) noexcept {
  return std::any_of(b.advisories.begin(), b.advisories.end(),
                     [](const advisory& a) { return a.action == advisory_action::demote; });
}

// Each gate of `check_gates` (a static_assert below keeps them in step): its code, its body, and whether
// it can refuse a query for a given variant.
struct gate_entry {
  reason_code code;
  gate_fn run;
  gate_live_fn live;
};
inline constexpr std::array<gate_entry, check_gates.size()> gate_table{{
    {reason_code::domain, gate_domain, always_live},
    {reason_code::platform, gate_platform, always_live},
    {reason_code::capability, gate_capability, always_live},
    {reason_code::component, gate_component, always_live},
    {reason_code::mode, gate_mode, always_live},
    {reason_code::attn_type, gate_attn_type, live_attn_type},
    {reason_code::dtype, gate_dtype, live_dtype},
    {reason_code::kv_cache_dtype, gate_kv_cache_dtype, live_kv_cache_dtype},
    {reason_code::head_size, gate_head_size, always_live},
    {reason_code::block_size, gate_block_size, live_block_size},
    {reason_code::seq_len, gate_seq_len, live_seq_len},
    {reason_code::batch_size, gate_batch_size, live_batch_size},
    {reason_code::gqa_group, gate_gqa_group, live_gqa_group},
    {reason_code::feature, gate_feature, always_live},
    {reason_code::call_rule, gate_call_rule, live_call_rule},
    {reason_code::custom, gate_custom, live_custom},
    {reason_code::advisory, gate_advisory, live_advisory},
}};
static_assert(check_gates.size() <= 32, "live_query_gates packs one bit per gate");

constexpr bool gate_table_matches_check_gates() noexcept {
  for (std::size_t i = 0; i < check_gates.size(); ++i)
    if (gate_table[i].code != check_gates[i].code) return false;
  return true;
}
static_assert(gate_table_matches_check_gates(), "gate_table must list the gates of check_gates, in order");

// Gates before this index read at most the platform and the domain.
constexpr std::size_t first_query_gate() noexcept {
  std::size_t i = 0;
  while (i < check_gates.size() && check_gates[i].reads != gate_input::query) ++i;
  return i;
}

// Runs gates [I, Last) in order. A failing prerequisite stops the walk; on the fast path any failure
// does. With a collecting sink the rest still run, so a person sees every failure at once. The walk is
// unrolled at compile time, so each gate is a direct (inlinable) call, as fast as hand-written code.
template <std::size_t I, std::size_t Last>
ATTNSEL_INTERNAL_ALWAYS_INLINE void run_gates(const gate_context& g, reason_sink& sink) {
  if constexpr (I < Last) {
    constexpr gate_fn run = gate_table[I].run;
    if (!run(g, sink) && (check_gates[I].prerequisite || !sink.collecting())) return;
    run_gates<I + 1, Last>(g, sink);
  }
}

// The fast path over the gates [I, Last) whose bit is set in `live`: the first failure stops it.
template <std::size_t I, std::size_t Last>
ATTNSEL_INTERNAL_ALWAYS_INLINE bool live_gates_pass(const gate_context& g, reason_sink& sink, std::uint32_t live) {
  if constexpr (I < Last) {
    constexpr gate_fn run = gate_table[I].run;
    if (((live >> I) & 1U) != 0 && !run(g, sink)) return false;
    return live_gates_pass<I + 1, Last>(g, sink, live);
  } else {
    return true;
  }
}

inline void evaluate(const backend_descriptor& b, const query& q, const platform& p, reason_sink& sink) {
  const capabilities* variant = b.domains.contains(q.domain) ? resolve_variant(b, q.domain, p) : nullptr;
  run_gates<0, check_gates.size()>(gate_context{b, variant, q, p}, sink);
}

}  // namespace detail

ATTNSEL_INLINE const capabilities* resolve_variant(const backend_descriptor& backend, attention_domain domain,
                                                   const platform& p) noexcept {
  const auto platform_ok = [&](const capabilities& c) { return platforms_accept(c.platforms, p); };
  if (backend.variants.empty()) return platform_ok(backend.caps) ? &backend.caps : nullptr;
  for (const auto& v : backend.variants)
    if ((v.domains.empty() || v.domains.contains(domain)) && platform_ok(v)) return &v;
  return nullptr;
}

ATTNSEL_INLINE ATTNSEL_INTERNAL_FLATTEN std::optional<reason_code> first_failure(const backend_descriptor& backend,
                                                                                 const query& q,
                                                                                 const platform& p) noexcept {
  detail::reason_sink sink(nullptr);
  // With a null sink no message builder runs, so nothing here can throw except a custom check,
  // which evaluate() catches.
  detail::evaluate(backend, q, p, sink);
  return sink.first();
}

ATTNSEL_INLINE std::uint32_t detail::live_query_gates(const backend_descriptor& backend,
                                                      const capabilities& variant) noexcept {
  std::uint32_t live = 0;
  for (std::size_t i = detail::first_query_gate(); i < check_gates.size(); ++i)
    if (detail::gate_table[i].live(backend, variant)) live |= std::uint32_t{1} << i;
  return live;
}

ATTNSEL_INLINE ATTNSEL_INTERNAL_FLATTEN bool detail::query_gates_pass(const backend_descriptor& backend,
                                                                      const capabilities& variant, const query& q,
                                                                      const platform& p, std::uint32_t live) noexcept {
  detail::reason_sink sink(nullptr);
  return detail::live_gates_pass<detail::first_query_gate(), check_gates.size()>(
      detail::gate_context{backend, &variant, q, p}, sink, live);
}

ATTNSEL_INLINE std::optional<reason_code> detail::first_platform_failure(const backend_descriptor& backend,
                                                                         attention_domain domain,
                                                                         const platform& p) noexcept {
  query q;
  q.domain = domain;
  detail::reason_sink sink(nullptr);
  const capabilities* variant = backend.domains.contains(domain) ? resolve_variant(backend, domain, p) : nullptr;
  detail::run_gates<0, detail::first_query_gate()>(detail::gate_context{backend, variant, q, p}, sink);
  return sink.first();
}

ATTNSEL_INLINE bool detail::platform_decides_call_rules(const capabilities& variant) noexcept {
  return std::any_of(variant.call_rules.begin(), variant.call_rules.end(),
                     [](const call_rule& r) { return !r.when.components.empty() || !r.require.components.empty(); });
}

ATTNSEL_INLINE capabilities detail::resolved_on(const capabilities& variant, const platform& p) {
  // call_condition::evaluate reads the platform only through `components`, after everything else, and
  // answers `no` when one is out of range: so a condition whose components hold answers as it does
  // without them, and one whose components fail answers `no` for every query (as `never` does).
  const auto components_hold = [&p](const call_condition& c) {
    return std::all_of(c.components.begin(), c.components.end(),
                       [&p](const component_condition& cc) { return component_in_range(cc, p); });
  };
  capabilities out = variant;
  out.call_rules.clear();
  for (const auto& rule : variant.call_rules) {
    if (!components_hold(rule.when)) continue;  // `when` is `no` on p: the rule never applies
    call_rule kept = rule;
    kept.when.components.clear();
    if (components_hold(rule.require)) {
      kept.require.components.clear();
    } else {
      kept.require = call_condition{};
      kept.require.never = true;
    }
    out.call_rules.push_back(std::move(kept));
  }
  return out;
}

ATTNSEL_INLINE std::string detail::advisory_message(const advisory& a) {
  std::string out = "advisory " + a.id + ": " + a.message;
  if (!a.upstream.empty()) out += " (" + a.upstream.front() + ")";
  return out;
}

namespace detail {
// first_warning, inline in the bound selector's answer paths (a cache hit among them).
ATTNSEL_INTERNAL_ALWAYS_INLINE const advisory* first_warning_inline(const backend_descriptor& backend,
                                                                    const capabilities& variant, const query& q,
                                                                    const platform& p) noexcept {
  for (const auto& a : backend.advisories)
    if (a.action == advisory_action::warn && a.holds(variant, q, p) == truth::yes) return &a;
  return nullptr;
}
}  // namespace detail

ATTNSEL_INLINE const advisory* first_warning(const backend_descriptor& backend, const capabilities& variant,
                                             const query& q, const platform& p) noexcept {
  return detail::first_warning_inline(backend, variant, q, p);
}

ATTNSEL_INLINE std::vector<reason> check_backend(const backend_descriptor& backend, const query& q, const platform& p) {
  std::vector<reason> out;
  detail::reason_sink sink(&out);
  detail::evaluate(backend, q, p, sink);
  return out;
}

ATTNSEL_END_NAMESPACE
