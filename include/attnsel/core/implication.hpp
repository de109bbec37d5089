// SPDX-License-Identifier: Apache-2.0
// Component implications (catalog data such as `aiter_mha` => `aiter_enabled`) and closing a platform under them.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/platform.hpp>

#include <cstddef>
#include <string>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

class registry;

/// One implication of a catalog: whenever `component` is on a platform, every name in `implies` is too
/// (vLLM's `is_mha_enabled()` requires `is_enabled()`, so `aiter_mha` implies `aiter_enabled`).
struct component_implication {
  std::string component;
  std::vector<std::string> implies;

  friend bool operator==(const component_implication& a, const component_implication& b) {
    return a.component == b.component && a.implies == b.implies;
  }
  friend bool operator!=(const component_implication& a, const component_implication& b) { return !(a == b); }
};

/// Bounds on the implications one registry holds; larger tables are refused.
struct implication_limits {
  static constexpr std::size_t max_entries = 256;  ///< implications (distinct implying components)
  static constexpr std::size_t max_implied = 16;   ///< names one component implies
};

/// A component a platform gained by closure, and the component that implied it.
struct implied_component {
  std::string name;
  std::string because;

  friend bool operator==(const implied_component& a, const implied_component& b) {
    return a.name == b.name && a.because == b.because;
  }
};

/// A platform closed under a registry's implications, and what the closure added (in the order added).
struct closed_platform {
  platform value;
  std::vector<implied_component> implied;
};

/// Empty when `implications` is well formed, else what is wrong: a name that is not lower_snake, a
/// component listed twice, one implying itself or nothing, or more than implication_limits allows.
[[nodiscard]] std::string implication_problem(const std::vector<component_implication>& implications);

/// True when every component `p` has already carries what the implications of `reg` say it implies.
/// Allocates nothing: a caller that closes its platform once pays only this check per selection.
[[nodiscard]] bool is_closed(const registry& reg, const platform& p) noexcept;

/// `p` with every component the implications of `reg` derive from its components (transitively, each
/// added without a version), and the list of what was added and why. Components `p` has are kept as they are.
[[nodiscard]] closed_platform close_platform(const registry& reg, const platform& p);

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
// The definitions need the complete registry; registry.hpp includes them after defining it.
#  include <attnsel/core/registry.hpp>
#endif
