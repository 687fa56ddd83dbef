// The one reading of where Slurm put a task (slurm_task_placement.hpp), shared by plan_task (the
// plugin, the doctor, exec) and the rendezvous; and the doctor's agreement with the plugin under
// ConstrainDevices through the step's GPUs the plugin exports.
#include <catch2/catch.hpp>

#include "gpudirect/slurm_step.hpp"
#include "gpudirect/slurm_task_placement.hpp"
#include "gpudirect/task_setup.hpp"
#include "planned_fixture.hpp"

using namespace gpudirect;

TEST_CASE("a task's placement: Slurm's count first, then the step's tasks per node", "[slurm_task_placement]") {
  SlurmTaskPlacement p = slurm_task_placement(
      {{"SLURM_NODEID", "1"}, {"SLURM_LOCALID", "2"}, {"SLURM_STEP_TASKS_PER_NODE", "1,4"}, {"GPUDIRECT_STEP_GPUS", "3,4,5,6"}});
  CHECK(p.node == 1);
  CHECK(p.local_rank == 2);
  CHECK(p.local_size == 4);
  CHECK(p.step_gpus_on_node == "3,4,5,6");
  // The plugin passes Slurm's own count (S_JOB_LOCAL_TASK_COUNT); it wins over the variable.
  CHECK(slurm_task_placement({{"SLURM_LOCALID", "2"}, {"SLURM_LOCAL_TASKS", "8"}, {"SLURM_STEP_TASKS_PER_NODE", "4"}}).local_size == 8);
  // sbatch's shell has only the job's list.
  CHECK(slurm_task_placement({{"SLURM_NODEID", "0"}, {"SLURM_TASKS_PER_NODE", "3(x2)"}}).local_size == 3);
  // Nothing known: at least the tasks up to this one.
  CHECK(slurm_task_placement({{"SLURM_LOCALID", "5"}}).local_size == 6);
  CHECK(slurm_task_placement({}).local_size == 1);
}

TEST_CASE("a task's placement: malformed or impossible values are refused, naming the variable", "[slurm_task_placement]") {
  CHECK_THROWS_WITH(slurm_task_placement({{"SLURM_LOCALID", "x"}}), Catch::Contains("SLURM_LOCALID=x is not an integer"));
  CHECK_THROWS_WITH(slurm_task_placement({{"SLURM_LOCALID", "4"}, {"SLURM_STEP_TASKS_PER_NODE", "4"}}),
                    Catch::Contains("SLURM_LOCALID=4 is not below the step's 4 task(s)"));
  CHECK_THROWS_WITH(slurm_task_placement({{"SLURM_STEP_TASKS_PER_NODE", "4(x"}}), Catch::Contains("SLURM_STEP_TASKS_PER_NODE"));
}

TEST_CASE("the rendezvous reads the task's place the same way", "[slurm_task_placement]") {
  const std::map<std::string, std::string> env{
      {"SLURM_PROCID", "5"}, {"SLURM_STEP_NUM_TASKS", "8"},          {"SLURM_LOCALID", "1"},
      {"SLURM_NODEID", "1"}, {"SLURM_STEP_TASKS_PER_NODE", "4(x2)"}, {"SLURM_STEP_NODELIST", "n[1-2]"}};
  const auto task = slurm_step_task(env);
  const SlurmTaskPlacement placement = slurm_task_placement(env);
  REQUIRE(task);
  CHECK(task->local_rank == placement.local_rank);
  CHECK(task->local_size == placement.local_size);
  CHECK(task->node == placement.node);
  CHECK(task->local_size == 4);
}

namespace {

// Task `local` of 2 under ConstrainDevices on Slurm 22.05 (--gpus-per-task=1): Slurm gives both
// SLURM_STEP_GPUS=0 CUDA_VISIBLE_DEVICES=0; slurmstepd's list for the step is 0,1.
std::map<std::string, std::string> narrowed_task(int local) {
  return {{"SLURM_LOCALID", std::to_string(local)},
          {"SLURM_PROCID", std::to_string(local)},
          {"SLURM_LOCAL_TASKS", "2"},
          {"SLURM_STEP_GPUS", "0"},
          {"CUDA_VISIBLE_DEVICES", "0"},
          {"SLURM_GPUS_ON_NODE", "1"},
          {"SLURM_JOB_ID", "42"}};
}

}  // namespace

TEST_CASE("ConstrainDevices: the doctor in the task plans what the plugin planned", "[slurm_task_placement][task_setup]") {
  const testing::PlannedNode node("a3-megagpu-8g.xml");
  // The plugin: what user_init read goes in GPUDIRECT_STEP_GPUS; plan_task exports it.
  TaskSetupInput plugin = testing::a3mega_task(Mode::tcpxo, 1, "0");
  plugin.env = narrowed_task(1);
  plugin.env[kStepGpusVariable] = "0,1";
  const TaskSetup planned = plan_task(node.topology, node.plan, plugin);
  CHECK(planned.binding.gpus == std::vector<int>{1});
  const auto task_env = apply_env(planned.env, narrowed_task(1));
  CHECK(task_env.at(kStepGpusVariable) == "0,1");
  CHECK(task_env.at("GPUDIRECT_GPUS") == "1");

  // The doctor: the task's own environment, with what the plugin exported.
  TaskSetupInput doctor = plugin;
  doctor.env = task_env;
  CHECK(plan_task(node.topology, node.plan, doctor).binding.gpus == planned.binding.gpus);
  // Without the plugin's reading the task's narrowed list says GPU 0: what the doctor said before.
  doctor.env.erase(kStepGpusVariable);
  CHECK(plan_task(node.topology, node.plan, doctor).binding.gpus == std::vector<int>{0});
}
