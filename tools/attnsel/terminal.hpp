// SPDX-License-Identifier: Apache-2.0
// Terminal output helpers: the 100-column budget, word wrapping, padding and optional colour.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace attnsel_cli {

/// Human output never exceeds this many columns.
inline constexpr std::size_t terminal_width = 100;

/// ANSI colours, used only when enabled.
enum class colour { none, green, red, yellow, cyan, dim, bold };

/// Colour policy of one stream: on only for a TTY and when NO_COLOR is unset or empty.
class style {
 public:
  /// Decides for the file descriptor `fd`.
  static style for_fd(int fd) noexcept;
  /// A style that never colours (for tests and pipes).
  static style plain() noexcept { return style(false); }

  [[nodiscard]] bool enabled() const noexcept { return enabled_; }
  /// `text` wrapped in the colour's escape codes when enabled; `text` unchanged otherwise.
  [[nodiscard]] std::string paint(std::string_view text, colour c) const;

 private:
  explicit style(bool enabled) noexcept : enabled_(enabled) {}
  bool enabled_;
};

/// Splits `text` into lines of at most `width` characters at spaces; a word longer than `width`
/// is cut. Never returns an empty vector.
[[nodiscard]] std::vector<std::string> wrap(std::string_view text, std::size_t width);

/// `text` cut to `width` (ending in `~` when cut) and padded with spaces to exactly `width`.
[[nodiscard]] std::string fit(std::string_view text, std::size_t width);

/// Writes `message` to stderr as `attnsel: LEVEL: ...`, each line made printable and wrapped to the
/// terminal width (continuation lines indented).
void print_diagnostic(std::string_view level, std::string_view message);

}  // namespace attnsel_cli
