// The NVLink rule (gpu_visibility.hpp): several tasks of a step on a node, each seeing only its own
// GPU(s), are told the srun line that keeps the node's GPUs visible to every task.
#include <catch2/catch.hpp>

#include "gpudirect/gpu_visibility.hpp"
#include "gpudirect/task_setup.hpp"
#include "planned_fixture.hpp"

using namespace gpudirect;

TEST_CASE("NVLink: tasks sharing a node and seeing only their own GPUs are warned, with the fix", "[gpu_visibility]") {
  // --gpus-per-task=1, 8 tasks: each sees one GPU, its own.
  const std::string warning = own_gpus_only_warning(8, 1, 1);
  CHECK_THAT(warning, Catch::Contains("each of the node's 8 tasks sees only its own GPU,") && Catch::Contains("NCCL cannot use NVLink") &&
                          Catch::Contains("srun --gpus-per-node=8 --ntasks-per-node=8") && Catch::Contains("--tres-bind=gres/gpu:none"));
  // --gpus-per-task=2, 4 tasks.
  CHECK_THAT(own_gpus_only_warning(4, 2, 2), Catch::Contains("its own GPUs") && Catch::Contains("--gpus-per-node=8 --ntasks-per-node=4"));
  // --gpus-per-node=8 --ntasks-per-node=8: every task sees the 8, owns one.
  CHECK(own_gpus_only_warning(8, 8, 1).empty());
  // One task on the node has no peer to reach.
  CHECK(own_gpus_only_warning(1, 1, 1).empty());
  // No CUDA_VISIBLE_DEVICES (--gpu-bind=none): nothing hides the other GPUs from the task.
  CHECK(own_gpus_only_warning(8, 0, 1).empty());
}

TEST_CASE("NVLink: the warning reaches the plugin's verbose line", "[gpu_visibility][task_setup]") {
  const testing::PlannedNode node("a3-megagpu-8g.xml");
  TaskSetupInput own = testing::a3mega_task(Mode::tcpxo, 3, "3");  // 8 tasks, each CUDA_VISIBLE_DEVICES its own GPU
  const TaskSetup setup = plan_task(node.topology, node.plan, own);
  CHECK(setup.gpu_visibility_warning == own_gpus_only_warning(8, 1, 1));
  CHECK_THAT(setup.summary, Catch::Contains("; warning: each of the node's 8 tasks sees only its own GPU"));
  TaskSetupInput all = testing::a3mega_task(Mode::tcpxo, 3, "0,1,2,3,4,5,6,7");  // --gpus-per-node=8
  const TaskSetup shared = plan_task(node.topology, node.plan, all);
  CHECK(shared.binding.gpus == std::vector<int>{3});
  CHECK(shared.gpu_visibility_warning.empty());
  CHECK_THAT(shared.summary, !Catch::Contains("own GPU"));
}

TEST_CASE("a task bound to every GPU of a node it shares is a problem for the doctor", "[gpu_visibility]") {
  // Slurm 20.11, --gpus-per-task=1, 8 tasks: a plugin that took every task's list as it came.
  CHECK_THAT(every_gpu_while_sharing_problem(8, 8, 8),
             Catch::Contains("bound to all 8 GPUs of the node though the step runs 8 tasks here") && Catch::Contains("Slurm 20.11"));
  CHECK(every_gpu_while_sharing_problem(8, 1, 8).empty());
  CHECK(every_gpu_while_sharing_problem(1, 8, 8).empty());  // one task may own the node
  CHECK(every_gpu_while_sharing_problem(2, 1, 1).empty());  // one GPU: sharing it is all there is
}

TEST_CASE("Slurm 20.11: no per-task GPU variable, every task shown the step's GPUs: each takes its own", "[gpu_visibility][task_setup]") {
  const testing::PlannedNode node("a3-megagpu-8g.xml");
  for (int local = 0; local < 8; ++local) {
    TaskSetupInput in = testing::a3mega_task(Mode::tcpxo, local, "0,1,2,3,4,5,6,7");
    in.env.erase("SLURM_GPUS_ON_NODE");  // 20.11 sets none
    in.env["SLURM_GPUS_PER_TASK"] = "1";
    const TaskSetup setup = plan_task(node.topology, node.plan, in);
    CHECK(setup.binding.gpus == std::vector<int>{local});
    CHECK(every_gpu_while_sharing_problem(8, static_cast<int>(setup.binding.gpus.size()), 8).empty());
  }
  // --gpus-per-task=2 with 4 tasks, typed ("h100:2"): blocks of two.
  TaskSetupInput typed = testing::a3mega_task(Mode::tcpxo, 2, "0,1,2,3,4,5,6,7");
  typed.env.erase("SLURM_GPUS_ON_NODE");
  typed.env["SLURM_LOCAL_TASKS"] = "4";
  typed.env["SLURM_GPUS_PER_TASK"] = "h100:2";
  CHECK(plan_task(node.topology, node.plan, typed).binding.gpus == std::vector<int>{4, 5});
  // Without SLURM_GPUS_PER_TASK the step's GPUs are shared out by local rank.
  typed.env.erase("SLURM_GPUS_PER_TASK");
  CHECK(plan_task(node.topology, node.plan, typed).binding.gpus == std::vector<int>{4, 5});
}
