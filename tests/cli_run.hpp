// SPDX-License-Identifier: Apache-2.0
// Runs the built attnsel tool in a test: stdout, stderr and exit status of one invocation.
#pragma once

#include "catch.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cli_run {

/// What one run of the tool produced.
struct result {
  std::string out;
  std::string err;
  int status = -1;  ///< exit status; -1 when killed by a signal
};

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

/// `text` with every run of blanks and line breaks made one space: diagnostics are wrapped to 100
/// columns, so tests compare their words, not their line breaks.
inline std::string squash(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool blank = c == ' ' || c == '\n';
    if (blank && (out.empty() || out.back() == ' ')) continue;
    out += blank ? ' ' : c;
  }
  return out;
}

/// Runs ATTNSEL_CLI with `args` under `env_command` (an `env ...` prefix that sets or unsets variables).
inline result run_in(const std::string& env_command, const std::vector<std::string>& args) {
  char err_path[] = "/tmp/attnsel_cli_err_XXXXXX";
  const int fd = ::mkstemp(err_path);
  REQUIRE(fd >= 0);
  ::close(fd);
  std::string cmd = env_command + " " + shell_quote(ATTNSEL_CLI);
  for (const auto& a : args) cmd += " " + shell_quote(a);
  cmd += " 2>" + shell_quote(err_path) + " </dev/null";
  result r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) r.out.append(buffer, n);
  const int raw = ::pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  std::ifstream in(err_path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  std::remove(err_path);
  return r;
}

/// Runs ATTNSEL_CLI with `args` and the override variables unset.
inline result run(const std::vector<std::string>& args) {
  return run_in("env -u ATTNSEL_BACKEND -u ATTNSEL_ENCODER_BACKEND NO_COLOR=1", args);
}

/// Runs the tool with `args`, the override variables (ours and vLLM's removed one) and NO_COLOR unset,
/// then the `env` entries ("VAR=value") set: what a test asserts does not depend on the caller's shell.
inline result run_clean(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  std::string command = "env -u ATTNSEL_BACKEND -u ATTNSEL_ENCODER_BACKEND -u VLLM_ATTENTION_BACKEND -u NO_COLOR";
  for (const auto& e : env) command += " " + shell_quote(e);
  return run_in(command, args);
}

}  // namespace cli_run
