#include <catch2/catch.hpp>

#include "gpudirect/readiness.hpp"
#include "gpudirect/slurm_tasks.hpp"
#include "gpudirect/task_setup.hpp"
#include "gpudirect/topology_sources.hpp"
#include "planned_fixture.hpp"

#include <chrono>

using namespace gpudirect;

namespace {

using Node = testing::PlannedNode;

TaskSetupInput task(Mode mode, int local, const std::string& gpus) { return testing::a3mega_task(mode, local, gpus); }

}  // namespace

TEST_CASE("tcpxo task on A3 Mega: its NIC, its NUMA node's CPUs, the full profile", "[task_setup]") {
  const Node node("a3-megagpu-8g.xml");
  const TaskSetup setup = plan_task(node.topology, node.plan, task(Mode::tcpxo, 6, "6"));
  CHECK(setup.mode == Mode::tcpxo);
  CHECK(setup.set_affinity);
  CHECK(setup.binding.cpus.to_list() == "52-103,156-207");
  const auto env = apply_env(setup.env, {});
  CHECK(env.at("GPUDIRECT_MODE") == "tcpxo");
  CHECK(env.at("GPUDIRECT_GPUS") == "6");
  CHECK(env.at("GPUDIRECT_NICS") == "enp141s0");
  CHECK(env.at("GPUDIRECT_CPUS") == "52-103,156-207");
  CHECK(env.at("NCCL_FASTRAK_CTRL_DEV") == "enp0s12");
  CHECK(env.at("LD_LIBRARY_PATH") == "/var/lib/tcpxo/lib64");
  CHECK(env.at("CUDA_DEVICE_ORDER") == "PCI_BUS_ID");
  CHECK_THAT(setup.summary, Catch::Contains("a3mega-1 task 6 (local 6): mode tcpxo gpus 6 [0000:8b:00.0] nics enp141s0"));
}

TEST_CASE("off leaves the task untouched", "[task_setup]") {
  const Node node("a3-megagpu-8g.xml");
  const TaskSetup setup = plan_task(node.topology, node.plan, task(Mode::off, 0, "0"));
  CHECK(setup.env.empty());
  CHECK_FALSE(setup.set_affinity);
}

TEST_CASE("an explicit --cpu-bind from the user wins, cpu_bind=off too", "[task_setup]") {
  const Node node("a3-megagpu-8g.xml");
  auto in = task(Mode::tcpxo, 0, "0");
  in.env["SLURM_CPU_BIND_TYPE"] = "cores";
  CHECK_FALSE(plan_task(node.topology, node.plan, in).set_affinity);
  auto off = task(Mode::tcpxo, 0, "0");
  off.config.cpu_bind = false;
  CHECK_FALSE(plan_task(node.topology, node.plan, off).set_affinity);
}

TEST_CASE("auto picks tcpxo, tcpx, rdma or off from the node", "[task_setup]") {
  const Node mega("a3-megagpu-8g.xml"), nd("nd-h100-v5-like.xml"), none("gpu-less.xml");
  CHECK(detect_mode(mega.topology, {true, false}).first == Mode::tcpxo);
  CHECK(detect_mode(mega.topology, {false, true}).first == Mode::tcpx);
  CHECK(detect_mode(mega.topology, {false, false}).first == Mode::off);
  CHECK(detect_mode(nd.topology, {false, false}).first == Mode::rdma);
  const auto [mode, reason] = detect_mode(none.topology, {true, true});
  CHECK(mode == Mode::off);
  CHECK(reason == "no GPUs on this node");
  auto on_nd = task(Mode::auto_detect, 2, "2");
  on_nd.facts = {false, false};
  const TaskSetup setup = plan_task(nd.topology, nd.plan, on_nd);
  CHECK(setup.mode == Mode::rdma);
  CHECK(apply_env(setup.env, {}).at("NCCL_IB_HCA") == "=mlx5_2");
  CHECK_THAT(setup.summary, Catch::Contains("auto: rdma"));
}

TEST_CASE("node-side failures are one message with node, cause and fix", "[task_setup]") {
  const Node mega("a3-megagpu-8g.xml"), none("gpu-less.xml");
  auto missing_lib = task(Mode::tcpxo, 0, "0");
  missing_lib.facts.tcpxo_plugin = false;
  CHECK_THROWS_WITH(plan_task(mega.topology, mega.plan, missing_lib), Catch::Contains("on a3mega-1") &&
                                                                          Catch::Contains("no libnccl-net.so in /var/lib/tcpxo/lib64") &&
                                                                          Catch::Contains("lib_dir="));
  CHECK_THROWS_WITH(plan_task(none.topology, none.plan, task(Mode::tcpxo, 0, "")), Catch::Contains("needs GPUs"));
  CHECK_THROWS_WITH(plan_task(mega.topology, mega.plan, task(Mode::rdma, 0, "0")), Catch::Contains("RDMA"));
  auto no_profiles = task(Mode::tcpxo, 0, "0");
  no_profiles.config.profile_dir = "/nonexistent";
  CHECK_THROWS_WITH(plan_task(mega.topology, mega.plan, no_profiles), Catch::Contains("profile_dir="));
}

TEST_CASE("readiness waits are bounded", "[readiness]") {
  const auto start = std::chrono::steady_clock::now();
  const ReadinessResult result = wait_until_ready("/nonexistent/rxdm.ready", 1);
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK_FALSE(result.ready);
  CHECK_THAT(result.detail, Catch::Contains("does not exist") && Catch::Contains("after waiting 1 s"));
  CHECK(waited < std::chrono::seconds(3));
  CHECK(wait_until_ready(GPUDIRECT_FIXTURE_DIR, 0).ready);
}

TEST_CASE("Slurm's tasks-per-node lists", "[task_setup]") {
  CHECK(tasks_on_node("8(x2)", 1) == 8);
  CHECK(tasks_on_node("3,1", 0) == 3);
  CHECK(tasks_on_node("3,1", 1) == 1);
  CHECK(tasks_on_node("2(x3),5", 3) == 5);
  CHECK_THROWS_WITH(tasks_on_node("8(x2)", 2), Catch::Contains("no entry for node 2"));
  CHECK_THROWS_WITH(tasks_on_node("many", 0), Catch::Contains("N(xM)"));
  for (const char* junk : {"8x", "8(x2", "8(x2)x", "8(2)", "", "0", "+8", " 8", "8,,1", "8(x0)"}) {
    INFO(junk);
    CHECK_THROWS_WITH(tasks_on_node(junk, 0), Catch::Contains("N(xM)"));
  }
}

TEST_CASE("this thread's CPU affinity is readable", "[task_setup]") {
  const CpuSet mine = CpuSet::of_this_thread();
  CHECK(mine.count() >= 1);
  CHECK((mine & load_live_topology().all_cpus) == mine);
}

TEST_CASE("ConstrainDevices through plan_task: CUDA_VISIBLE_DEVICES=1 of the step's 4-7 is GPU 5, its NIC and CPUs", "[task_setup]") {
  // The task's device cgroup holds the step's GPUs 4-7, renumbered from 0: index 1 is GPU 5.
  const Node node("a3-megagpu-8g.xml");
  auto in = task(Mode::tcpxo, 0, "4,5,6,7");
  in.env["CUDA_VISIBLE_DEVICES"] = "1";
  in.env["SLURM_LOCAL_TASKS"] = "1";
  in.env["SLURM_GPUS_ON_NODE"] = "4";
  const auto env = apply_env(plan_task(node.topology, node.plan, in).env, {});
  CHECK(env.at("GPUDIRECT_GPUS") == "5");
  CHECK(env.at("GPUDIRECT_NICS") == "enp135s0");
  CHECK(env.at("GPUDIRECT_CPUS") == "52-103,156-207");
}

TEST_CASE("a task with GPUs of both NUMA nodes gets the CPUs of both, and both NICs", "[task_setup]") {
  const Node node("local-a3mega-2cpu.xml");  // GPUs 0-3 on CPU 0, 4-7 on CPU 1
  auto in = task(Mode::tcpxo, 0, "3,4");
  in.env["SLURM_LOCAL_TASKS"] = "1";
  in.env["SLURM_GPUS_ON_NODE"] = "2";
  in.allowed_cpus = CpuSet::range(0, 1);
  const TaskSetup setup = plan_task(node.topology, node.plan, in);
  CHECK(setup.binding.warning.empty());
  const auto env = apply_env(setup.env, {});
  CHECK(env.at("GPUDIRECT_GPUS") == "3,4");
  CHECK(env.at("GPUDIRECT_CPUS") == "0-1");
  CHECK(env.at("GPUDIRECT_NICS") == "enp14s0,enp134s0");
}
