// SLURM_STEP_TASKS_PER_NODE / SLURM_TASKS_PER_NODE: "8(x2)", "3,1". The first byte picks the node.
#include "fuzz_input.hpp"

#include "gpudirect/slurm_tasks.hpp"

#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int node = data[0] == 0xff ? -1 : data[0] * 16;
  try {
    (void)gpudirect::tasks_on_node(gpudirect::fuzz::as_text(data + 1, size - 1), node);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
