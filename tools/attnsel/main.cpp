// SPDX-License-Identifier: Apache-2.0
// Entry point of the attnsel tool: no exception or closed pipe ends it by a signal.
#include "app.hpp"
#include "errors.hpp"

#include <attnsel/core/override.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <exception>
#include <new>

int main(int argc, char** argv) {
  // `attnsel list | head -1` must end with a status, not SIGPIPE; writes then simply fail.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    const int status = attnsel_cli::run_app(argc, argv);
    // Output that could not be written (closed pipe, full disk) is a failure, not a success.
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      if (errno != EPIPE) std::fprintf(stderr, "attnsel: error: cannot write the output\n");
      return status == 0 ? attnsel_cli::exit_failure : status;
    }
    return status;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "attnsel: internal error: out of memory\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnsel: internal error: %s\n", attnsel::printable(e.what(), 400).c_str());
  } catch (...) {
    std::fprintf(stderr, "attnsel: internal error: unknown exception\n");
  }
  return attnsel_cli::exit_internal;
}
