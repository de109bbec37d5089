// SPDX-License-Identifier: Apache-2.0
// Moved after 0.1 to <attnsel/core/reason.hpp> (CHANGELOG); forwards for one minor release.
#pragma once

#include <attnsel/core/reason.hpp>  // IWYU pragma: export
