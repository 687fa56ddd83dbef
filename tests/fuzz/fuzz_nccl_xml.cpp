// A NCCL topology XML (NCCL_TOPO_FILE) topology file, loaded as the plugin's topology= file is, then bound.
#include "fuzz_input.hpp"
#include "topology_file.hpp"

#include "gpudirect/topology_sources.hpp"

#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 256 * 1024) return 0;  // real files are tens of kB; bigger only slows the search
  try {
    gpudirect::fuzz::plan_and_bind_every_gpu(gpudirect::load_nccl_topology_xml(gpudirect::fuzz::topology_file_with(data, size)));
  } catch (const gpudirect::TopologyError&) {
  }
  return 0;
}
