// SPDX-License-Identifier: Apache-2.0
// Moved after 0.1 to <attnsel/model/model_plan.hpp> (CHANGELOG); forwards for one minor release.
#pragma once

#include <attnsel/model/model_plan.hpp>  // IWYU pragma: export
