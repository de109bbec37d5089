// SPDX-License-Identifier: Apache-2.0
// A CLI11 help formatter that wraps option descriptions so --help fits 100 columns.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace attnsel_cli {

/// CLI11's formatter with descriptions word-wrapped to the tool's terminal width.
class wrapping_formatter : public CLI::Formatter {
 public:
  wrapping_formatter();
  std::string make_option_desc(const CLI::Option* opt) const override;
};

}  // namespace attnsel_cli
