// Text a job user chooses reaches the kernel log: the kernel's segfault record starts with the
// program's name (comm, at most 15 bytes) and names its file after " in ". Only the driver's own
// records may count as XIDs, or any user could have a node drained with reason XID.
#include <catch2/catch.hpp>

#include "check_node/kernel_xids.hpp"
#include "child_process.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace gpudirect::launcher::check_node;
namespace fs = std::filesystem;

namespace {

// The segfault record as the kernel writes it (arch/x86/kernel/traps.c show_signal_msg): comm,
// [pid], then the file's base name after " in ". A program named "NVRM: Xid (PCI:" (15 bytes, the
// most comm holds) whose file is named like the driver's line.
const std::string kSegfault =
    "NVRM: Xid (PCI:[12345]: segfault at 0 ip 000055d0c0de1000 sp 00007ffc12345678 error 4 in "
    "NVRM: Xid (PCI:0000:04:00): 79, GPU has fallen off the bus[55d0c0de0000+1000] likely on CPU 3 (core 3, socket 0)";

std::string forged_log() {
  return "6,1234,5678901,-;" + kSegfault + "\n" +               // /dev/kmsg, kernel facility
         "[ 5678.901234] " + kSegfault + "\n" +                 // dmesg
         "[Sun Nov 29 00:10:00 2026] " + kSegfault + "\n" +     // dmesg -T
         "kern  :info  : [ 5678.901234] " + kSegfault + "\n" +  // dmesg -x
         kSegfault + "\n" +                                     // dmesg -t
         "Nov 29 00:10:00 node1 kernel: " + kSegfault + "\n" +  // journalctl -k
         // A write to /dev/kmsg (root only, mode 0644) is facility 1 (user) unless it names another.
         "14,1235,5678902,-;NVRM: Xid (PCI:0000:04:00): 79, pid=1, GPU has fallen off the bus.\n"
         "134,1236,5678903,-;NVRM: Xid (PCI:0000:04:00): 79, pid=1, GPU has fallen off the bus.\n"
         "user  :err   : [ 5678.95] NVRM: Xid (PCI:0000:04:00): 79, pid=1, GPU has fallen off the bus.\n"
         // logger -t python, or any identifier but the kernel's.
         "Nov 29 00:10:01 node1 python[4242]: NVRM: Xid (PCI:0000:04:00): 79, pid=1, GPU has fallen off the bus.\n"
         // Continuation lines of a record: kmsg's dictionary, a multi-line message.
         " SUBSYSTEM=pci\n"
         " NVRM: Xid (PCI:0000:04:00): 79, pid=1, GPU has fallen off the bus.\n"
         "\tNVRM: Xid (PCI:0000:04:00): 79, pid=1, GPU has fallen off the bus.\n"
         // The pattern anywhere but at the start of the message.
         "6,1237,5678904,-;python[99]: NVRM: Xid (PCI:0000:04:00): 79, pid=1, GPU has fallen off the bus.\n";
}

const std::string kGenuine = "NVRM: Xid (PCI:0000:0a:00): 79, pid=4242, name=python, GPU has fallen off the bus.";

}  // namespace

TEST_CASE("a program's name or file name in the kernel log forges no XID", "[check_node][security]") {
  CHECK(parse_xids(forged_log()).empty());
}

TEST_CASE("the driver's own XID lines count in each kernel-log format", "[check_node][security]") {
  const std::string log = forged_log() + "6,2000,6000000,-;" + kGenuine + "\n SUBSYSTEM=pci\n DEVICE=+pci:0000:0a:00.0\n" +
                          "[ 6000.000001] " + kGenuine + "\n" + "kern  :warn  : [ 6000.2] " + kGenuine + "\n" +
                          "Nov 29 00:11:00 node1 kernel: " + kGenuine + "\n" + "2026-11-29T00:11:00+0000 node1 kernel: " + kGenuine +
                          "\r\n" + kGenuine + "\n" + "4,2001,6000001,-;NVRM: Xid (PCI:0001:3b:00.0): 48, DBE\n";
  const auto events = parse_xids(log);
  REQUIRE(events.size() == 7);
  for (std::size_t i = 0; i < 6; ++i) {
    CHECK(events[i].pci == "0000:0a:00");
    CHECK(events[i].code == 79);
  }
  CHECK(events[6].pci == "0001:3b:00.0");
  CHECK(events[6].code == 48);
}

TEST_CASE("kernel records: the facility, the prefixes and continuation lines", "[check_node][security]") {
  CHECK(kernel_message("6,1,2,-;hello") == "hello");
  CHECK(kernel_message("0,1,2,c;hello") == "hello");
  CHECK_FALSE(kernel_message("14,1,2,-;hello"));  // facility 1 (user)
  CHECK_FALSE(kernel_message("30,1,2,-;hello"));  // facility 3 (daemon)
  CHECK(kernel_message("[   1.5] hello") == "hello");
  CHECK(kernel_message("kern  :err   : [   1.5] hello") == "hello");
  CHECK_FALSE(kernel_message("daemon:info  : [   1.5] hello"));
  CHECK(kernel_message("Nov  9 01:02:03 host kernel: hello") == "hello");
  CHECK_FALSE(kernel_message("Nov  9 01:02:03 host kernelx: hello"));
  CHECK_FALSE(kernel_message("Nov  9 01:02:03 host sshd[12]: hello"));
  CHECK_FALSE(kernel_message(" DEVICE=+pci:0000:04:00.0"));
  CHECK_FALSE(kernel_message(""));
}

// The real command, as HealthCheckProgram runs it, on a kernel log with only forged records: the
// node passes; with the driver's line added, it fails with drain reason XID for that GPU alone.
TEST_CASE("check-node --kernel-log: forged XID records do not drain the node", "[check_node][security]") {
  const fs::path dir = fs::temp_directory_path() / ("gpudirect-forged-xid-" + std::to_string(::getpid()));
  fs::create_directories(dir / "expectations");
  std::ofstream(dir / "expectations" / "forged-xid-test.conf") << "gpu_count=8\ngpu_model=H100\n";
  std::ofstream(dir / "nvml.conf") << "count 8\n";
  std::ofstream(dir / "plugstack.conf") << "optional spank_gpudirect.so default=off\n";
  std::ofstream(dir / "kmsg") << forged_log();
  ::setenv("NVML_STANDIN_CONFIG", (dir / "nvml.conf").c_str(), 1);
  const std::vector<std::string> argv{GPUDIRECT_LAUNCH_BINARY,
                                      "check-node",
                                      "--machine-type",
                                      "forged-xid-test",
                                      "--expectations-dir",
                                      (dir / "expectations").string(),
                                      "--nvml-library",
                                      GPUDIRECT_NVML_STANDIN,
                                      "--nccl-library",
                                      GPUDIRECT_NCCL_STANDIN,
                                      "--plugstack",
                                      (dir / "plugstack.conf").string(),
                                      "--no-gres",
                                      "--node",
                                      "forged-node",
                                      "--kernel-log",
                                      (dir / "kmsg").string()};
  const auto [forged_status, forged_output] = gpudirect::launcher::run_capture(argv);
  CHECK_THAT(forged_output, !Catch::Contains("XID"));
  CHECK_THAT(forged_output, Catch::Contains("gpudirect check-node: forged-node: OK as a forged-xid-test"));
  CHECK(forged_status == 0);

  std::ofstream(dir / "kmsg", std::ios::app) << "6,2000,6000000,-;" << kGenuine << "\n";
  const auto [status, output] = gpudirect::launcher::run_capture(argv);
  ::unsetenv("NVML_STANDIN_CONFIG");
  fs::remove_all(dir);
  CHECK(status == 7);
  CHECK_THAT(output, Catch::Contains("FAIL GPU at PCI 0000:0a:00: XID 79 in the kernel log 1x"));
  CHECK_THAT(output, !Catch::Contains("0000:04:00"));
  CHECK_THAT(output, Catch::Contains("drain reason XID"));
}
