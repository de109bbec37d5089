// SPDX-License-Identifier: Apache-2.0
// Compiled mode: every out-of-line definition, compiled once (ATTNSEL_COMPILED_LIB is set by CMake).
#ifndef ATTNSEL_COMPILED_LIB
#  error "src/attnsel.cpp is built only in compiled mode (ATTNSEL_COMPILED_LIB)"
#endif

#include <attnsel/all.hpp>

#include <attnsel/catalog/impl/builtin_catalog_inl.hpp>
#include <attnsel/catalog/impl/catalog_inl.hpp>
#include <attnsel/catalog/impl/diff_inl.hpp>
#include <attnsel/catalog/impl/lint_inl.hpp>
#include <attnsel/catalog/impl/matrix_inl.hpp>
#include <attnsel/catalog/impl/reference_inl.hpp>
#include <attnsel/catalog/impl/report_inl.hpp>
#include <attnsel/catalog/impl/tuning_inl.hpp>
#include <attnsel/core/impl/checks_inl.hpp>
#include <attnsel/core/impl/descriptor_inl.hpp>
#include <attnsel/core/impl/implication_inl.hpp>
#include <attnsel/core/impl/override_inl.hpp>
#include <attnsel/core/impl/platform_inl.hpp>
#include <attnsel/core/impl/policy_inl.hpp>
#include <attnsel/core/impl/query_inl.hpp>
#include <attnsel/core/impl/registry_inl.hpp>
#include <attnsel/core/impl/select_inl.hpp>
#include <attnsel/core/impl/selector_inl.hpp>
#include <attnsel/core/impl/shape_inl.hpp>
#include <attnsel/detect/impl/detect_inl.hpp>
#include <attnsel/model/impl/model_config_inl.hpp>
#include <attnsel/model/impl/model_plan_inl.hpp>
