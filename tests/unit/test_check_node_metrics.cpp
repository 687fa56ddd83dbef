#include <catch2/catch.hpp>

#include "check_node/node_metrics.hpp"

using namespace gpudirect::launcher::check_node;

TEST_CASE("check-node's metrics: passed, findings per check, the drain reason and the versions", "[check_node]") {
  NodeReport report;
  report.node = "a3-7";
  report.machine_type = "a3-megagpu-8g";
  report.findings = {{Severity::fail, Fault::gpu_hardware, "gpu_ecc_volatile", "GPU 3", "ECC", "2", "0", ""},
                     {Severity::fail, Fault::configuration, "nic_missing", "data NIC enp6s0", "is", "missing", "present", ""},
                     {Severity::fail, Fault::configuration, "nic_missing", "data NIC enp7s0", "is", "missing", "present", ""},
                     {Severity::warn, Fault::gpu_hardware, "gpu_ecc_aggregate", "GPU 1", "ECC", "5", "0", ""}};
  report.drain_reason = "XID";
  report.facts = {{"driver_version", "550.90.07"}, {"cuda_driver_version", 12040}, {"nccl_version", ""}};
  const std::string text = node_check_metrics(report, 1700000000).text();
  const std::string base = "node=\"a3-7\",machine_type=\"a3-megagpu-8g\"";
  CHECK_THAT(text, Catch::Contains("gpudirect_node_check_passed{" + base + "} 0\n"));
  CHECK_THAT(text, Catch::Contains("gpudirect_node_check_findings{" + base +
                                   ",check=\"gpu_ecc_volatile\",fault=\"gpu_hardware\",severity=\"fail\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("gpudirect_node_check_findings{" + base +
                                   ",check=\"nic_missing\",fault=\"configuration\",severity=\"fail\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("gpudirect_node_check_findings{" + base +
                                   ",check=\"gpu_ecc_aggregate\",fault=\"gpu_hardware\",severity=\"warn\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("gpudirect_node_check_drain_reason{" + base + ",reason=\"XID\"} 1\n"));
  CHECK_THAT(text,
             Catch::Contains("gpudirect_node_check_info{" + base + ",driver_version=\"550.90.07\",cuda_driver_version=\"12040\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("gpudirect_node_check_timestamp_seconds{" + base + "} 1700000000\n"));
  report.findings.resize(0);
  const std::string passing = node_check_metrics(report, 1).text();
  CHECK_THAT(passing, Catch::Contains("gpudirect_node_check_passed{" + base + "} 1\n"));
  CHECK(passing.find("gpudirect_node_check_drain_reason{") == std::string::npos);
  CHECK(passing.find("gpudirect_node_check_findings{") == std::string::npos);
}
