// SPDX-License-Identifier: Apache-2.0
// Platform detection (opt-in): GPU runtimes through dlopen, AMD GPUs through sysfs, CPU ISA, engine switches.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/platform.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

/// One thing detection learned, or failed to learn, and how.
struct detected_fact {
  std::string name;    ///< what it is about: `cuda.capability`, `cudnn.version`, `rocm.gfx`, `cpu.avx2` ...
  std::string value;   ///< `9.0`, `9.19.0`, `gfx942`, `yes`; empty when not found
  std::string source;  ///< `cuDeviceGetAttribute via libcuda.so.1`, `not found: libcudnn.so.9` ...
  bool found = false;  ///< false: a missing library, a broken one, an unreadable file

  friend bool operator==(const detected_fact& a, const detected_fact& b) {
    return a.name == b.name && a.value == b.value && a.source == b.source && a.found == b.found;
  }
};

/// Every fact in the order the probes ran.
struct detection_report {
  std::vector<detected_fact> facts;

  /// The first fact named `name` that was found, else the first of that name, else nullptr.
  [[nodiscard]] const detected_fact* find(std::string_view name) const noexcept;
};

/// Where detection looks. Every root is injectable, so tests point it at fake trees and fake libraries.
struct detect_options {
  std::string sysfs_root = "/sys";  ///< KFD topology under `class/kfd/kfd/topology/nodes`
  std::string proc_root = "/proc";  ///< `cpuinfo`
  /// ROCm installations whose `.info/version` gives the ROCm version; `$ROCM_PATH` is tried first.
  std::vector<std::string> rocm_roots = {"/opt/rocm"};
  /// The CUDA driver library: names go through the dynamic loader's search, paths are opened as given.
  std::vector<std::string> cuda_driver_libraries = {"libcuda.so.1"};
  /// cuDNN sonames, newest first; each is tried in every `library_dirs` entry, then by name.
  std::vector<std::string> cudnn_libraries = {"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"};
  /// Directories searched for cuDNN before the loader's path (e.g. torch's `lib` directory); each
  /// `DIR` also covers `DIR/../../nvidia/cudnn/lib`, where pip wheels put the cuDNN torch loads.
  std::vector<std::string> library_dirs;
  /// After `library_dirs`, try each cuDNN name through the loader's search path (LD_LIBRARY_PATH,
  /// ld.so.cache); false: only the directories.
  bool cudnn_loader_search = true;
  /// The environment switches and visibility variables are read from; nullopt: the process's own.
  std::optional<std::map<std::string, std::string>> environment;
  /// Which visible GPU to describe (after CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES).
  unsigned device_index = 0;
  /// Components the caller detected itself (Python packages: `flashinfer=0.2.5`, `aiter`); added
  /// before the engine switches are evaluated, so `aiter` here lets VLLM_ROCM_USE_AITER take effect.
  std::vector<component> extra_components;
  /// Text of a switch table (format of catalog/engine_switches.json); empty: the built-in one.
  std::string switch_table;
  bool probe_cuda = true;
  bool probe_cudnn = true;
  bool probe_rocm = true;
  bool probe_cpu = true;
};

/// A detected platform and the report of how it was found.
struct detection {
  attnsel::platform platform;
  detection_report report;
};

/// Detects this machine: an NVIDIA GPU when the CUDA driver loads and reports a device, else an AMD GPU
/// when the KFD topology lists one, else the CPU. Adds components `cudnn=<version>`, `cuda_driver=<version>`,
/// `rocm=<version>`, `cpu_avx2`/`cpu_avx512`/`cpu_amx`/`cpu_neon`/`cpu_sve` (CPU platforms), the caller's
/// extras, and those the engine switch table yields. Never throws: a missing or broken library, an
/// unreadable file, a malformed switch table are facts in the report. Each probe does bounded work (a
/// fixed number of files, each read up to a size limit); the driver calls are as quick as the driver.
[[nodiscard]] detection detect_platform(const detect_options& options = {}) noexcept;

/// One environment condition of an engine switch: holds when the variable's truth (its value, or
/// `default_value` when unset) equals `want`. A value is true when it equals one of `true_values`
/// ignoring case.
struct switch_env_condition {
  std::string name;
  bool default_value = false;
  std::vector<std::string> true_values;
  bool want = true;
};

/// A component a switch needs, optionally with a version strictly above `above`.
struct switch_requirement {
  std::string component;
  std::optional<component_version> above;
};

/// One row of the switch table: `component` is added when every condition holds.
struct engine_switch {
  std::string component;
  std::string engine;                         ///< `vllm`, `torch` (documentation)
  std::optional<device_vendor> vendor;        ///< nullopt: any vendor
  std::vector<cuda_capability> capabilities;  ///< empty: any capability
  std::vector<switch_env_condition> env;
  std::vector<switch_requirement> requires_components;
  std::string source;  ///< the engine code it follows
};

/// Parses a switch table (`{"format": "attnsel-switches", "version": 1, "switches": [...]}`).
/// Throws std::invalid_argument naming the JSON pointer and what was expected.
[[nodiscard]] std::vector<engine_switch> parse_switch_table(std::string_view text);

/// The built-in table (catalog/engine_switches.json at build time).
[[nodiscard]] std::string_view builtin_switch_table() noexcept;

/// Adds to `p` the component of every switch whose conditions hold under `env`, recording in
/// `report` each switch that applied and why each other one did not.
void apply_switches(platform& p, const std::vector<engine_switch>& table, const std::map<std::string, std::string>& env,
                    detection_report& report);

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/detect/impl/detect_inl.hpp>
#endif
