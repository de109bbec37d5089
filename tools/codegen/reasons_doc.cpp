// SPDX-License-Identifier: Apache-2.0
// Writes or checks the reason-code table of docs/reasons.md, generated from the reason_code enum table.
//
// Usage: attnsel_reasons_doc --write|--check PATH/TO/docs/reasons.md
// The table sits between the two marker lines below; everything else in the file is prose kept by hand.
// Rows come in check order (check_gates), then the codes no gate returns (the skips), in table order.
#include <attnsel/core/checks.hpp>
#include <attnsel/core/enums.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>

namespace {

using namespace attnsel;

constexpr std::string_view begin_marker =
    "<!-- BEGIN generated reason table: from the reason_code table (include/attnsel/core/enums.hpp) in check_gates "
    "order by tools/codegen/reasons_doc.cpp; regenerate with `cmake --build <build> --target attnsel_reasons_doc` "
    "-->\n";
constexpr std::string_view end_marker = "<!-- END generated reason table -->\n";

// A table cell: a literal '|' would end the cell.
std::string cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

// Each example message as a code span, comma-separated.
std::string examples_cell(std::string_view examples) {
  std::string out;
  while (!examples.empty()) {
    const auto end = std::min(examples.find('\n'), examples.size());
    if (!out.empty()) out += ", ";
    out += "`" + cell(examples.substr(0, end)) + "`";
    examples.remove_prefix(std::min(end + 1, examples.size()));
  }
  return out;
}

bool is_gate(reason_code code) {
  return std::any_of(check_gates.begin(), check_gates.end(), [&](const gate_info& g) { return g.code == code; });
}

std::string row(const detail::reason_row& r) {
  // A gate's failure rejects a candidate; every other code says why one was not tried.
  const auto outcome = is_gate(r.value) ? verdict::rejected : verdict::skipped;
  return "| `" + std::string(r.name) + "` | " + std::string(to_string(outcome)) + " | " + cell(r.doc) + " | " +
         examples_cell(r.examples) + " |\n";
}

std::string table() {
  const auto& rows = detail::enum_table<reason_code>::rows;
  const auto row_of = [&](reason_code code) -> const detail::reason_row& {
    return *std::find_if(rows.begin(), rows.end(), [&](const detail::reason_row& r) { return r.value == code; });
  };
  std::string out = "| Code | Verdict | Meaning | Example message |\n|---|---|---|---|\n";
  for (const auto& g : check_gates) out += row(row_of(g.code));
  for (const auto& r : rows)
    if (!is_gate(r.value)) out += row(r);
  return out;
}

int fail(const std::string& message, int code) {
  std::cerr << "attnsel_reasons_doc: " << message << "\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 3 ? argv[1] : "";
  if (mode != "--write" && mode != "--check")
    return fail("usage: attnsel_reasons_doc --write|--check PATH/TO/docs/reasons.md", 2);
  const std::string path = argv[2];
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("cannot read " + path, 2);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const auto begin = text.find(begin_marker);
  const auto end = text.find(end_marker);
  if (begin == std::string::npos || end == std::string::npos || end < begin)
    return fail(path + " lacks the marker lines around the reason table:\n" + std::string(begin_marker) +
                    std::string(end_marker),
                2);
  const auto body_at = begin + begin_marker.size();
  const std::string expected = text.substr(0, body_at) + table() + text.substr(end);
  if (mode == "--check") {
    if (expected == text) return 0;
    return fail(path +
                    " is stale: its reason table differs from the reason_code table; regenerate it with "
                    "`cmake --build <build> --target attnsel_reasons_doc`",
                1);
  }
  if (expected != text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << expected;
    if (!out) return fail("cannot write " + path, 2);
  }
  std::cout << "wrote " << path << "\n";
  return 0;
}
