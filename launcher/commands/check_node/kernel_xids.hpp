// XID events the NVIDIA driver wrote to the kernel log ("NVRM: Xid (PCI:0000:04:00): 79, pid=...,
// GPU has fallen off the bus."). NVML reports XIDs only while a program waits for them, the kernel
// log keeps them since boot. Only the XIDs that mean the GPU or its links are faulty fail the node;
// the ones a program causes (13, 31, 43 ...) do not.
#pragma once

#include "check_node/finding.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpudirect::launcher::check_node {

struct XidEvent {
  std::string pci;  // "0000:04:00"
  int code = 0;
  std::string text;  // the log line, bounded
};

// The XIDs of NVIDIA's "Xid errors" table that point at the hardware: 48 (double-bit ECC), 63/64
// (row remapping), 74 (NVLink), 79 (fallen off the bus), 92 (high single-bit ECC rate), 94/95
// (contained/uncontained ECC), 119/120 (GSP), 140 (unrecovered ECC).
bool hardware_xid(int code);

// The message of one kernel-log line as the kernel itself wrote it, after the line's prefix; empty
// when the line is not a kernel record. Formats: /dev/kmsg ("PRIO,SEQ,USEC,FLAGS;MESSAGE", kernel
// facility 0 only), dmesg ("[  12.3] MESSAGE", with -T, with -x's "kern  :err   : " where only kern
// counts, with -t none), journalctl -k ("Nov 29 00:00:00 HOST kernel: MESSAGE", only the kernel
// identifier counts). A continuation line (starting with a blank) is never a record.
std::optional<std::string> kernel_message(std::string line);

// The XIDs the driver logged: only messages that start with the driver's own "NVRM: Xid (PCI:...):
// CODE" count, so a program's name or file name in a kernel record (the segfault line) forges none.
std::vector<XidEvent> parse_xids(const std::string& log);

// One finding per GPU and hardware XID code, with how often it was seen.
std::vector<Finding> judge_xids(const std::vector<XidEvent>& events);

// The kernel log: /dev/kmsg read without blocking (all records since boot), or a file (tests).
// Empty when it cannot be read; `error` then says why.
std::string read_kernel_log(const std::string& path, std::string& error);

}  // namespace gpudirect::launcher::check_node
