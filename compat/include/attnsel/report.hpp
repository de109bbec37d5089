// SPDX-License-Identifier: Apache-2.0
// Moved after 0.1 to <attnsel/catalog/report.hpp> (CHANGELOG); forwards for one minor release.
#pragma once

#include <attnsel/catalog/report.hpp>  // IWYU pragma: export
