// SPDX-License-Identifier: Apache-2.0
// The explain table: fixed columns, reasons wrapped into the last one so lines stay within 100.
#include "explain_table.hpp"

#include <attnsel/core/enums.hpp>
#include <attnsel/core/override.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdio>

namespace attnsel_cli {

namespace {

constexpr std::size_t rank_width = 4;
constexpr std::size_t verdict_width = 9;
constexpr std::size_t gap = 2;

std::string safe(std::string_view text) { return attnsel::printable(text, 100000); }

colour verdict_colour(attnsel::verdict v) {
  switch (v) {
    case attnsel::verdict::selected:
      return colour::green;
    case attnsel::verdict::supported:
      return colour::cyan;
    case attnsel::verdict::rejected:
      return colour::red;
    case attnsel::verdict::skipped:
      return colour::dim;
  }
  return colour::none;
}

// "label: text" wrapped to the terminal, continuation lines aligned under the text.
void labelled(std::string& out, std::string_view label, std::string_view text) {
  constexpr std::size_t label_width = 11;  // "not tried: "
  std::string lead = std::string(label) + ": ";
  if (lead.size() < label_width) lead.resize(label_width, ' ');
  const std::string pad(lead.size(), ' ');
  bool first = true;
  for (const auto& line : wrap(safe(text), terminal_width - lead.size())) {
    out += (first ? lead : pad) + line + "\n";
    first = false;
  }
}

std::string override_text(const chosen_override& ovr) {
  if (ovr.spec.find_first_not_of(" \t") == std::string::npos)
    return ovr.source == attnsel::override_source::none ? "none (automatic)" : "auto (" + ovr.origin + ")";
  return "'" + ovr.spec + "' from " + ovr.origin;
}

}  // namespace

std::string render_explanation(const attnsel::explanation& ex, const attnsel::query& q, const attnsel::platform& p,
                               const chosen_override& ovr, const style& out_style) {
  std::string out;
  labelled(out, "platform",
           to_string_with_components(p) + (p.device_name().empty() ? "" : " on " + safe(p.device_name())));
  if (!ex.implied.empty()) {
    std::string implied;
    for (const auto& i : ex.implied) implied += (implied.empty() ? "" : ", ") + i.name + " (from " + i.because + ")";
    labelled(out, "implied", implied + " - the catalog's implications");
  }
  labelled(out, "query", attnsel::to_string(q));
  labelled(out, "override", override_text(ovr));
  out += "\n";

  std::size_t name_width = 7;
  std::size_t variant_width = 7;
  // Backends only listed as "not in this order" would repeat one sentence each: they get one line.
  std::vector<const attnsel::candidate_report*> rows;
  std::string unordered;
  for (const auto& c : ex.candidates) {
    const bool only_unordered = c.rank == 0 && c.outcome == attnsel::verdict::skipped && !c.forced &&
                                c.reasons.size() == 1 && c.reasons.front().code == attnsel::reason_code::not_in_policy;
    if (only_unordered)
      unordered += (unordered.empty() ? "" : ", ") + c.name;
    else
      rows.push_back(&c);
  }
  for (const auto* row : rows) {
    const auto& c = *row;
    name_width = std::max(name_width, safe(c.name).size());
    variant_width = std::max(variant_width, safe(c.variant).size());
  }
  name_width = std::min<std::size_t>(name_width, 26);
  variant_width = std::min<std::size_t>(variant_width, 12);
  const std::size_t reason_column = 2 + rank_width + gap + name_width + gap + variant_width + gap + verdict_width + gap;
  const std::size_t reason_width = terminal_width - reason_column;
  const std::string spaces(gap, ' ');

  out +=
      out_style.paint(fit("  RANK", 2 + rank_width) + spaces + fit("BACKEND", name_width) + spaces +
                          fit("VARIANT", variant_width) + spaces + fit("VERDICT", verdict_width) + spaces + "REASONS",
                      colour::bold) +
      "\n";
  if (ex.candidates.empty()) out += "  (no candidate was traced: the override could not be used)\n";
  for (const auto* row_ptr : rows) {
    const auto& c = *row_ptr;
    const bool winner = c.outcome == attnsel::verdict::selected;
    const std::string rank = c.rank ? std::to_string(c.rank) : "-";
    std::string row = winner ? "* " : "  ";
    row.append(rank_width - std::min(rank_width, rank.size()), ' ');
    row += rank;
    row += spaces;
    row += fit(safe(c.name), name_width);
    row += spaces;
    row += fit(c.variant.empty() ? "-" : safe(c.variant), variant_width);
    row += spaces;
    if (winner) row = out_style.paint(row, colour::bold);
    std::string verdict_text(attnsel::to_string(c.outcome));
    if (!c.reasons.empty() || c.forced) verdict_text = fit(verdict_text, verdict_width);
    row += out_style.paint(verdict_text, verdict_colour(c.outcome));

    std::vector<std::string> reason_lines;
    for (const auto& r : c.reasons) {
      bool first = true;
      for (const auto& line :
           wrap(std::string(attnsel::to_string(r.code)) + ": " + safe(r.message), reason_width - 2)) {
        reason_lines.emplace_back((first ? "" : "  ") + line);
        first = false;
      }
    }
    if (c.measured) {
      char text[96];
      std::snprintf(text, sizeof text, "measured %.1f us (spread %.1f%%)", c.measured->median_us,
                    c.measured->spread_pct);
      reason_lines.insert(reason_lines.begin(), text);
    }
    if (c.forced && c.reasons.empty())
      reason_lines.emplace_back("(forced by the override)");
    else if (c.forced)
      reason_lines.insert(reason_lines.begin(), "(forced by the override)");
    if (reason_lines.empty()) {
      out += row + "\n";
      continue;
    }
    out += row + spaces + reason_lines.front() + "\n";
    for (std::size_t i = 1; i < reason_lines.size(); ++i)
      out += std::string(reason_column, ' ') + reason_lines[i] + "\n";
  }
  if (!unordered.empty())
    labelled(out, "not tried", "not in this platform's automatic order (still forcible): " + unordered);
  out += "\n";

  if (!ex.rule.empty()) {
    labelled(out, "rule", ex.rule);
    if (!ex.note.empty()) labelled(out, "note", ex.note);
  } else if (ovr.source != attnsel::override_source::none && !ex.candidates.empty() &&
             std::all_of(ex.candidates.begin(), ex.candidates.end(),
                         [](const attnsel::candidate_report& c) { return c.forced; })) {
    labelled(out, "rule", "none: the override fixes the order");
  } else {
    labelled(out, "rule", "none matched: backends are tried in registration order");
  }
  for (const auto& st : ex.stale) {
    std::string differs;
    for (const auto& d : st.differences) differs += (differs.empty() ? "" : "; ") + safe(d);
    labelled(out, "stale", safe(st.rule) + " was measured on " + safe(st.measured_on) + ", not used here: " + differs);
  }
  for (const auto& u : ex.unstated)
    labelled(out, "unstated", safe(u.subject) + " depends on " + safe(u.fields) + ": " + safe(u.condition));
  for (const auto& c : ex.candidates)
    if (c.outcome == attnsel::verdict::selected)
      for (const auto& w : c.warnings) labelled(out, "warning", safe(w.message));
  if (ex.result.ok() && ex.result->fell_back)
    labelled(out, "prefer", "every forced backend was rejected; fell back to automatic selection");
  if (ex.result.ok())
    labelled(out, "selected",
             std::string(ex.result->name()) +
                 (ex.result->variant_name().empty() ? "" : " (" + std::string(ex.result->variant_name()) + ")"));
  return out;
}

}  // namespace attnsel_cli
