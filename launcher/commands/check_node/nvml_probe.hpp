// Reads every GPU's health through NVML, loaded with dlopen as the MIG resolver does (no build
// dependency; a node without the driver gets a GpuProbe that says so instead of a crash).
#pragma once

#include "check_node/gpu_state.hpp"

#include <string>

namespace gpudirect::launcher::check_node {

GpuProbe probe_gpus(const std::string& nvml_library = "libnvidia-ml.so.1");

}  // namespace gpudirect::launcher::check_node
