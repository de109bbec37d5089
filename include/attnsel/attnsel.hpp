// SPDX-License-Identifier: Apache-2.0
// Umbrella header: the whole public API of attnsel (<attnsel/core.hpp> is the selection core alone).
#pragma once

#include <attnsel/bound_selector.hpp>
#include <attnsel/builtin_catalog.hpp>
#include <attnsel/catalog.hpp>
#include <attnsel/checks.hpp>
#include <attnsel/config.hpp>
#include <attnsel/descriptor.hpp>
#include <attnsel/detect.hpp>
#include <attnsel/diff.hpp>
#include <attnsel/enums.hpp>
#include <attnsel/format.hpp>
#include <attnsel/implication.hpp>
#include <attnsel/lint.hpp>
#include <attnsel/matrix.hpp>
#include <attnsel/model_config.hpp>
#include <attnsel/override.hpp>
#include <attnsel/platform.hpp>
#include <attnsel/policy.hpp>
#include <attnsel/query.hpp>
#include <attnsel/reason.hpp>
#include <attnsel/reference.hpp>
#include <attnsel/registry.hpp>
#include <attnsel/report.hpp>
#include <attnsel/selector.hpp>
#include <attnsel/shared_registry.hpp>
