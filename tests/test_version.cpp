// SPDX-License-Identifier: Apache-2.0
// The version has one source (config.hpp): CMake, the ABI namespace and the CHANGELOG agree with it.
#include <attnsel/config.hpp>

#include "catch.hpp"

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace {
std::string expected_version() {
  return std::to_string(ATTNSEL_VERSION_MAJOR) + "." + std::to_string(ATTNSEL_VERSION_MINOR) + "." +
         std::to_string(ATTNSEL_VERSION_PATCH);
}
}  // namespace

TEST_CASE("the version string is derived from the version numbers", "[version]") {
  CHECK(std::string(ATTNSEL_VERSION_STRING) == expected_version());
}

TEST_CASE("CMake's project version is read from config.hpp", "[version]") {
  CHECK(std::string(ATTNSEL_CMAKE_PROJECT_VERSION) == expected_version());
}

TEST_CASE("the ABI namespace is v<major>_<minor>", "[version]") {
  const std::string abi = ATTNSEL_STRINGIFY(ATTNSEL_ABI_NAMESPACE);
  CHECK(abi == "v" + std::to_string(ATTNSEL_VERSION_MAJOR) + "_" + std::to_string(ATTNSEL_VERSION_MINOR));
}

TEST_CASE("the newest release in CHANGELOG.md is this version", "[version]") {
  std::ifstream in(std::string(ATTNSEL_SOURCE_DIR) + "/CHANGELOG.md");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  std::smatch m;
  // Release headings read `## [0.1.0] - 2026-11-01`; `## [Unreleased]` may stand above them.
  REQUIRE(std::regex_search(s, m, std::regex(R"(\n## \[([0-9]+\.[0-9]+\.[0-9]+)\])")));
  CHECK(m[1].str() == expected_version());
}
