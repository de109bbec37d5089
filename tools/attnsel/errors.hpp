// SPDX-License-Identifier: Apache-2.0
// Exit statuses of the attnsel tool and the exceptions that map onto them.
#pragma once

#include <stdexcept>
#include <string>

namespace attnsel_cli {

/// Exit status: a backend was selected, or the command did its job.
inline constexpr int exit_ok = 0;
/// Exit status: selection failed, or a catalog could not be loaded.
inline constexpr int exit_failure = 1;
/// Exit status: the command line is wrong (unknown flag, bad value), or the `--model-config` it names.
inline constexpr int exit_usage = 2;
/// Exit status: an internal error (out of memory, a bug): EX_SOFTWARE of <sysexits.h>. Never 1, which
/// `diff` and `lint` use for "differs" and "findings".
inline constexpr int exit_internal = 70;

/// A bad command line. `what()` is one line naming the flag and the accepted values.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A catalog that could not be loaded; `what()` is the loader's message.
class catalog_failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A `--model-config` file that could not be read (exit 2: bad input, as a bad flag value); `what()` names
/// the key. A catalog_failure for the commands that report either as one JSON error object.
class config_failure : public catalog_failure {
 public:
  using catalog_failure::catalog_failure;
};

}  // namespace attnsel_cli
