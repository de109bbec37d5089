// SPDX-License-Identifier: Apache-2.0
// The selection core alone: what an engine needs to select, without JSON, fmt or file I/O headers.
#pragma once

#include <attnsel/bound_selector.hpp>
#include <attnsel/checks.hpp>
#include <attnsel/config.hpp>
#include <attnsel/descriptor.hpp>
#include <attnsel/enums.hpp>
#include <attnsel/override.hpp>
#include <attnsel/platform.hpp>
#include <attnsel/policy.hpp>
#include <attnsel/query.hpp>
#include <attnsel/reason.hpp>
#include <attnsel/reference.hpp>
#include <attnsel/registry.hpp>
#include <attnsel/selector.hpp>
#include <attnsel/shape.hpp>
