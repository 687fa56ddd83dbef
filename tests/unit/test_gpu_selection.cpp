#include <catch2/catch.hpp>

#include "gpudirect/gpu_selection.hpp"

#include <algorithm>
#include <optional>

using gpudirect::GpuSelectionInput;
using gpudirect::select_task_gpus;
using V = std::vector<int>;

namespace {
GpuSelectionInput input(std::string step, std::optional<std::string> visible, int rank, int size, int on_node = 0) {
  GpuSelectionInput in;
  in.slurm_step_gpus = std::move(step);
  in.cuda_visible_devices_set = visible.has_value();
  in.cuda_visible_devices = visible.value_or("");
  in.local_rank = rank;
  in.local_size = size;
  in.gpus_on_node = on_node;
  in.gpu_count = 8;
  return in;
}
}  // namespace

TEST_CASE("GPU selection, --gpus-per-task=1: Slurm's per-task variables are used as they are", "[gpu_selection]") {
  // What Slurm 22.05 sets per task with --gpus-per-task=1 (observed on the local cluster).
  CHECK(select_task_gpus(input("5", "5", 5, 8, 8)) == V{5});
  CHECK(select_task_gpus(input("0", "0", 0, 8, 8)) == V{0});
}

TEST_CASE("GPU selection, --gpus-per-task=2: both GPUs stay with the task", "[gpu_selection]") {
  CHECK(select_task_gpus(input("2,3", "2,3", 1, 4, 8)) == V{2, 3});
}

TEST_CASE("GPU selection, --gpus-per-node=8 with 8 tasks: each takes its local rank's GPU", "[gpu_selection]") {
  for (int r = 0; r < 8; ++r) CHECK(select_task_gpus(input("0,1,2,3,4,5,6,7", "0,1,2,3,4,5,6,7", r, 8, 8)) == V{r});
  // One task per node (torchrun style) keeps all eight.
  CHECK(select_task_gpus(input("0,1,2,3,4,5,6,7", "0,1,2,3,4,5,6,7", 0, 1, 8)).size() == 8);
  // Four tasks, eight GPUs: two each.
  CHECK(select_task_gpus(input("0,1,2,3,4,5,6,7", "0,1,2,3,4,5,6,7", 3, 4, 8)) == V{6, 7});
}

TEST_CASE("ConstrainDevices numbering: CUDA_VISIBLE_DEVICES indexes the step's GPUs", "[gpu_selection]") {
  CHECK(select_task_gpus(input("4,5,6,7", "1", 0, 1)) == V{5});
  CHECK(select_task_gpus(input("6,7", "0,1", 0, 1)) == V{6, 7});
  CHECK_THROWS_WITH(select_task_gpus(input("6,7", "3", 0, 1)), Catch::Contains("does not match SLURM_STEP_GPUS"));
}

TEST_CASE("ConstrainDevices on Slurm 22.05: the step's GPUs on the node correct each task's narrowed list", "[gpu_selection]") {
  // Observed on the local cluster (--constrain-devices, GPUs 0-2 busy): srun -n2 --gpus-per-task=1
  // gives both tasks SLURM_STEP_GPUS=3 CUDA_VISIBLE_DEVICES=0, while task 1's cgroup holds GPU 4;
  // slurmstepd's own SLURM_STEP_GPUS (user_init) is 3,4.
  auto task = [](std::string step, std::string visible, int rank, int size, std::string on_node) {
    const int gpus_on_node = static_cast<int>(std::count(on_node.begin(), on_node.end(), ',')) + 1;  // as Slurm sets it
    GpuSelectionInput in = input(std::move(step), std::move(visible), rank, size, gpus_on_node);
    in.step_gpus_on_node = std::move(on_node);
    return in;
  };
  CHECK(select_task_gpus(task("3", "0", 0, 2, "3,4")) == V{3});
  CHECK(select_task_gpus(task("3", "0", 1, 2, "3,4")) == V{4});
  // --gpus-per-task=2, four tasks: blocks of two.
  CHECK(select_task_gpus(task("0,1", "0,1", 3, 4, "0,1,2,3,4,5,6,7")) == V{6, 7});
  // A Slurm that narrows correctly (task 1 given 4) is used as it is.
  CHECK(select_task_gpus(task("4", "0", 1, 2, "3,4")) == V{4});
  // Without the step's list (doctor, exec) nothing changes.
  CHECK(select_task_gpus(task("3", "0", 1, 2, "")) == V{3});
  // --gpu-bind=none under ConstrainDevices: the tasks get no GPU variable at all; the step's GPUs
  // on the node are split by local rank, not the node's eight.
  GpuSelectionInput unbound = input("", std::nullopt, 1, 2, 2);
  unbound.step_gpus_on_node = "3,4";
  CHECK(select_task_gpus(unbound) == V{4});
  unbound.step_gpus_on_node = "3,x";
  CHECK_THROWS_WITH(select_task_gpus(unbound), Catch::Contains("SLURM_STEP_GPUS (the step's, on this node)"));
}

TEST_CASE("no CUDA_VISIBLE_DEVICES: split by local rank", "[gpu_selection]") {
  CHECK(select_task_gpus(input("0,1,2,3", std::nullopt, 1, 2)) == V{2, 3});
  CHECK(select_task_gpus(input("", std::nullopt, 3, 8)) == V{3});
  CHECK(select_task_gpus(input("", std::nullopt, 9, 16)) == V{1});
  CHECK(select_task_gpus(input("", std::nullopt, 0, 1)).size() == 8);
}

TEST_CASE("bad GPU variables are clear errors", "[gpu_selection]") {
  CHECK_THROWS_WITH(select_task_gpus(input("", "GPU-1234-abcd", 0, 1)), Catch::Contains("UUID"));
  CHECK_THROWS_WITH(select_task_gpus(input("", "0,x", 0, 1)), Catch::Contains("CUDA_VISIBLE_DEVICES"));
  CHECK_THROWS_WITH(select_task_gpus(input("0,9", "9", 0, 1)), Catch::Contains("not in this node's topology"));
  GpuSelectionInput none = input("", std::nullopt, 0, 1);
  none.gpu_count = 0;
  CHECK(select_task_gpus(none).empty());
}

TEST_CASE("GPU selection: results are in bus order, Slurm's order does not matter", "[gpu_selection]") {
  CHECK(select_task_gpus(input("", "3,1", 0, 1)) == V{1, 3});
  CHECK(select_task_gpus(input("7,6,5,4", std::nullopt, 0, 2)) == V{4, 5});
  CHECK(select_task_gpus(input(" 0, 1 ", std::nullopt, 1, 2)) == V{1});
}

TEST_CASE("GPU selection: uneven splits and more tasks than GPUs", "[gpu_selection]") {
  // 8 GPUs over 3 tasks: blocks of 2, 3, 3 (contiguous, nothing shared, nothing left over).
  CHECK(select_task_gpus(input("", std::nullopt, 0, 3)) == V{0, 1});
  CHECK(select_task_gpus(input("", std::nullopt, 1, 3)) == V{2, 3, 4});
  CHECK(select_task_gpus(input("", std::nullopt, 2, 3)) == V{5, 6, 7});
  // 2 step GPUs, 4 tasks: round robin.
  CHECK(select_task_gpus(input("6,7", std::nullopt, 2, 4)) == V{6});
  CHECK(select_task_gpus(input("6,7", std::nullopt, 3, 4)) == V{7});
}

TEST_CASE("GPU selection: empty CUDA_VISIBLE_DEVICES counts as unset, NoDevFiles means none", "[gpu_selection]") {
  CHECK(select_task_gpus(input("4,5", "", 1, 2)) == V{5});
  CHECK(select_task_gpus(input("4,5", "NoDevFiles", 0, 1)).empty());
}

TEST_CASE("GPU selection: bad input names the variable", "[gpu_selection]") {
  CHECK_THROWS_WITH(select_task_gpus(input("", "MIG-4f1c", 0, 1)), Catch::Contains("UUID") && Catch::Contains("by index"));
  CHECK_THROWS_WITH(select_task_gpus(input("", "1,1", 0, 1)), Catch::Contains("lists GPU 1 twice"));
  CHECK_THROWS_WITH(select_task_gpus(input("", "-1", 0, 1)), Catch::Contains("CUDA_VISIBLE_DEVICES=-1"));
  CHECK_THROWS_WITH(select_task_gpus(input("0,a", std::nullopt, 0, 1)), Catch::Contains("SLURM_STEP_GPUS=0,a"));
  CHECK_THROWS_WITH(select_task_gpus(input("", std::nullopt, 2, 2)), Catch::Contains("local rank 2 of 2"));
  CHECK_THROWS_WITH(select_task_gpus(input("", std::nullopt, 0, 0)), Catch::Contains("local rank 0 of 0"));
  CHECK_THROWS_WITH(select_task_gpus(input("8,9", std::nullopt, 0, 1)), Catch::Contains("GPU 8") && Catch::Contains("8 GPUs"));
  GpuSelectionInput negative = input("", std::nullopt, 0, 1);
  negative.gpu_count = -1;
  CHECK_THROWS_AS(select_task_gpus(negative), std::invalid_argument);
}

TEST_CASE("Slurm 20.11: no SLURM_GPUS_ON_NODE, a list that is all of the step's GPUs is split by local rank", "[gpu_selection]") {
  GpuSelectionInput in = input("0,1,2,3", "0,1,2,3", 1, 4, 0);
  CHECK(select_task_gpus(in) == V{1});
  in.gpus_per_task = 1;
  CHECK(select_task_gpus(in) == V{1});
  // Blocks of SLURM_GPUS_PER_TASK from the step's first GPU, when they fit.
  GpuSelectionInput two = input("2,3,4,5,6,7", "2,3,4,5,6,7", 1, 2, 0);
  two.gpus_per_task = 2;
  CHECK(select_task_gpus(two) == V{4, 5});
  // A task shown only its own GPUs keeps them.
  CHECK(select_task_gpus(input("5", "5", 1, 4, 0)) == V{5});
}
