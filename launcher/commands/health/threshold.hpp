// The bus bandwidth a pair must reach: given (--threshold), known for the machine type
// (--machine-type, from Google's cluster-health-scanner), or else relative to the sweep's median.
#pragma once

#include "health/sweep_run.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpudirect::launcher::health {

struct Threshold {
  double gbps = 0;
  std::string source;  // "--threshold", "a3-megagpu-8g", "0.7 x the median 3.1 GB/s"
};

// all_gather bus bandwidth between 2 nodes, GB/s (cluster-health-scanner's GKE NCCL check):
// a3-highgpu-8g 60, a3-megagpu-8g 150, a3-ultragpu-8g and a4-highgpu-8g 250. Empty when unknown.
std::optional<double> machine_type_threshold(std::string_view machine_type);

// "a3-highgpu-8g, a3-megagpu-8g, ..." for messages.
std::string known_machine_types();

// The median busbw of the measured runs (0 when none was measured).
double median_busbw(const std::vector<SweepRun>& runs);

// --threshold wins, then --machine-type, then `factor` x the median of the measured runs.
// Throws std::invalid_argument for an unknown machine type, naming the known ones.
Threshold choose_threshold(std::optional<double> given, const std::string& machine_type, double factor, const std::vector<SweepRun>& runs);

}  // namespace gpudirect::launcher::health
