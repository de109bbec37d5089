// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for checks.hpp: one small check per question, shared by both paths.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/checks.hpp>
#endif

#include <algorithm>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

template <class E>
std::string format_enum_set(enum_set<E> set) {
  if (set.empty()) return "any";
  std::string out = "{";
  set.for_each([&](E v) {
    if (out.size() > 1) out += ", ";
    out += to_string(v);
  });
  return out + "}";
}

inline std::string format_uints(const std::vector<std::uint32_t>& values) {
  std::string out = "{";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "}";
}

inline std::string capability_text(const platform& p) {
  if (p.gfx()) return p.gfx()->name();
  if (p.capability()) return "compute capability " + p.describe().substr(p.describe().find(' ') + 1);
  return "an unknown device";
}

// Collects reasons on the explain path; on the fast path (`out == nullptr`) it only remembers the
// first code, and the message builders are never called, so nothing is allocated.
class reason_sink {
 public:
  explicit reason_sink(std::vector<reason>* out) noexcept : out_(out) {}
  [[nodiscard]] bool collecting() const noexcept { return out_ != nullptr; }
  [[nodiscard]] bool failed() const noexcept { return first_.has_value(); }
  [[nodiscard]] std::optional<reason_code> first() const noexcept { return first_; }

  // Records a failure; returns true when the caller should stop (fast path).
  template <class MakeMessage>
  bool fail(reason_code code, MakeMessage&& make_message) {
    if (!first_) first_ = code;
    if (out_ == nullptr) return true;
    out_->push_back(reason{code, make_message()});
    return false;
  }

 private:
  std::vector<reason>* out_;
  std::optional<reason_code> first_;
};

inline bool kv_cache_dtype_ok(const capabilities& c, const query& q) noexcept {
  if (c.kv_cache_dtypes.empty() || c.kv_cache_dtypes.contains(q.kv_cache_dtype)) return true;
  if (q.kv_cache_dtype != cache_dtype::automatic) return false;
  // "auto" stores the cache in the compute dtype, so a backend listing that dtype accepts it.
  switch (q.dtype) {
    case data_type::float16: return c.kv_cache_dtypes.contains(cache_dtype::float16);
    case data_type::bfloat16: return c.kv_cache_dtypes.contains(cache_dtype::bfloat16);
    case data_type::float32: return c.kv_cache_dtypes.contains(cache_dtype::float32);
  }
  return false;
}

inline bool block_size_ok(const capabilities& c, const query& q) noexcept {
  if (q.block_size == 0 || c.block_size_multiples.empty()) return true;
  return std::any_of(c.block_size_multiples.begin(), c.block_size_multiples.end(),
                     [&](std::uint32_t base) { return base != 0 && q.block_size % base == 0; });
}

// The platform half of variant resolution failed: say whether the vendor or the arch is wrong.
// The code is found without allocating; the message is built only on the explain path.
template <class Visit>
void for_each_constraint(const backend_descriptor& b, attn_domain domain, Visit&& visit) {
  const auto each = [&](const capabilities& c) {
    if (!c.domains.empty() && !c.domains.contains(domain)) return;
    for (const auto& pc : c.platforms) visit(pc);
  };
  if (b.variants.empty()) each(b.caps);
  for (const auto& v : b.variants) each(v);
}

inline void explain_platform(const backend_descriptor& b, attn_domain domain, const platform& p,
                             reason_sink& sink) {
  bool vendor_known = false;
  for_each_constraint(b, domain, [&](const platform_constraint& pc) { vendor_known |= pc.vendor == p.vendor(); });
  if (!vendor_known) {
    sink.fail(reason_code::platform, [&] {
      std::string vendors;
      for_each_constraint(b, domain, [&](const platform_constraint& pc) {
        const auto v = std::string(to_string(pc.vendor));
        if (vendors.find(v) == std::string::npos) vendors += (vendors.empty() ? "" : ", ") + v;
      });
      return "runs on " + (vendors.empty() ? std::string("no platform") : vendors) + ", not " +
             std::string(to_string(p.vendor()));
    });
    return;
  }
  sink.fail(reason_code::capability, [&] {
    std::string supported;
    for_each_constraint(b, domain, [&](const platform_constraint& pc) {
      if (pc.vendor == p.vendor()) supported += (supported.empty() ? "" : "; ") + pc.describe();
    });
    return capability_text(p) + " is outside " + supported;
  });
}

// Runs every check in order. Returns the sink's verdict; with a collecting sink it goes on past
// failures so that a person sees all of them at once.
inline void evaluate(const backend_descriptor& b, const query& q, const platform& p, reason_sink& sink) {
  if (!b.domains.contains(q.domain)) {
    sink.fail(reason_code::domain, [&] {
      return "serves " + format_enum_set(b.domains) + ", not the " + std::string(to_string(q.domain)) + " domain";
    });
    return;
  }
  const capabilities* c = resolve_variant(b, q.domain, p);
  if (c == nullptr) {
    explain_platform(b, q.domain, p, sink);
    return;
  }

  for (const auto& req : c->requires_components) {
    const component* found = p.find_component(req.name);
    if (found == nullptr) {
      if (sink.fail(reason_code::component, [&] { return "needs component " + req.name + ", which is not present"; }))
        return;
    } else if (req.min_version && (!found->version || *found->version < *req.min_version)) {
      if (sink.fail(reason_code::component, [&] {
            return "needs " + req.name + " >= " + req.min_version->str() + ", found " +
                   (found->version ? found->version->str() : std::string("no version"));
          }))
        return;
    }
  }
  if (c->mode != q.mode) {
    if (sink.fail(reason_code::mode, [&] {
          return "mode " + std::string(to_string(q.mode)) + " not supported (backend is " +
                 std::string(to_string(c->mode)) + ")";
        }))
      return;
  }
  if (!c->attn_types.empty() && !c->attn_types.contains(q.attn_type)) {
    if (sink.fail(reason_code::attn_type, [&] {
          return "attention type " + std::string(to_string(q.attn_type)) + " not in " + format_enum_set(c->attn_types);
        }))
      return;
  }
  if (!c->dtypes.empty() && !c->dtypes.contains(q.dtype)) {
    if (sink.fail(reason_code::dtype, [&] {
          return "dtype " + std::string(to_string(q.dtype)) + " not in " + format_enum_set(c->dtypes);
        }))
      return;
  }
  if (!kv_cache_dtype_ok(*c, q)) {
    if (sink.fail(reason_code::kv_cache_dtype, [&] {
          return "kv-cache dtype " + std::string(to_string(q.kv_cache_dtype)) + " not in " +
                 format_enum_set(c->kv_cache_dtypes);
        }))
      return;
  }
  if (!c->head_sizes.accepts(q.head_size)) {
    if (sink.fail(reason_code::head_size, [&] {
          return "head size " + std::to_string(q.head_size) + " not in " + c->head_sizes.describe();
        }))
      return;
  }
  if (q.value_head_size() != q.head_size) {
    if (!c->value_head_sizes) {
      if (sink.fail(reason_code::head_size, [&] {
            return "value head size " + std::to_string(q.value_head_size()) + " differs from head size " +
                   std::to_string(q.head_size) + " (backend needs them equal)";
          }))
        return;
    } else if (!c->value_head_sizes->accepts(q.value_head_size())) {
      if (sink.fail(reason_code::head_size, [&] {
            return "value head size " + std::to_string(q.value_head_size()) + " not in " +
                   c->value_head_sizes->describe();
          }))
        return;
    }
  }
  if (!block_size_ok(*c, q)) {
    if (sink.fail(reason_code::block_size, [&] {
          return "block size " + std::to_string(q.block_size) + " is not a multiple of any of " +
                 format_uints(c->block_size_multiples);
        }))
      return;
  }
  for (const auto& f : q.required) {
    if (!c->features.contains(f)) {
      if (sink.fail(reason_code::feature, [&] {
            return "feature " + f + " not supported (supports: " + format_names(c->features) + ")";
          }))
        return;
    }
  }
  if (b.extra_check && (sink.collecting() || !sink.failed())) {
    std::string why;
    bool ok = false;
    try {
      ok = b.extra_check(*c, q, p, sink.collecting() ? &why : nullptr);
    } catch (...) {
      // A throwing predicate is a bug in that backend, not a reason to abort selection of the others.
      ok = false;
      if (sink.collecting() && why.empty()) why = "custom check threw an exception";
    }
    if (!ok) sink.fail(reason_code::custom, [&] { return why.empty() ? std::string("custom check failed") : why; });
  }
}

}  // namespace detail

ATTNSEL_INLINE const capabilities* resolve_variant(const backend_descriptor& backend, attn_domain domain,
                                                   const platform& p) noexcept {
  const auto platform_ok = [&](const capabilities& c) {
    return c.platforms.empty() ||
           std::any_of(c.platforms.begin(), c.platforms.end(), [&](const platform_constraint& pc) { return pc.accepts(p); });
  };
  if (backend.variants.empty()) return platform_ok(backend.caps) ? &backend.caps : nullptr;
  for (const auto& v : backend.variants)
    if ((v.domains.empty() || v.domains.contains(domain)) && platform_ok(v)) return &v;
  return nullptr;
}

ATTNSEL_INLINE std::optional<reason_code> first_failure(const backend_descriptor& backend, const query& q,
                                                        const platform& p) noexcept {
  detail::reason_sink sink(nullptr);
  // With a null sink no message builder runs, so nothing here can throw except a custom check,
  // which evaluate() catches.
  detail::evaluate(backend, q, p, sink);
  return sink.first();
}

ATTNSEL_INLINE std::vector<reason> check_backend(const backend_descriptor& backend, const query& q,
                                                 const platform& p) {
  std::vector<reason> out;
  detail::reason_sink sink(&out);
  detail::evaluate(backend, q, p, sink);
  return out;
}

ATTNSEL_END_NAMESPACE
