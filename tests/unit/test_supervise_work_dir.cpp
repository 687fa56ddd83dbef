#include <catch2/catch.hpp>

#include "child_process.hpp"

#include <unistd.h>

#include <filesystem>
#include <string>

namespace fs = std::filesystem;
using gpudirect::launcher::run_capture;

namespace {

// The real binary, as an sbatch script runs it inside an allocation of node1,node2.
std::pair<int, std::string> supervise(const std::string& work_dir) {
  return run_capture({"env", "SLURM_JOB_ID=77", "SLURM_JOB_NODELIST=node[1-2]", GPUDIRECT_LAUNCH_BINARY, "supervise", "--spare-nodes", "1",
                      "--work-dir", work_dir, "--", "--steps", "10", "--checkpoint", "/tmp/gpudirect-supervise-test.ckpt"});
}

}  // namespace

// The work directory holds the node checks' verdicts the supervisor drains by: beside a checkpoint
// in shared storage, a directory others can write would let them plant one.
TEST_CASE("supervise refuses a work dir another user may write, before any step", "[supervise][security]") {
  const fs::path dir = fs::temp_directory_path() / ("gpudirect-supervise-work-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::all);  // 0777
  const auto [status, output] = supervise(dir.string());
  CHECK(status == 6);
  CHECK_THAT(output, Catch::Contains("gpudirect supervise:") && Catch::Contains("writable by"));
  CHECK_THAT(output, !Catch::Contains("attempt 1"));
  fs::remove_all(dir);
}

TEST_CASE("supervise outside an allocation says where it runs", "[supervise]") {
  const auto [status, output] = run_capture(
      {"env", "-u", "SLURM_JOB_ID", "-u", "SLURM_JOB_NODELIST", GPUDIRECT_LAUNCH_BINARY, "supervise", "--", "--checkpoint", "/tmp/x.ckpt"});
  CHECK(status == 6);
  CHECK_THAT(output, Catch::Contains("supervise runs inside a Slurm allocation, once, from the batch script"));
}
