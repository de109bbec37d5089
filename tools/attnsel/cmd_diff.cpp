// SPDX-License-Identifier: Apache-2.0
// The diff subcommand: compare the decisions of two catalogs over the enumerated configuration space.
#include "catalog_source.hpp"
#include "commands.hpp"
#include "errors.hpp"
#include "inputs.hpp"

#include <attnsel/diff.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <stdexcept>

namespace attnsel_cli {

namespace {

// A catalog that does not load is an input error here: exit 1 must mean "decisions differ".
attnsel::catalog load_side(const std::string& name_or_file) {
  try {
    return load_named_catalog(name_or_file);
  } catch (const catalog_failure& e) {
    throw usage_error(e.what());
  }
}

}  // namespace

int run_diff(const diff_flags& flags) {
  attnsel::diff_options options;
  if (!flags.domain.empty()) {
    const auto d = parse_domain("--domain", flags.domain);
    options.decoder = d == attnsel::attention_domain::decoder;
    options.encoder = d == attnsel::attention_domain::encoder;
  }
  options.overrides = !flags.no_overrides;
  const auto a = load_side(flags.a);
  const auto b = load_side(flags.b);
  attnsel::catalog_diff d;
  try {
    d = attnsel::diff_catalogs(a, b, options);
  } catch (const std::length_error& e) {
    throw usage_error(e.what());
  }
  if (flags.json) {
    std::printf("%s\n", attnsel::to_json(d).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::fputs(attnsel::diff_text(d).c_str(), stdout);
  }
  return d.empty() ? exit_ok : exit_failure;
}

}  // namespace attnsel_cli
