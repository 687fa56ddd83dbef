#include "doctor/imex_check.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace gpudirect::launcher {
namespace {

std::string under(const std::string& root, const std::string& path) { return root == "/" ? path : root + path; }

// /proc/devices lists "<major> nvidia-caps-imex-channels" under "Character devices:" when the
// driver offers IMEX channels.
bool driver_has_imex(const std::string& root) {
  std::ifstream devices(under(root, "/proc/devices"));
  std::string major, name;
  for (std::string line; std::getline(devices, line);) {
    std::istringstream words(line);
    if (words >> major >> name && name == "nvidia-caps-imex-channels") return true;
  }
  return false;
}

bool is_channel_name(const std::string& name) {
  constexpr std::string_view prefix = "channel";
  return name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
         std::all_of(name.begin() + static_cast<long>(prefix.size()), name.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

}  // namespace

ImexCheck check_imex_channels(const std::string& root, const std::string& host, int job_nodes) {
  ImexCheck check;
  check.applies = job_nodes > 1 && driver_has_imex(root);
  if (!check.applies) return check;
  std::error_code error;
  for (std::filesystem::directory_iterator it(under(root, kImexChannelDir), error), end; !error && it != end; it.increment(error))
    if (is_channel_name(it->path().filename().string())) check.channels.push_back(it->path().filename().string());
  std::sort(check.channels.begin(), check.channels.end());
  if (check.channels.empty())
    check.problem =
        "node " + host + ": a " + std::to_string(job_nodes) +
        "-node job where the GPU driver offers IMEX channels (nvidia-caps-imex-channels in /proc/devices) but this task sees no " +
        std::string(kImexChannelDir) +
        "/channelN, so CUDA's multi-node NVLink (IMEX) memory calls fail with insufficient permission: set "
        "SwitchType=switch/nvidia_imex in slurm.conf (Slurm then creates each job's channel), or create channel0 on the "
        "node (mknod, NVIDIA's IMEX guide); in a container, bind " +
        std::string(kImexChannelDir) + " into it";
  return check;
}

}  // namespace gpudirect::launcher
