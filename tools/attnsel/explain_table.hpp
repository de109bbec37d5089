// SPDX-License-Identifier: Apache-2.0
// Human rendering of an explanation: context lines, the candidate table and the policy rule.
#pragma once

#include "override_source.hpp"
#include "terminal.hpp"

#include <attnsel/core/platform.hpp>
#include <attnsel/core/query.hpp>
#include <attnsel/core/select.hpp>

#include <string>

namespace attnsel_cli {

/// The `explain` text: platform, query and override lines; a table of rank, backend, variant,
/// verdict and every reason (winner marked `*`); then the policy rule and its note. Every line fits
/// `terminal_width`; catalog text goes through attnsel::printable.
[[nodiscard]] std::string render_explanation(const attnsel::explanation& ex, const attnsel::query& q,
                                             const attnsel::platform& p, const chosen_override& ovr,
                                             const style& out_style);

}  // namespace attnsel_cli
