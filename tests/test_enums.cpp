// SPDX-License-Identifier: Apache-2.0
// Enum tables: names, aliases, strict parsing and fmt output all come from one table.
#include <attnsel/core/enums.hpp>
#include <attnsel/core/format.hpp>

#include "catch.hpp"

using namespace attnsel;

TEST_CASE("every enumerator round-trips through its canonical name", "[enums]") {
  const auto round_trip = [](auto values) {
    for (auto v : values) {
      const auto text = to_string(v);
      CHECK_FALSE(text.empty());
      const auto parsed = parse_enum<decltype(v)>(text);
      REQUIRE(parsed);
      CHECK(*parsed == v);
      CHECK(fmt::format("{}", v) == text);
    }
  };
  round_trip(enum_values<attention_domain>());
  round_trip(enum_values<device_vendor>());
  round_trip(enum_values<data_type>());
  round_trip(enum_values<cache_dtype>());
  round_trip(enum_values<attention_type>());
  round_trip(enum_values<attention_mode>());
  round_trip(enum_values<gfx_family>());
  round_trip(enum_values<reason_code>());
  round_trip(enum_values<error_code>());
  round_trip(enum_values<verdict>());
}

TEST_CASE("aliases parse case-insensitively to the canonical enumerator", "[enums]") {
  CHECK(parse_enum<data_type>("fp16") == data_type::float16);
  CHECK(parse_enum<data_type>("HALF") == data_type::float16);
  CHECK(parse_enum<data_type>("bf16") == data_type::bfloat16);
  CHECK(parse_enum<data_type>("Fp32") == data_type::float32);
  CHECK(parse_enum<cache_dtype>("AUTO") == cache_dtype::automatic);
  CHECK(parse_enum<attention_type>("cross") == attention_type::encoder_decoder);
  CHECK(parse_enum<attention_mode>("sparse") == attention_mode::sparse_mla);
}

TEST_CASE("unknown text never falls back to the first enumerator", "[enums]") {
  CHECK_FALSE(parse_enum<data_type>("float17"));
  CHECK_FALSE(parse_enum<data_type>(""));
  CHECK_FALSE(parse_enum<data_type>("fp"));         // a prefix of an alias is not an alias
  CHECK_FALSE(parse_enum<data_type>("fp16 half"));  // the alias list itself is not a spelling
  CHECK_FALSE(parse_enum<device_vendor>("quantum"));
  CHECK_FALSE(parse_enum<cache_dtype>(std::string_view("auto\0", 5)));
}

TEST_CASE("enum_names lists every canonical name for error messages", "[enums]") {
  CHECK(enum_names<data_type>() == "float16, bfloat16, float32");
  CHECK(enum_names<attention_domain>("|") == "decoder|encoder|drafter|linear");
}

TEST_CASE("enum_set stores members and compares by content", "[enums]") {
  data_type_set s{data_type::float16};
  CHECK(s.contains(data_type::float16));
  CHECK_FALSE(s.contains(data_type::float32));
  s.insert(data_type::float32);
  CHECK(s == data_type_set{data_type::float32, data_type::float16});
  s.erase(data_type::float16);
  CHECK(s != data_type_set{data_type::float32, data_type::float16});
  CHECK(data_type_set{}.empty());
}
