// How long the plugin's per-step and per-task topology work takes, on every fixture:
//   load     reading the topology file (once per step in the plugin),
//   plan     plan_node (once per step),
//   task     plan_node + bind_task for one task owning one GPU (the per-task cost if nothing is cached).
// Prints medians and the 90th percentile over repeated runs; never asserts.
// Usage: binding_benchmark [FIXTURE_DIR]
#include "gpudirect/binding.hpp"
#include "gpudirect/topology_sources.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Timing {
  double median_us = 0;
  double p90_us = 0;
};

Timing measure(int repetitions, const std::function<void()>& work) {
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(repetitions));
  work();  // warm caches and lazy initialisation
  for (int i = 0; i < repetitions; ++i) {
    const auto start = Clock::now();
    work();
    samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  std::sort(samples.begin(), samples.end());
  return {samples[samples.size() / 2], samples[samples.size() * 9 / 10]};
}

// Keeps the optimiser from dropping work whose result is unused.
volatile std::size_t sink = 0;

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : GPUDIRECT_FIXTURE_DIR;
  const char* machines[] = {"a3-megagpu-8g", "a3-highgpu-8g", "p5-like", "nd-h100-v5-like", "local-a3mega-2cpu", "gpu-less"};
  std::printf("%-32s %5s %5s %12s %12s %12s %12s %12s\n", "fixture", "gpus", "nics", "load_med_us", "load_p90_us", "plan_med_us",
              "task_med_us", "task_p90_us");
  try {
    for (const char* machine : machines) {
      for (const char* form : {".xml", ".nccl.xml"}) {
        const std::string file = std::string(machine) + form;
        const std::string path = dir + "/" + file;
        const gpudirect::Topology topology = gpudirect::load_topology_file(path);
        const Timing load = measure(50, [&] { sink = sink + gpudirect::load_topology_file(path).nics.size(); });
        const Timing plan = measure(2000, [&] { sink = sink + gpudirect::plan_node(topology).data_nics.size(); });
        const std::vector<int> task_gpus = topology.gpus.empty() ? std::vector<int>{} : std::vector<int>{0};
        const Timing task = measure(2000, [&] {
          const gpudirect::NodePlan node_plan = gpudirect::plan_node(topology);
          sink = sink + gpudirect::bind_task(topology, node_plan, task_gpus, topology.all_cpus).cpus.count();
        });
        std::printf("%-32s %5zu %5zu %12.1f %12.1f %12.2f %12.2f %12.2f\n", file.c_str(), topology.gpus.size(), topology.nics.size(),
                    load.median_us, load.p90_us, plan.median_us, task.median_us, task.p90_us);
      }
    }
    const Timing live = measure(10, [&] { sink = sink + gpudirect::load_live_topology().nics.size(); });
    std::printf("%-32s %5s %5s %12.1f %12.1f\n", "live (hwloc on this machine)", "", "", live.median_us, live.p90_us);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "binding_benchmark: %s\n", e.what());
    return 1;
  }
  return 0;
}
