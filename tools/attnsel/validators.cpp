// SPDX-License-Identifier: Apache-2.0
// CLI11 validators for typed options: the tool's wording over CLI::Range, CLI::IsMember and a path check.
#include "validators.hpp"

namespace attnsel_cli {

CLI::Validator reworded(CLI::Validator validator, std::function<std::string(const std::string&)> message) {
  return {[validator = std::move(validator), message = std::move(message)](std::string& input) {
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
  const std::string range = range_text(min, max);
  return reworded(CLI::Range(min, max), [range](const std::string& input) {
    long long value = 0;
    const bool integer = CLI::detail::lexical_cast(input, value);
    return quoted_value(input) + (integer ? " is outside " : " is not an integer in ") + range;
  });
}

CLI::Validator one_of(const std::vector<std::string>& words) {
  std::string accepted;
  for (const auto& w : words) accepted += (accepted.empty() ? "" : ", ") + w;
  return reworded(CLI::IsMember(words),
                  [accepted](const std::string& input) { return quoted_value(input) + " is not one of " + accepted; });
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
