// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for catalog.hpp, one job per file: reading, writing, text and file I/O.
#pragma once

#include <attnsel/catalog/impl/catalog_file_inl.hpp>
#include <attnsel/catalog/impl/catalog_read_inl.hpp>
#include <attnsel/catalog/impl/catalog_write_inl.hpp>
