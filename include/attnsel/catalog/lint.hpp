// SPDX-License-Identifier: Apache-2.0
// Catalog lint: what the loader accepts but is almost certainly wrong, each finding with a JSON pointer.
#pragma once

#include <attnsel/catalog/catalog.hpp>
#include <attnsel/config.hpp>
#include <attnsel/core/enums.hpp>

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

/// Stable code of a lint finding. Part of the API.
enum class lint_code : std::uint8_t {
  unreachable_backend,   ///< no rule lists the backend and no platform falls back to registration order for it
  shadowed_rule,         ///< an earlier rule matches everything this rule matches
  unknown_component,     ///< a `when` / `unless` condition names a component nothing defines
  shadowed_variant,      ///< an earlier variant takes every domain and platform this variant accepts
  impossible_rule,       ///< the rule can never match (capability off CUDA, arch off ROCm, contradictions)
  impossible_platform,   ///< a platform constraint can never accept (capability off CUDA, arch off ROCm)
  unknown_feature,       ///< a rule or entry names a feature no backend declares
  impossible_call_rule,  ///< a call rule's condition lies outside its variant's own shape range (format 2)
};

namespace detail {
template <>
struct enum_table<lint_code> {
  static constexpr std::string_view type_name = "lint code";
  static constexpr std::array<enum_row<lint_code>, 8> rows{{
      {lint_code::unreachable_backend, "unreachable_backend", "", "no rule lists it and no platform falls back to it"},
      {lint_code::shadowed_rule, "shadowed_rule", "", "an earlier rule matches everything this one matches"},
      {lint_code::unknown_component, "unknown_component", "", "a condition names a component nothing defines"},
      {lint_code::shadowed_variant, "shadowed_variant", "", "an earlier variant covers every platform of this one"},
      {lint_code::impossible_rule, "impossible_rule", "", "the rule can never match"},
      {lint_code::impossible_platform, "impossible_platform", "", "the platform constraint can never accept"},
      {lint_code::unknown_feature, "unknown_feature", "", "a rule names a feature no backend declares"},
      {lint_code::impossible_call_rule, "impossible_call_rule", "",
       "a call rule's condition lies outside its variant's own range"},
  }};
};
}  // namespace detail

/// One finding: where (RFC 6901 pointer into the catalog as written by `to_json(catalog)`), what, why.
struct lint_finding {
  lint_code code = lint_code::unreachable_backend;
  std::string pointer;
  std::string message;
};

/// What lint may assume beyond the catalog itself.
struct lint_options {
  /// Components a detection layer or an engine defines; conditions naming them are not flagged.
  std::vector<std::string> known_components;
  /// Also count every component the built-in catalogs name (requires, when, unless) as known.
  bool builtin_components = true;
};

/// Lints `c`: every finding, in catalog order (backends first, then rules). An empty result means clean.
/// Uses only the catalog's data (and the built-in catalogs' component names); never selects.
[[nodiscard]] std::vector<lint_finding> lint_catalog(const catalog& c, const lint_options& options = {});

/// `{"code", "pointer", "message"}`.
[[nodiscard]] nlohmann::json to_json(const lint_finding& f);

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog/impl/lint_inl.hpp>
#endif
