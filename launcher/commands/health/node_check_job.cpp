#include "health/node_check_job.hpp"

#include "gpudirect/text.hpp"

#include <algorithm>
#include <cmath>

namespace gpudirect::launcher::health {

std::vector<std::string> node_check_command(const std::vector<std::string>& nodes, const NodeCheckOptions& o, const std::string& work_dir) {
  const long minutes = std::max(1L, static_cast<long>(std::ceil(o.timeout_s / 60.0)) + 1);
  std::vector<std::string> argv{"srun",
                                "--nodes=" + std::to_string(nodes.size()),
                                "--nodelist=" + join(nodes, ","),
                                "--ntasks=" + std::to_string(nodes.size()),
                                "--ntasks-per-node=1",
                                "--job-name=gpudirect-node-check",
                                "--time=" + std::to_string(minutes),
                                "--output=" + work_dir + "/check-node-%N.json",
                                "--error=" + work_dir + "/check-node-%N.log"};
  if (o.gpus_per_node > 0) argv.push_back("--gpus-per-node=" + std::to_string(o.gpus_per_node));
  argv.insert(argv.end(), o.srun_args.begin(), o.srun_args.end());
  for (const std::string& item :
       {o.program, std::string("check-node"), std::string("--machine-type"), o.machine_type, std::string("--json")})
    argv.push_back(item);
  argv.insert(argv.end(), o.check_args.begin(), o.check_args.end());
  return argv;
}

std::string node_check_path(const std::string& work_dir, const std::string& node) { return work_dir + "/check-node-" + node + ".json"; }

}  // namespace gpudirect::launcher::health
