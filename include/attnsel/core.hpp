// SPDX-License-Identifier: Apache-2.0
// The selection core alone: what an engine needs to select, without JSON, fmt or file I/O headers.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/enums.hpp>
#include <attnsel/platform.hpp>
#include <attnsel/query.hpp>
#include <attnsel/descriptor.hpp>
#include <attnsel/reason.hpp>
#include <attnsel/checks.hpp>
#include <attnsel/policy.hpp>
#include <attnsel/registry.hpp>
#include <attnsel/override.hpp>
#include <attnsel/selector.hpp>
#include <attnsel/bound_selector.hpp>
#include <attnsel/reference.hpp>
