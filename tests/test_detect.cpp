// SPDX-License-Identifier: Apache-2.0
// Platform detection against fake sysfs/proc trees and fake libcuda/libcudnn built by the tests.
#include "catch.hpp"

#include <attnsel/detect/detect.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <stdexcept>

using namespace attnsel;
namespace fs = std::filesystem;

namespace {

// A fresh directory per test: ctest runs both suites at once, so names carry the pid and a counter.
class fake_tree {
 public:
  fake_tree() {
    static std::atomic<int> counter{0};
    root_ =
        fs::temp_directory_path() / ("attnsel_detect_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~fake_tree() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  fake_tree(const fake_tree&) = delete;
  fake_tree& operator=(const fake_tree&) = delete;

  void write(const std::string& rel, const std::string& text) const {
    const auto path = root_ / rel;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  [[nodiscard]] std::string path(const std::string& rel = "") const { return (root_ / rel).string(); }

  // A KFD node: gfx_target_version 0 for CPU agents.
  void kfd_node(int node, unsigned long gfx_target_version) const {
    write("sys/class/kfd/kfd/topology/nodes/" + std::to_string(node) + "/properties",
          "cpu_cores_count 0\nsimd_count 1216\ngfx_target_version " + std::to_string(gfx_target_version) +
              "\nvendor_id 4098\n");
  }

 private:
  fs::path root_;
};

// Options that see only the fake tree: no real driver, no real cuDNN, an empty environment.
detect_options isolated(const fake_tree& t) {
  detect_options o;
  o.sysfs_root = t.path("sys");
  o.proc_root = t.path("proc");
  o.rocm_roots = {t.path("opt/rocm")};
  o.cuda_driver_libraries = {t.path("no/libcuda.so.1")};
  o.cudnn_libraries = {"libcudnn.so.9"};
  o.library_dirs = {t.path("no_lib")};
  o.environment = std::map<std::string, std::string>{};
  // Only the directories: the loader's own search would find a real cuDNN on a developer machine.
  o.cudnn_loader_search = false;
  return o;
}

bool source_contains(const detection& d, const std::string& fact, const std::string& text) {
  for (const auto& f : d.report.facts)
    if (f.name == fact && f.source.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("Without a GPU detection says so and lists the CPU facts", "[detect]") {
  fake_tree t;
  t.write("proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 avx512f\n\nprocessor\t: 1\nflags\t: fpu\n");
  const auto d = detect_platform(isolated(t));
  CHECK(d.platform.vendor() == device_vendor::cpu);
  const auto* gpu = d.report.find("gpu");
  REQUIRE(gpu != nullptr);
  CHECK_FALSE(gpu->found);
  CHECK(gpu->source == "none found: checked the CUDA driver and the KFD topology");
  CHECK(source_contains(d, "cuda.driver", "not found: " + t.path("no/libcuda.so.1")));
  CHECK(source_contains(d, "rocm.kfd", "not found"));
#if defined(__x86_64__)
  CHECK(d.platform.has_component("cpu_avx2"));
  CHECK(d.platform.has_component("cpu_avx512"));
  CHECK_FALSE(d.platform.has_component("cpu_amx"));
  REQUIRE(d.report.find("cpu.amx") != nullptr);
  CHECK(d.report.find("cpu.amx")->value == "no");
  CHECK(source_contains(d, "cpu.avx2", "cpuinfo flags"));
#endif
  CHECK(source_contains(d, "cudnn.version",
                        "not found: " + t.path("no_lib") + "/libcudnn.so.9, " + t.path("no_lib") +
                            "/../../nvidia/cudnn/lib/libcudnn.so.9"));
  CHECK_FALSE(d.platform.has_component("cudnn"));
  CHECK(source_contains(d, "switch.cudnn_preferred", "not set: for cuda, this platform is cpu"));
}

TEST_CASE("An unreadable cpuinfo falls back to cpuid and says so", "[detect]") {
  fake_tree t;
  const auto d = detect_platform(isolated(t));
#if defined(__x86_64__)
  CHECK(source_contains(d, "cpu.avx2", "__builtin_cpu_supports"));
  CHECK(d.report.find("cpu.amx")->found == false);
#endif
  CHECK(d.platform.vendor() == device_vendor::cpu);
}

TEST_CASE("A fake libcuda gives capability, device count and driver version; cuDNN comes from the hint directory",
          "[detect][cuda]") {
  fake_tree t;
  auto o = isolated(t);
  o.cuda_driver_libraries = {t.path("missing/libcuda.so.1"), ATTNSEL_FAKE_CUDA};
  o.library_dirs = {t.path("no_lib"), ATTNSEL_FAKE_TORCH_LIB};
  o.cudnn_libraries = {"libcudnn.so.9"};
  const auto d = detect_platform(o);
  CHECK(d.platform.vendor() == device_vendor::cuda);
  REQUIRE(d.platform.capability());
  CHECK(*d.platform.capability() == cuda_capability{9, 0});
  CHECK(d.report.find("cuda.device_count")->value == "2");
  CHECK(d.report.find("cuda.driver_version")->value == "12.8");
  CHECK(d.report.find("cuda.device_name")->value == "Fake H200");
  CHECK(d.platform.device_name() == "Fake H200");  // measured policy rules read it
  CHECK(source_contains(d, "cuda.capability", std::string("cuDeviceGetAttribute via ") + ATTNSEL_FAKE_CUDA));
  CHECK(source_contains(d, "cuda.driver", "not found: " + t.path("missing/libcuda.so.1")));
  REQUIRE(d.platform.find_component("cudnn"));
  CHECK(d.platform.find_component("cudnn")->version == parse_component_version("9.19.0"));
  CHECK(source_contains(d, "cudnn.version", std::string("cudnnGetVersion via ") + ATTNSEL_FAKE_TORCH_LIB));
  CHECK(d.platform.find_component("cuda_driver")->version == parse_component_version("12.8"));
  // cuDNN 9.19 > 9.15 on sm_90 with the variable unset: PyTorch puts cuDNN first.
  CHECK(d.platform.has_component("cudnn_preferred"));
  CHECK(source_contains(d, "switch.cudnn_preferred", "TORCH_CUDNN_SDPA_DEPRIORITIZED unset"));
}

TEST_CASE("A torch lib directory hint also finds cuDNN where pip wheels put it", "[detect][cuda]") {
  fake_tree t;
  const auto wheel_dir = t.path("site-packages/nvidia/cudnn/lib");
  fs::create_directories(wheel_dir);
  fs::copy_file(std::string(ATTNSEL_FAKE_TORCH_LIB) + "/libcudnn.so.9", wheel_dir + "/libcudnn.so.9");
  fs::create_directories(t.path("site-packages/torch/lib"));
  auto o = isolated(t);
  o.library_dirs = {t.path("site-packages/torch/lib")};
  const auto d = detect_platform(o);
  CHECK(d.platform.find_component("cudnn")->version == parse_component_version("9.19.0"));
  CHECK(source_contains(d, "cudnn.version", "site-packages/torch/lib/../../nvidia/cudnn/lib/libcudnn.so.9"));
}

TEST_CASE("The device index picks another CUDA device, and one out of range is a fact", "[detect][cuda]") {
  fake_tree t;
  auto o = isolated(t);
  o.cuda_driver_libraries = {ATTNSEL_FAKE_CUDA};
  o.library_dirs = {ATTNSEL_FAKE_TORCH_LIB};
  o.cudnn_libraries = {"libcudnn.so.9"};
  o.device_index = 1;
  const auto second = detect_platform(o);
  REQUIRE(second.platform.capability());
  CHECK(*second.platform.capability() == cuda_capability{8, 6});
  CHECK_FALSE(second.platform.has_component("cudnn_preferred"));
  CHECK(source_contains(second, "switch.cudnn_preferred", "needs capability 9.0, 10.0, 10.3"));

  o.device_index = 5;
  const auto none = detect_platform(o);
  CHECK(none.platform.vendor() == device_vendor::cpu);
  CHECK(source_contains(none, "cuda.device", "device index 5 is out of range: 2 visible device(s)"));
  // The summary fact says why there is no GPU: not "none found" while the driver lists two.
  CHECK(source_contains(none, "gpu", "none at the requested index: device index 5 is out of range"));
  REQUIRE(none.report.find("gpu") != nullptr);
  CHECK(none.report.find("gpu")->source.find("none found") == std::string::npos);
}

TEST_CASE("CUDA_VISIBLE_DEVICES hiding every device skips the driver", "[detect][cuda]") {
  fake_tree t;
  auto o = isolated(t);
  o.cuda_driver_libraries = {ATTNSEL_FAKE_CUDA};
  for (const char* hidden : {"", "-1", " -1,0"}) {
    o.environment = std::map<std::string, std::string>{{"CUDA_VISIBLE_DEVICES", hidden}};
    const auto d = detect_platform(o);
    CHECK(d.platform.vendor() == device_vendor::cpu);
    CHECK(source_contains(d, "cuda.visible_devices", "hides every device"));
    CHECK(d.report.find("cuda.capability") == nullptr);
  }
  o.environment = std::map<std::string, std::string>{{"CUDA_VISIBLE_DEVICES", "0"}};
  CHECK(detect_platform(o).platform.vendor() == device_vendor::cuda);
}

TEST_CASE("TORCH_CUDNN_SDPA_DEPRIORITIZED turns cudnn_preferred off", "[detect][cuda]") {
  fake_tree t;
  auto o = isolated(t);
  o.cuda_driver_libraries = {ATTNSEL_FAKE_CUDA};
  o.library_dirs = {ATTNSEL_FAKE_TORCH_LIB};
  o.environment = std::map<std::string, std::string>{{"TORCH_CUDNN_SDPA_DEPRIORITIZED", "1"}};
  const auto d = detect_platform(o);
  CHECK(d.platform.has_component("cudnn"));
  CHECK_FALSE(d.platform.has_component("cudnn_preferred"));
  CHECK(source_contains(d, "switch.cudnn_preferred", "not set: environment TORCH_CUDNN_SDPA_DEPRIORITIZED=1"));
  o.environment = std::map<std::string, std::string>{{"TORCH_CUDNN_SDPA_DEPRIORITIZED", "0"}};
  CHECK(detect_platform(o).platform.has_component("cudnn_preferred"));
}

TEST_CASE("A broken libcuda is a fact: a missing symbol, an error code", "[detect][cuda][broken]") {
  fake_tree t;
  auto o = isolated(t);
  o.cuda_driver_libraries = {ATTNSEL_FAKE_CUDA_NOSYM};
  const auto nosym = detect_platform(o);
  CHECK(nosym.platform.vendor() == device_vendor::cpu);
  CHECK(source_contains(nosym, "cuda.driver", "has no symbol cuDeviceGetAttribute"));

  o.cuda_driver_libraries = {ATTNSEL_FAKE_CUDA_NODEV};
  const auto nodev = detect_platform(o);
  CHECK(nodev.platform.vendor() == device_vendor::cpu);
  CHECK(source_contains(nodev, "cuda.driver", "cuInit via"));
  CHECK(source_contains(nodev, "cuda.driver", "returned 100 (CUDA_ERROR_NO_DEVICE)"));

  // Not a shared library at all.
  t.write("bogus/libcuda.so.1", "not an ELF file");
  o.cuda_driver_libraries = {t.path("bogus/libcuda.so.1")};
  const auto bogus = detect_platform(o);
  CHECK(bogus.platform.vendor() == device_vendor::cpu);
  CHECK(source_contains(bogus, "cuda.driver", "not found: " + t.path("bogus/libcuda.so.1")));
}

TEST_CASE("A broken libcudnn is a fact and the next candidate is tried", "[detect][cuda][broken]") {
  fake_tree t;
  auto o = isolated(t);
  o.cuda_driver_libraries = {ATTNSEL_FAKE_CUDA};
  o.library_dirs = {ATTNSEL_FAKE_BROKEN_LIB, ATTNSEL_FAKE_TORCH_LIB};
  const auto d = detect_platform(o);
  CHECK(source_contains(d, "cudnn.version", "has no symbol cudnnGetVersion"));
  CHECK(d.platform.find_component("cudnn")->version == parse_component_version("9.19.0"));

  o.library_dirs = {ATTNSEL_FAKE_BROKEN_LIB};
  o.cudnn_libraries = {"libcudnn.so.9"};
  const auto only_broken = detect_platform(o);
  CHECK_FALSE(only_broken.platform.has_component("cudnn"));
  CHECK_FALSE(only_broken.platform.has_component("cudnn_preferred"));
  CHECK(source_contains(only_broken, "switch.cudnn_preferred", "component cudnn absent"));
}

TEST_CASE("AMD GPUs come from the KFD topology, with family, ROCm version and visibility", "[detect][rocm]") {
  fake_tree t;
  t.kfd_node(0, 0);      // CPU agent
  t.kfd_node(1, 90402);  // gfx942
  t.kfd_node(2, 90010);  // gfx90a
  t.write("opt/rocm/.info/version", "6.2.0-66\n");
  auto o = isolated(t);
  const auto d = detect_platform(o);
  CHECK(d.platform.vendor() == device_vendor::rocm);
  REQUIRE(d.platform.gfx());
  CHECK(d.platform.gfx()->name() == "gfx942");
  CHECK(source_contains(d, "rocm.gfx", "KFD topology node 1 gfx_target_version 90402"));
  CHECK(d.platform.find_component("rocm")->version == parse_component_version("6.2.0"));
  bool mi300 = false;
  for (const auto& f : d.report.facts) mi300 = mi300 || (f.name == "rocm.family" && f.value == "mi300");
  CHECK(mi300);

  o.device_index = 1;
  CHECK(detect_platform(o).platform.gfx()->name() == "gfx90a");
  o.device_index = 0;
  o.environment = std::map<std::string, std::string>{{"HIP_VISIBLE_DEVICES", "1"}};
  CHECK(detect_platform(o).platform.gfx()->name() == "gfx90a");
  o.environment = std::map<std::string, std::string>{{"ROCM_PATH", t.path("rocm-7")}};
  t.write("rocm-7/.info/version", "7.0.1\n");
  CHECK(detect_platform(o).platform.find_component("rocm")->version == parse_component_version("7.0.1"));
  o.environment = std::map<std::string, std::string>{{"ROCR_VISIBLE_DEVICES", ""}};
  const auto hidden = detect_platform(o);
  CHECK(hidden.platform.vendor() == device_vendor::cpu);
  // Hidden devices are hidden, not an index out of range (issue 22).
  CHECK(source_contains(hidden, "rocm.visible_devices", "ROCR_VISIBLE_DEVICES='' hides every device"));
  CHECK_FALSE(source_contains(hidden, "rocm.device", "out of range"));
  CHECK(source_contains(hidden, "gpu", "none visible: environment ROCR_VISIBLE_DEVICES='' hides every device"));
  o.environment = std::map<std::string, std::string>{{"HIP_VISIBLE_DEVICES", "-1"}};
  CHECK(source_contains(detect_platform(o), "gpu", "none visible: environment HIP_VISIBLE_DEVICES='-1'"));
  // An index past the visible devices is still an index error.
  o.environment = std::map<std::string, std::string>{{"HIP_VISIBLE_DEVICES", "1"}};
  o.device_index = 1;
  CHECK(source_contains(detect_platform(o), "gpu", "none at the requested index: device index 1 is out of range"));
}

TEST_CASE("Detection never reads a FIFO, device or directory where it expects a file", "[detect][fifo]") {
  // A regression blocks in open(2) forever: the alarm turns that into a failure (SIGALRM kills the run).
  ::alarm(60);
  fake_tree t;
  const auto fifo = [&](const std::string& rel) {
    fs::create_directories(fs::path(t.path(rel)).parent_path());
    REQUIRE(::mkfifo(t.path(rel).c_str(), 0600) == 0);
  };
  fifo("proc/cpuinfo");
  fifo("sys/class/kfd/kfd/topology/nodes/0/properties");
  fifo("opt/rocm/.info/version");
  fifo("torch_lib/libcudnn.so.9");
  auto o = isolated(t);
  o.library_dirs = {t.path("torch_lib")};
  const auto d = detect_platform(o);
  CHECK(d.platform.vendor() == device_vendor::cpu);
  CHECK(source_contains(d, "cpu.flags", "cpuinfo is a FIFO, not a regular file"));
  CHECK(source_contains(d, "rocm.kfd", "properties is a FIFO, not a regular file"));
  CHECK(source_contains(d, "cudnn.version", "libcudnn.so.9 is a FIFO, not a regular file"));

  // The ROCm version file is read once a GPU is found.
  fs::remove(t.path("sys/class/kfd/kfd/topology/nodes/0/properties"));
  t.kfd_node(0, 90402);
  const auto rocm = detect_platform(o);
  CHECK(rocm.platform.vendor() == device_vendor::rocm);
  CHECK(source_contains(rocm, "rocm.version", ".info/version is a FIFO, not a regular file"));
  CHECK_FALSE(rocm.platform.has_component("rocm"));

  // A directory where cpuinfo should be, and a FIFO as the CUDA driver named by path.
  fs::remove(t.path("proc/cpuinfo"));
  fs::create_directories(t.path("proc/cpuinfo"));
  fifo("drv/libcuda.so.1");
  o.cuda_driver_libraries = {t.path("drv/libcuda.so.1")};
  const auto dir = detect_platform(o);
  CHECK(source_contains(dir, "cpu.flags", "cpuinfo is a directory"));
  CHECK(source_contains(dir, "cuda.driver", "libcuda.so.1 is a FIFO, not a regular file"));
  ::alarm(0);
}

TEST_CASE("vLLM's AITER switches become components only with the aiter package", "[detect][rocm][switches]") {
  fake_tree t;
  t.kfd_node(0, 90402);
  auto o = isolated(t);
  o.environment = std::map<std::string, std::string>{{"VLLM_ROCM_USE_AITER", "1"}};
  const auto without = detect_platform(o);
  CHECK_FALSE(without.platform.has_component("aiter_enabled"));
  CHECK(source_contains(without, "switch.aiter_enabled", "component aiter absent"));

  o.extra_components = {component{"aiter", parse_component_version("0.1.5")}};
  const auto with = detect_platform(o);
  CHECK(with.platform.has_component("aiter_enabled"));
  CHECK(with.platform.has_component("aiter_mha"));
  CHECK(with.platform.has_component("aiter_mla"));
  CHECK(source_contains(with, "switch.aiter_mha", "environment VLLM_ROCM_USE_AITER=1"));
  CHECK(source_contains(with, "switch.aiter_mha", "VLLM_ROCM_USE_AITER_MHA unset (default true)"));

  o.environment = std::map<std::string, std::string>{{"VLLM_ROCM_USE_AITER", "True"}, {"VLLM_ROCM_USE_AITER_MHA", "0"}};
  const auto no_mha = detect_platform(o);
  CHECK(no_mha.platform.has_component("aiter_enabled"));
  CHECK_FALSE(no_mha.platform.has_component("aiter_mha"));
  CHECK(no_mha.platform.has_component("aiter_mla"));

  o.environment = std::map<std::string, std::string>{{"VLLM_ROCM_USE_AITER", "yes"}};  // vLLM accepts 1/true only
  CHECK_FALSE(detect_platform(o).platform.has_component("aiter_enabled"));
}

TEST_CASE("A malformed KFD entry is a fact, not a crash", "[detect][rocm][broken]") {
  fake_tree t;
  t.kfd_node(0, 0);
  t.write("sys/class/kfd/kfd/topology/nodes/1/properties", "gfx_target_version 999999\n");
  t.write("sys/class/kfd/kfd/topology/nodes/2/properties", "gfx_target_version banana\n");
  const auto d = detect_platform(isolated(t));
  CHECK(d.platform.vendor() == device_vendor::cpu);
  CHECK(source_contains(d, "rocm.gfx", "gfx_target_version 999999 is no known gfx target"));
  CHECK(source_contains(d, "rocm.kfd", "CPU agents only"));
}

TEST_CASE("The built-in switch table parses; a malformed one is refused with its pointer", "[detect][switches]") {
  const auto table = parse_switch_table(builtin_switch_table());
  std::vector<std::string> names;
  for (const auto& s : table) names.push_back(s.component);
  CHECK(names ==
        std::vector<std::string>{"aiter_enabled", "aiter_mha", "aiter_mla", "sglang_use_aiter", "cudnn_preferred"});

  const auto fails = [](const std::string& text) {
    try {
      (void)parse_switch_table(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string head = R"({"format": "attnsel-switches", "version": 1, "switches": )";
  CHECK(fails("{").find("malformed JSON") != std::string::npos);
  CHECK(fails(R"({"format": "x", "version": 1, "switches": []})") ==
        "switch table: /format: expected \"attnsel-switches\", got the string \"x\"");
  CHECK(fails(head + R"([{"component": "A"}]})") ==
        "switch table: /switches/0/component: expected a lower_snake component name, got the string \"A\"");
  CHECK(fails(head + R"([{"component": "a", "env": [{"name": "X"}]}]})") ==
        "switch table: /switches/0/env/0: missing required key \"true_values\"");
  CHECK(fails(head + R"([{"component": "a", "requires": [{"component": "b", "above": "x"}]}]})") ==
        "switch table: /switches/0/requires/0/above: expected a dotted numeric version, got the string \"x\"");
  CHECK(fails(head + R"([{"component": "a", "colour": 1}]})") ==
        "switch table: /switches/0/colour: unknown key \"colour\"; expected one of: component, engine, vendor, "
        "capabilities, env, requires, source, note");
  // The one JSON reader's typed reads, as catalogs get them (issue 18).
  CHECK(fails(R"({"format": "attnsel-switches", "version": 2, "switches": []})") ==
        "switch table: /version: expected an integer in [1, 1], got 2");
  CHECK(fails(head + R"([{"component": "a", "vendor": "nv"}]})") ==
        "switch table: /switches/0/vendor: expected one of cuda, rocm, xpu, cpu, tpu, got the string \"nv\"");
  CHECK(fails(head + R"([{"component": "a", "capabilities": ["sm_90"]}]})") ==
        "switch table: /switches/0/capabilities/0: expected a compute capability \"major.minor\" such as \"9.0\", "
        "got the string \"sm_90\"");
  CHECK(fails(head + R"([{"component": "a", "env": [{"name": "X", "true_values": ["1"], "want": 1}]}]})") ==
        "switch table: /switches/0/env/0/want: expected true or false, got 1");
  CHECK(fails(head + R"([{"component": "a", "env": [{"name": "X", "true_values": []}]}]})") ==
        "switch table: /switches/0/env/0/true_values: expected a non-empty array of strings, got an array");
  // Repeated keys are refused as the catalog loader refuses them (issue 22), at the second occurrence.
  CHECK(fails(R"({"format": "attnsel-switches", "format": "attnsel-switches", "version": 1, "switches": []})") ==
        "switch table: /format: repeated key \"format\"; every key may appear once per object");
  CHECK(fails(head + R"([{"component": "a"}, {"component": "b", "env": [{"name": "X", "name": "Y",
        "true_values": ["1"]}]}]})") ==
        "switch table: /switches/1/env/0/name: repeated key \"name\"; every key may "
        "appear once per object");

  // Through detect_platform the broken table is a fact and nothing else changes.
  fake_tree t;
  auto o = isolated(t);
  o.switch_table = "[1]";
  const auto d = detect_platform(o);
  CHECK(d.platform.vendor() == device_vendor::cpu);
  CHECK(source_contains(d, "switches", "switch table: /: expected an object"));
}

TEST_CASE("Caller components are added before the switches; bad names are reported", "[detect]") {
  fake_tree t;
  auto o = isolated(t);
  o.extra_components = {component{"flashinfer", parse_component_version("0.2.5")}, component{"Bad Name", std::nullopt}};
  const auto d = detect_platform(o);
  CHECK(d.platform.find_component("flashinfer")->version == parse_component_version("0.2.5"));
  CHECK(d.report.find("component.flashinfer")->source == "caller");
  CHECK(source_contains(d, "component.Bad Name", "not a lower_snake name"));
}
