#include "check_node/sysfs_probe.hpp"

#include "gpudirect/text.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace gpudirect::launcher::check_node {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> read_line(const fs::path& path) {
  std::ifstream file(path);
  std::string line;
  if (!file || !std::getline(file, line)) return std::nullopt;
  return std::string(trim(line));
}

std::optional<int> read_int(const fs::path& path) {
  const auto text = read_line(path);
  return text ? try_parse_integer<int>(*text, -1, 100000000) : std::nullopt;
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

SysfsView read_sysfs(const std::string& sysfs_root, const std::vector<std::string>& data_nics) {
  SysfsView view;
  const fs::path root(sysfs_root);
  for (const std::string& name : data_nics) {
    NicState nic;
    nic.name = name;
    const fs::path dir = root / "class/net" / name;
    std::error_code error;
    nic.present = fs::exists(dir, error);
    if (nic.present) {
      nic.operstate = read_line(dir / "operstate").value_or("unknown");
      if (const auto carrier = read_int(dir / "carrier")) nic.carrier = *carrier == 1;
      nic.mtu = read_int(dir / "mtu");
      if (const auto speed = read_int(dir / "speed"); speed && *speed > 0) nic.speed_mbps = speed;
    }
    view.data_nics.push_back(std::move(nic));
  }
  view.rdma_devices = entries(root / "class/infiniband");
  for (const std::string& device : view.rdma_devices)
    for (const std::string& port : entries(root / "class/infiniband" / device / "ports")) {
      // "4: ACTIVE" -> "ACTIVE"
      std::string state = read_line(root / "class/infiniband" / device / "ports" / port / "state").value_or("unreadable");
      if (const auto colon = state.find(':'); colon != std::string::npos) state = std::string(trim(state.substr(colon + 1)));
      view.rdma_ports.push_back({device, port, state});
    }
  std::error_code error;
  if (fs::is_directory(root / "devices/system/node", error)) {
    int count = 0;
    for (const std::string& name : entries(root / "devices/system/node"))
      if (name.size() > 4 && name.starts_with("node") && try_parse_integer<int>(name.substr(4), 0, 100000)) ++count;
    view.numa_nodes = count;
  }
  return view;
}

}  // namespace gpudirect::launcher::check_node
