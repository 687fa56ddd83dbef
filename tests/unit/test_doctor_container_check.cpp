// The doctor's check inside a container: which marker shows it is one, which of the mode's mounts
// are missing there, which variables name them, and the mount that fixes it.
#include <catch2/catch.hpp>

#include "fake_root.hpp"
#include "doctor/container_check.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

using namespace gpudirect;
using namespace gpudirect::launcher;

namespace {

const std::vector<ContainerMount> kTcpxoMounts{{"/var/lib/tcpxo/lib64", "/var/lib/tcpxo/lib64", true},
                                               {"/dev/aperture_devices", "/dev/aperture_devices", false}};
const std::vector<EnvAction> kTcpxoEnv{
    {"LD_LIBRARY_PATH", "/var/lib/tcpxo/lib64", EnvActionKind::prepend_path},
    {"NCCL_FASTRAK_IFNAME", "enp6s0,enp7s0", EnvActionKind::set},
    {"NCCL_TUNER_CONFIG_PATH", "/var/lib/tcpxo/lib64/a3plus_tuner_config.textproto", EnvActionKind::set},
    {"NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY", "/dev/aperture_devices", EnvActionKind::set},
    {"NCCL_OTHER", "/var/lib/tcpxo/lib64x", EnvActionKind::set},  // another directory, not inside the mount
};

}  // namespace

TEST_CASE("container markers", "[doctor][containers]") {
  FakeRoot root;
  CHECK(container_marker(root.path.string()).empty());
  root.add_file("etc/rc", "#!/bin/sh\nexec \"$@\"\n");  // any image's /etc/rc is no marker
  CHECK(container_marker(root.path.string()).empty());
  // enroot 4.1.2's import: an /etc/rc.local with its comment (no provenance line yet).
  root.add_file("etc/rc.local", "# This file is sourced by /etc/rc when the container starts.\n# It can be used to ...\n");
  CHECK(container_marker(root.path.string()) == "/etc/rc of an enroot image");
  root.add_file("etc/rc.local", "# my own rc.local\n");
  CHECK(container_marker(root.path.string()).empty());
  root.add_file("etc/rc", "# enroot-provenance: docker://ubuntu:24.04\nexec \"$@\"\n");
  CHECK(container_marker(root.path.string()) == "/etc/rc of an enroot image");
  root.add_dir(".enroot");
  CHECK(container_marker(root.path.string()) == "/.enroot");
  root.add_file("run/.containerenv");
  CHECK(container_marker(root.path.string()) == "/run/.containerenv");
  root.add_file(".dockerenv");
  CHECK(container_marker(root.path.string() + "/") == "/.dockerenv");
}

TEST_CASE("the mounts a container lacks, the variables naming them, the fix", "[doctor][containers]") {
  FakeRoot root;
  auto missing = missing_mounts(root.path.string(), kTcpxoMounts, kTcpxoEnv);
  REQUIRE(missing.size() == 2);
  CHECK(missing[0].mount.destination == "/var/lib/tcpxo/lib64");
  CHECK(missing[0].named_by == std::vector<std::string>{"LD_LIBRARY_PATH", "NCCL_TUNER_CONFIG_PATH"});
  CHECK(missing[1].named_by == std::vector<std::string>{"NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY"});
  CHECK(describe_missing_mount(missing[0], "/.enroot") ==
        "in a container (/.enroot) without /var/lib/tcpxo/lib64 (named by LD_LIBRARY_PATH, NCCL_TUNER_CONFIG_PATH): mount it, "
        "e.g. srun --container-mounts=/var/lib/tcpxo/lib64:/var/lib/tcpxo/lib64:ro, or install gpudirect-slurm's enroot hook on "
        "the node (docs/containers.md)");
  CHECK_THAT(describe_missing_mount(missing[1], "/.enroot"),
             Catch::Contains("--container-mounts=/dev/aperture_devices:/dev/aperture_devices,"));

  root.add_dir("var/lib/tcpxo/lib64");
  missing = missing_mounts(root.path.string(), kTcpxoMounts, kTcpxoEnv);
  REQUIRE(missing.size() == 1);
  CHECK(missing[0].mount.destination == "/dev/aperture_devices");
  root.add_dir("dev/aperture_devices");
  CHECK(missing_mounts(root.path.string(), kTcpxoMounts, kTcpxoEnv).empty());
}

TEST_CASE("the root a process sees, from its mountinfo", "[doctor][containers]") {
  // The host's root, then a container's (pyxis: the image's directory on another file system).
  const std::string host =
      "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
      "23 22 0:21 / /proc rw,nosuid - proc proc rw\n";
  CHECK(root_mount(host) == RootMount{"8:1", "/"});
  const std::string pod =
      "500 400 0:52 / / rw,relatime - overlay overlay rw,lowerdir=/l\n"
      "501 500 0:53 / /proc rw - proc proc rw\n";
  CHECK(root_mount(pod) == RootMount{"0:52", "/"});
  // Mounted over "/" again: the last mount is the one seen.
  CHECK(root_mount(host + "900 22 8:1 /run/pyxis/0/rootfs / rw - ext4 /dev/sda1 rw\n") == RootMount{"8:1", "/run/pyxis/0/rootfs"});
  CHECK_FALSE(root_mount("23 22 0:21 / /proc rw - proc proc rw\n"));
}

TEST_CASE("a task is in a container when its root is not its slurmstepd's, not when a marker exists", "[doctor][containers]") {
  const RootMount pod_root{"0:52", "/"}, image{"0:99", "/"};
  // slurmd in a pod (/.dockerenv on the host): its tasks share its root; the marker is not theirs.
  CHECK(container_reason(pod_root, pod_root, "/.dockerenv").empty());
  // pyxis/enroot: the task's root is the image's.
  CHECK(container_reason(image, pod_root, "") == "its root is not its slurmstepd's");
  CHECK(container_reason(RootMount{"0:52", "/images/ubuntu"}, pod_root, "") == "its root is not its slurmstepd's");
  // No slurmstepd seen (its own PID namespace, or no Slurm): the marker decides.
  CHECK(container_reason(image, std::nullopt, "/.dockerenv") == "/.dockerenv");
  CHECK(container_reason(image, std::nullopt, "").empty());
}

TEST_CASE("a task's slurmstepd: the nearest ancestor of that name", "[doctor][containers]") {
  FakeRoot proc;
  proc.add_file("300/stat", "300 (gpudirect-launc) R 200 300 1 0 -1\n");
  proc.add_file("200/stat", "200 (bash (job) x) S 100 200 1 0 -1\n");  // a command with spaces and ')'
  proc.add_file("100/stat", "100 (slurmstepd) S 50 100 1 0 -1\n");
  proc.add_file("50/stat", "50 (slurmd) S 1 50 1 0 -1\n");
  CHECK(slurmstepd_ancestor(proc.path.string(), 300) == 100);
  CHECK(slurmstepd_ancestor(proc.path.string(), 200) == 100);
  CHECK_FALSE(slurmstepd_ancestor(proc.path.string(), 100));  // not its own
  CHECK_FALSE(slurmstepd_ancestor(proc.path.string(), 50));
  CHECK_FALSE(slurmstepd_ancestor(proc.path.string(), 999));  // gone

  proc.add_file("300/mountinfo", "900 800 0:99 / / rw - overlay overlay rw\n");
  proc.add_file("100/mountinfo", "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n");
  CHECK(container_reason(root_mount_of(proc.path.string(), 300), root_mount_of(proc.path.string(), 100), "") ==
        "its root is not its slurmstepd's");
  CHECK_FALSE(root_mount_of(proc.path.string(), 200));
}
