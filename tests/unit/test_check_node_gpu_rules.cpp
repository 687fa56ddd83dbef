#include <catch2/catch.hpp>

#include "check_node/drain_reasons.hpp"
#include "check_node/gpu_rules.hpp"

using namespace gpudirect::launcher::check_node;

namespace {

Expectations h100_node() {
  Expectations e;
  e.machine_type = "a3-megagpu-8g";
  e.gpu_count = 8;
  e.gpu_model = "H100";
  e.gpu_pcie_generation = 5;
  e.gpu_pcie_width = 16;
  e.nvlink_links = 18;
  return e;
}

GpuProbe healthy(int count) {
  GpuProbe probe;
  probe.loaded = true;
  for (int i = 0; i < count; ++i) {
    GpuState gpu;
    gpu.index = static_cast<unsigned>(i);
    gpu.name = "NVIDIA H100 80GB HBM3";
    gpu.ecc_volatile_uncorrected = gpu.ecc_aggregate_uncorrected = 0;
    gpu.retired_pages_pending = gpu.remap_pending = gpu.remap_failed = false;
    for (int l = 0; l < 18; ++l) gpu.nvlinks.push_back({l, true});
    gpu.throttle_reasons = 0;
    gpu.pcie_max_generation = 5;
    gpu.pcie_width = gpu.pcie_max_width = 16;
    probe.gpus.push_back(gpu);
  }
  return probe;
}

std::vector<std::string> checks(const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  for (const Finding& f : findings) out.push_back(f.check + (f.severity == Severity::fail ? "" : " (warn)"));
  return out;
}

}  // namespace

TEST_CASE("healthy GPUs give no finding", "[check_node]") { CHECK(judge_gpus(healthy(8), h100_node(), 8).empty()); }

TEST_CASE("each GPU fault is its own finding on its GPU, a GPU hardware fault", "[check_node]") {
  GpuProbe probe = healthy(8);
  probe.gpus[3].ecc_volatile_uncorrected = 2;
  probe.gpus[1].retired_pages_pending = true;
  probe.gpus[2].remap_pending = true;
  probe.gpus[2].remap_failed = true;
  probe.gpus[4].nvlinks[3].active = false;
  probe.gpus[7].nvlinks[0].recovery = 4;
  const auto findings = judge_gpus(probe, h100_node(), 8);
  CHECK(checks(findings) == std::vector<std::string>{"gpu_retired_pages_pending", "gpu_row_remap_failed", "gpu_row_remap_pending",
                                                     "gpu_ecc_volatile", "gpu_nvlink_down", "gpu_nvlink_errors"});
  for (const Finding& f : findings) CHECK(f.fault == Fault::gpu_hardware);
  CHECK(findings[3].subject == "GPU 3");
  CHECK(describe(findings[3]) ==
        "FAIL GPU 3: uncorrected ECC errors since the driver loaded 2, expected 0; fix: drain the node, then reset the GPU (nvidia-smi -r "
        "-i 3) or reboot; if it comes back, repair the host");
  CHECK(findings[4].measured == "3");
  CHECK(drain_reason(findings, default_reasons()) == "XID");
}

TEST_CASE("aggregate ECC and NVLink replays warn without failing the node", "[check_node]") {
  GpuProbe probe = healthy(8);
  probe.gpus[0].ecc_aggregate_uncorrected = 5;
  probe.gpus[0].nvlinks[2].replay = 9;
  const auto findings = judge_gpus(probe, h100_node(), 8);
  CHECK(checks(findings) == std::vector<std::string>{"gpu_ecc_aggregate (warn)", "gpu_nvlink_replays (warn)"});
  CHECK_FALSE(any_failure(findings));
  CHECK(drain_reason(findings, default_reasons()).empty());
}

TEST_CASE("throttled clocks and a narrow or slow PCIe link are performance findings", "[check_node]") {
  GpuProbe probe = healthy(8);
  probe.gpus[5].throttle_reasons = kThrottleHwThermal;
  probe.gpus[6].pcie_width = 8;
  probe.gpus[7].pcie_max_generation = 4;
  probe.gpus[0].throttle_reasons = kThrottleSwThermal;
  const auto findings = judge_gpus(probe, h100_node(), 8);
  CHECK(checks(findings) ==
        std::vector<std::string>{"gpu_clocks_throttled (warn)", "gpu_clocks_throttled", "gpu_pcie_width", "gpu_pcie_generation"});
  CHECK(findings[1].measured == "HW thermal slowdown");
  CHECK(findings[2].measured == "x8");
  for (const Finding& f : findings) CHECK(f.fault == Fault::performance);
  CHECK(drain_reason(findings, default_reasons()) == "PERFORMANCE");
}

TEST_CASE("a missing GPU against the machine type and against gres is a hardware fault, another model a configuration one",
          "[check_node]") {
  GpuProbe probe = healthy(7);
  auto findings = judge_gpus(probe, h100_node(), 8);
  CHECK(checks(findings) == std::vector<std::string>{"gpu_count", "gpu_gres"});
  CHECK(findings[0].measured == "7");
  CHECK(findings[0].fault == Fault::gpu_hardware);
  probe = healthy(8);
  for (GpuState& gpu : probe.gpus) gpu.name = "NVIDIA H200";
  findings = judge_gpus(probe, h100_node(), 6);
  REQUIRE(findings.size() == 9);
  CHECK(findings[0].check == "gpu_gres");
  CHECK(findings[0].fault == Fault::configuration);
  CHECK(findings[1].check == "gpu_model");
  CHECK(drain_reason(findings, default_reasons()) == "unspecified");
}

TEST_CASE("without NVML a node that should have GPUs fails, one without GPUs passes", "[check_node]") {
  GpuProbe probe;
  probe.error = "libnvidia-ml.so.1 cannot be loaded";
  const auto findings = judge_gpus(probe, h100_node(), std::nullopt);
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].check == "gpu_nvml");
  CHECK(judge_gpus(probe, Expectations{}, std::nullopt).empty());
}

TEST_CASE("the drain reason is the gravest fault's word, configurable, and the comment lists the failures", "[check_node]") {
  std::vector<Finding> findings{{Severity::fail, Fault::configuration, "nic_mtu", "data NIC enp7s0", "MTU", "1500", "8244", "fix"},
                                {Severity::fail, Fault::performance, "gpu_pcie_width", "GPU 6", "PCIe link width", "x8", "x16", "fix"},
                                {Severity::warn, Fault::gpu_hardware, "gpu_ecc_aggregate", "GPU 1", "aggregate", "5", "0", "fix"}};
  ReasonMap reasons = default_reasons();
  CHECK(drain_reason(findings, reasons) == "PERFORMANCE");
  set_reason(reasons, "performance=slow node");
  CHECK(drain_reason(findings, reasons) == "slow node");
  CHECK_THROWS_WITH(set_reason(reasons, "network=x"), Catch::Contains("FAULT is gpu_hardware, performance or configuration"));
  CHECK_THROWS_WITH(set_reason(reasons, "performance"), Catch::Contains("expected FAULT=TEXT"));
  CHECK(drain_comment(findings) ==
        "gpudirect check-node: data NIC enp7s0: MTU 1500, expected 8244; GPU 6: PCIe link width x8, expected x16");
  findings.resize(1);
  CHECK(drain_reason(findings, default_reasons()) == "unspecified");
  findings[0].what = "a \"quoted\"\nvalue";
  CHECK(drain_comment(findings).find('"') == std::string::npos);
}

// check-node's verdicts become drains: one uncorrected error is already a bad GPU.
TEST_CASE("a single uncorrected volatile ECC error fails the GPU", "[check_node]") {
  GpuProbe probe = healthy(8);
  probe.gpus[2].ecc_volatile_uncorrected = 1;
  const auto findings = judge_gpus(probe, h100_node(), 8);
  CHECK(checks(findings) == std::vector<std::string>{"gpu_ecc_volatile"});
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].measured == "1");
  CHECK(drain_reason(findings, default_reasons()) == "XID");
}

// slurm-gcp's repair acts on the reason: a node with a GPU hardware fault must be drained XID even
// when it is also slow (a narrow PCIe link), whichever finding comes first.
TEST_CASE("a GPU hardware fault outranks a performance one in the drain reason", "[check_node]") {
  GpuProbe probe = healthy(8);
  probe.gpus[0].pcie_width = 8;
  probe.gpus[6].ecc_volatile_uncorrected = 3;
  auto findings = judge_gpus(probe, h100_node(), 8);
  CHECK(checks(findings) == std::vector<std::string>{"gpu_pcie_width", "gpu_ecc_volatile"});
  CHECK(drain_reason(findings, default_reasons()) == "XID");
  const std::vector<Finding> xid_and_narrow{
      {Severity::fail, Fault::performance, "gpu_pcie_width", "GPU 6", "PCIe link width", "x8", "x16", "fix"},
      {Severity::fail, Fault::gpu_hardware, "gpu_xid", "GPU at PCI 0000:04:00", "XID 79 in the kernel log", "1x", "none", "fix"}};
  CHECK(drain_reason(xid_and_narrow, default_reasons()) == "XID");
}
