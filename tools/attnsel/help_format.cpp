// SPDX-License-Identifier: Apache-2.0
// Help formatting: CLI11 prints descriptions unwrapped, so long ones are broken at word boundaries.
#include "help_format.hpp"

#include "terminal.hpp"

namespace attnsel_cli {

namespace {
constexpr std::size_t option_column = 30;
}  // namespace

wrapping_formatter::wrapping_formatter() { column_width(option_column); }

std::string wrapping_formatter::make_option_desc(const CLI::Option* opt) const {
  std::string out;
  for (const auto& line : wrap(CLI::Formatter::make_option_desc(opt), terminal_width - option_column - 1))
    out += (out.empty() ? "" : "\n") + line;
  return out;
}

}  // namespace attnsel_cli
