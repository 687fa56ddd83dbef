// A NCCL topology XML (NCCL_TOPO_FILE) topology file, loaded as the plugin's topology= file is, then bound.
#include "fuzz_input.hpp"
#include "topology_file.hpp"

#include "gpudirect/binding.hpp"
#include "gpudirect/topology_sources.hpp"

#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 256 * 1024) return 0;  // real files are tens of kB; bigger only slows the search
  try {
    const gpudirect::Topology topology = gpudirect::load_nccl_topology_xml(gpudirect::fuzz::topology_file_with(data, size));
    // What the plugin does next: plan the node, bind every GPU alone and all GPUs together.
    const gpudirect::NodePlan plan = gpudirect::plan_node(topology);
    std::vector<int> all;
    for (int gpu = 0; gpu < static_cast<int>(topology.gpus.size()); ++gpu) {
      (void)gpudirect::bind_task(topology, plan, {gpu}, topology.all_cpus);
      all.push_back(gpu);
    }
    (void)gpudirect::bind_task(topology, plan, all, {});
  } catch (const gpudirect::TopologyError&) {
  }
  return 0;
}
