// SPDX-License-Identifier: Apache-2.0
// Umbrella header of the selection API: values, backend descriptors, registries (the built-in catalogs
// compiled in), policies, overrides, the free and bound selectors, explain, and fmt formatters. The JSON
// layer (catalog files, diff, lint, matrix, reports, model configs) is <attnsel/all.hpp>; detection is
// <attnsel/detect/detect.hpp> (it brings <dlfcn.h> and the probes); <attnsel/core.hpp> is the core without fmt.
#pragma once

#include <attnsel/catalog/reference.hpp>     // IWYU pragma: export
#include <attnsel/config.hpp>                // IWYU pragma: export
#include <attnsel/core/checks.hpp>           // IWYU pragma: export
#include <attnsel/core/descriptor.hpp>       // IWYU pragma: export
#include <attnsel/core/devices.hpp>          // IWYU pragma: export
#include <attnsel/core/engine_names.hpp>     // IWYU pragma: export
#include <attnsel/core/enums.hpp>            // IWYU pragma: export
#include <attnsel/core/field_list.hpp>       // IWYU pragma: export
#include <attnsel/core/format.hpp>           // IWYU pragma: export
#include <attnsel/core/implication.hpp>      // IWYU pragma: export
#include <attnsel/core/measurement.hpp>      // IWYU pragma: export
#include <attnsel/core/override.hpp>         // IWYU pragma: export
#include <attnsel/core/platform.hpp>         // IWYU pragma: export
#include <attnsel/core/policy.hpp>           // IWYU pragma: export
#include <attnsel/core/query.hpp>            // IWYU pragma: export
#include <attnsel/core/reason.hpp>           // IWYU pragma: export
#include <attnsel/core/registry.hpp>         // IWYU pragma: export
#include <attnsel/core/select.hpp>           // IWYU pragma: export
#include <attnsel/core/selector.hpp>         // IWYU pragma: export
#include <attnsel/core/shape.hpp>            // IWYU pragma: export
#include <attnsel/core/shared_registry.hpp>  // IWYU pragma: export
