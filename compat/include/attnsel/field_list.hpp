// SPDX-License-Identifier: Apache-2.0
// Moved after 0.1 to <attnsel/core/field_list.hpp> (CHANGELOG); forwards for one minor release.
#pragma once

#include <attnsel/core/field_list.hpp>  // IWYU pragma: export
