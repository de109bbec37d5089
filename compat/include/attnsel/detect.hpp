// SPDX-License-Identifier: Apache-2.0
// Moved after 0.1 to <attnsel/detect/detect.hpp> (CHANGELOG); forwards for one minor release.
#pragma once

#include <attnsel/detect/detect.hpp>  // IWYU pragma: export
