// SPDX-License-Identifier: Apache-2.0
// Moved after 0.1 to <attnsel/core/override.hpp> (CHANGELOG); forwards for one minor release.
#pragma once

#include <attnsel/core/override.hpp>  // IWYU pragma: export
