// GPU and MIG UUIDs to PCI bus ids through NVML, loaded with dlopen so that neither the build nor a
// node without NVIDIA's driver needs it. Only the handful of entry points used are declared here,
// with the ABI NVML has kept since R384 (nvmlPciInfo_t's layout included).
#include "gpudirect/gpu_uuid.hpp"

#include <dlfcn.h>

#include <mutex>

namespace gpudirect {
namespace {

using NvmlReturn = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
using NvmlDevice = struct NvmlDeviceOpaque*;

struct NvmlPciInfo {  // nvmlPciInfo_t
  char bus_id_legacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_subsystem_id;
  char bus_id[32];  // "00000000:04:00.0"
};

class NvmlResolver final : public GpuUuidResolver {
 public:
  explicit NvmlResolver(std::string library) : library_(std::move(library)) {}
  ~NvmlResolver() override {
    if (initialised_ && shutdown_) shutdown_();
    if (handle_) dlclose(handle_);
  }
  NvmlResolver(const NvmlResolver&) = delete;
  NvmlResolver& operator=(const NvmlResolver&) = delete;

  PciAddress parent_bus_id(const std::string& uuid) override {
    std::lock_guard lock(mutex_);
    load();
    NvmlDevice device = nullptr;
    check(get_handle_by_uuid_(uuid.c_str(), &device), "nvmlDeviceGetHandleByUUID(" + uuid + ")");
    unsigned int is_mig = 0;
    if (is_mig_handle_ && is_mig_handle_(device, &is_mig) == 0 && is_mig) {
      NvmlDevice parent = nullptr;
      check(parent_of_mig_(device, &parent), "nvmlDeviceGetDeviceHandleFromMigDeviceHandle(" + uuid + ")");
      device = parent;
    }
    NvmlPciInfo pci{};
    check(get_pci_info_(device, &pci), "nvmlDeviceGetPciInfo(" + uuid + ")");
    pci.bus_id[sizeof pci.bus_id - 1] = '\0';
    try {
      return PciAddress::parse(pci.bus_id);
    } catch (const std::invalid_argument&) {
      return PciAddress{pci.domain, pci.bus, pci.device, 0};
    }
  }

 private:
  template <typename F>
  F symbol(const char* name, bool required = true) {
    void* address = dlsym(handle_, name);
    if (!address && required)
      throw GpuUuidError("gpudirect: " + library_ + " has no " + name + ": update the NVIDIA driver (R470 or later)");
    return reinterpret_cast<F>(address);
  }

  void load() {
    if (initialised_) return;
    if (!load_error_.empty()) throw GpuUuidError(load_error_);
    handle_ = dlopen(library_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char* why = dlerror();
      load_error_ = "GPU UUIDs need NVML to find each GPU's PCI bus id, and " + library_ + " cannot be loaded (" +
                    (why ? why : "unknown error") +
                    "): install the NVIDIA driver's NVML library on the node (libnvidia-ml.so.1, e.g. the "
                    "libnvidia-ml1 or nvidia-utils package) or set CUDA_VISIBLE_DEVICES by index";
      throw GpuUuidError(load_error_);
    }
    try {
      using Init = NvmlReturn (*)();
      const auto init = symbol<Init>("nvmlInit_v2");
      shutdown_ = symbol<NvmlReturn (*)()>("nvmlShutdown");
      error_string_ = symbol<const char* (*)(NvmlReturn)>("nvmlErrorString", false);
      get_handle_by_uuid_ = symbol<NvmlReturn (*)(const char*, NvmlDevice*)>("nvmlDeviceGetHandleByUUID");
      get_pci_info_ = symbol<NvmlReturn (*)(NvmlDevice, NvmlPciInfo*)>("nvmlDeviceGetPciInfo_v3", false);
      if (!get_pci_info_) get_pci_info_ = symbol<NvmlReturn (*)(NvmlDevice, NvmlPciInfo*)>("nvmlDeviceGetPciInfo_v2");
      is_mig_handle_ = symbol<NvmlReturn (*)(NvmlDevice, unsigned int*)>("nvmlDeviceIsMigDeviceHandle", false);
      parent_of_mig_ = symbol<NvmlReturn (*)(NvmlDevice, NvmlDevice*)>("nvmlDeviceGetDeviceHandleFromMigDeviceHandle", false);
      check(init(), "nvmlInit");
    } catch (const GpuUuidError& e) {
      load_error_ = e.what();
      throw;
    }
    initialised_ = true;
  }

  void check(NvmlReturn rc, const std::string& call) const {
    if (rc == 0) return;
    const char* text = error_string_ ? error_string_(rc) : nullptr;
    throw GpuUuidError(call + " failed: " + (text ? text : "NVML error " + std::to_string(rc)) +
                       " (is the UUID one of this node's GPUs or MIG slices? nvidia-smi -L lists them)");
  }

  std::string library_;
  std::mutex mutex_;
  void* handle_ = nullptr;
  bool initialised_ = false;
  std::string load_error_;
  NvmlReturn (*shutdown_)() = nullptr;
  const char* (*error_string_)(NvmlReturn) = nullptr;
  NvmlReturn (*get_handle_by_uuid_)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*get_pci_info_)(NvmlDevice, NvmlPciInfo*) = nullptr;
  NvmlReturn (*is_mig_handle_)(NvmlDevice, unsigned int*) = nullptr;
  NvmlReturn (*parent_of_mig_)(NvmlDevice, NvmlDevice*) = nullptr;
};

}  // namespace

std::unique_ptr<GpuUuidResolver> make_nvml_resolver(std::string library) { return std::make_unique<NvmlResolver>(std::move(library)); }

GpuUuidResolver& nvml_resolver() {
  static const std::unique_ptr<GpuUuidResolver> resolver = make_nvml_resolver();
  return *resolver;
}

}  // namespace gpudirect
