// One thing the node check found: what, where, measured against what was expected, and the fix;
// and which kind of fault it is, which decides the drain reason (drain_reasons.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace gpudirect::launcher::check_node {

// gpu_hardware: the GPU itself is faulty (ECC, row remapping, XID, NVLink, a GPU missing): a host
// to repair. performance: the node works, slower than its type should (throttled clocks, a PCIe
// link or NIC below its speed). configuration: the node's setup (NICs down, MTU, the stack).
enum class Fault { gpu_hardware, performance, configuration };
// fail: the node should not take jobs (drained with --drain, exit 7); warn: printed, no drain.
enum class Severity { fail, warn };

std::string_view to_string(Fault fault);
std::string_view to_string(Severity severity);

struct Finding {
  Severity severity = Severity::fail;
  Fault fault = Fault::configuration;
  std::string check;     // a stable id for tools and metrics: "gpu_ecc_volatile", "nic_mtu" ...
  std::string subject;   // "GPU 3 (00000000:07:00.0)", "data NIC enp7s0", "NCCL net plugin"
  std::string what;      // "uncorrected volatile ECC errors"
  std::string measured;  // "2"
  std::string expected;  // "0"
  std::string fix;       // what the operator does about it
};

// "FAIL GPU 3 (...): uncorrected volatile ECC errors 2, expected 0; fix: ..." (no node, no prefix).
std::string describe(const Finding& finding);
// "GPU 3: uncorrected volatile ECC errors 2, expected 0": short, for the node's comment.
std::string summary(const Finding& finding);
nlohmann::json to_json(const Finding& finding);

bool any_failure(const std::vector<Finding>& findings);

}  // namespace gpudirect::launcher::check_node
