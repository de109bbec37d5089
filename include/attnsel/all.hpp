// SPDX-License-Identifier: Apache-2.0
// Everything public, detection aside: <attnsel/attnsel.hpp> (the selection API) plus the JSON layer:
// catalog files and the built-in catalogs' texts, diff, lint, the support matrix, JSON reports and model
// configs. It brings <nlohmann/json.hpp> and the embedded catalog texts, which a file that only selects
// does not need to compile (bench/compile_cost.sh measures both umbrellas).
#pragma once

#include <attnsel/attnsel.hpp>                  // IWYU pragma: export
#include <attnsel/catalog/builtin_catalog.hpp>  // IWYU pragma: export
#include <attnsel/catalog/catalog.hpp>          // IWYU pragma: export
#include <attnsel/catalog/diff.hpp>             // IWYU pragma: export
#include <attnsel/catalog/lint.hpp>             // IWYU pragma: export
#include <attnsel/catalog/matrix.hpp>           // IWYU pragma: export
#include <attnsel/catalog/report.hpp>           // IWYU pragma: export
#include <attnsel/catalog/tuning.hpp>           // IWYU pragma: export
#include <attnsel/model/model_config.hpp>       // IWYU pragma: export
#include <attnsel/model/model_plan.hpp>         // IWYU pragma: export
