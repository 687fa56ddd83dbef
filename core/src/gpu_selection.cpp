#include "gpudirect/gpu_selection.hpp"

#include "gpudirect/text.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string_view>

namespace gpudirect {
namespace {

// Contiguous blocks when GPUs >= tasks (the last n % tasks ranks get one more), else round robin.
std::vector<int> share_of_rank(const std::vector<int>& gpus, int local_rank, int local_size) {
  if (gpus.empty()) return {};
  const int n = static_cast<int>(gpus.size());
  if (local_size > n) return {gpus[static_cast<std::size_t>(local_rank % n)]};
  const int first = local_rank * n / local_size;
  const int last = (local_rank + 1) * n / local_size;
  return std::vector<int>(gpus.begin() + first, gpus.begin() + last);
}

}  // namespace

std::vector<int> parse_index_list(const std::string& text, const std::string& what) {
  std::vector<int> out;
  if (trim(text).empty()) return out;
  for (const std::string_view field : split(text, ',')) {
    const std::string_view item = trim(field);
    if (item.starts_with("GPU-") || item.starts_with("MIG-"))
      throw std::invalid_argument(what + "=" + quote_bounded(text) +
                                  " names GPUs by UUID, which is not supported: "
                                  "set CUDA_VISIBLE_DEVICES by index (Slurm does so by default)");
    const auto parsed = try_parse_integer<int>(item, 0, 1 << 20);
    if (!parsed)
      throw std::invalid_argument(what + "=" + quote_bounded(text) + " is not a comma-separated list of GPU indices (item '" +
                                  quote_bounded(item) + "')");
    const int value = *parsed;
    if (std::find(out.begin(), out.end(), value) != out.end())
      throw std::invalid_argument(what + "=" + quote_bounded(text) + " lists GPU " + std::to_string(value) + " twice");
    out.push_back(value);
  }
  return out;
}

std::vector<int> select_task_gpus(const GpuSelectionInput& input) {
  if (input.gpu_count < 0) throw std::invalid_argument("GPU count " + std::to_string(input.gpu_count) + " is negative");
  if (input.local_size < 1 || input.local_rank < 0 || input.local_rank >= input.local_size)
    throw std::invalid_argument("local rank " + std::to_string(input.local_rank) + " of " + std::to_string(input.local_size) +
                                " tasks on this node is impossible: check SLURM_LOCALID and the step's tasks per node");
  if (input.gpu_count == 0) return {};
  std::vector<int> step = parse_index_list(input.slurm_step_gpus, "SLURM_STEP_GPUS");
  const std::vector<int> step_on_node = parse_index_list(input.step_gpus_on_node, "SLURM_STEP_GPUS (the step's, on this node)");
  const std::string visible_text(trim(input.cuda_visible_devices));
  if (visible_text == "NoDevFiles") return {};
  // Slurm 22.05 under ConstrainDevices narrows every task's list to the step's first k GPUs
  // (gpu_selection.hpp, rule 1): a task of local rank r > 0 takes the r-th block of k instead.
  if (const std::size_t k = step.size(), r = static_cast<std::size_t>(input.local_rank);
      k > 0 && r > 0 && step_on_node.size() >= (r + 1) * k && std::equal(step.begin(), step.end(), step_on_node.begin()))
    step.assign(step_on_node.begin() + static_cast<std::ptrdiff_t>(r * k), step_on_node.begin() + static_cast<std::ptrdiff_t>((r + 1) * k));

  std::vector<int> chosen;
  if (!visible_text.empty()) {
    const std::vector<int> visible = parse_index_list(visible_text, "CUDA_VISIBLE_DEVICES");
    const bool all_in_step =
        std::all_of(visible.begin(), visible.end(), [&](int v) { return std::find(step.begin(), step.end(), v) != step.end(); });
    if (step.empty() || all_in_step) {
      chosen = visible;
    } else {  // ConstrainDevices: 0..k-1 within the step's GPUs
      for (int v : visible) {
        if (static_cast<std::size_t>(v) >= step.size())
          throw std::invalid_argument("CUDA_VISIBLE_DEVICES=" + input.cuda_visible_devices +
                                      " does not match SLURM_STEP_GPUS=" + input.slurm_step_gpus + ": GPU " + std::to_string(v) +
                                      " is neither one of the step's GPUs nor an index into them");
        chosen.push_back(step[static_cast<std::size_t>(v)]);
      }
    }
    // Every task sees all of the node's GPUs (--gpus-per-node): each takes its local rank's share.
    // Slurm 20.11 sets no SLURM_GPUS_ON_NODE: every one of the step's GPUs counts as all of them.
    const bool every_step_gpu =
        !step.empty() && chosen.size() == step.size() && std::is_permutation(chosen.begin(), chosen.end(), step.begin());
    const int on_node = input.gpus_on_node > 0 ? input.gpus_on_node : every_step_gpu ? static_cast<int>(step.size()) : 0;
    if (input.local_size > 1 && on_node > 0 && static_cast<int>(chosen.size()) == on_node) {
      std::sort(chosen.begin(), chosen.end());
      const std::size_t k = static_cast<std::size_t>(input.gpus_per_task), r = static_cast<std::size_t>(input.local_rank);
      if (input.gpus_on_node == 0 && k > 0 && (r + 1) * k <= chosen.size())
        chosen = std::vector<int>(chosen.begin() + static_cast<std::ptrdiff_t>(r * k),
                                  chosen.begin() + static_cast<std::ptrdiff_t>((r + 1) * k));
      else
        chosen = share_of_rank(chosen, input.local_rank, input.local_size);
    }
  } else if (!step.empty()) {
    std::vector<int> in_bus_order = step;
    std::sort(in_bus_order.begin(), in_bus_order.end());
    chosen = share_of_rank(in_bus_order, input.local_rank, input.local_size);
  } else if (!step_on_node.empty()) {
    std::vector<int> in_bus_order = step_on_node;
    std::sort(in_bus_order.begin(), in_bus_order.end());
    chosen = share_of_rank(in_bus_order, input.local_rank, input.local_size);
  } else {
    std::vector<int> all(static_cast<std::size_t>(input.gpu_count));
    std::iota(all.begin(), all.end(), 0);
    chosen = share_of_rank(all, input.local_rank, input.local_size);
  }
  for (int g : chosen)
    if (g >= input.gpu_count)
      throw std::invalid_argument("GPU " + std::to_string(g) + " from Slurm's variables is not in this node's topology (" +
                                  std::to_string(input.gpu_count) + " GPUs): check gres.conf against the node, or the topology= file");
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

}  // namespace gpudirect
