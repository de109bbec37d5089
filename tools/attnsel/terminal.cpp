// SPDX-License-Identifier: Apache-2.0
// Wrapping and colour for human output; colour follows isatty and https://no-color.org.
#include "terminal.hpp"

#include <attnsel/core/override.hpp>

#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdlib>

namespace attnsel_cli {

style style::for_fd(int fd) noexcept {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && *no_color != '\0') return style(false);
  return style(::isatty(fd) == 1);
}

std::string style::paint(std::string_view text, colour c) const {
  // SGR codes in the order of `colour`'s enumerators (none has none).
  static constexpr std::array<const char*, 7> codes = {"",         "\033[32m", "\033[31m", "\033[33m",
                                                       "\033[36m", "\033[2m",  "\033[1m"};
  static_assert(codes.size() == static_cast<std::size_t>(colour::bold) + 1);
  if (!enabled_ || c == colour::none || text.empty()) return std::string(text);
  return codes[static_cast<std::size_t>(c)] + std::string(text) + "\033[0m";
}

std::vector<std::string> wrap(std::string_view text, std::size_t width) {
  if (width == 0) width = 1;
  std::vector<std::string> lines;
  std::string line;
  while (!text.empty()) {
    const auto space = text.find(' ');
    auto word = text.substr(0, space);
    text = space == std::string_view::npos ? std::string_view{} : text.substr(space + 1);
    if (word.empty()) continue;
    while (word.size() > width) {  // an over-long word: flush, then cut it into full lines
      if (!line.empty()) lines.push_back(std::move(line)), line.clear();
      lines.emplace_back(word.substr(0, width));
      word.remove_prefix(width);
    }
    if (word.empty()) continue;
    if (!line.empty() && line.size() + 1 + word.size() > width) lines.push_back(std::move(line)), line.clear();
    if (!line.empty()) line += ' ';
    line += word;
  }
  if (!line.empty() || lines.empty()) lines.push_back(std::move(line));
  return lines;
}

std::string fit(std::string_view text, std::size_t width) {
  std::string out(text.substr(0, width));
  if (text.size() > width && width > 0) out.back() = '~';
  out.resize(width, ' ');
  return out;
}

void print_diagnostic(std::string_view level, std::string_view message) {
  const std::string prefix = "attnsel: " + std::string(level) + ": ";
  bool first = true;
  while (true) {
    const auto newline = message.find('\n');
    const auto raw = message.substr(0, newline);
    // Keep the message's own indentation on continuation lines ("  NAME: reason").
    std::size_t indent = 0;
    while (indent < raw.size() && raw[indent] == ' ') ++indent;
    const std::string lead = first ? prefix : std::string(prefix.size() + indent, ' ');
    const auto body = attnsel::printable(raw.substr(indent), 100000);
    const auto width = terminal_width > lead.size() + 22 ? terminal_width - lead.size() - 2 : 20;
    bool first_piece = true;
    for (const auto& piece : wrap(body, width)) {
      std::fprintf(stderr, "%s%s\n", first_piece ? lead.c_str() : std::string(lead.size() + 2, ' ').c_str(),
                   piece.c_str());
      first_piece = false;
    }
    first = false;
    if (newline == std::string_view::npos) break;
    message.remove_prefix(newline + 1);
  }
}

}  // namespace attnsel_cli
