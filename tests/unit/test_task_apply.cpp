#include <catch2/catch.hpp>

#include "gpudirect/task_apply.hpp"
#include "gpudirect/topology_sources.hpp"
#include "planned_fixture.hpp"

#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace gpudirect;

namespace {

using Node = testing::PlannedNode;

TaskSetupInput task(Mode mode, int local) {
  TaskSetupInput in = testing::a3mega_task(mode, local, std::to_string(local));
  in.config.rxdm_ready = "/run/tcpxo/rxdm.ready";
  return in;
}

// A process that records what it is given.
class FakeProcess final : public TaskProcess {
 public:
  std::map<std::string, std::string> env;
  std::vector<std::string> set_order;
  std::optional<CpuSet> bound;
  std::string refuse_name;  // set_env fails for this variable
  int bind_error = 0;

  std::optional<std::string> get_env(const std::string& name) override {
    const auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  bool set_env(const std::string& name, const std::string& value) override {
    if (name == refuse_name) return false;
    env[name] = value;
    set_order.push_back(name);
    return true;
  }
  int bind_cpus(const CpuSet& cpus) override {
    bound = cpus;
    return bind_error;
  }
};

// A readiness wait that only counts its calls.
struct FakeWait {
  bool ready = false;
  int calls = 0;
  std::string path;
  ReadinessWait function() {
    return [this](const std::string& p, int timeout_s) {
      ++calls;
      path = p;
      return ReadinessResult{ready, p + (ready ? " exists" : " does not exist after waiting " + std::to_string(timeout_s) + " s")};
    };
  }
};

ModeDecision decide(const Node& node, const TaskSetupInput& in) { return resolve_mode(in.request, in.config, node.topology, in.facts); }

}  // namespace

TEST_CASE("apply_task sets the planned environment through the process, then binds the CPUs", "[task_apply]") {
  const Node node("a3-megagpu-8g.xml");
  const TaskSetupInput in = task(Mode::tcpxo, 6);
  FakeProcess process;
  process.env["CUDA_DEVICE_ORDER"] = "FASTEST_FIRST";  // ?=: the task's own value wins
  process.env["LD_LIBRARY_PATH"] = "/opt/mine";        // +=: prepended to
  const TaskApplyResult applied = apply_task(node.topology, node.plan, in, NodeReadiness{}, process);
  REQUIRE(applied.failure == TaskApplyResult::Failure::none);
  const TaskSetup planned = plan_task(node.topology, node.plan, in);
  CHECK(applied.setup.summary == planned.summary);
  CHECK(process.env == apply_env(planned.env, {{"CUDA_DEVICE_ORDER", "FASTEST_FIRST"}, {"LD_LIBRARY_PATH", "/opt/mine"}}));
  CHECK(process.env.at("CUDA_DEVICE_ORDER") == "FASTEST_FIRST");
  CHECK(process.env.at("LD_LIBRARY_PATH") == "/var/lib/tcpxo/lib64:/opt/mine");
  CHECK(process.env.at("GPUDIRECT_NICS") == "enp141s0");
  REQUIRE(process.bound);
  CHECK(process.bound->to_list() == "52-103,156-207");
}

TEST_CASE("apply_task leaves the CPUs alone when the user bound them", "[task_apply]") {
  const Node node("a3-megagpu-8g.xml");
  TaskSetupInput in = task(Mode::tcpxo, 0);
  in.env["SLURM_CPU_BIND_TYPE"] = "cores";
  FakeProcess process;
  CHECK(apply_task(node.topology, node.plan, in, NodeReadiness{}, process).failure == TaskApplyResult::Failure::none);
  CHECK_FALSE(process.bound);
  CHECK(process.env.at("GPUDIRECT_MODE") == "tcpxo");
}

TEST_CASE("apply_task stops at the first failure and says where", "[task_apply]") {
  const Node node("a3-megagpu-8g.xml");
  SECTION("the plan: nothing is set or bound") {
    TaskSetupInput in = task(Mode::tcpxo, 0);
    in.facts.tcpxo_plugin = false;
    FakeProcess process;
    const TaskApplyResult applied = apply_task(node.topology, node.plan, in, NodeReadiness{}, process);
    CHECK(applied.failure == TaskApplyResult::Failure::plan);
    CHECK_THAT(applied.detail, Catch::StartsWith("on a3mega-1: the TCPXO NCCL plugin is missing"));
    CHECK(process.set_order.empty());
    CHECK_FALSE(process.bound);
  }
  SECTION("a variable the process refuses: no CPU binding after it") {
    FakeProcess process;
    process.refuse_name = "GPUDIRECT_MODE";
    const TaskApplyResult applied = apply_task(node.topology, node.plan, task(Mode::tcpxo, 0), NodeReadiness{}, process);
    CHECK(applied.failure == TaskApplyResult::Failure::set_env);
    CHECK(applied.detail == "GPUDIRECT_MODE");
    CHECK_FALSE(process.env.count("GPUDIRECT_GPUS"));
    CHECK_FALSE(process.bound);
  }
  SECTION("the CPU binding: the system's reason") {
    FakeProcess process;
    process.bind_error = EINVAL;
    const TaskApplyResult applied = apply_task(node.topology, node.plan, task(Mode::tcpxo, 0), NodeReadiness{}, process);
    CHECK(applied.failure == TaskApplyResult::Failure::bind_cpus);
    CHECK(applied.detail == std::strerror(EINVAL));
    CHECK(applied.setup.binding.cpus.to_list() == "0-51,104-155");
  }
}

TEST_CASE("RxDM is waited for exactly when the resolved mode is TCPXO and rxdm_ready= is set", "[task_apply]") {
  const Node mega("a3-megagpu-8g.xml"), none("gpu-less.xml");
  FakeWait wait;
  wait_for_node_readiness(decide(mega, task(Mode::tcpxo, 0)), task(Mode::tcpxo, 0).config, wait.function());
  CHECK(wait.calls == 1);
  CHECK(wait.path == "/run/tcpxo/rxdm.ready");
  TaskSetupInput automatic = task(Mode::auto_detect, 0);
  wait_for_node_readiness(decide(mega, automatic), automatic.config, wait.function());
  CHECK(wait.calls == 2);  // auto resolves to tcpxo here
  for (const Mode mode : {Mode::tcpx, Mode::rdma, Mode::gib, Mode::off}) {
    const TaskSetupInput in = task(mode, 0);
    wait_for_node_readiness(decide(mega, in), in.config, wait.function());
  }
  wait_for_node_readiness(decide(none, automatic), automatic.config, wait.function());  // auto: off without GPUs
  TaskSetupInput unset = task(Mode::tcpxo, 0);
  unset.config.rxdm_ready.clear();
  wait_for_node_readiness(decide(mega, unset), unset.config, wait.function());
  CHECK(wait.calls == 2);
}

TEST_CASE("a node whose RxDM is not up fails every task before it is planned (the plugin's rule)", "[task_apply]") {
  // exec used to plan first and wait for RxDM only after a plan that succeeded: a task whose plan
  // fails (no TCPXO plugin) reported the plan's error and never waited. The rule is the plugin's:
  // the node waits for RxDM first, and a node that is not ready refuses its tasks.
  const Node node("a3-megagpu-8g.xml");
  TaskSetupInput in = task(Mode::tcpxo, 0);
  in.facts.tcpxo_plugin = false;  // plan_task would refuse this task
  REQUIRE_THROWS_AS(plan_task(node.topology, node.plan, in), TaskSetupError);
  FakeWait wait;
  const NodeReadiness readiness = wait_for_node_readiness(decide(node, in), in.config, wait.function());
  CHECK(wait.calls == 1);
  CHECK_FALSE(readiness.ready());
  FakeProcess process;
  const TaskApplyResult applied = apply_task(node.topology, node.plan, in, readiness, process);
  CHECK(applied.failure == TaskApplyResult::Failure::node_not_ready);
  CHECK(applied.detail == "/run/tcpxo/rxdm.ready does not exist after waiting 120 s");
  CHECK(process.set_order.empty());
  CHECK_FALSE(process.bound);

  wait.ready = true;
  const NodeReadiness up = wait_for_node_readiness(decide(node, in), in.config, wait.function());
  CHECK(up.ready());
  CHECK(apply_task(node.topology, node.plan, in, up, process).failure == TaskApplyResult::Failure::plan);
}
