// The doctor's check of the mode's variables inside a container (launcher/commands/doctor/
// container_env_check.hpp): which runtime made the container, which variables the image's values
// replaced or that did not arrive, and each runtime's fix.
#include <catch2/catch.hpp>

#include "fake_root.hpp"
#include "doctor/container_env_check.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

using namespace gpudirect;
using namespace gpudirect::launcher;

namespace {

const std::vector<EnvAction> kMode{
    {"LD_LIBRARY_PATH", "/var/lib/tcpxo/lib64", EnvActionKind::prepend_path},
    {"NCCL_NET", "FasTrak", EnvActionKind::set},
    {"NCCL_SOCKET_IFNAME", "enp0s12", EnvActionKind::set},
    {"NCCL_BUFFSIZE", "8388608", EnvActionKind::set},
    {"NCCL_DEBUG", "WARN", EnvActionKind::set_if_unset},
};

}  // namespace

TEST_CASE("container runtimes: Apptainer by its variable or directory, enroot by its marker", "[doctor][containers]") {
  FakeRoot root;
  const std::string r = root.path.string();
  CHECK(container_runtime(r, {}) == ContainerRuntime::other);
  CHECK(container_runtime(r, {{"APPTAINER_CONTAINER", "/images/pytorch.sif"}}) == ContainerRuntime::apptainer);
  CHECK(container_runtime(r, {{"SINGULARITY_CONTAINER", "/images/pytorch.sif"}}) == ContainerRuntime::apptainer);
  CHECK(container_runtime(r, {{"APPTAINER_CONTAINER", ""}}) == ContainerRuntime::other);
  root.add_file(".lock/x", "");  // a directory of that name is not enroot's lock file
  CHECK(container_runtime(r, {}) == ContainerRuntime::other);
  std::filesystem::remove_all(root.path / ".lock");
  root.add_file(".lock", "");  // enroot's lock file (under pyxis, which rewrites /etc/rc.local)
  CHECK(container_runtime(r, {}) == ContainerRuntime::enroot);
  std::filesystem::remove(root.path / ".lock");
  root.add_file("etc/rc", "# enroot-provenance: docker://ubuntu:24.04\n");
  CHECK(container_runtime(r, {}) == ContainerRuntime::enroot);
  root.add_file(".singularity.d/env/90-environment.sh", "export NCCL_DEBUG=INFO\n");
  CHECK(container_runtime(r, {}) == ContainerRuntime::apptainer);
}

TEST_CASE("the mode's variables the image replaced or that did not arrive", "[doctor][containers]") {
  // As NGC images have it: their own NCCL_SOCKET_IFNAME and LD_LIBRARY_PATH; NCCL_NET did not arrive.
  const std::map<std::string, std::string> container{
      {"LD_LIBRARY_PATH", "/usr/local/nvidia/lib64"}, {"NCCL_SOCKET_IFNAME", "eth0"}, {"NCCL_BUFFSIZE", "8388608"}, {"NCCL_DEBUG", "INFO"}};
  const auto mismatches = env_mismatches(kMode, container);
  REQUIRE(mismatches.size() == 3);
  CHECK(mismatches[0].name == "LD_LIBRARY_PATH");
  CHECK(mismatches[0].value == "/usr/local/nvidia/lib64");
  CHECK(mismatches[0].expected == "/var/lib/tcpxo/lib64:/usr/local/nvidia/lib64");
  CHECK(mismatches[1].name == "NCCL_NET");
  CHECK_FALSE(mismatches[1].value);
  CHECK(mismatches[1].expected == "FasTrak");
  CHECK(mismatches[2].name == "NCCL_SOCKET_IFNAME");
  CHECK(mismatches[2].value == "eth0");
  // NCCL_DEBUG ?= leaves the user's own value: no mismatch. All as the plugin set them: none.
  CHECK(env_mismatches(kMode, {{"LD_LIBRARY_PATH", "/var/lib/tcpxo/lib64:/usr/local/nvidia/lib64"},
                               {"NCCL_NET", "FasTrak"},
                               {"NCCL_SOCKET_IFNAME", "enp0s12"},
                               {"NCCL_BUFFSIZE", "8388608"},
                               {"NCCL_DEBUG", "INFO"}})
            .empty());
}

TEST_CASE("each runtime's fix for a variable the image replaced or that did not arrive", "[doctor][containers]") {
  const EnvMismatch replaced{"NCCL_SOCKET_IFNAME", "eth0", "enp0s12"};
  const EnvMismatch missing{"NCCL_NET", std::nullopt, "FasTrak"};
  CHECK(describe_env_mismatch(replaced, ContainerRuntime::enroot, "tcpxo", "its root is not its slurmstepd's") ==
        "in a container (its root is not its slurmstepd's): NCCL_SOCKET_IFNAME is 'eth0' there, but --gpu-direct=tcpxo sets 'enp0s12': "
        "the image's own value won (pyxis gives variables the image sets precedence over the task's); install gpudirect-slurm's "
        "enroot hook on the node (it makes the mode's values win, docs/containers.md), or pass srun --container-env=NCCL_SOCKET_IFNAME");
  CHECK(describe_env_mismatch(missing, ContainerRuntime::apptainer, "tcpxo", "its root is not its slurmstepd's") ==
        "in a container (its root is not its slurmstepd's): NCCL_NET, which --gpu-direct=tcpxo sets to 'FasTrak', did not arrive in it: "
        "Apptainer passed no host value (--cleanenv and --containall drop the job's environment); pass apptainer exec --env "
        "NCCL_NET='FasTrak' (or export APPTAINERENV_NCCL_NET before it), or run it with gpudirect-launch exec --mode tcpxo -- inside "
        "the container");
  CHECK_THAT(describe_env_mismatch(replaced, ContainerRuntime::apptainer, "gib", "/.singularity.d"),
             Catch::Contains("the image's own value won (Apptainer gives the image's environment precedence over the host's)") &&
                 Catch::Contains("--env NCCL_SOCKET_IFNAME='enp0s12'"));
  CHECK_THAT(describe_env_mismatch(missing, ContainerRuntime::enroot, "tcpx", "/.enroot"),
             Catch::Contains("NCCL_NET, which --gpu-direct=tcpx sets to 'FasTrak', did not arrive in it") &&
                 Catch::Contains("srun --container-env=NCCL_NET"));
  CHECK_THAT(describe_env_mismatch(replaced, ContainerRuntime::other, "tcpxo", "/.dockerenv"),
             Catch::EndsWith("the image's own value won over the job's; pass the job's value into the container with the runtime's "
                             "environment option"));
}
