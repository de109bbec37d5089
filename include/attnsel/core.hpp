// SPDX-License-Identifier: Apache-2.0
// The selection core alone: what an engine needs to select, without JSON, fmt or file I/O headers.
#pragma once

#include <attnsel/catalog/reference.hpp>  // IWYU pragma: export
#include <attnsel/config.hpp>             // IWYU pragma: export
#include <attnsel/core/checks.hpp>        // IWYU pragma: export
#include <attnsel/core/descriptor.hpp>    // IWYU pragma: export
#include <attnsel/core/enums.hpp>         // IWYU pragma: export
#include <attnsel/core/measurement.hpp>   // IWYU pragma: export
#include <attnsel/core/override.hpp>      // IWYU pragma: export
#include <attnsel/core/platform.hpp>      // IWYU pragma: export
#include <attnsel/core/policy.hpp>        // IWYU pragma: export
#include <attnsel/core/query.hpp>         // IWYU pragma: export
#include <attnsel/core/reason.hpp>        // IWYU pragma: export
#include <attnsel/core/registry.hpp>      // IWYU pragma: export
#include <attnsel/core/select.hpp>        // IWYU pragma: export
#include <attnsel/core/selector.hpp>      // IWYU pragma: export
#include <attnsel/core/shape.hpp>         // IWYU pragma: export
