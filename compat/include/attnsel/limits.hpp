// SPDX-License-Identifier: Apache-2.0
// Moved after 0.1 to <attnsel/core/limits.hpp> (CHANGELOG); forwards for one minor release.
#pragma once

#include <attnsel/core/limits.hpp>  // IWYU pragma: export
