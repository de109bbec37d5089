// SPDX-License-Identifier: Apache-2.0
// Catalog diff: the decisions of two catalogs compared over a bounded, stated configuration space.
#pragma once

#include <attnsel/catalog/catalog.hpp>
#include <attnsel/config.hpp>
#include <attnsel/core/platform.hpp>
#include <attnsel/core/query.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

/// What `diff_catalogs` enumerates and how much it keeps.
struct diff_options {
  bool decoder = true;  ///< compare decoder-domain selections
  bool encoder = true;  ///< compare encoder-domain selections
  /// Compare drafter selections where either catalog serves the drafter (otherwise both draft as their
  /// decoders, which `decoder` compares).
  bool drafter = true;
  bool linear = true;     ///< compare linear-domain selections (where either catalog serves the domain)
  bool overrides = true;  ///< also force each backend whose descriptor differs between the catalogs
  /// Count, without evaluating, the configurations of a vendor and domain for which both catalogs have
  /// the same backends and the same rules in the same order (their decisions are equal by construction).
  bool skip_identical = true;
  std::size_t max_examples = 3;                 ///< configurations kept per transition, for people to try
  std::size_t max_configurations = 50'000'000;  ///< a larger space throws std::length_error (nothing is sampled)
};

/// One enumerated configuration: the platform, the query and the override string (empty: automatic).
struct diff_configuration {
  attnsel::platform platform;
  attnsel::query query;
  std::string override_spec;
};

/// Every configuration whose decision went from `from` to `to` within one group.
/// A decision is a backend name, or `error:CODE` (`error:no_backend`, `error:backend_rejected`, ...).
struct diff_transition {
  std::string from;
  std::string to;
  std::size_t count = 0;
  std::vector<diff_configuration> examples;  ///< the first `max_examples` found, in enumeration order
};

/// Changes on one platform (vendor and arch; component sets vary inside), one domain, under one pair
/// of rules: the rule that gave the order in catalog A and in catalog B (`forced NAME` for overrides,
/// `registration order` when none matched).
struct diff_group {
  std::string platform;  ///< `rocm gfx942`, `cuda 9.0`, `cpu`
  attention_domain domain = attention_domain::decoder;
  std::string rule_a;
  std::string rule_b;
  std::size_t count = 0;
  std::vector<diff_transition> transitions;  ///< largest first
};

/// The enumerated space, stated so a reader knows what "no difference" covers.
struct diff_space {
  std::vector<std::string> platforms;  ///< every vendor/arch point, `cuda 8.0`, `rocm gfx90a`
  std::size_t component_sets = 0;      ///< platform x component-set combinations enumerated
  std::vector<std::uint32_t> head_sizes;
  std::vector<std::string> dtypes;
  std::vector<std::string> kv_cache_dtypes;
  std::vector<std::uint32_t> block_sizes;  ///< 0 = not pinned
  std::vector<std::string> attn_types;
  std::vector<std::string> modes;
  std::vector<std::string> features;     ///< `none` and each single feature
  std::vector<std::uint32_t> num_heads;  ///< 0 = unknown
  /// Calls (format 2): `unstated`, or a phase with one length per class of the thresholds the
  /// catalogs use (`decode seq_len_q=1 seq_len_kv=2`); the first `listed_calls` distinct ones, ascending.
  std::vector<std::string> calls;
  std::size_t call_count = 0;  ///< distinct calls enumerated (`calls` lists the first)
  static constexpr std::size_t listed_calls = 64;
  /// Configurations whose GQA group no head count of their num_heads class can state (a group above
  /// every head count a rule allows there): compared with the group unstated, and counted here.
  std::size_t gqa_unrealised = 0;
  std::vector<std::string> overrides;  ///< `auto` and each backend forced somewhere in the space
  std::size_t configurations = 0;      ///< configurations compared (each decided by both catalogs)
  std::size_t evaluated = 0;           ///< of those, the ones selected in both catalogs (see skip_identical)
};

/// Configurations compared and changed on one vendor.
struct diff_vendor_count {
  device_vendor vendor = device_vendor::cuda;
  std::size_t configurations = 0;
  std::size_t changed = 0;
};

/// Result of `diff_catalogs`: empty when no enumerated decision differs.
struct catalog_diff {
  std::string a;  ///< catalog names
  std::string b;
  diff_space space;
  std::vector<diff_vendor_count> vendors;  ///< every vendor enumerated, in enum order
  std::size_t changed = 0;                 ///< configurations whose decision differs
  std::vector<diff_group> groups;          ///< by platform, domain and rules; in enumeration order

  [[nodiscard]] bool empty() const noexcept { return changed == 0; }
};

/// Compares the decisions of `a` and `b` over every configuration of the space both catalogs mention:
/// every vendor the library knows (each with at least one arch); each CUDA capability at which a range in either
/// catalog starts or ends (and one below the lowest); each gfx arch named, plus one per family named; every set of the
/// components that backends require or rules condition on for that vendor, domain and mode; head sizes, dtypes, KV
/// dtypes, block sizes, attention types, single features and head counts at the values where some
/// backend or rule changes its answer (values no check tells apart are merged into one); both domains
/// and every mode; automatic selection, plus each backend forced when its descriptor differs and it
/// could serve the vendor, domain and mode in either catalog. The
/// query's value head size equals its head size; component sets that satisfy the same requirements and
/// conditions are merged. Throws std::length_error, naming every axis size, when the space exceeds
/// `options.max_configurations`; the sizes are counted before any product of axes is built.
[[nodiscard]] catalog_diff diff_catalogs(const catalog& a, const catalog& b, const diff_options& options = {});

/// Text for people: a header stating the space and counts, then one block per group with its
/// transitions and an example configuration each (`attnsel diff` prints this).
[[nodiscard]] std::string diff_text(const catalog_diff& d);

/// `{"a", "b", "changed", "configurations", "space": {...}, "groups": [{platform, domain, rule_a,
/// rule_b, count, transitions: [{from, to, count, examples: [{platform, query, override}]}]}]}`.
[[nodiscard]] nlohmann::json to_json(const catalog_diff& d);

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog/impl/diff_inl.hpp>
#endif
