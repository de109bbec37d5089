// SPDX-License-Identifier: Apache-2.0
// Docs that must match the code: every reason and error code has a row in docs/reasons.md.
#include "catch.hpp"

#include <attnsel/attnsel.hpp>

#include <fstream>
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
