// The plugin's glue under test: spank_gpudirect.so's own hooks, loaded as slurmstepd loads them and
// driven through the SPANK stand-in (tests/spank_standin) with a node, a step and tasks whose local
// and global ids differ, checking what each task is given.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <dlfcn.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "spank_standin.hpp"

using spank_standin::standin;

namespace {

namespace fs = std::filesystem;
using Env = std::map<std::string, std::string>;

// The local cluster's A3 Mega layout on two CPUs: GPUs 0-3 on CPU 0, 4-7 on CPU 1, GPU i beside NIC i.
const std::string kTopology = std::string(GPUDIRECT_FIXTURE_DIR) + "/local-a3mega-2cpu.xml";
const std::vector<std::string> kNics{"enp6s0", "enp7s0", "enp13s0", "enp14s0", "enp134s0", "enp135s0", "enp141s0", "enp142s0"};
const std::string kAllGpus = "0,1,2,3,4,5,6,7";

std::string value(const Env& env, const std::string& name) {
  const auto it = env.find(name);
  return it == env.end() ? "(unset)" : it->second;
}

// A TCPXO lib dir holding a libnccl-net.so and a topology cache dir, removed at the end.
class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("gpudirect-plugin-glue-" + std::to_string(::getpid()))) {
    fs::create_directories(path_);
    std::ofstream(path_ / "libnccl-net.so").put('\0');
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

// One slurmstepd's copy of the plugin: loaded fresh, so no state carries over between tests.
class Plugin {
 public:
  explicit Plugin(std::vector<std::string> plugstack_args) : dir_() {
    standin() = spank_standin::Standin{};
    handle_ = dlopen(GPUDIRECT_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(handle_ != nullptr);
    plugstack_args.insert(plugstack_args.end(),
                          {"topology_cache=" + dir_.str() + "/cache", "profile_dir=" GPUDIRECT_PROFILE_DIR, "lib_dir=" + dir_.str()});
    std::vector<char*> argv;
    for (std::string& word : plugstack_args) argv.push_back(word.data());
    REQUIRE(call("slurm_spank_init", static_cast<int>(argv.size()), argv.data()) == 0);
  }
  ~Plugin() { dlclose(handle_); }
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  // What srun's --gpu-direct=VALUE gives slurmstepd's copy.
  int option(const char* value) {
    REQUIRE(standin().registered != nullptr);
    return standin().registered->cb(standin().registered->val, value, 1);
  }
  // slurmstepd before the tasks fork: init_post_opt, then user_init, with the step's environment.
  void step(const Env& step_env) {
    standin().env = step_env;
    REQUIRE(call("slurm_spank_init_post_opt") == 0);
    REQUIRE(call("slurm_spank_user_init") == 0);
  }
  // One task: its ids and environment in; its return code and environment out. The task's CPU
  // affinity is put back afterwards, so that every task starts with the same allowed CPUs.
  int task(std::uint32_t local, std::uint32_t global, const Env& task_env) {
    standin().local_task_id = local;
    standin().global_task_id = global;
    standin().env = task_env;
    cpu_set_t before;
    REQUIRE(sched_getaffinity(0, sizeof before, &before) == 0);
    const int rc = call("slurm_spank_task_init");
    REQUIRE(sched_setaffinity(0, sizeof before, &before) == 0);
    return rc;
  }
  int call(const char* hook, int argc = 0, char** argv = nullptr) {
    auto* function = reinterpret_cast<int (*)(spank_t, int, char**)>(dlsym(handle_, hook));
    REQUIRE(function != nullptr);
    return function(spank_standin::handle(), argc, argv);
  }

 private:
  TempDir dir_;
  void* handle_ = nullptr;
};

// The environment slurmstepd gives a task of a two-node step with eight tasks per node.
Env task_env(std::uint32_t node, const std::string& step_gpus, const std::string& visible) {
  Env env{{"SLURM_JOB_ID", "77"},
          {"SLURM_STEP_ID", "0"},
          {"SLURM_NODEID", std::to_string(node)},
          {"SLURM_STEP_NODELIST", "node[1-2]"},
          {"SLURM_STEP_NUM_TASKS", "16"},
          {"SLURM_STEP_TASKS_PER_NODE", "8(x2)"},
          {"SLURM_STEP_RESV_PORTS", "12000-12001"},
          // Variables a user can change: the plugin takes Slurm's own ids instead.
          {"SLURM_LOCALID", "0"},
          {"SLURM_PROCID", "0"}};
  if (!step_gpus.empty()) env["SLURM_STEP_GPUS"] = step_gpus;
  if (!visible.empty()) env["CUDA_VISIBLE_DEVICES"] = visible;
  return env;
}

}  // namespace

TEST_CASE("task_init binds by the task's local id, not its global id: node 1 of 2, --gpus-per-node=8", "[plugin_glue]") {
  REQUIRE(sysconf(_SC_NPROCESSORS_ONLN) >= 2);  // the fixture's two CPUs
  Plugin plugin({"default=off", "topology=" + kTopology});
  REQUIRE(plugin.option("tcpxo,torch") == 0);
  plugin.step({{"SLURM_STEP_GPUS", kAllGpus}, {"SLURM_JOB_ID", "77"}});
  standin().node_id = 1;
  standin().local_task_count = 8;
  for (std::uint32_t local = 0; local < 8; ++local) {
    INFO("local task " << local << ", global task " << 8 + local);
    Env env = task_env(1, kAllGpus, kAllGpus);
    env["SLURM_GPUS_ON_NODE"] = "8";
    REQUIRE(plugin.task(local, 8 + local, env) == 0);
    const Env& got = standin().env;
    CHECK(value(got, "GPUDIRECT_GPUS") == std::to_string(local));
    CHECK(value(got, "GPUDIRECT_NICS") == kNics[local]);
    CHECK(value(got, "GPUDIRECT_CPUS") == (local < 4 ? "0" : "1"));
    CHECK(value(got, "NCCL_FASTRAK_IFNAME") ==
          "enp6s0,enp7s0,enp13s0,enp14s0,enp134s0,enp135s0,enp141s0,enp142s0");  // every data NIC, as Google's profile
    CHECK(value(got, "LOCAL_RANK") == std::to_string(local));
    CHECK(value(got, "RANK") == std::to_string(8 + local));
    CHECK(value(got, "WORLD_SIZE") == "16");
    CHECK(value(got, "MASTER_ADDR") == "node1");
  }
  CHECK(standin().errors.empty());
}

TEST_CASE("task_init under ConstrainDevices: each task's GPU from the step's list that user_init saw", "[plugin_glue]") {
  // --gpus-per-task=1 on Slurm 22.05 with ConstrainDevices: every task is shown SLURM_STEP_GPUS=0
  // and CUDA_VISIBLE_DEVICES=0, while task r's cgroup holds GPU r; slurmstepd's own list is 0-7.
  Plugin plugin({"default=off", "topology=" + kTopology});
  REQUIRE(plugin.option("tcpxo") == 0);
  plugin.step({{"SLURM_STEP_GPUS", kAllGpus}});
  standin().local_task_count = 8;
  for (std::uint32_t local = 0; local < 8; ++local) {
    INFO("local task " << local);
    REQUIRE(plugin.task(local, local, task_env(0, "0", "0")) == 0);
    CHECK(value(standin().env, "GPUDIRECT_GPUS") == std::to_string(local));
    CHECK(value(standin().env, "GPUDIRECT_NICS") == kNics[local]);
  }
}

TEST_CASE("task_init leaves the batch script, the interactive step and the extern step alone", "[plugin_glue]") {
  for (std::uint32_t step : {SLURM_BATCH_SCRIPT, SLURM_INTERACTIVE_STEP, SLURM_EXTERN_CONT}) {
    INFO("step id " << step);
    Plugin plugin({"default=tcpxo", "topology=" + kTopology});
    standin().step_id = step;
    plugin.step({{"SLURM_STEP_GPUS", kAllGpus}});
    const Env before = task_env(0, kAllGpus, "0");
    REQUIRE(plugin.task(0, 0, before) == 0);
    CHECK(standin().env == before);
  }
}

TEST_CASE("without --gpu-direct, default=off changes nothing, and --gpu-direct=off overrides a default", "[plugin_glue]") {
  for (const char* asked : {"", "off"}) {
    INFO("asked '" << asked << "'");
    Plugin plugin({std::string("default=") + (*asked ? "tcpxo" : "off"), "topology=" + kTopology});
    if (*asked) REQUIRE(plugin.option(asked) == 0);
    plugin.step({{"SLURM_STEP_GPUS", kAllGpus}});
    const Env before = task_env(0, kAllGpus, "0");
    REQUIRE(plugin.task(0, 0, before) == 0);
    CHECK(standin().env == before);
  }
  // The plugstack default alone is enough to bind.
  Plugin plugin({"default=tcpxo", "topology=" + kTopology});
  plugin.step({{"SLURM_STEP_GPUS", kAllGpus}});
  REQUIRE(plugin.task(0, 0, task_env(0, kAllGpus, "0")) == 0);
  CHECK(value(standin().env, "GPUDIRECT_MODE") == "tcpxo");
}

TEST_CASE("a node whose topology cannot be read fails each task with one message naming the node and the cause", "[plugin_glue]") {
  Plugin plugin({"default=off", "topology=/nonexistent/topology.xml"});
  REQUIRE(plugin.option("tcpxo") == 0);
  plugin.step({{"SLURM_STEP_GPUS", kAllGpus}});  // user_init records the failure and lets the step go on
  CHECK(standin().errors.empty());
  const Env before = task_env(0, kAllGpus, "0");
  CHECK(plugin.task(0, 0, before) < 0);
  REQUIRE(standin().errors.size() == 1);
  char host[256] = "";
  gethostname(host, sizeof host);
  CHECK_THAT(standin().errors[0], Catch::StartsWith(std::string("gpudirect: on ") + host + ": cannot read the node's topology") &&
                                      Catch::Contains("/nonexistent/topology.xml"));
  CHECK(standin().env == before);
}

TEST_CASE("the binding line goes to the user with ',verbose' and to slurmd's log without", "[plugin_glue]") {
  for (const bool verbose : {true, false}) {
    Plugin plugin({"default=off", "topology=" + kTopology});
    REQUIRE(plugin.option(verbose ? "tcpxo,verbose" : "tcpxo") == 0);
    plugin.step({{"SLURM_STEP_GPUS", kAllGpus}});
    standin().local_task_count = 8;
    REQUIRE(plugin.task(5, 13, task_env(0, kAllGpus, "5")) == 0);
    const auto& shown = verbose ? standin().logged : standin().verboses;
    const auto& hidden = verbose ? standin().verboses : standin().logged;
    REQUIRE(shown.size() == 1);
    CHECK_THAT(shown[0], Catch::Contains("task 13 (local 5") && Catch::Contains("enp135s0"));
    CHECK(hidden.empty());
  }
}

// An explicit main: Catch2 3 (tests/catch2_compat) has no CATCH_CONFIG_MAIN.
int main(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }

TEST_CASE("srun's init_post_opt gives every step a fresh rendezvous secret, on or off, and keeps one the user exported", "[plugin_glue]") {
  const char* name = "GPUDIRECT_RENDEZVOUS_SECRET";
  const auto srun_post_opt = [&](const char* option) {
    Plugin plugin({"default=off", "topology=" + kTopology});
    standin().context = S_CTX_LOCAL;
    if (option) REQUIRE(plugin.option(option) == 0);
    REQUIRE(plugin.call("slurm_spank_init_post_opt") == 0);
    const char* secret = std::getenv(name);
    return std::string(secret ? secret : "(unset)");
  };
  ::unsetenv(name);
  const std::string first = srun_post_opt(nullptr);
  CHECK(first.size() == 64);
  CHECK(first.find_first_not_of("0123456789abcdef") == std::string::npos);
  ::unsetenv(name);
  const std::string second = srun_post_opt("tcpxo");
  CHECK(second.size() == 64);
  CHECK(second != first);
  ::setenv(name, "0123456789abcdef0123456789abcdef", 1);
  CHECK(srun_post_opt("off") == "0123456789abcdef0123456789abcdef");
  ::unsetenv(name);
}
