// GPU-/MIG- UUIDs in CUDA_VISIBLE_DEVICES or Slurm's GPU variables (Slurm with AutoDetect=nvml and
// MIG, GKE's device plugin) name a GPU or a MIG slice. Binding needs the (parent) GPU's PCI bus id:
// a slice gets its parent GPU's NICs and CPUs, and two slices of one GPU share them.
#pragma once

#include "gpudirect/pci_address.hpp"
#include "gpudirect/topology.hpp"

#include <memory>
#include <stdexcept>
#include <string>

namespace gpudirect {

class GpuUuidError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Finds the PCI bus id of a GPU, or of the GPU a MIG slice lives on. Throws GpuUuidError.
class GpuUuidResolver {
 public:
  virtual ~GpuUuidResolver() = default;
  virtual PciAddress parent_bus_id(const std::string& uuid) = 0;
};

// NVML through dlopen(library) (no build dependency), loaded and initialised on the first lookup.
// Without the library every lookup throws a GpuUuidError that names the fix.
std::unique_ptr<GpuUuidResolver> make_nvml_resolver(std::string library = "libnvidia-ml.so.1");

// The process's NVML resolver (created on first use).
GpuUuidResolver& nvml_resolver();

bool is_gpu_uuid(const std::string& item);  // "GPU-..." or "MIG-..."

// "GPU-a,MIG-b,3" -> "0,2,3": each UUID replaced by the index (in Topology::gpus) of its (parent) GPU,
// repeated parents dropped. Lists without UUIDs come back unchanged. `what` names the variable
// for messages. Throws GpuUuidError when a UUID cannot be resolved or its GPU is not in `topology`.
std::string gpu_uuids_to_indices(const std::string& list, const std::string& what, const Topology& topology, GpuUuidResolver& resolver);

}  // namespace gpudirect
