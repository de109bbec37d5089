// SPDX-License-Identifier: Apache-2.0
// CLI11 validators for typed options: the tool's wording over CLI::Range, CLI::IsMember and a path check.
#include "validators.hpp"

#include <algorithm>

namespace attnsel_cli {

CLI::Validator reworded(const CLI::Validator& validator,
                        const std::function<std::string(const std::string&)>& message) {
  return {[validator, message](std::string& input) {
            const std::string typed = input;
            return validator(input).empty() ? std::string() : message(typed);
          },
          ""};
}

std::string quoted_value(const std::string& text) { return "'" + attnsel::printable(text, 40) + "'"; }

std::string range_text(std::uint32_t min, std::uint32_t max) {
  return std::to_string(min) + ".." + std::to_string(max);
}

CLI::Validator count_in(std::uint32_t min, std::uint32_t max) {
  // Decimal digits only: CLI11's own conversion reads `0x40` as hex and `0100` as octal (64), and
  // accepts signs. The value is checked here and handed on as plain decimal, leading zeros removed.
  const std::string range = range_text(min, max);
  return {[min, max, range](std::string& input) {
            const bool digits = !input.empty() && input.size() <= 64 &&
                                std::all_of(input.begin(), input.end(), [](char c) { return c >= '0' && c <= '9'; });
            if (!digits) return quoted_value(input) + " is not a decimal integer in " + range;
            const auto first = input.find_first_not_of('0');
            const std::string value = first == std::string::npos ? "0" : input.substr(first);
            if (value.size() > 10 || std::stoull(value) < min || std::stoull(value) > max)
              return quoted_value(input) + " is outside " + range;
            input = value;
            return std::string();
          },
          ""};
}

CLI::Validator one_of(const std::vector<std::string>& words) {
  std::string accepted;
  for (const auto& w : words) accepted += (accepted.empty() ? "" : ", ") + w;
  return reworded(CLI::IsMember(words),
                  [accepted](const std::string& input) { return quoted_value(input) + " is not one of " + accepted; });
}

CLI::Validator non_empty(const std::string& message) {
  return {[message](std::string& value) { return value.empty() ? message : std::string(); }, ""};
}

const CLI::Validator& non_empty_path() {
  // An empty path is almost always an unset shell variable: refuse it rather than fall back.
  static const CLI::Validator check(
      [](std::string& value) {
        return value.empty() ? std::string("an empty path is not a catalog file") : std::string();
      },
      "");
  return check;
}

}  // namespace attnsel_cli
