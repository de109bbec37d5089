// SPDX-License-Identifier: Apache-2.0
// The selection core alone: what an engine needs to select, without JSON, fmt or file I/O headers.
#pragma once

#include <attnsel/bound_selector.hpp>  // IWYU pragma: export
#include <attnsel/checks.hpp>          // IWYU pragma: export
#include <attnsel/config.hpp>          // IWYU pragma: export
#include <attnsel/descriptor.hpp>      // IWYU pragma: export
#include <attnsel/enums.hpp>           // IWYU pragma: export
#include <attnsel/measurement.hpp>     // IWYU pragma: export
#include <attnsel/override.hpp>        // IWYU pragma: export
#include <attnsel/platform.hpp>        // IWYU pragma: export
#include <attnsel/policy.hpp>          // IWYU pragma: export
#include <attnsel/query.hpp>           // IWYU pragma: export
#include <attnsel/reason.hpp>          // IWYU pragma: export
#include <attnsel/reference.hpp>       // IWYU pragma: export
#include <attnsel/registry.hpp>        // IWYU pragma: export
#include <attnsel/selector.hpp>        // IWYU pragma: export
#include <attnsel/shape.hpp>           // IWYU pragma: export
