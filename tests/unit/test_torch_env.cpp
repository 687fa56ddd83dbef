// torch.distributed's variables from a Slurm task (',torch' and exec), and the step reading they
// share with the launcher's rendezvous.
#include <catch2/catch.hpp>

#include "fixture_path.hpp"
#include "gpudirect/mode.hpp"
#include "gpudirect/slurm_step.hpp"
#include "gpudirect/task_setup.hpp"
#include "gpudirect/topology_sources.hpp"
#include "gpudirect/torch_env.hpp"

using namespace gpudirect;

namespace {

using Env = std::map<std::string, std::string>;

// Task 5 of `srun -N2 --ntasks-per-node=4`: the second task on the second node.
Env second_node_task() {
  return {{"SLURM_PROCID", "5"},
          {"SLURM_LOCALID", "1"},
          {"SLURM_NODEID", "1"},
          {"SLURM_STEP_NUM_TASKS", "8"},
          {"SLURM_NTASKS", "8"},
          {"SLURM_STEP_TASKS_PER_NODE", "4(x2)"},
          {"SLURM_STEP_NODELIST", "a3mega-[7-8]"},
          {"SLURM_JOB_ID", "1234"},
          {"SLURM_STEP_ID", "0"}};
}

Env applied(const std::vector<EnvAction>& actions, Env env = {}) { return apply_env(actions, std::move(env)); }

}  // namespace

TEST_CASE("a task srun started gets what env:// needs, from Slurm's numbers", "[torch_env]") {
  const Env env = applied(torch_distributed_env(second_node_task(), {"enp6s0"}));
  CHECK(env.at("RANK") == "5");
  CHECK(env.at("WORLD_SIZE") == "8");
  CHECK(env.at("LOCAL_RANK") == "1");
  CHECK(env.at("LOCAL_WORLD_SIZE") == "4");
  CHECK(env.at("MASTER_ADDR") == "a3mega-7");
  CHECK(env.at("MASTER_PORT") == std::to_string(derived_rendezvous_port("1234", "0")));
  CHECK(env.at("GLOO_SOCKET_IFNAME") == "enp6s0");
}

TEST_CASE("every task of a step agrees on the rendezvous, the next step moves to another port", "[torch_env]") {
  Env first = second_node_task();
  first["SLURM_PROCID"] = "0";
  first["SLURM_LOCALID"] = "0";
  first["SLURM_NODEID"] = "0";
  const auto a = slurm_step_task(first), b = slurm_step_task(second_node_task());
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->rendezvous_host == b->rendezvous_host);
  CHECK(a->rendezvous_port == b->rendezvous_port);
  Env next_step = second_node_task();
  next_step["SLURM_STEP_ID"] = "1";
  CHECK(slurm_step_task(next_step)->rendezvous_port != b->rendezvous_port);
  const int port = b->rendezvous_port;
  CHECK(port >= 20000);
  CHECK(port < 40000);
}

TEST_CASE("reserved ports (MpiParams=ports=) win over the derived one", "[torch_env]") {
  Env env = second_node_task();
  env["SLURM_STEP_RESV_PORTS"] = "12000-12015";
  CHECK(applied(torch_distributed_env(env, {})).at("MASTER_PORT") == "12000");
  env["SLURM_STEP_RESV_PORTS"] = "12007,12009";
  CHECK(slurm_step_task(env)->rendezvous_port == 12007);
}

TEST_CASE("what the user or torchrun set wins", "[torch_env]") {
  const Env user{{"MASTER_ADDR", "10.0.0.9"}, {"MASTER_PORT", "29500"}, {"RANK", "3"}, {"GLOO_SOCKET_IFNAME", "eth0"}};
  const Env env = applied(torch_distributed_env(second_node_task(), {"enp6s0"}), user);
  CHECK(env.at("MASTER_ADDR") == "10.0.0.9");
  CHECK(env.at("MASTER_PORT") == "29500");
  CHECK(env.at("RANK") == "3");
  CHECK(env.at("GLOO_SOCKET_IFNAME") == "eth0");
  CHECK(env.at("WORLD_SIZE") == "8");  // not set by the user: ours
}

TEST_CASE("torchrun's worker under srun ',torch': the agent's NICs narrowed to the worker's own", "[torch_env]") {
  const Env agent{{"GPUDIRECT_NICS", "enp6s0,enp7s0"}, {"GLOO_SOCKET_IFNAME", "enp6s0,enp7s0"}};
  CHECK(applied(torch_distributed_env(agent, {"enp7s0"}), agent).at("GLOO_SOCKET_IFNAME") == "enp7s0");
  const Env user{{"GPUDIRECT_NICS", "enp6s0,enp7s0"}, {"GLOO_SOCKET_IFNAME", "eth0"}};
  CHECK(applied(torch_distributed_env(user, {"enp7s0"}), user).at("GLOO_SOCKET_IFNAME") == "eth0");
}

TEST_CASE("outside a Slurm step only the NICs are given, with no NIC nothing", "[torch_env]") {
  CHECK(applied(torch_distributed_env({{"LOCAL_RANK", "2"}}, {"enp6s0", "enp12s0"})) == Env{{"GLOO_SOCKET_IFNAME", "enp6s0,enp12s0"}});
  CHECK(torch_distributed_env({}, {}).empty());
  // SLURM_PROCID without the step's node list (an sbatch script's own shell is not a step task).
  CHECK(torch_distributed_env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}, {}).empty());
}

TEST_CASE("malformed Slurm variables are refused naming the variable", "[torch_env]") {
  Env env = second_node_task();
  env["SLURM_PROCID"] = "9";  // outside 0..7
  CHECK_THROWS_WITH(slurm_step_task(env), Catch::Contains("SLURM_PROCID=9"));
  env = second_node_task();
  env["SLURM_STEP_RESV_PORTS"] = "70000-70010";
  CHECK_THROWS_WITH(torch_distributed_env(env, {}), Catch::Contains("SLURM_STEP_RESV_PORTS=70000"));
  env = second_node_task();
  env.erase("SLURM_STEP_NUM_TASKS");
  env.erase("SLURM_NTASKS");
  CHECK_THROWS_WITH(slurm_step_task(env), Catch::Contains("SLURM_NTASKS"));
}

TEST_CASE("MODE,torch (--gpu-direct) parses in any order, once", "[torch_env]") {
  CHECK(parse_mode_request("tcpxo,torch").torch);
  CHECK(*parse_mode_request("tcpxo,torch").mode == Mode::tcpxo);
  CHECK(parse_mode_request("torch,verbose").torch);
  CHECK(parse_mode_request("torch,verbose").verbose);
  CHECK_FALSE(parse_mode_request("tcpxo,verbose").torch);
  CHECK_THROWS_WITH(parse_mode_request("torch,torch"), Catch::Contains("',torch'"));
}

TEST_CASE("plan_task adds the torch variables only when asked, with the task's own NIC for Gloo", "[torch_env]") {
  const Topology topology = load_topology_file(gpudirect::testing::fixture_path("a3-megagpu-8g.xml"));
  const NodePlan plan = plan_node(topology);
  TaskSetupInput in;
  in.config.profile_dir = GPUDIRECT_PROFILE_DIR;
  in.request.mode = Mode::tcpxo;
  in.hostname = "a3mega-8";
  in.facts.tcpxo_plugin = true;
  in.env = second_node_task();
  in.env["SLURM_STEP_GPUS"] = in.env["CUDA_VISIBLE_DEVICES"] = "1";
  in.env["SLURM_GPUS_ON_NODE"] = "4";
  in.allowed_cpus = CpuSet::range(0, 207);
  const Env plain = apply_env(plan_task(topology, plan, in).env, {});
  CHECK(plain.count("RANK") == 0);
  CHECK(plain.count("GLOO_SOCKET_IFNAME") == 0);
  in.request.torch = true;
  const Env with_torch = apply_env(plan_task(topology, plan, in).env, {});
  CHECK(with_torch.at("RANK") == "5");
  CHECK(with_torch.at("MASTER_ADDR") == "a3mega-7");
  CHECK(with_torch.at("GLOO_SOCKET_IFNAME") == with_torch.at("GPUDIRECT_NICS"));
  in.env["SLURM_STEP_NODELIST"] = "a3mega-[";
  CHECK_THROWS_WITH(plan_task(topology, plan, in), Catch::Contains("on a3mega-8: cannot give the task torch.distributed's variables"));
}
