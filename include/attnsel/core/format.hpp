// SPDX-License-Identifier: Apache-2.0
// fmt formatters for the public types: enums print their canonical name, values print as in messages.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/enums.hpp>
#include <attnsel/core/platform.hpp>
#include <attnsel/core/query.hpp>
#include <attnsel/core/reason.hpp>
#include <attnsel/core/select.hpp>

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <type_traits>

ATTNSEL_BEGIN_NAMESPACE
namespace detail {
template <class E, class = void>
struct has_enum_table : std::false_type {};
template <class E>
struct has_enum_table<E, std::void_t<decltype(enum_table<E>::rows)>> : std::true_type {};

/// Every formatter below renders its value to text, then lays that text out with the standard
/// string spec, so width, fill and alignment work for every type: fmt::format("{:>8}", cap) == "     9.0".
struct text_formatter : fmt::formatter<fmt::string_view> {
  template <class Ctx>
  auto put(std::string_view text, Ctx& ctx) const {
    return fmt::formatter<fmt::string_view>::format(fmt::string_view(text.data(), text.size()), ctx);
  }
};

/// A value that attnsel::to_string spells formats as that text.
template <class T>
struct to_string_formatter : text_formatter {
  template <class Ctx>
  auto format(const T& value, Ctx& ctx) const {
    return put(attnsel::to_string(value), ctx);
  }
};
}  // namespace detail

ATTNSEL_END_NAMESPACE

/// Every table-backed enum formats as its canonical name: fmt::format("{}", data_type::float16) == "float16".
template <class E>
struct fmt::formatter<E, char, std::enable_if_t<attnsel::detail::has_enum_table<E>::value>>
    : attnsel::detail::to_string_formatter<E> {};

/// `9.0`.
template <>
struct fmt::formatter<attnsel::cuda_capability> : attnsel::detail::to_string_formatter<attnsel::cuda_capability> {};

/// `gfx942`.
template <>
struct fmt::formatter<attnsel::gfx_arch> : attnsel::detail::text_formatter {
  template <class Ctx>
  auto format(attnsel::gfx_arch a, Ctx& ctx) const {
    return put(a.name(), ctx);
  }
};

/// `9.0.1`.
template <>
struct fmt::formatter<attnsel::component_version> : attnsel::detail::to_string_formatter<attnsel::component_version> {};

/// `rocm gfx942 [aiter, flashinfer=0.2.5]`.
template <>
struct fmt::formatter<attnsel::platform> : attnsel::detail::text_formatter {
  template <class Ctx>
  auto format(const attnsel::platform& p, Ctx& ctx) const {
    return put(attnsel::to_string_with_components(p), ctx);
  }
};

/// `decoder attention (head_size=128, dtype=bfloat16, ...)`.
template <>
struct fmt::formatter<attnsel::query> : attnsel::detail::to_string_formatter<attnsel::query> {};

/// `head_size: head size 72 not in {64, 128, 256}`.
template <>
struct fmt::formatter<attnsel::reason> : attnsel::detail::to_string_formatter<attnsel::reason> {};

/// `backend_rejected: Selected backend ...`.
template <>
struct fmt::formatter<attnsel::selection_error> : attnsel::detail::text_formatter {
  template <class Ctx>
  auto format(const attnsel::selection_error& e, Ctx& ctx) const {
    return put(fmt::format("{}: {}", attnsel::to_string(e.code), e.message), ctx);
  }
};
