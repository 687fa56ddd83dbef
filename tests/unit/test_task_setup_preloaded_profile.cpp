// The plugin reads the step's profile once before its tasks fork and hands it to plan_task; a
// profile for another mode is ignored and the right one read from disk.
#include <catch2/catch.hpp>

#include "fixture_path.hpp"
#include "gpudirect/task_setup.hpp"
#include "gpudirect/topology_sources.hpp"

using namespace gpudirect;

TEST_CASE("plan_task renders a preloaded profile of the mode, and loads the right one otherwise", "[task_setup]") {
  const Topology t = load_topology_file(gpudirect::testing::fixture_path("a3-megagpu-8g.xml"));
  const NodePlan plan = plan_node(t);
  TaskSetupInput in;
  in.config.profile_dir = "/nonexistent";  // nothing on disk: only the preloaded profile can serve
  in.request.mode = Mode::tcpxo;
  in.facts.tcpxo_plugin = true;
  in.env = {{"SLURM_LOCALID", "2"}, {"SLURM_LOCAL_TASKS", "8"}};
  CHECK(profile_name_for(in.config, Mode::tcpxo) == "tcpxo");
  CHECK(profile_name_for(in.config, Mode::rdma) == "rdma");

  const NetworkProfile preloaded = parse_profile("NCCL_MY_NIC=${TASK_NICS}\nNCCL_MY_CTRL=${CTRL_NIC}\n", "tcpxo", "memory");
  in.profile = &preloaded;
  const auto env = apply_env(plan_task(t, plan, in).env, {});
  CHECK(env.at("NCCL_MY_NIC") == "enp13s0");
  CHECK(env.at("NCCL_MY_CTRL") == "enp0s12");

  const NetworkProfile other = parse_profile("NCCL_X=1\n", "tcpxo-simple", "memory");
  in.profile = &other;
  CHECK_THROWS_WITH(plan_task(t, plan, in), Catch::Contains("network profile 'tcpxo' not found"));
}
