// The doctor's check inside a container: which marker shows it is one, which of the mode's mounts
// are missing there, which variables name them, and the mount that fixes it.
#include <catch2/catch.hpp>

#include "doctor/container_check.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

using namespace gpudirect;
using namespace gpudirect::launcher;

namespace {

struct FakeRoot {
  std::filesystem::path path;
  FakeRoot() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gpudirect-container-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~FakeRoot() { std::filesystem::remove_all(path); }
  void add_file(const std::string& relative, const std::string& text = "") {
    std::filesystem::create_directories((path / relative).parent_path());
    std::ofstream(path / relative) << text;
  }
  void add_dir(const std::string& relative) { std::filesystem::create_directories(path / relative); }
};

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
