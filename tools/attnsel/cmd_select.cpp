// SPDX-License-Identifier: Apache-2.0
// The select and explain subcommands: build the inputs, run the selector, print name, table or JSON.
#include "catalog_source.hpp"
#include "commands.hpp"
#include "detect.hpp"
#include "errors.hpp"
#include "explain_table.hpp"
#include "inputs.hpp"
#include "override_source.hpp"
#include "terminal.hpp"

#include <attnsel/enums.hpp>
#include <attnsel/override.hpp>
#include <attnsel/report.hpp>
#include <attnsel/selector.hpp>

#include <unistd.h>

#include <cstdio>

namespace attnsel_cli {

namespace {

void print_error(const attnsel::selection_error& e) {
  print_diagnostic("error", std::string(attnsel::to_string(e.code)) + ": " + e.message);
}

}  // namespace

int run_select(const select_flags& flags, bool explain_mode) {
  attnsel::detection_report detected;
  const auto p = build_platform(flags.platform, &detected);
  auto q = build_query(flags.query);
  attnsel::catalog c;
  try {
    c = load_catalog(flags.catalog);
  } catch (const catalog_failure& e) {
    // --json promises exactly one JSON object on stdout, failures included.
    if (flags.json) {
      const nlohmann::json report = {
          {"backend", nullptr},
          {"error", {{"code", "catalog"}, {"message", e.what()}, {"suggestions", nlohmann::json::array()}}}};
      std::printf("%s\n", report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      std::fflush(stdout);
    }
    throw;
  }
  add_features(q, flags.query, c.registry);

  const auto ovr = choose_override(flags.backend_given, flags.backend, q.domain);
  if (!ovr.note.empty()) print_diagnostic("note", ovr.note);
  attnsel::select_options options;
  options.prefer = flags.prefer;

  if (!explain_mode && !flags.json) {
    const auto result = attnsel::select(c.registry, q, p, ovr.request(), options);
    if (!result) {
      print_error(result.error());
      return exit_failure;
    }
    if (result->fell_back)
      print_diagnostic("note", "--prefer: every forced backend was rejected; " + std::string(result->name()) +
                                   " was chosen automatically");
    std::printf("%s\n", attnsel::printable(result->name(), 200).c_str());
    return exit_ok;
  }

  const auto ex = attnsel::explain(c.registry, q, p, ovr.request(), options);
  if (flags.json) {
    auto report = attnsel::to_json(ex, q, p, ovr.request());
    if (!detected.facts.empty()) report["detection"] = facts_json(detected);
    std::printf("%s\n", report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    if (!detected.facts.empty())
      std::printf("detected (--no-detect turns this off; 'attnsel doctor' shows every probe):\n%s\n",
                  render_facts(detected, true).c_str());
    std::fputs(render_explanation(ex, q, p, ovr, style::for_fd(STDOUT_FILENO)).c_str(), stdout);
  }
  if (!ex.result.ok()) {
    std::fflush(stdout);
    print_error(ex.result.error());
    return exit_failure;
  }
  return exit_ok;
}

}  // namespace attnsel_cli
