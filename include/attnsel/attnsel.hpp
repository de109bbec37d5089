// SPDX-License-Identifier: Apache-2.0
// Umbrella header of the selection API: values, backend descriptors, registries (the built-in catalogs
// compiled in), policies, overrides, the free and bound selectors, explain, and fmt formatters. The JSON
// layer (catalog files, diff, lint, matrix, reports, model configs) is <attnsel/all.hpp>; detection is
// <attnsel/detect.hpp> (it brings <dlfcn.h> and the probes); <attnsel/core.hpp> is the core without fmt.
#pragma once

#include <attnsel/bound_selector.hpp>   // IWYU pragma: export
#include <attnsel/checks.hpp>           // IWYU pragma: export
#include <attnsel/config.hpp>           // IWYU pragma: export
#include <attnsel/descriptor.hpp>       // IWYU pragma: export
#include <attnsel/devices.hpp>          // IWYU pragma: export
#include <attnsel/engine_names.hpp>     // IWYU pragma: export
#include <attnsel/enums.hpp>            // IWYU pragma: export
#include <attnsel/field_list.hpp>       // IWYU pragma: export
#include <attnsel/format.hpp>           // IWYU pragma: export
#include <attnsel/implication.hpp>      // IWYU pragma: export
#include <attnsel/measurement.hpp>      // IWYU pragma: export
#include <attnsel/override.hpp>         // IWYU pragma: export
#include <attnsel/platform.hpp>         // IWYU pragma: export
#include <attnsel/policy.hpp>           // IWYU pragma: export
#include <attnsel/query.hpp>            // IWYU pragma: export
#include <attnsel/reason.hpp>           // IWYU pragma: export
#include <attnsel/reference.hpp>        // IWYU pragma: export
#include <attnsel/registry.hpp>         // IWYU pragma: export
#include <attnsel/selector.hpp>         // IWYU pragma: export
#include <attnsel/shape.hpp>            // IWYU pragma: export
#include <attnsel/shared_registry.hpp>  // IWYU pragma: export
