#include "train/cuda/device_peak.hpp"

namespace gpudirect::train::cuda {

double dense_bf16_peak_flops(std::string_view name, int major, int minor, int sms, long clock_khz) {
  const auto has = [&](std::string_view part) { return name.find(part) != std::string_view::npos; };
  if (has("H200")) return has("NVL") ? 835e12 : 989e12;
  if (has("H100")) {
    if (has("NVL")) return 835e12;
    if (has("PCIe")) return 756e12;
    return 989e12;  // "NVIDIA H100 80GB HBM3": SXM5
  }
  if (has("A100")) return 312e12;
  double per_sm_per_clock = 0;
  if (major == 8 && minor == 0) per_sm_per_clock = 2048;
  if (major == 9 && minor == 0) per_sm_per_clock = 4096;
  if (per_sm_per_clock == 0 || sms <= 0 || clock_khz <= 0) return 0;
  return per_sm_per_clock * sms * static_cast<double>(clock_khz) * 1e3;
}

}  // namespace gpudirect::train::cuda
