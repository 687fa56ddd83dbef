#include "check_node/expectations.hpp"

#include "gpudirect/text.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace gpudirect::launcher::check_node {
namespace {

constexpr const char* kKeys =
    "mode, gpu_count, gpu_model, gpu_pcie_generation, gpu_pcie_width, nvlink_links, data_nics, data_nic_mtu, data_nic_speed_mbps, "
    "rdma_devices, numa_nodes, aperture_devices";

std::optional<int> number(const std::string& value, const std::string& where, int max) {
  try {
    return parse_integer<int>(value, where, 0, max);
  } catch (const std::invalid_argument& e) {
    throw ExpectationError(e.what());
  }
}

}  // namespace

Expectations parse_expectations(const std::string& text, const std::string& machine_type, const std::string& origin) {
  Expectations out;
  out.machine_type = machine_type;
  out.origin = origin;
  std::istringstream lines(text);
  std::string raw;
  int line_number = 0;
  std::set<std::string> seen;
  while (std::getline(lines, raw)) {
    ++line_number;
    const std::string where = origin + " line " + std::to_string(line_number);
    std::string_view line = raw;
    if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    const auto equals = line.find('=');
    if (equals == std::string_view::npos) throw ExpectationError(where + ": expected KEY=VALUE, got '" + quote_bounded(line) + "'");
    const std::string key(trim(line.substr(0, equals)));
    const std::string value(trim(line.substr(equals + 1)));
    if (!seen.insert(key).second) throw ExpectationError(where + ": " + key + " is given twice");
    if (value == "unknown") continue;
    const std::string field = where + ": " + key;
    if (key == "mode") {
      if (value != "tcpxo" && value != "tcpx" && value != "gib" && value != "rdma")
        throw ExpectationError(field + ": expected tcpxo, tcpx, gib or rdma, got '" + quote_bounded(value) + "'");
      out.mode = value;
    } else if (key == "gpu_count") {
      out.gpu_count = number(value, field, 64);
    } else if (key == "gpu_model") {
      out.gpu_model = value;
    } else if (key == "gpu_pcie_generation") {
      out.gpu_pcie_generation = number(value, field, 10);
    } else if (key == "gpu_pcie_width") {
      out.gpu_pcie_width = number(value, field, 32);
    } else if (key == "nvlink_links") {
      out.nvlink_links = number(value, field, 64);
    } else if (key == "data_nics") {
      for (const std::string_view name : split(value, ','))
        if (!trim(name).empty()) out.data_nics.emplace_back(trim(name));
    } else if (key == "data_nic_mtu") {
      out.data_nic_mtu = number(value, field, 65536);
    } else if (key == "data_nic_speed_mbps") {
      out.data_nic_speed_mbps = number(value, field, 10000000);
    } else if (key == "rdma_devices") {
      out.rdma_devices = number(value, field, 64);
    } else if (key == "numa_nodes") {
      out.numa_nodes = number(value, field, 1024);
    } else if (key == "aperture_devices") {
      out.aperture_devices = value;
    } else {
      throw ExpectationError(where + ": unknown key '" + quote_bounded(key) + "' (known: " + kKeys + ")");
    }
  }
  return out;
}

std::vector<std::string> known_machine_types(const std::vector<std::string>& dirs) {
  std::set<std::string> names;
  for (const std::string& dir : dirs) {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(dir, error))
      if (entry.path().extension() == ".conf") names.insert(entry.path().stem().string());
  }
  return {names.begin(), names.end()};
}

Expectations load_expectations(const std::string& machine_type, const std::vector<std::string>& dirs) {
  if (machine_type.empty() || machine_type.find('/') != std::string::npos || machine_type[0] == '.')
    throw ExpectationError("machine type '" + quote_bounded(machine_type) + "' is not a plain name (e.g. a3-megagpu-8g)");
  for (const std::string& dir : dirs) {
    const std::string path = dir + "/" + machine_type + ".conf";
    std::ifstream file(path);
    if (!file) continue;
    std::ostringstream text;
    text << file.rdbuf();
    return parse_expectations(text.str(), machine_type, path);
  }
  const auto known = known_machine_types(dirs);
  throw ExpectationError("no expectations for machine type '" + machine_type + "' (looked for " + machine_type + ".conf in " +
                         join(dirs, ", ") + "; known: " + (known.empty() ? std::string("none") : join(known, ", ")) +
                         "): give --expectations-dir DIR holding " + machine_type + ".conf");
}

std::string installed_expectations_dir() { return GPUDIRECT_DEFAULT_EXPECTATIONS_DIR; }

}  // namespace gpudirect::launcher::check_node
