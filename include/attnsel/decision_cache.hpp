// SPDX-License-Identifier: Apache-2.0
// Kept so that existing includes build: `cache_stats` is declared in bound_selector.hpp, and the
// decision cache itself is an implementation detail of the bound selector (impl/decision_cache.hpp).
#pragma once

#include <attnsel/bound_selector.hpp>  // IWYU pragma: export
