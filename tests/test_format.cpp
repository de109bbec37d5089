// SPDX-License-Identifier: Apache-2.0
// fmt formatters: every public type honours width, fill and alignment like a string would.
#include <attnsel/core/format.hpp>

#include "catch.hpp"

#include <string>

using namespace attnsel;

namespace {
// The value laid out by attnsel's formatter must equal its plain text laid out as a string.
template <class T>
void check_layout(const T& value) {
  const std::string plain = fmt::format("{}", value);
  REQUIRE_FALSE(plain.empty());
  const auto width = plain.size() + 6;
  CHECK(fmt::format("{:>{}}", value, width) == fmt::format("{:>{}}", plain, width));
  CHECK(fmt::format("{:*<{}}", value, width) == fmt::format("{:*<{}}", plain, width));
  CHECK(fmt::format("{:-^{}}", value, width) == fmt::format("{:-^{}}", plain, width));
  CHECK(fmt::format("{:>{}}", value, width).size() == width);
  CHECK(fmt::format("{:1}", value) == plain);  // a width below the text's length never truncates
}
}  // namespace

TEST_CASE("every public formatter honours width, fill and alignment", "[format]") {
  check_layout(data_type::float16);
  check_layout(reason_code::head_size);
  check_layout(cuda_capability{9, 0});
  check_layout(*parse_gfx_arch("gfx942"));
  check_layout(*parse_component_version("9.19.0"));
  platform p = platform::rocm("gfx942");
  p.add_component_spec("aiter");
  p.add_component_spec("flashinfer=0.2.5");
  check_layout(p);
  check_layout(query{});
  check_layout(reason{reason_code::feature, "feature sinks not supported"});
  selection_error e;
  e.message = "no backend";
  check_layout(e);
}

TEST_CASE("formatters print the documented text", "[format]") {
  CHECK(fmt::format("{:>5}", cuda_capability{9, 0}) == "  9.0");
  CHECK(fmt::format("{:<8}|", *parse_gfx_arch("gfx90a")) == "gfx90a  |");
  platform p = platform::rocm("gfx942");
  p.add_component_spec("flashinfer=0.2.5");
  p.add_component_spec("aiter");
  CHECK(fmt::format("{}", p) == "rocm gfx942 [aiter, flashinfer=0.2.5]");
}
