// SPDX-License-Identifier: Apache-2.0
// Turns the typed flags into the library's platform and query; what CLI11 cannot check alone is a usage error here.
#pragma once

#include "options.hpp"

#include <attnsel/catalog/catalog.hpp>
#include <attnsel/core/platform.hpp>
#include <attnsel/core/query.hpp>
#include <attnsel/core/registry.hpp>
#include <attnsel/detect/detect.hpp>
#include <attnsel/model/model_config.hpp>

#include <string>
#include <vector>

namespace attnsel_cli {

/// The platform the flags describe: `--platform` and `--arch` (the vendor `--arch` implies when
/// no --platform is given); with neither, this machine as attnsel::detect_platform() sees it (cpu
/// with `--no-detect`); then `--component`. When it detected, `report` (if given) receives how.
/// Throws usage_error.
[[nodiscard]] attnsel::platform build_platform(const platform_flags& flags,
                                               attnsel::detection_report* report = nullptr);

/// What add_stock added, in words: `line` for a note on stderr ("assumed vllm@0.33.0's stock
/// cuda_runtime=13.0, flashinfer=0.7.2 (--no-stock: none)"), `sentence` with the catalog's reason
/// for a JSON report's assumptions; both empty when nothing was added.
struct stock_note {
  std::string line;
  std::string sentence;
};

/// Adds to a platform the flags describe (`--platform`, `--arch`) what the catalog engine's stock install
/// brings (attnsel::with_stock); `p` is unchanged with `--no-stock` or when it was detected (it has what
/// is installed).
[[nodiscard]] stock_note add_stock(const platform_flags& flags, const attnsel::catalog_info& info,
                                   attnsel::platform& p);

/// Adds `--component` specs to `p`; throws usage_error naming `flag` for a malformed one.
void add_components(attnsel::platform& p, const std::vector<std::string>& specs);

/// The query the flags describe (CLI11 checked every value), with `--mla` / `--sparse` as its mode;
/// without `--feature`, which needs the catalog. The dtype is `--dtype`'s; `--dtype auto`, and a
/// `--model-config` without `--dtype`, take attnsel::auto_dtype on `p` (a note on stderr says when that
/// differs from the checkpoint's dtype). With `--model-config`, `model` (when given) receives the config.
[[nodiscard]] attnsel::query build_query(const query_flags& flags, const attnsel::platform& p,
                                         attnsel::model_config* model = nullptr);

/// Adds the `--feature` names to `q`. A name must be a documented feature or one a backend of `reg`
/// declares; anything else is a usage_error listing the known names.
/// Then applies add_implied_gqa.
void add_features(attnsel::query& q, const query_flags& flags, const attnsel::registry& reg);

/// The feature name a catalog uses for grouped-query attention (torch_sdpa: SDPA's `enable_gqa`).
inline constexpr const char* gqa_feature = "gqa";
/// When the catalog declares `gqa` and both head counts are stated: fewer KV heads than query heads add
/// it (with a note on stderr); `gqa` required with equal counts is a usage_error.
void add_implied_gqa(attnsel::query& q, bool catalog_knows_gqa);

}  // namespace attnsel_cli
