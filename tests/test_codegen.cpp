// SPDX-License-Identifier: Apache-2.0
// The catalog generator copes with catalog names that are not C++ identifiers (`vllm@1a2b-c`, `x.y`),
// and carries every field: tests/data/fields/every_field.json sets each one (tests/test_fields.cpp).
// Built alone: it includes tables generated under odd names instead of the library's own.
#include <attnsel/catalog/catalog.hpp>

#include "odd_catalog_tables.hpp"

#include <cstdio>
#include <string>

int main() {
  using namespace attnsel;
  const char* expected_names[] = {"torch_sdpa@2.11-rc.1", "vllm@0a1b-c", "vllm-0a1b@c", "every_field"};
  const char* files[] = {"catalog/torch_sdpa.json", "catalog/vllm@0.33.0.json", "catalog/vllm@0.33.0.json",
                         "tests/data/fields/every_field.json"};
  int failures = 0;
  for (std::size_t i = 0; i < detail::tables::builtin.size() && i < 4; ++i) {
    const auto& tables = *detail::tables::builtin[i];
    const auto parsed = read_catalog_file(std::string(ATTNSEL_SOURCE_DIR) + "/" + files[i]).registry;
    const bool same = tables.name == expected_names[i] && detail::tables::build_registry(tables) == parsed;
    std::printf("%s: %s\n", expected_names[i], same ? "equal" : "DIFFERENT");
    failures += same ? 0 : 1;
  }
  return failures == 0 && detail::tables::builtin.size() == 4 ? 0 : 1;
}
