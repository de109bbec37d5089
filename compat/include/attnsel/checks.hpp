// SPDX-License-Identifier: Apache-2.0
// Moved after 0.1 to <attnsel/core/checks.hpp> (CHANGELOG); forwards for one minor release.
#pragma once

#include <attnsel/core/checks.hpp>  // IWYU pragma: export
