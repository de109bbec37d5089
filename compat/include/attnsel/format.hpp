// SPDX-License-Identifier: Apache-2.0
// Moved after 0.1 to <attnsel/core/format.hpp> (CHANGELOG); forwards for one minor release.
#pragma once

#include <attnsel/core/format.hpp>  // IWYU pragma: export
