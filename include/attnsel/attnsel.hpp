// SPDX-License-Identifier: Apache-2.0
// Umbrella header: the public API of attnsel, detection aside (<attnsel/detect.hpp> is opt-in: it brings
// <dlfcn.h> and the probes). <attnsel/core.hpp> is the selection core alone.
#pragma once

#include <attnsel/bound_selector.hpp>   // IWYU pragma: export
#include <attnsel/builtin_catalog.hpp>  // IWYU pragma: export
#include <attnsel/catalog.hpp>          // IWYU pragma: export
#include <attnsel/checks.hpp>           // IWYU pragma: export
#include <attnsel/config.hpp>           // IWYU pragma: export
#include <attnsel/descriptor.hpp>       // IWYU pragma: export
#include <attnsel/devices.hpp>          // IWYU pragma: export
#include <attnsel/diff.hpp>             // IWYU pragma: export
#include <attnsel/engine_names.hpp>     // IWYU pragma: export
#include <attnsel/enums.hpp>            // IWYU pragma: export
#include <attnsel/field_list.hpp>       // IWYU pragma: export
#include <attnsel/format.hpp>           // IWYU pragma: export
#include <attnsel/implication.hpp>      // IWYU pragma: export
#include <attnsel/lint.hpp>             // IWYU pragma: export
#include <attnsel/matrix.hpp>           // IWYU pragma: export
#include <attnsel/measurement.hpp>      // IWYU pragma: export
#include <attnsel/model_config.hpp>     // IWYU pragma: export
#include <attnsel/override.hpp>         // IWYU pragma: export
#include <attnsel/platform.hpp>         // IWYU pragma: export
#include <attnsel/policy.hpp>           // IWYU pragma: export
#include <attnsel/query.hpp>            // IWYU pragma: export
#include <attnsel/reason.hpp>           // IWYU pragma: export
#include <attnsel/reference.hpp>        // IWYU pragma: export
#include <attnsel/registry.hpp>         // IWYU pragma: export
#include <attnsel/report.hpp>           // IWYU pragma: export
#include <attnsel/selector.hpp>         // IWYU pragma: export
#include <attnsel/shape.hpp>            // IWYU pragma: export
#include <attnsel/shared_registry.hpp>  // IWYU pragma: export
