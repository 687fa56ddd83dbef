// Only the entry points used are declared here, with the signatures and constants of NVIDIA's
// nvml.h (R470 and later); nvml.h itself need not be installed.
#include "check_node/nvml_probe.hpp"

#include <dlfcn.h>

#include <cstring>

namespace gpudirect::launcher::check_node {
namespace {

using NvmlReturn = int;  // nvmlReturn_t: 0 success, 3 not supported
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr int kMemoryErrorUncorrected = 1;  // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
constexpr int kVolatileEcc = 0, kAggregateEcc = 1;
constexpr int kNvlinkReplay = 0, kNvlinkRecovery = 1, kNvlinkCrcFlit = 2, kNvlinkCrcData = 3;
constexpr unsigned kNvlinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS

struct NvmlPciInfo {  // nvmlPciInfo_t
  char bus_id_legacy[16];
  unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

class Nvml {
 public:
  explicit Nvml(const std::string& library) {
    handle_ = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char* why = ::dlerror();
      error_ = library + " cannot be loaded (" + (why ? why : "unknown error") + ")";
    }
  }
  ~Nvml() {
    if (initialised_)
      if (auto shutdown = symbol<NvmlReturn (*)()>("nvmlShutdown")) shutdown();
    if (handle_) ::dlclose(handle_);
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  template <typename F>
  F symbol(const char* name) const {
    return handle_ ? reinterpret_cast<F>(::dlsym(handle_, name)) : nullptr;
  }
  std::string text(NvmlReturn rc) const {
    const auto error_string = symbol<const char* (*)(NvmlReturn)>("nvmlErrorString");
    const char* text = error_string ? error_string(rc) : nullptr;
    return text ? text : "NVML error " + std::to_string(rc);
  }
  bool init() {
    if (!handle_) return false;
    const auto init = symbol<NvmlReturn (*)()>("nvmlInit_v2");
    if (!init) {
      error_ = "the NVML library has no nvmlInit_v2 (a driver older than R470?)";
      return false;
    }
    if (const NvmlReturn rc = init(); rc != 0) {
      error_ = "nvmlInit failed: " + text(rc);
      return false;
    }
    initialised_ = true;
    return true;
  }
  const std::string& error() const { return error_; }

 private:
  void* handle_ = nullptr;
  bool initialised_ = false;
  std::string error_;
};

// Calls an optional entry point: nullopt when it is missing or says "not supported"; any other
// failure is noted on the GPU.
template <typename F, typename... Args>
bool call(const Nvml& nvml, GpuState& gpu, const char* name, Args... args) {
  const auto f = nvml.symbol<F>(name);
  if (!f) return false;
  const NvmlReturn rc = f(args...);
  if (rc == 0) return true;
  if (rc != 3) gpu.errors.push_back(std::string(name) + ": " + nvml.text(rc));
  return false;
}

void read_gpu(const Nvml& nvml, NvmlDevice device, GpuState& gpu) {
  char name[96] = {};
  if (call<NvmlReturn (*)(NvmlDevice, char*, unsigned)>(nvml, gpu, "nvmlDeviceGetName", device, name, unsigned{sizeof name}))
    gpu.name = name;
  NvmlPciInfo pci{};
  if (call<NvmlReturn (*)(NvmlDevice, NvmlPciInfo*)>(nvml, gpu, "nvmlDeviceGetPciInfo_v3", device, &pci)) {
    pci.bus_id[sizeof pci.bus_id - 1] = '\0';
    gpu.bus_id = pci.bus_id;
  }
  using Ecc = NvmlReturn (*)(NvmlDevice, int, int, unsigned long long*);
  unsigned long long count = 0;
  if (call<Ecc>(nvml, gpu, "nvmlDeviceGetTotalEccErrors", device, kMemoryErrorUncorrected, kVolatileEcc, &count))
    gpu.ecc_volatile_uncorrected = count;
  if (call<Ecc>(nvml, gpu, "nvmlDeviceGetTotalEccErrors", device, kMemoryErrorUncorrected, kAggregateEcc, &count))
    gpu.ecc_aggregate_uncorrected = count;
  int pending = 0;  // nvmlEnableState_t
  if (call<NvmlReturn (*)(NvmlDevice, int*)>(nvml, gpu, "nvmlDeviceGetRetiredPagesPendingStatus", device, &pending))
    gpu.retired_pages_pending = pending != 0;
  unsigned corrected = 0, uncorrected = 0, remap_pending = 0, remap_failed = 0;
  if (call<NvmlReturn (*)(NvmlDevice, unsigned*, unsigned*, unsigned*, unsigned*)>(
          nvml, gpu, "nvmlDeviceGetRemappedRows", device, &corrected, &uncorrected, &remap_pending, &remap_failed)) {
    gpu.remap_pending = remap_pending != 0;
    gpu.remap_failed = remap_failed != 0;
  }
  const auto link_state = nvml.symbol<NvmlReturn (*)(NvmlDevice, unsigned, int*)>("nvmlDeviceGetNvLinkState");
  const auto link_errors = nvml.symbol<NvmlReturn (*)(NvmlDevice, unsigned, int, unsigned long long*)>("nvmlDeviceGetNvLinkErrorCounter");
  for (unsigned link = 0; link_state && link < kNvlinkMaxLinks; ++link) {
    int active = 0;
    if (link_state(device, link, &active) != 0) continue;  // no such link on this GPU
    NvlinkState state;
    state.link = static_cast<int>(link);
    state.active = active != 0;
    if (link_errors) {
      unsigned long long value = 0;
      if (link_errors(device, link, kNvlinkReplay, &value) == 0) state.replay = value;
      if (link_errors(device, link, kNvlinkRecovery, &value) == 0) state.recovery = value;
      if (link_errors(device, link, kNvlinkCrcFlit, &value) == 0) state.crc_flit = value;
      if (link_errors(device, link, kNvlinkCrcData, &value) == 0) state.crc_data = value;
    }
    gpu.nvlinks.push_back(state);
  }
  unsigned long long reasons = 0;
  using Reasons = NvmlReturn (*)(NvmlDevice, unsigned long long*);
  // Renamed "clocks event reasons" in CUDA 12.2's NVML; the old name stays exported.
  if (call<Reasons>(nvml, gpu, "nvmlDeviceGetCurrentClocksThrottleReasons", device, &reasons) ||
      call<Reasons>(nvml, gpu, "nvmlDeviceGetCurrentClocksEventReasons", device, &reasons))
    gpu.throttle_reasons = reasons;
  unsigned value = 0;
  using Link = NvmlReturn (*)(NvmlDevice, unsigned*);
  if (call<Link>(nvml, gpu, "nvmlDeviceGetMaxPcieLinkGeneration", device, &value)) gpu.pcie_max_generation = value;
  if (call<Link>(nvml, gpu, "nvmlDeviceGetCurrPcieLinkWidth", device, &value)) gpu.pcie_width = value;
  if (call<Link>(nvml, gpu, "nvmlDeviceGetMaxPcieLinkWidth", device, &value)) gpu.pcie_max_width = value;
}

}  // namespace

GpuProbe probe_gpus(const std::string& nvml_library) {
  GpuProbe probe;
  Nvml nvml(nvml_library);
  if (!nvml.init()) {
    probe.error = nvml.error();
    return probe;
  }
  probe.loaded = true;
  char version[96] = {};
  if (const auto f = nvml.symbol<NvmlReturn (*)(char*, unsigned)>("nvmlSystemGetDriverVersion"); f && f(version, sizeof version) == 0)
    probe.driver_version = version;
  int cuda = 0;
  if (const auto f = nvml.symbol<NvmlReturn (*)(int*)>("nvmlSystemGetCudaDriverVersion_v2"); f && f(&cuda) == 0)
    probe.cuda_driver_version = cuda;
  unsigned count = 0;
  const auto get_count = nvml.symbol<NvmlReturn (*)(unsigned*)>("nvmlDeviceGetCount_v2");
  const auto by_index = nvml.symbol<NvmlReturn (*)(unsigned, NvmlDevice*)>("nvmlDeviceGetHandleByIndex_v2");
  if (!get_count || !by_index) {
    probe.error = "the NVML library has no nvmlDeviceGetCount_v2 or nvmlDeviceGetHandleByIndex_v2";
    return probe;
  }
  if (const NvmlReturn rc = get_count(&count); rc != 0) {
    probe.error = "nvmlDeviceGetCount failed: " + nvml.text(rc);
    return probe;
  }
  for (unsigned i = 0; i < count; ++i) {
    GpuState gpu;
    gpu.index = i;
    NvmlDevice device = nullptr;
    if (const NvmlReturn rc = by_index(i, &device); rc != 0)
      gpu.errors.push_back("nvmlDeviceGetHandleByIndex(" + std::to_string(i) + "): " + nvml.text(rc));
    else
      read_gpu(nvml, device, gpu);
    probe.gpus.push_back(std::move(gpu));
  }
  return probe;
}

}  // namespace gpudirect::launcher::check_node
