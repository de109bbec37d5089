// SPDX-License-Identifier: Apache-2.0
// Compiled mode: every out-of-line definition, compiled once (ATTNSEL_COMPILED_LIB is set by CMake).
#ifndef ATTNSEL_COMPILED_LIB
#  error "src/attnsel.cpp is built only in compiled mode (ATTNSEL_COMPILED_LIB)"
#endif

#include <attnsel/all.hpp>

#include <attnsel/impl/bound_selector_inl.hpp>
#include <attnsel/impl/builtin_catalog_inl.hpp>
#include <attnsel/impl/catalog_inl.hpp>
#include <attnsel/impl/checks_inl.hpp>
#include <attnsel/impl/descriptor_inl.hpp>
#include <attnsel/impl/detect_inl.hpp>
#include <attnsel/impl/diff_inl.hpp>
#include <attnsel/impl/implication_inl.hpp>
#include <attnsel/impl/lint_inl.hpp>
#include <attnsel/impl/matrix_inl.hpp>
#include <attnsel/impl/model_config_inl.hpp>
#include <attnsel/impl/model_plan_inl.hpp>
#include <attnsel/impl/override_inl.hpp>
#include <attnsel/impl/platform_inl.hpp>
#include <attnsel/impl/policy_inl.hpp>
#include <attnsel/impl/query_inl.hpp>
#include <attnsel/impl/reference_inl.hpp>
#include <attnsel/impl/registry_inl.hpp>
#include <attnsel/impl/report_inl.hpp>
#include <attnsel/impl/selector_inl.hpp>
#include <attnsel/impl/shape_inl.hpp>
#include <attnsel/impl/tuning_inl.hpp>
