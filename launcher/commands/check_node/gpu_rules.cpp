#include "check_node/gpu_rules.hpp"

#include <string>

namespace gpudirect::launcher::check_node {
namespace {

std::string reset_fix(const GpuState& gpu) {
  return "drain the node, then reset the GPU (nvidia-smi -r -i " + std::to_string(gpu.index) +
         ") or reboot; if it comes back, repair the host";
}

std::string gpu_subject(const GpuState& gpu) {
  return "GPU " + std::to_string(gpu.index) + (gpu.bus_id.empty() ? "" : " (" + gpu.bus_id + ")");
}

Finding finding(Severity severity, Fault fault, std::string check, std::string subject, std::string what, std::string measured,
                std::string expected, std::string fix) {
  return {severity, fault, std::move(check), std::move(subject), std::move(what), std::move(measured), std::move(expected), std::move(fix)};
}

void judge_one(const GpuState& gpu, const Expectations& expected, std::vector<Finding>& out) {
  const std::string subject = gpu_subject(gpu);
  const auto hw = [&](std::string check, std::string what, std::string measured, std::string expect, std::string fix) {
    out.push_back(finding(Severity::fail, Fault::gpu_hardware, std::move(check), subject, std::move(what), std::move(measured),
                          std::move(expect), std::move(fix)));
  };
  if (!expected.gpu_model.empty() && gpu.name.find(expected.gpu_model) == std::string::npos)
    out.push_back(finding(Severity::fail, Fault::configuration, "gpu_model", subject, "model", "'" + gpu.name + "'",
                          "a " + expected.gpu_model + " (" + expected.machine_type + ")",
                          "check --machine-type: this node is another machine type, or its expectations file is wrong"));
  if (gpu.ecc_volatile_uncorrected.value_or(0) > 0)
    hw("gpu_ecc_volatile", "uncorrected ECC errors since the driver loaded", std::to_string(*gpu.ecc_volatile_uncorrected), "0",
       reset_fix(gpu));
  if (gpu.ecc_aggregate_uncorrected.value_or(0) > 0)
    out.push_back(finding(Severity::warn, Fault::gpu_hardware, "gpu_ecc_aggregate", subject, "uncorrected ECC errors over the GPU's life",
                          std::to_string(*gpu.ecc_aggregate_uncorrected), "0",
                          "watch it: a GPU whose count grows, or that has pending remaps, needs repair"));
  if (gpu.retired_pages_pending.value_or(false))
    hw("gpu_retired_pages_pending", "page retirement pending", "yes", "no",
       "drain the node and reset the GPU (nvidia-smi -r) or reboot, so the retirement takes effect");
  if (gpu.remap_failed.value_or(false))
    hw("gpu_row_remap_failed", "row remapping failed", "yes", "no",
       "repair the host: the GPU has no spare rows left (report it as faulty)");
  if (gpu.remap_pending.value_or(false))
    hw("gpu_row_remap_pending", "row remapping pending", "yes", "no",
       "drain the node and reset the GPU (nvidia-smi -r) or reboot, so the remapping takes effect");
  std::string down;
  int active = 0;
  for (const NvlinkState& link : gpu.nvlinks) {
    if (link.active)
      ++active;
    else
      down += (down.empty() ? "" : ",") + std::to_string(link.link);
    if (link.recovery > 0 || link.crc_data > 0)
      hw("gpu_nvlink_errors", "NVLink " + std::to_string(link.link) + " recovery/CRC data errors",
         std::to_string(link.recovery) + "/" + std::to_string(link.crc_data), "0/0", reset_fix(gpu));
    else if (link.replay > 0 || link.crc_flit > 0)
      out.push_back(finding(Severity::warn, Fault::gpu_hardware, "gpu_nvlink_replays", subject,
                            "NVLink " + std::to_string(link.link) + " replay/CRC flit errors",
                            std::to_string(link.replay) + "/" + std::to_string(link.crc_flit), "0/0",
                            "watch it: growing counts precede link failures (nvidia-smi nvlink -e)"));
  }
  if (!down.empty())
    hw("gpu_nvlink_down", "NVLink links down", down, "all up", reset_fix(gpu));
  else if (expected.nvlink_links && !gpu.nvlinks.empty() && active < *expected.nvlink_links)
    hw("gpu_nvlink_down", "active NVLink links", std::to_string(active), std::to_string(*expected.nvlink_links), reset_fix(gpu));
  if (gpu.throttle_reasons) {
    const unsigned long long r = *gpu.throttle_reasons;
    std::string held;
    if (r & kThrottleHwSlowdown) held += ",HW slowdown";
    if (r & kThrottleHwThermal) held += ",HW thermal slowdown";
    if (r & kThrottleHwPowerBrake) held += ",HW power brake";
    if (!held.empty())
      out.push_back(finding(Severity::fail, Fault::performance, "gpu_clocks_throttled", subject, "clocks held down by", held.substr(1),
                            "none",
                            "the GPU runs slow: check its cooling and power (nvidia-smi -q -d PERFORMANCE); repair the host if it stays"));
    else if (r & kThrottleSwThermal)
      out.push_back(finding(Severity::warn, Fault::performance, "gpu_clocks_throttled", subject, "clocks held down by",
                            "SW thermal slowdown", "none", "the GPU is hot: check its cooling (nvidia-smi -q -d TEMPERATURE)"));
  }
  if (gpu.pcie_width && gpu.pcie_max_width && *gpu.pcie_width < *gpu.pcie_max_width)
    out.push_back(finding(Severity::fail, Fault::performance, "gpu_pcie_width", subject, "PCIe link width",
                          "x" + std::to_string(*gpu.pcie_width), "x" + std::to_string(*gpu.pcie_max_width) + " (its maximum)",
                          "the link trained narrow: reboot; if it stays, repair the host"));
  if (expected.gpu_pcie_width && gpu.pcie_max_width && *gpu.pcie_max_width < static_cast<unsigned>(*expected.gpu_pcie_width))
    out.push_back(finding(Severity::fail, Fault::performance, "gpu_pcie_width", subject, "maximum PCIe link width",
                          "x" + std::to_string(*gpu.pcie_max_width), "x" + std::to_string(*expected.gpu_pcie_width),
                          "the slot or riser is narrower than this machine type has: repair the host"));
  // The current generation drops at idle to save power; only the generation the link can reach counts.
  if (expected.gpu_pcie_generation && gpu.pcie_max_generation &&
      *gpu.pcie_max_generation < static_cast<unsigned>(*expected.gpu_pcie_generation))
    out.push_back(finding(Severity::fail, Fault::performance, "gpu_pcie_generation", subject, "maximum PCIe generation",
                          "Gen" + std::to_string(*gpu.pcie_max_generation), "Gen" + std::to_string(*expected.gpu_pcie_generation),
                          "the link cannot reach its speed: reboot; if it stays, repair the host"));
  for (const std::string& error : gpu.errors)
    out.push_back(finding(Severity::warn, Fault::gpu_hardware, "gpu_nvml_error", subject, "NVML could not read", error, "",
                          "run nvidia-smi -q -i " + std::to_string(gpu.index) + " to see what the driver says"));
}

}  // namespace

std::vector<Finding> judge_gpus(const GpuProbe& probe, const Expectations& expected, std::optional<int> gres_gpus) {
  std::vector<Finding> out;
  const int wanted = expected.gpu_count.value_or(0);
  if (!probe.loaded) {
    if (wanted > 0 || gres_gpus.value_or(0) > 0)
      out.push_back(finding(Severity::fail, Fault::configuration, "gpu_nvml", "NVML", "cannot read the GPUs:", probe.error,
                            std::to_string(std::max(wanted, gres_gpus.value_or(0))) + " GPUs",
                            "install or load the NVIDIA driver (nvidia-smi must work), or give --nvml-library PATH"));
    return out;
  }
  const int found = static_cast<int>(probe.gpus.size());
  if (expected.gpu_count && found != wanted)
    out.push_back(finding(Severity::fail, found < wanted ? Fault::gpu_hardware : Fault::configuration, "gpu_count", "GPUs", "count (NVML)",
                          std::to_string(found), std::to_string(wanted) + " (" + expected.machine_type + ")",
                          found < wanted ? "a GPU is missing (fallen off the bus?): reboot; if it stays missing, repair the host"
                                         : "check --machine-type: this node is another machine type"));
  if (gres_gpus && *gres_gpus != found)
    out.push_back(finding(Severity::fail, found < *gres_gpus ? Fault::gpu_hardware : Fault::configuration, "gpu_gres", "GPUs",
                          "count (NVML) against Slurm's Gres", std::to_string(found), std::to_string(*gres_gpus),
                          found < *gres_gpus ? "a GPU Slurm hands out is missing: reboot; if it stays missing, repair the host"
                                             : "Slurm hands out fewer GPUs than the node has: fix Gres= in slurm.conf and gres.conf"));
  for (const GpuState& gpu : probe.gpus) judge_one(gpu, expected, out);
  return out;
}

}  // namespace gpudirect::launcher::check_node
