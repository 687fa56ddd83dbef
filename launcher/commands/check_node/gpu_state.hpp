// What NVML says about each GPU of the node, as plain data: read by nvml_probe.cpp, judged by
// gpu_rules.cpp (so the rules are tested without NVML). An empty optional: NVML could not say
// (the GPU or driver does not support the query).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpudirect::launcher::check_node {

// NVML's clock throttle (event) reason bits that mean the hardware held the clocks down.
inline constexpr unsigned long long kThrottleHwSlowdown = 0x8, kThrottleSwThermal = 0x20, kThrottleHwThermal = 0x40,
                                    kThrottleHwPowerBrake = 0x80;

struct NvlinkState {
  int link = 0;
  bool active = false;
  unsigned long long replay = 0, recovery = 0, crc_flit = 0, crc_data = 0;  // NVML's DL error counters
};

struct GpuState {
  unsigned index = 0;
  std::string bus_id;  // "00000000:04:00.0"
  std::string name;    // "NVIDIA H100 80GB HBM3"
  std::optional<unsigned long long> ecc_volatile_uncorrected, ecc_aggregate_uncorrected;
  std::optional<bool> retired_pages_pending;
  std::optional<bool> remap_pending, remap_failed;
  std::vector<NvlinkState> nvlinks;  // the links NVML knows (supported ones)
  std::optional<unsigned long long> throttle_reasons;
  std::optional<unsigned> pcie_max_generation, pcie_width, pcie_max_width;
  std::vector<std::string> errors;  // NVML calls that failed for this GPU, with NVML's words
};

struct GpuProbe {
  bool loaded = false;  // NVML loaded and initialised
  std::string error;    // why not
  std::string driver_version;
  std::optional<int> cuda_driver_version;  // 12040 for CUDA 12.4
  std::vector<GpuState> gpus;
};

}  // namespace gpudirect::launcher::check_node
