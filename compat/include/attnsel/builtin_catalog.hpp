// SPDX-License-Identifier: Apache-2.0
// Moved after 0.1 to <attnsel/catalog/builtin_catalog.hpp> (CHANGELOG); forwards for one minor release.
#pragma once

#include <attnsel/catalog/builtin_catalog.hpp>  // IWYU pragma: export
