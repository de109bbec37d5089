// SPDX-License-Identifier: Apache-2.0
// Docs that must match the code: every reason and error code has a row in docs/reasons.md.
#include "catch.hpp"

#include <attnsel/all.hpp>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

using namespace attnsel;

namespace {
std::string read_doc(const char* name) {
  std::ifstream in(std::string(ATTNSEL_SOURCE_DIR) + "/docs/" + name);
  REQUIRE(in);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("docs/reasons.md documents every reason code and error code", "[docs]") {
  const auto doc = read_doc("reasons.md");
  for (auto code : enum_values<reason_code>()) {
    INFO(to_string(code));
    CHECK(doc.find("| `" + std::string(to_string(code)) + "` |") != std::string::npos);
  }
  for (auto code : enum_values<error_code>()) {
    INFO(to_string(code));
    CHECK(doc.find("| `" + std::string(to_string(code)) + "` |") != std::string::npos);
  }
}

TEST_CASE("docs/overrides.md shows every override form the grammar accepts", "[docs]") {
  const auto doc = read_doc("overrides.md");
  for (const char* form : {"`auto`", "`NAME`", "`A,B`", "`A,B,auto`", "`-NAME`"}) {
    INFO(form);
    CHECK(doc.find(form) != std::string::npos);
  }
}

TEST_CASE("docs/catalog.schema.json names exactly the keys the dumper writes", "[docs][catalog]") {
  const auto schema = nlohmann::json::parse(read_doc("catalog.schema.json"));
  const auto keys_of = [](const nlohmann::json& properties) {
    std::set<std::string> out;
    for (const auto& item : properties.items()) out.insert(item.key());
    return out;
  };
  std::set<std::string> backend_keys, variant_keys, rule_keys, top_keys, advisory_keys;
  for (auto name : builtin_catalog_names) {
    const auto doc = to_json(builtin_catalog(name));
    for (const auto& item : doc.items()) top_keys.insert(item.key());
    for (const auto& b : doc["backends"]) {
      for (const auto& item : b.items()) backend_keys.insert(item.key());
      for (const auto& v : b.value("variants", nlohmann::json::array()))
        for (const auto& item : v.items()) variant_keys.insert(item.key());
      for (const auto& a : b.value("advisories", nlohmann::json::array()))
        for (const auto& item : a.items()) advisory_keys.insert(item.key());
    }
    for (const auto& r : doc["policies"])
      for (const auto& item : r.items()) rule_keys.insert(item.key());
  }
  const auto& defs = schema["$defs"];
  const auto subset = [](const std::set<std::string>& a, const std::set<std::string>& b) {
    return std::includes(b.begin(), b.end(), a.begin(), a.end());
  };
  CHECK(subset(top_keys, keys_of(schema["properties"])));
  CHECK(subset(backend_keys, keys_of(defs["backend"]["properties"])));
  CHECK(subset(variant_keys, keys_of(defs["variant"]["properties"])));
  CHECK(subset(rule_keys, keys_of(defs["rule"]["properties"])));
  CHECK(subset(advisory_keys, keys_of(defs["advisory"]["properties"])));
  CHECK(advisory_keys.count("upstream") == 1);  // the built-in catalogs carry advisories
  // Every capability key a backend may carry, a variant may carry too (and nothing else besides name, domains).
  auto backend_only = keys_of(defs["backend"]["properties"]);
  for (const char* k : {"aliases", "description", "forced_only", "variants", "advisories"}) backend_only.erase(k);
  CHECK(backend_only == keys_of(defs["variant"]["properties"]));
}

TEST_CASE("the README's example is examples/quickstart.cpp, which ctest builds and runs", "[docs]") {
  const auto readme = read_doc("../README.md");
  const auto open = readme.find("```cpp\n");
  REQUIRE(open != std::string::npos);
  const auto begin = open + 7;
  const auto block = readme.substr(begin, readme.find("```", begin) - begin);
  std::ifstream in(std::string(ATTNSEL_SOURCE_DIR) + "/examples/quickstart.cpp");
  REQUIRE(in);
  std::stringstream s;
  s << in.rdbuf();
  const auto source = s.str();
  // The file starts with its two-line header (licence, purpose); the README shows the rest.
  const auto body = source.substr(source.find('\n', source.find('\n') + 1) + 1);
  CHECK(block == body);
}
