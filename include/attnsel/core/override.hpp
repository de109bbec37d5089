// SPDX-License-Identifier: Apache-2.0
// The override grammar: parsing and validating `auto`, `NAME`, `A,B`, `A,auto`, `-NAME` without allocating.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/enums.hpp>
#include <attnsel/core/query.hpp>
#include <attnsel/core/registry.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

/// An override string and where it came from.
///
/// Grammar (case-insensitive, blanks around entries ignored):
///   ""  or  "auto"      automatic selection in policy order
///   "NAME"              strict: only NAME is checked; failure is an error, never a substitute
///   "A,B"               exactly A then B
///   "A,B,auto"          A, then B, then the policy order (without A and B)
///   "-NAME[,-NAME2]"    automatic selection without NAME (may be combined with "auto")
struct override_request {
  std::string_view spec;
  override_source source = override_source::api;
};

/// One override per domain. Each domain reads only its own, but the drafter's inherits the decoder's.
struct override_set {
  override_request decoder;
  override_request encoder;
  /// Decoder calls in the prefill / decode phase (SGLang's --prefill-attention-backend and
  /// --decode-attention-backend). Unset: the phase inherits `decoder`. A query with an unstated phase
  /// reads `decoder`.
  std::optional<override_request> prefill{};
  std::optional<override_request> decode{};
  /// The speculative-decoding drafter (vLLM's speculative_config.attention_backend, SGLang's
  /// --speculative-draft-attention-backend). Unset: the drafter reads what a decoder query in its phase
  /// reads, as vLLM's default model runner (EAGLE, MTP) and SGLang (EAGLE) inherit the target's backends.
  /// Set it to "auto" for a drafter that selects on its own (vLLM's V1 runner, DFlash).
  std::optional<override_request> drafter{};
  /// Linear-attention and state-space layers (SGLang's --linear-attn-backend).
  override_request linear{};
  /// Linear layers in the prefill / decode phase (SGLang's --linear-attn-prefill-backend and
  /// --linear-attn-decode-backend, which it has for gated delta-rule kernels). Unset: the phase reads
  /// `linear`, as a query with an unstated phase does.
  std::optional<override_request> linear_prefill{};
  std::optional<override_request> linear_decode{};

  /// The override of `d`'s queries in an unstated phase.
  [[nodiscard]] const override_request& for_domain(attention_domain d) const noexcept {
    switch (d) {
      case attention_domain::encoder:
        return encoder;
      case attention_domain::linear:
        return linear;
      case attention_domain::drafter:
        return drafter ? *drafter : decoder;
      case attention_domain::decoder:
        break;
    }
    return decoder;
  }
  /// The override a query reads: its domain's, or in a stated phase that phase's when set (a decoder
  /// query, a drafter without its own override, a linear layer). The one statement of that rule: the
  /// free select and the bound selector (one decided half per distinct answer) both read it here.
  [[nodiscard]] const override_request& for_query(const query& q) const noexcept {
    const bool prefill_phase = q.phase == attention_phase::prefill;
    const bool decode_phase = q.phase == attention_phase::decode;
    if (q.domain == attention_domain::decoder || (q.domain == attention_domain::drafter && !drafter)) {
      if (prefill_phase && prefill) return *prefill;
      if (decode_phase && decode) return *decode;
    } else if (q.domain == attention_domain::linear) {
      if (prefill_phase && linear_prefill) return *linear_prefill;
      if (decode_phase && linear_decode) return *linear_decode;
    }
    return for_domain(q.domain);
  }
};

/// One entry of a parsed override.
struct override_token {
  enum class kind : std::uint8_t { name, automatic, exclude };
  kind type = kind::automatic;
  std::string_view text;     ///< the entry as written, trimmed (without the '-' of an exclusion)
  std::size_t position = 0;  ///< 1-based entry number
  std::size_t backend = 0;   ///< registry index (name / exclude)
};

/// A set of registry indices. The first 256 positions are bits and up to 16 later ones are held
/// inline too, so a set that records what an override names (a few backends) never allocates, however
/// large the registry; only a set of more than 16 indices past position 256 spills to the heap.
class index_set {
 public:
  void insert(std::size_t i) {
    if (i < inline_bits) {
      bits_[i / 64] |= std::uint64_t{1} << (i % 64);
    } else if (!contains(i)) {
      if (far_count_ < far_.size() && i <= UINT32_MAX) {
        far_[far_count_++] = static_cast<std::uint32_t>(i);
      } else {
        if (overflow_.size() <= i - inline_bits) overflow_.resize(i - inline_bits + 1, false);
        overflow_[i - inline_bits] = true;
      }
    }
  }
  [[nodiscard]] bool contains(std::size_t i) const noexcept {
    if (i < inline_bits) return (bits_[i / 64] >> (i % 64)) & 1U;
    for (std::size_t k = 0; k < far_count_; ++k)
      if (far_[k] == i) return true;
    return i - inline_bits < overflow_.size() && overflow_[i - inline_bits];
  }

 private:
  static constexpr std::size_t inline_bits = 256;
  std::array<std::uint64_t, inline_bits / 64> bits_{};
  std::array<std::uint32_t, 16> far_{};  // indices past inline_bits, in insertion order
  std::size_t far_count_ = 0;
  std::vector<bool> overflow_;
};

/// What is wrong with an override string; `message()` builds the text on demand.
struct override_problem {
  enum class kind : std::uint8_t {
    empty_entry,    ///< ",," or a trailing comma
    lone_dash,      ///< "-" without a name
    auto_twice,     ///< "auto" more than once
    excluded_auto,  ///< "-auto"
    duplicate,      ///< a backend named twice
    forced_and_excluded,
    exclusion_without_auto,  ///< "A,-B": exclusions only affect automatic selection
    unknown_name,
  };
  kind type = kind::unknown_name;
  std::string_view token;
  std::size_t position = 0;

  [[nodiscard]] error_code code() const noexcept {
    return type == kind::unknown_name ? error_code::unknown_backend : error_code::bad_override;
  }
  /// Readable message; for unknown names it lists the valid names and `hint`, the likely meaning
  /// (`suggest_backend(token, reg)`, computed by the caller so it is done once), saying which engine
  /// uses the typed name when it is another catalog's.
  [[nodiscard]] std::string message(const registry& reg, const std::string& hint) const;
  /// As above, computing the closest match itself.
  [[nodiscard]] std::string message(const registry& reg) const;
};

/// A validated override, ready for the selector. Holds views into the spec string.
class override_plan {
 public:
  /// Parses and validates `spec` against `reg`. Allocates nothing unless the spec names more than 16
  /// backends past registry position 256 (see `index_set`).
  static override_plan parse(std::string_view spec, const registry& reg);

  [[nodiscard]] const std::optional<override_problem>& problem() const noexcept { return problem_; }
  [[nodiscard]] bool ok() const noexcept { return !problem_; }
  /// True when the spec names at least one backend to try first.
  [[nodiscard]] bool has_forced() const noexcept { return forced_ > 0; }
  /// True when automatic selection takes part (empty spec, "auto", or only exclusions).
  [[nodiscard]] bool automatic() const noexcept { return explicit_auto_ || forced_ == 0; }
  [[nodiscard]] bool explicit_auto() const noexcept { return explicit_auto_; }
  [[nodiscard]] bool excluded(std::size_t backend) const noexcept { return excluded_.contains(backend); }
  [[nodiscard]] std::string_view spec() const noexcept { return spec_; }

  /// Calls `f(const override_token&)` for each entry, in order.
  template <class F>
  void for_each(F&& f) const;

 private:
  std::string_view spec_;
  std::optional<override_problem> problem_;
  std::size_t forced_ = 0;
  bool explicit_auto_ = false;
  index_set excluded_;
  const registry* reg_ = nullptr;
};

/// Makes an untrusted string safe to print: control and non-ASCII bytes escaped, at most `limit` chars.
[[nodiscard]] std::string printable(std::string_view text, std::size_t limit = 80);

/// The name among `candidates` closest to `text` by edit distance (case-insensitive), if close enough
/// to be a likely typo; empty otherwise.
[[nodiscard]] std::string closest_name(std::string_view text, const std::vector<std::string>& candidates);

/// The backend of `reg` a person probably meant by `typed`: the same kernel family's name when `typed`
/// is another engine's (engine_names.hpp: torch_sdpa's FLASH_ATTENTION is vLLM's FLASH_ATTN, SGLang's
/// fa3 too), else closest_name over `reg`'s names; empty when neither finds one.
[[nodiscard]] std::string suggest_backend(std::string_view typed, const registry& reg);

namespace detail {

constexpr std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Splits `spec` on commas and calls f(entry, position) with trimmed entries, 1-based positions.
template <class F>
void split_entries(std::string_view spec, F&& f) {
  std::size_t position = 0;
  while (true) {
    const auto comma = spec.find(',');
    f(trim(spec.substr(0, comma)), ++position);
    if (comma == std::string_view::npos) return;
    spec.remove_prefix(comma + 1);
  }
}

}  // namespace detail

template <class F>
void override_plan::for_each(F&& f) const {
  if (spec_.empty()) return;
  detail::split_entries(spec_, [&](std::string_view entry, std::size_t position) {
    override_token t;
    t.position = position;
    if (detail::iequals(entry, "auto")) {
      t.type = override_token::kind::automatic;
      t.text = entry;
    } else if (!entry.empty() && entry.front() == '-') {
      t.type = override_token::kind::exclude;
      t.text = detail::trim(entry.substr(1));
      t.backend = reg_->index_of(t.text).value_or(0);
    } else {
      t.type = override_token::kind::name;
      t.text = entry;
      t.backend = reg_->index_of(entry).value_or(0);
    }
    f(t);
  });
}

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/impl/override_inl.hpp>
#endif
