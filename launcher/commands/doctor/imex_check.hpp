// IMEX channels: on a node in an NVLink domain (GB200 NVL72: A4X), CUDA's multi-node NVLink memory
// calls need an IMEX channel device, /dev/nvidia-caps-imex-channels/channelN, visible to the task;
// without one they fail with an insufficient-permission error (NVIDIA's IMEX guide, "IMEX
// Channels"). Slurm's switch/nvidia_imex gives each job one channel (channel 0 stays reserved) and
// creates its device for every step; an admin can also create channel0 by hand for all jobs.
// The check applies to a job of more than one node (one node needs no IMEX) where the GPU driver
// registered the channel device class (nvidia-caps-imex-channels in /proc/devices), and looks at the names only (a stand-in directory
// in tests, where no character device can be made).
#pragma once

#include <string>
#include <vector>

namespace gpudirect::launcher {

inline constexpr const char* kImexChannelDir = "/dev/nvidia-caps-imex-channels";

struct ImexCheck {
  bool applies = false;               // a multi-node job on a node whose driver offers IMEX channels
  std::vector<std::string> channels;  // channelN entries the task sees, sorted
  std::string problem;                // one line naming the node, the cause and the fix; "" when fine
};

// `root` is "/" in production; a directory standing in for it in tests (proc/devices, dev/...).
// `job_nodes`: the job's node count (SLURM_JOB_NUM_NODES).
ImexCheck check_imex_channels(const std::string& root, const std::string& host, int job_nodes);

}  // namespace gpudirect::launcher
