// SPDX-License-Identifier: Apache-2.0
// detect_platform's probes: files, the environment, the CUDA driver and runtime, cuDNN, ROCm (KFD)
// and the CPU, each recording what it found and from where.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/detect/detect.hpp>
#endif

#include <attnsel/core/override.hpp>
#include <attnsel/core/query.hpp>
#include <attnsel/generated/catalogs.hpp>

#include <attnsel/catalog/impl/file_read.hpp>
#include <attnsel/catalog/impl/json_keys.hpp>
#include <attnsel/catalog/impl/json_reader.hpp>
#include <attnsel/core/impl/text.hpp>

#include <nlohmann/json.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <utility>

ATTNSEL_BEGIN_NAMESPACE
namespace detail::detect {

// Bounds that keep every probe's work fixed, whatever the machine or a fake tree holds.
constexpr std::size_t max_sysfs_file = 64u << 10;
constexpr std::size_t max_cpuinfo = 4u << 20;
constexpr std::size_t max_kfd_nodes = 256;
constexpr std::size_t max_libraries = 64;

inline void add(detection_report& r, std::string name, std::string value, std::string source, bool found) {
  r.facts.push_back(detected_fact{std::move(name), std::move(value), std::move(source), found});
}

// Opening with O_NONBLOCK never waits for a FIFO's writer; the check is made on the opened file (fstat,
// not_regular_reason), so nothing swapped in between the check and the read is read. At most `limit` bytes of a regular
// file; nullopt when it cannot be opened. A FIFO, device, socket or directory is never read: `refused` then says why
// (and nullopt is returned), so no probe can block.
inline std::optional<std::string> read_file(const std::string& path, std::size_t limit,
                                            std::string* refused = nullptr) {
  if (path.find('\0') != std::string::npos) return std::nullopt;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct ::stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return std::nullopt;
  }
  if (auto why = not_regular_reason(st); !why.empty()) {
    ::close(fd);
    if (refused) *refused = std::move(why);
    return std::nullopt;
  }
  std::string out;
  char buf[4096];
  while (out.size() < limit) {
    const auto n = ::read(fd, buf, std::min(sizeof buf, limit - out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

inline std::string trim(std::string s) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

inline std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The environment a probe sees: the injected map, or the process's own variables.
class environment {
 public:
  explicit environment(const std::optional<std::map<std::string, std::string>>& injected) : injected_(injected) {}
  [[nodiscard]] std::optional<std::string> get(const std::string& name) const {
    if (injected_) {
      const auto it = injected_->find(name);
      return it == injected_->end() ? std::nullopt : std::optional<std::string>(it->second);
    }
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  }

 private:
  const std::optional<std::map<std::string, std::string>>& injected_;
};

// A comma-separated device list (`0,2`); nullopt when an entry is not an index (UUIDs are left to
// the runtime). An empty or `-1`-led list hides every device.
inline std::optional<std::vector<unsigned>> visible_list(const std::string& text) {
  std::vector<unsigned> out;
  std::size_t start = 0;
  const auto t = trim(text);
  if (t.empty()) return out;
  while (start <= t.size() && out.size() < 1024) {
    const auto end = std::min(t.find(',', start), t.size());
    const auto item = trim(t.substr(start, end - start));
    if (item == "-1" || item.rfind('-', 0) == 0) return out;  // the runtimes stop at the first invalid entry
    if (item.empty() || item.size() > 6 || !std::all_of(item.begin(), item.end(), ::isdigit)) return std::nullopt;
    out.push_back(static_cast<unsigned>(std::stoul(item)));
    start = end + 1;
  }
  return out;
}

// dlopen with the loader's message on failure. Names without '/' use the loader's search path.
// A path (or, for a bare name, a directory of LD_LIBRARY_PATH holding it) that exists but is no regular
// file is refused before dlopen: the loader would open a FIFO and wait for a writer forever.
inline void* open_library(const std::string& name, std::string& error) {
  if (name.find('\0') != std::string::npos) {
    error = "a library name with a NUL byte";
    return nullptr;
  }
  const auto refuse = [&](const std::string& path) {
    struct ::stat st {};
    if (::stat(path.c_str(), &st) != 0) return false;
    const auto why = not_regular_reason(st);
    if (why.empty()) return false;
    error = printable(path, 200) + " " + why;
    return true;
  };
  if (name.find('/') != std::string::npos) {
    if (refuse(name)) return nullptr;
  } else if (const char* dirs = std::getenv("LD_LIBRARY_PATH")) {
    const std::string list = dirs;
    std::size_t start = 0;
    for (std::size_t n = 0; start <= list.size() && n < max_libraries; ++n) {
      const auto end = std::min(list.find(':', start), list.size());
      const auto dir = list.substr(start, end - start);
      if (refuse((dir.empty() ? std::string(".") : dir) + "/" + name)) return nullptr;
      start = end + 1;
    }
  }
  ::dlerror();
  void* h = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = ::dlerror();
    error = e ? printable(e, 200) : std::string("dlopen failed");
  }
  return h;
}

inline const char* cuda_error_name(int code) noexcept {
  switch (code) {
    case 3:
      return "CUDA_ERROR_NOT_INITIALIZED";
    case 34:
      return "CUDA_ERROR_STUB_LIBRARY";
    case 35:
      return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case 100:
      return "CUDA_ERROR_NO_DEVICE";
    case 101:
      return "CUDA_ERROR_INVALID_DEVICE";
    case 304:
      return "CUDA_ERROR_OPERATING_SYSTEM";
    case 999:
      return "CUDA_ERROR_UNKNOWN";
    default:
      return "CUDA error";
  }
}

// The CUDA driver API subset used here, declared locally: no CUDA headers, no link dependency.
struct cuda_api {
  using init_fn = int (*)(unsigned);
  using count_fn = int (*)(int*);
  using get_fn = int (*)(int*, int);
  using attribute_fn = int (*)(int*, int, int);
  using version_fn = int (*)(int*);
  using name_fn = int (*)(char*, int, int);
  init_fn init = nullptr;
  count_fn device_count = nullptr;
  get_fn device_get = nullptr;
  attribute_fn attribute = nullptr;
  version_fn driver_version = nullptr;
  name_fn device_name = nullptr;            // optional
  static constexpr int attr_cc_major = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
  static constexpr int attr_cc_minor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
};

template <class F>
F symbol(void* lib, const char* name) noexcept {
  return reinterpret_cast<F>(::dlsym(lib, name));
}

// Fills p with the CUDA device `index`; true when a device was described.
inline bool probe_cuda(const detect_options& o, const environment& env, platform& p, detection_report& r) {
  if (const auto cvd = env.get("CUDA_VISIBLE_DEVICES")) {
    const auto list = visible_list(*cvd);
    if (list && list->empty()) {
      add(r, "cuda.visible_devices", "",
          "environment CUDA_VISIBLE_DEVICES='" + printable(*cvd, 60) + "' hides every device", false);
      return false;
    }
    add(r, "cuda.visible_devices", printable(*cvd, 60), "environment CUDA_VISIBLE_DEVICES (applied by the driver)",
        true);
  }
  void* lib = nullptr;
  std::string used;
  std::size_t tried = 0;
  for (const auto& name : o.cuda_driver_libraries) {
    if (++tried > max_libraries) break;
    std::string error;
    lib = open_library(name, error);
    if (lib) {
      used = name;
      break;
    }
    add(r, "cuda.driver", "", concat({"not found: ", name, " (", error, ")"}), false);
  }
  if (!lib) return false;
  // The driver stays loaded: unloading it after cuInit is unsafe, and an engine will load it anyway.
  cuda_api api;
  api.init = symbol<cuda_api::init_fn>(lib, "cuInit");
  api.device_count = symbol<cuda_api::count_fn>(lib, "cuDeviceGetCount");
  api.device_get = symbol<cuda_api::get_fn>(lib, "cuDeviceGet");
  api.attribute = symbol<cuda_api::attribute_fn>(lib, "cuDeviceGetAttribute");
  api.driver_version = symbol<cuda_api::version_fn>(lib, "cuDriverGetVersion");
  api.device_name = symbol<cuda_api::name_fn>(lib, "cuDeviceGetName");
  const std::pair<const char*, bool> needed[] = {{"cuInit", api.init != nullptr},
                                                 {"cuDeviceGetCount", api.device_count != nullptr},
                                                 {"cuDeviceGet", api.device_get != nullptr},
                                                 {"cuDeviceGetAttribute", api.attribute != nullptr},
                                                 {"cuDriverGetVersion", api.driver_version != nullptr}};
  for (const auto& [name, ok] : needed) {
    if (!ok) {
      add(r, "cuda.driver", "", "broken: " + used + " has no symbol " + name, false);
      return false;
    }
  }
  const auto call_failed = [&](const char* fn, int code) {
    add(r, "cuda.driver", "",
        std::string(fn) + " via " + used + " returned " + std::to_string(code) + " (" + cuda_error_name(code) + ")",
        false);
  };
  if (const int rc = api.init(0); rc != 0) {
    call_failed("cuInit", rc);
    return false;
  }
  int version = 0;
  if (const int rc = api.driver_version(&version); rc != 0) {
    call_failed("cuDriverGetVersion", rc);
    return false;
  }
  const std::string driver = std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
  add(r, "cuda.driver_version", driver, "cuDriverGetVersion via " + used + " (" + std::to_string(version) + ")", true);
  int count = 0;
  if (const int rc = api.device_count(&count); rc != 0) {
    call_failed("cuDeviceGetCount", rc);
    return false;
  }
  add(r, "cuda.device_count", std::to_string(count), "cuDeviceGetCount via " + used, count > 0);
  if (count <= 0) return false;
  if (o.device_index >= static_cast<unsigned>(count)) {
    add(r, "cuda.device", "",
        "device index " + std::to_string(o.device_index) + " is out of range: " + std::to_string(count) +
            " visible device(s)",
        false);
    return false;
  }
  int dev = 0;
  int major = 0;
  int minor = 0;
  if (const int rc = api.device_get(&dev, static_cast<int>(o.device_index)); rc != 0) {
    call_failed("cuDeviceGet", rc);
    return false;
  }
  if (const int rc = api.attribute(&major, cuda_api::attr_cc_major, dev); rc != 0) {
    call_failed("cuDeviceGetAttribute", rc);
    return false;
  }
  if (const int rc = api.attribute(&minor, cuda_api::attr_cc_minor, dev); rc != 0) {
    call_failed("cuDeviceGetAttribute", rc);
    return false;
  }
  const auto text = std::to_string(major) + "." + std::to_string(minor);
  const auto cc = parse_cuda_capability(text);
  if (!cc) {
    add(r, "cuda.capability", "", "cuDeviceGetAttribute via " + used + " gave an impossible capability " + text, false);
    return false;
  }
  p = platform(device_vendor::cuda);
  p.set_capability(*cc);
  p.add_component("cuda_driver", parse_component_version(driver));
  const auto where = " via " + used + " (device " + std::to_string(o.device_index) + ")";
  add(r, "cuda.capability", text, "cuDeviceGetAttribute" + where, true);
  if (api.device_name) {
    char name[128] = {};
    if (api.device_name(name, static_cast<int>(sizeof name - 1), dev) == 0) {
      add(r, "cuda.device_name", printable(name, 100), "cuDeviceGetName" + where, true);
      p.set_device_name(printable(name, 100));
    }
  }
  return true;
}

// cudnnGetVersion encodes 9.19.0 as 91900 (cuDNN 9) and 8.9.7 as 8907 (cuDNN 8).
inline std::string cudnn_version_text(std::size_t v) {
  if (v >= 90000)
    return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 100) + "." + std::to_string(v % 100);
}

inline void probe_cudnn(const detect_options& o, platform& p, detection_report& r) {
  std::vector<std::string> candidates;
  for (const auto& given : o.library_dirs) {
    const auto dir = given.empty() || given.back() == '/' ? given : given + "/";
    // pip wheels put cuDNN beside torch, not in it: torch/lib finds it through its RPATH
    // $ORIGIN/../../nvidia/cudnn/lib, so a torch lib directory hint covers that place too.
    for (const auto& d : {dir, dir + "../../nvidia/cudnn/lib/"})
      for (const auto& name : o.cudnn_libraries) candidates.push_back(d + name);
  }
  if (o.cudnn_loader_search)
    for (const auto& name : o.cudnn_libraries) candidates.push_back(name);
  if (candidates.size() > max_libraries) candidates.resize(max_libraries);
  std::string missing;
  for (const auto& candidate : candidates) {
    std::string error;
    void* lib = open_library(candidate, error);
    if (!lib) {
      if (error.find(" not a regular file") != std::string::npos)
        add(r, "cudnn.version", "", "refused: " + error, false);
      else
        missing += (missing.empty() ? "" : ", ") + candidate;
      continue;
    }
    using version_fn = std::size_t (*)();
    const auto get_version = symbol<version_fn>(lib, "cudnnGetVersion");
    if (!get_version) {
      add(r, "cudnn.version", "", "broken: " + candidate + " has no symbol cudnnGetVersion", false);
      ::dlclose(lib);
      continue;
    }
    const auto v = get_version();
    ::dlclose(lib);
    const auto text = cudnn_version_text(v);
    const auto version = parse_component_version(text);
    if (v == 0 || !version) {
      add(r, "cudnn.version", "", "broken: cudnnGetVersion via " + candidate + " returned " + std::to_string(v), false);
      continue;
    }
    add(r, "cudnn.version", text, "cudnnGetVersion via " + candidate + " (" + std::to_string(v) + ")", true);
    p.add_component("cudnn", version);
    return;
  }
  if (!missing.empty()) add(r, "cudnn.version", "", "not found: " + missing, false);
}

// The ROCm version from `<root>/.info/version` ("6.2.0-66" -> 6.2.0).
inline void probe_rocm_version(const detect_options& o, const environment& env, platform& p, detection_report& r) {
  std::vector<std::string> roots;
  if (const auto rp = env.get("ROCM_PATH"); rp && !rp->empty()) roots.push_back(*rp);
  roots.insert(roots.end(), o.rocm_roots.begin(), o.rocm_roots.end());
  std::string tried;
  for (const auto& root : roots) {
    const auto path = root + "/.info/version";
    std::string refused;
    const auto text = read_file(path, 256, &refused);
    if (!text) {
      if (!refused.empty()) add(r, "rocm.version", "", "refused: " + printable(path, 200) + " " + refused, false);
      tried += (tried.empty() ? "" : ", ") + path;
      continue;
    }
    const auto t = trim(*text);
    std::size_t end = 0;
    while (end < t.size() && (std::isdigit(static_cast<unsigned char>(t[end])) || t[end] == '.')) ++end;
    const auto version = parse_component_version(t.substr(0, end));
    if (!version) {
      add(r, "rocm.version", "", "unreadable version '" + printable(t, 40) + "' in " + path, false);
      continue;
    }
    add(r, "rocm.version", to_string(*version), path, true);
    p.add_component("rocm", version);
    return;
  }
  add(r, "rocm.version", "", "not found: " + tried, false);
}

// AMD GPUs from the KFD topology: nodes with a non-zero gfx_target_version are GPUs.
inline bool probe_rocm(const detect_options& o, const environment& env, platform& p, detection_report& r) {
  const auto base = o.sysfs_root + "/class/kfd/kfd/topology/nodes/";
  struct gpu {
    std::size_t node;
    gfx_arch arch;
    unsigned long raw;
  };
  std::vector<gpu> gpus;
  bool any_node = false;
  for (std::size_t node = 0; node < max_kfd_nodes; ++node) {
    std::string refused;
    const auto props = base + std::to_string(node) + "/properties";
    const auto text = read_file(props, max_sysfs_file, &refused);
    if (!refused.empty()) add(r, "rocm.kfd", "", "refused: " + printable(props, 200) + " " + refused, false);
    if (!text) {
      if (node > 0) break;  // nodes are numbered densely from 0
      continue;
    }
    any_node = true;
    std::size_t pos = 0;
    while (pos < text->size()) {
      const auto end = std::min(text->find('\n', pos), text->size());
      const auto line = text->substr(pos, end - pos);
      pos = end + 1;
      const std::string key = "gfx_target_version ";
      if (line.rfind(key, 0) != 0) continue;
      const auto digits = trim(line.substr(key.size()));
      if (digits.empty() || digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) break;
      const auto value = std::stoul(digits);
      if (value == 0) break;  // a CPU agent
      const auto major = value / 10000;
      const auto minor = (value / 100) % 100;
      const auto stepping = value % 100;
      static constexpr char hex[] = "0123456789abcdef";
      std::optional<gfx_arch> arch;
      if (major <= 99 && minor < 16 && stepping < 16)
        arch = parse_gfx_arch("gfx" + std::to_string(major) + hex[minor] + hex[stepping]);
      if (!arch) {
        add(r, "rocm.gfx", "",
            "KFD topology node " + std::to_string(node) + " gfx_target_version " + digits + " is no known gfx target",
            false);
        break;
      }
      gpus.push_back(gpu{node, *arch, value});
      add(r, "rocm.gfx", arch->name(), "KFD topology node " + std::to_string(node) + " gfx_target_version " + digits,
          true);
      break;
    }
  }
  if (!any_node) {
    add(r, "rocm.kfd", "", "not found: " + base + "0/properties", false);
    return false;
  }
  if (gpus.empty()) {
    add(r, "rocm.kfd", "no GPU", "KFD topology lists CPU agents only", false);
    return false;
  }
  std::vector<std::size_t> order(gpus.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (const char* var : {"ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"}) {
    const auto v = env.get(var);
    if (!v) continue;
    const auto list = visible_list(*v);
    if (!list) {
      add(r, "rocm.visible_devices", printable(*v, 60), std::string("environment ") + var + " (not indices; ignored)",
          false);
      continue;
    }
    std::vector<std::size_t> next;
    for (auto i : *list)
      if (i < order.size()) next.push_back(order[i]);
    order = std::move(next);
    if (order.empty()) {
      // Hidden, not out of range: the same wording as CUDA_VISIBLE_DEVICES on the CUDA side.
      add(r, "rocm.visible_devices", "",
          std::string("environment ") + var + "='" + printable(*v, 60) + "' hides every device", false);
      return false;
    }
    add(r, "rocm.visible_devices", printable(*v, 60), std::string("environment ") + var, true);
  }
  if (o.device_index >= order.size()) {
    add(r, "rocm.device", "",
        "device index " + std::to_string(o.device_index) + " is out of range: " + std::to_string(order.size()) +
            " visible GPU(s)",
        false);
    return false;
  }
  const auto& chosen = gpus[order[o.device_index]];
  p = platform(device_vendor::rocm);
  p.set_gfx(chosen.arch);
  add(r, "rocm.device", chosen.arch.name(),
      "device " + std::to_string(o.device_index) + " = KFD topology node " + std::to_string(chosen.node), true);
  for (auto f : enum_values<gfx_family>())
    if (chosen.arch.in_family(f))
      add(r, "rocm.family", std::string(to_string(f)), chosen.arch.name() + " is in the family", true);
  probe_rocm_version(o, env, p, r);
  return true;
}

// CPU ISA from /proc/cpuinfo (first `flags` / `Features` line), else the compiler's cpuid builtins.
inline void probe_cpu(const detect_options& o, platform& p, detection_report& r) {
#if defined(__x86_64__) || defined(__i386__)
  add(r, "cpu.arch", "x86_64", "build target", true);
  const std::pair<const char*, std::vector<const char*>> isa[] = {
      {"cpu_avx2", {"avx2"}}, {"cpu_avx512", {"avx512f"}}, {"cpu_amx", {"amx_tile", "amx_bf16"}}};
  const char* key = "flags";
#elif defined(__aarch64__)
  add(r, "cpu.arch", "aarch64", "build target", true);
  const std::pair<const char*, std::vector<const char*>> isa[] = {{"cpu_neon", {"asimd"}}, {"cpu_sve", {"sve"}}};
  const char* key = "Features";
#else
  add(r, "cpu.arch", "other", "build target", true);
  const std::pair<const char*, std::vector<const char*>> isa[] = {{"", {}}};
  const char* key = "";
#endif
  const auto path = o.proc_root + "/cpuinfo";
  std::string refused;
  const auto text = read_file(path, max_cpuinfo, &refused);
  if (!refused.empty()) add(r, "cpu.flags", "", "refused: " + printable(path, 200) + " " + refused, false);
  std::optional<std::vector<std::string>> flags;
  if (text && *key) {
    std::size_t pos = 0;
    while (pos < text->size() && !flags) {
      const auto end = std::min(text->find('\n', pos), text->size());
      const auto line = text->substr(pos, end - pos);
      pos = end + 1;
      const auto colon = line.find(':');
      if (colon == std::string::npos || trim(line.substr(0, colon)) != key) continue;
      flags.emplace();
      std::size_t s = colon + 1;
      while (s < line.size() && flags->size() < 4096) {
        while (s < line.size() && line[s] == ' ') ++s;
        const auto e = std::min(line.find(' ', s), line.size());
        if (e > s) flags->push_back(line.substr(s, e - s));
        s = e;
      }
    }
  }
  for (const auto& [component, needles] : isa) {
    if (needles.empty()) continue;
    const std::string fact = "cpu." + std::string(component).substr(4);
    bool has = false;
    std::string source;
    if (flags) {
      for (const auto* n : needles) has = has || std::find(flags->begin(), flags->end(), n) != flags->end();
      source = path + " " + key + " (" + needles.front() + ")";
    } else {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
      const std::string c = component;
      if (c == "cpu_avx2") has = __builtin_cpu_supports("avx2");
      if (c == "cpu_avx512") has = __builtin_cpu_supports("avx512f");
      source = c == "cpu_amx" ? "unknown: " + path + " unreadable" : "__builtin_cpu_supports (" + path + " unreadable)";
      if (c == "cpu_amx") {
        add(r, fact, "", source, false);
        continue;
      }
#else
      add(r, fact, "", "unknown: " + path + " unreadable", false);
      continue;
#endif
    }
    add(r, fact, has ? "yes" : "no", source, true);
    if (has && p.vendor() == device_vendor::cpu) p.add_component(component);
  }
}

}  // namespace detail::detect
ATTNSEL_END_NAMESPACE
