// SPDX-License-Identifier: Apache-2.0
// fmt formatters for the public types: enums print their canonical name, values print as in messages.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/enums.hpp>
#include <attnsel/platform.hpp>
#include <attnsel/query.hpp>
#include <attnsel/reason.hpp>
#include <attnsel/selector.hpp>

#include <fmt/format.h>

#include <string>
#include <type_traits>

ATTNSEL_BEGIN_NAMESPACE
namespace detail {
template <class E, class = void>
struct has_enum_table : std::false_type {};
template <class E>
struct has_enum_table<E, std::void_t<decltype(enum_table<E>::rows)>> : std::true_type {};

}  // namespace detail

ATTNSEL_END_NAMESPACE

/// Every table-backed enum formats as its canonical name: fmt::format("{}", data_type::float16) == "float16".
template <class E>
struct fmt::formatter<E, char, std::enable_if_t<attnsel::detail::has_enum_table<E>::value>>
    : fmt::formatter<fmt::string_view> {
  template <class Ctx>
  auto format(E value, Ctx& ctx) const {
    const auto text = attnsel::to_string(value);
    return fmt::formatter<fmt::string_view>::format(fmt::string_view(text.data(), text.size()), ctx);
  }
};

template <>
struct fmt::formatter<attnsel::cuda_capability> : fmt::formatter<fmt::string_view> {
  template <class Ctx>
  auto format(attnsel::cuda_capability c, Ctx& ctx) const {
    return fmt::format_to(ctx.out(), "{}.{}", c.major, c.minor);
  }
};

template <>
struct fmt::formatter<attnsel::gfx_arch> : fmt::formatter<fmt::string_view> {
  template <class Ctx>
  auto format(attnsel::gfx_arch a, Ctx& ctx) const {
    return fmt::format_to(ctx.out(), "{}", a.name());
  }
};

template <>
struct fmt::formatter<attnsel::component_version> : fmt::formatter<fmt::string_view> {
  template <class Ctx>
  auto format(const attnsel::component_version& v, Ctx& ctx) const {
    return fmt::format_to(ctx.out(), "{}", v.str());
  }
};

/// `rocm gfx942 [aiter, flashinfer=0.2.5]`.
template <>
struct fmt::formatter<attnsel::platform> : fmt::formatter<fmt::string_view> {
  template <class Ctx>
  auto format(const attnsel::platform& p, Ctx& ctx) const {
    auto out = fmt::format_to(ctx.out(), "{}", p.describe());
    if (!p.components().empty()) {
      out = fmt::format_to(out, " [");
      bool first = true;
      for (const auto& c : p.components()) {
        out = fmt::format_to(out, "{}{}", first ? "" : ", ", c.name);
        if (c.version) out = fmt::format_to(out, "={}", c.version->str());
        first = false;
      }
      out = fmt::format_to(out, "]");
    }
    return out;
  }
};

template <>
struct fmt::formatter<attnsel::query> : fmt::formatter<fmt::string_view> {
  template <class Ctx>
  auto format(const attnsel::query& q, Ctx& ctx) const {
    return fmt::format_to(ctx.out(), "{}", attnsel::summary(q));
  }
};

/// `head_size: head size 72 not in {64, 128, 256}`.
template <>
struct fmt::formatter<attnsel::reason> : fmt::formatter<fmt::string_view> {
  template <class Ctx>
  auto format(const attnsel::reason& r, Ctx& ctx) const {
    return fmt::format_to(ctx.out(), "{}: {}", attnsel::to_string(r.code), r.message);
  }
};

/// `backend_rejected: Selected backend ...`.
template <>
struct fmt::formatter<attnsel::selection_error> : fmt::formatter<fmt::string_view> {
  template <class Ctx>
  auto format(const attnsel::selection_error& e, Ctx& ctx) const {
    return fmt::format_to(ctx.out(), "{}: {}", attnsel::to_string(e.code), e.message);
  }
};

