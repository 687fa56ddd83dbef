#include "health/threshold.hpp"

#include "number_text.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <stdexcept>
#include <utility>

namespace gpudirect::launcher::health {
namespace {

constexpr std::array<std::pair<std::string_view, double>, 4> kMachineTypes{
    {{"a3-highgpu-8g", 60}, {"a3-megagpu-8g", 150}, {"a3-ultragpu-8g", 250}, {"a4-highgpu-8g", 250}}};

}  // namespace

std::optional<double> machine_type_threshold(std::string_view machine_type) {
  for (const auto& [name, gbps] : kMachineTypes)
    if (name == machine_type) return gbps;
  return std::nullopt;
}

std::string known_machine_types() {
  std::string out;
  for (const auto& [name, gbps] : kMachineTypes)
    out += (out.empty() ? "" : ", ") + std::string(name) + " (" + short_number(gbps) + " GB/s)";
  return out;
}

double median_busbw(const std::vector<SweepRun>& runs) {
  std::vector<double> values;
  for (const SweepRun& run : runs)
    if (run.outcome == Outcome::measured) values.push_back(run.busbw);
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

Threshold choose_threshold(std::optional<double> given, const std::string& machine_type, double factor, const std::vector<SweepRun>& runs) {
  if (given) return {*given, "--threshold"};
  if (!machine_type.empty()) {
    const auto known = machine_type_threshold(machine_type);
    if (!known)
      throw std::invalid_argument("unknown --machine-type '" + machine_type + "': known are " + known_machine_types() +
                                  "; or give --threshold GBPS");
    return {*known, machine_type};
  }
  const double median = median_busbw(runs);
  return {factor * median, short_number(factor) + " x the median " + short_number(median) + " GB/s"};
}

}  // namespace gpudirect::launcher::health
