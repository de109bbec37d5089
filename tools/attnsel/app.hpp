// SPDX-License-Identifier: Apache-2.0
// The command line: CLI11 definition of every subcommand, parsing and dispatch.
#pragma once

namespace attnsel_cli {

/// Parses `argv`, runs the chosen subcommand and returns the exit status (0, 1 or 2). Usage errors
/// print one line on stderr. May throw only for internal errors (main catches them).
[[nodiscard]] int run_app(int argc, char** argv);

}  // namespace attnsel_cli
