// Slurm's GPU variables as a task sees them. Input: byte 0 = GPUs on the node (0-15), byte 1 =
// local rank, byte 2 = tasks on the node, byte 3 = SLURM_GPUS_ON_NODE; then lines:
// SLURM_STEP_GPUS (or SLURM_JOB_GPUS), CUDA_VISIBLE_DEVICES, the step's SLURM_STEP_GPUS on the
// node as slurmstepd had it (step_gpus_on_node; absent: ""). UUIDs go through gpu_uuids_to_indices
// with a resolver that knows GPU-0..GPU-7 and their MIG slices, as plan_task does with NVML.
#include "fuzz_input.hpp"

#include "gpudirect/gpu_selection.hpp"
#include "gpudirect/gpu_uuid.hpp"

#include <stdexcept>

namespace {

// GPU-<n>... and MIG-<n>... live on bus n (0-7); anything else is unknown, like NVML would say.
class TableResolver final : public gpudirect::GpuUuidResolver {
 public:
  gpudirect::PciAddress parent_bus_id(const std::string& uuid) override {
    if (uuid.size() < 5 || uuid[4] < '0' || uuid[4] > '7') throw gpudirect::GpuUuidError("no GPU with UUID " + uuid);
    gpudirect::PciAddress address;
    address.bus = static_cast<std::uint32_t>(uuid[4] - '0');
    return address;
  }
};

gpudirect::Topology node_with_gpus(int count) {
  gpudirect::Topology topology;
  topology.source = "fuzz";
  for (int i = 0; i < count && i < 8; ++i) {
    gpudirect::Gpu gpu;
    gpu.address.bus = static_cast<std::uint32_t>(i);
    topology.gpus.push_back(gpu);
  }
  return topology;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  gpudirect::GpuSelectionInput input;
  input.gpu_count = data[0] % 16;
  input.local_rank = data[1] % 16;
  input.local_size = data[2] % 16;
  input.gpus_on_node = data[3] % 16;
  const std::string text = gpudirect::fuzz::as_text(data + 4, size - 4);
  const auto newline = text.find('\n');
  input.slurm_step_gpus = text.substr(0, newline);
  const std::string rest = newline == std::string::npos ? "" : text.substr(newline + 1);
  const auto second = rest.find('\n');
  input.cuda_visible_devices = rest.substr(0, second);
  input.cuda_visible_devices_set = newline != std::string::npos;
  input.step_gpus_on_node = second == std::string::npos ? "" : rest.substr(second + 1);

  TableResolver resolver;
  const gpudirect::Topology topology = node_with_gpus(input.gpu_count);
  try {
    input.slurm_step_gpus = gpudirect::gpu_uuids_to_indices(input.slurm_step_gpus, "SLURM_STEP_GPUS", topology, resolver);
    input.cuda_visible_devices = gpudirect::gpu_uuids_to_indices(input.cuda_visible_devices, "CUDA_VISIBLE_DEVICES", topology, resolver);
    input.step_gpus_on_node = gpudirect::gpu_uuids_to_indices(input.step_gpus_on_node, "SLURM_STEP_GPUS", topology, resolver);
  } catch (const gpudirect::GpuUuidError&) {
    return 0;
  }
  try {
    for (const int gpu : gpudirect::select_task_gpus(input))
      if (gpu < 0 || gpu >= input.gpu_count) __builtin_trap();  // promised: every index is checked
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
