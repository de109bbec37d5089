// SPDX-License-Identifier: Apache-2.0
// The list subcommand: one row per backend (names, aliases, domains, platforms), or a JSON array.
#include "catalog_source.hpp"
#include "commands.hpp"
#include "errors.hpp"
#include "terminal.hpp"

#include <attnsel/catalog/builtin_catalog.hpp>
#include <attnsel/catalog/catalog.hpp>
#include <attnsel/catalog/reference.hpp>
#include <attnsel/core/enums.hpp>
#include <attnsel/core/impl/text.hpp>
#include <attnsel/core/override.hpp>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace attnsel_cli {

namespace {

constexpr const char* list_footer = R"(Examples:
  attnsel list
  attnsel list --catalogs
  attnsel list --catalog-name vllm@0013943
  attnsel list --catalog torch_sdpa --json
  attnsel list --domain encoder --catalog my_backends.json)";

// Vendors a backend runs on across its capabilities and variants; empty means "any platform".
std::vector<std::string> vendors_of(const attnsel::backend_descriptor& b) {
  std::vector<const attnsel::capabilities*> all;
  if (b.variants.empty()) all.push_back(&b.caps);
  for (const auto& v : b.variants) all.push_back(&v);
  attnsel::enum_set<attnsel::device_vendor> vendors;
  for (const auto* c : all) {
    if (c->platforms.empty()) return {};
    for (const auto& pc : c->platforms) vendors.insert(pc.vendor);
  }
  std::vector<std::string> out;
  vendors.for_each([&](attnsel::device_vendor v) { out.emplace_back(attnsel::to_string(v)); });
  return out;
}

std::vector<std::string> domains_of(const attnsel::backend_descriptor& b) {
  std::vector<std::string> out;
  b.domains.for_each([&](attnsel::attention_domain d) { out.emplace_back(attnsel::to_string(d)); });
  return out;
}

// The items, printable and comma-separated, or `empty` when there are none.
std::string names_or(const std::vector<std::string>& items, const std::string& empty) {
  if (items.empty()) return empty;
  return attnsel::detail::join(items, ",", [](const std::string& i) { return attnsel::printable(i, 200); });
}

int list_catalogs(bool json);

}  // namespace

command setup_list(CLI::App& app) {
  return make_command<list_flags>(
      app, "list", "List the backends of a catalog", list_footer, run_list, [](CLI::App& cli, list_flags& flags) {
        add_catalog_flags(cli, flags.catalog);
        add_domain_filter(cli, flags.domain);
        cli.add_flag("--json", flags.json, "Print a JSON array");
        cli.add_flag("--catalogs", flags.catalogs, "List the built-in catalogs and their source commits");
      });
}

int run_list(const list_flags& flags) {
  if (flags.catalogs) return list_catalogs(flags.json);
  const auto& domain = flags.domain;
  attnsel::catalog c;
  try {
    c = load_catalog(flags.catalog);
  } catch (const catalog_failure& e) {
    if (flags.json) print_catalog_error_json(e.what(), false);  // --json: one JSON document, failures included
    throw;
  }

  std::vector<const attnsel::backend_descriptor*> shown;
  for (const auto& b : c.registry.backends())
    if (!domain || b.domains.contains(*domain)) shown.push_back(&b);

  if (flags.json) {
    auto out = nlohmann::json::array();
    for (const auto* b : shown) {
      std::vector<std::string> variants;
      for (const auto& v : b->variants) variants.push_back(v.variant);
      out.push_back({{"name", b->name},
                     {"aliases", b->aliases},
                     {"description", b->description},
                     {"domains", domains_of(*b)},
                     {"platforms", vendors_of(*b)},
                     {"variants", variants}});
    }
    std::printf("%s\n", attnsel::json_text(out).c_str());
    return 0;
  }

  const auto out_style = style::for_fd(STDOUT_FILENO);
  std::size_t name_width = 4;
  for (const auto* b : shown) name_width = std::max(name_width, attnsel::printable(b->name, 200).size());
  name_width = std::min<std::size_t>(name_width, 26);
  constexpr std::size_t alias_width = 24;
  constexpr std::size_t domain_width = 15;
  const std::size_t platform_width = terminal_width - name_width - alias_width - domain_width - 6;
  std::string text = out_style.paint(fit("NAME", name_width) + "  " + fit("ALIASES", alias_width) + "  " +
                                         fit("DOMAINS", domain_width) + "  PLATFORMS",
                                     colour::bold) +
                     "\n";
  for (const auto* b : shown) {
    text += fit(attnsel::printable(b->name, 200), name_width) + "  " + fit(names_or(b->aliases, "-"), alias_width) +
            "  " + fit(names_or(domains_of(*b), "-"), domain_width) + "  " +
            fit(names_or(vendors_of(*b), "any"), platform_width);
    while (!text.empty() && text.back() == ' ') text.pop_back();
    text += "\n";
  }
  std::fputs(text.c_str(), stdout);
  return 0;
}

namespace {

// An alias (`vllm`) is listed by name with the catalog it stands for; every other name with its catalog.
int list_catalogs(bool json) {
  std::vector<attnsel::catalog> all;
  all.reserve(attnsel::builtin_catalog_names.size());
  for (auto name : attnsel::builtin_catalog_names)
    if (attnsel::builtin_catalog_target(name) == name) all.push_back(attnsel::builtin_catalog(name));
  const auto aliases_before = [&](const std::string& name, auto&& emit) {
    for (const auto& a : attnsel::builtin_catalog_aliases)
      if (a.target == name) emit(a);
  };
  if (json) {
    auto out = nlohmann::json::array();
    for (const auto& c : all) {
      aliases_before(c.info.name, [&](const attnsel::builtin_catalog_alias& a) {
        out.push_back({{"name", std::string(a.name)}, {"alias_of", std::string(a.target)}});
      });
      out.push_back({{"name", c.info.name},
                     {"description", c.info.description},
                     {"source", c.info.source},
                     {"commits", c.info.commits},
                     {"stock", attnsel::stock_json(c.info)},
                     {"backends", c.registry.size()},
                     {"rules", c.registry.policy().rules.size()}});
    }
    std::printf("%s\n", attnsel::json_text(out).c_str());
    return 0;
  }
  const auto out_style = style::for_fd(STDOUT_FILENO);
  std::string text;
  for (const auto& c : all) {
    aliases_before(c.info.name, [&](const attnsel::builtin_catalog_alias& a) {
      text += out_style.paint(std::string(a.name), colour::bold) + "  alias of " + std::string(a.target) +
              " (the newest release the differential oracle has run)\n";
    });
    text += out_style.paint(attnsel::printable(c.info.name, 200), colour::bold) + "  (" +
            std::to_string(c.registry.size()) + " backends, " + std::to_string(c.registry.policy().rules.size()) +
            " rules)\n";
    if (!c.info.description.empty()) text += "  " + attnsel::printable(c.info.description, 400) + "\n";
    text += "  commits: " + names_or(c.info.commits, "-") + "\n";
    for (const auto& s : c.info.stock) {
      text += "  stock on " + std::string(attnsel::to_string(s.vendor)) + ": " +
              attnsel::detail::join(s.components, ", ",
                                    [](const auto& component) { return attnsel::to_string(component); }) +
              "\n";
    }
  }
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace

}  // namespace attnsel_cli
