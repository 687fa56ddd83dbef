#include "gpudirect/gpu_selection.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace gpudirect {

std::vector<int> parse_index_list(const std::string& text, const std::string& what) {
  std::vector<int> out;
  if (text.empty()) return out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    if (item.starts_with("GPU-") || item.starts_with("MIG-"))
      throw std::invalid_argument(what + "=" + text + " uses GPU UUIDs, which are not supported: let Slurm set "
                                  "CUDA_VISIBLE_DEVICES by index");
    int value = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc{} || ptr != item.data() + item.size() || value < 0)
      throw std::invalid_argument(what + "=" + text + " is not a comma-separated list of GPU indices");
    out.push_back(value);
    start = comma + 1;
  }
  return out;
}

namespace {

std::vector<int> split_by_rank(const std::vector<int>& gpus, int local_rank, int local_size) {
  if (gpus.empty()) return {};
  const auto n = static_cast<int>(gpus.size());
  if (local_size <= 0 || local_rank < 0 || local_rank >= local_size) local_size = std::max(local_size, local_rank + 1);
  if (local_size > n) return {gpus[static_cast<std::size_t>(local_rank % n)]};
  const int first = local_rank * n / local_size;
  const int last = (local_rank + 1) * n / local_size;
  return std::vector<int>(gpus.begin() + first, gpus.begin() + last);
}

}  // namespace

std::vector<int> select_task_gpus(const GpuSelectionInput& input) {
  if (input.gpu_count <= 0) return {};
  const std::vector<int> step = parse_index_list(input.slurm_step_gpus, "SLURM_STEP_GPUS");
  std::vector<int> chosen;
  if (input.cuda_visible_devices_set) {
    const std::vector<int> visible = parse_index_list(input.cuda_visible_devices, "CUDA_VISIBLE_DEVICES");
    const bool all_global = std::all_of(visible.begin(), visible.end(), [&](int v) {
      return std::find(step.begin(), step.end(), v) != step.end();
    });
    if (step.empty() || all_global) {
      chosen = visible;
    } else {
      for (int v : visible) {
        if (static_cast<std::size_t>(v) >= step.size())
          throw std::invalid_argument("CUDA_VISIBLE_DEVICES=" + input.cuda_visible_devices +
                                      " does not match SLURM_STEP_GPUS=" + input.slurm_step_gpus);
        chosen.push_back(step[static_cast<std::size_t>(v)]);
      }
    }
    // Every task sees all of the node's GPUs (--gpus-per-node): each takes its local rank's share.
    if (input.local_size > 1 && input.gpus_on_node > 0 && static_cast<int>(chosen.size()) == input.gpus_on_node)
      chosen = split_by_rank(chosen, input.local_rank, input.local_size);
  } else if (!step.empty()) {
    chosen = split_by_rank(step, input.local_rank, input.local_size);
  } else {
    std::vector<int> all(static_cast<std::size_t>(input.gpu_count));
    for (int i = 0; i < input.gpu_count; ++i) all[static_cast<std::size_t>(i)] = i;
    chosen = split_by_rank(all, input.local_rank, input.local_size);
  }
  for (int g : chosen)
    if (g >= input.gpu_count)
      throw std::invalid_argument("GPU " + std::to_string(g) + " from Slurm's variables is not in this node's topology (" +
                                  std::to_string(input.gpu_count) + " GPUs): check gres.conf against topology=");
  return chosen;
}

}  // namespace gpudirect
