#include "check_node/nic_rules.hpp"

#include <string>

namespace gpudirect::launcher::check_node {
namespace {

Finding config(std::string check, std::string subject, std::string what, std::string measured, std::string expected, std::string fix) {
  return {Severity::fail,  Fault::configuration, std::move(check),    std::move(subject),
          std::move(what), std::move(measured),  std::move(expected), std::move(fix)};
}

}  // namespace

std::vector<Finding> judge_nics(const SysfsView& view, const Expectations& expected) {
  std::vector<Finding> out;
  for (const NicState& nic : view.data_nics) {
    const std::string subject = "data NIC " + nic.name;
    if (!nic.present) {
      out.push_back(config("nic_missing", subject, "is", "missing", "present (" + expected.machine_type + ")",
                           "the image names its NICs otherwise (ip -br link), or the NIC is gone: fix data_nics= in the expectations, "
                           "or repair the host"));
      continue;
    }
    if (nic.operstate != "up")
      out.push_back(config("nic_down", subject, "operstate", nic.operstate, "up",
                           "ip link set " + nic.name + " up; check the VM's network attachment"));
    else if (nic.carrier && !*nic.carrier)
      out.push_back(config("nic_no_carrier", subject, "carrier", "none", "carrier",
                           "the link has no peer: check the VPC attachment, or repair the host"));
    if (expected.data_nic_mtu && nic.mtu && *nic.mtu != *expected.data_nic_mtu)
      out.push_back(config("nic_mtu", subject, "MTU", std::to_string(*nic.mtu), std::to_string(*expected.data_nic_mtu),
                           "ip link set " + nic.name + " mtu " + std::to_string(*expected.data_nic_mtu) +
                               " (and the VPC's MTU: the A3 Mega blueprint sets 8244)"));
    if (expected.data_nic_speed_mbps && nic.speed_mbps && *nic.speed_mbps < *expected.data_nic_speed_mbps)
      out.push_back({Severity::fail, Fault::performance, "nic_speed", subject, "link speed", std::to_string(*nic.speed_mbps) + " Mb/s",
                     std::to_string(*expected.data_nic_speed_mbps) + " Mb/s",
                     "the NIC negotiated a slower link: reboot; if it stays, repair the host"});
  }
  if (expected.rdma_devices && static_cast<int>(view.rdma_devices.size()) != *expected.rdma_devices)
    out.push_back(config("rdma_count", "RDMA devices", "count", std::to_string(view.rdma_devices.size()),
                         std::to_string(*expected.rdma_devices),
                         "check the RDMA driver (ibv_devices lists them; mlx5_core loaded?), or repair the host"));
  for (const RdmaPort& port : view.rdma_ports)
    if (port.state != "ACTIVE")
      out.push_back(config("rdma_port", "RDMA port " + port.device + "/" + port.port, "state", port.state, "ACTIVE",
                           "the RoCE/IB link is not up (ibstat " + port.device + "): check the cable or VPC; repair the host if it stays"));
  if (expected.numa_nodes && view.numa_nodes && *view.numa_nodes != *expected.numa_nodes)
    out.push_back({Severity::fail, Fault::performance, "numa_nodes", "NUMA nodes", "count", std::to_string(*view.numa_nodes),
                   std::to_string(*expected.numa_nodes),
                   "the VM's NUMA layout differs from its type (numactl -H): check the machine type"});
  return out;
}

}  // namespace gpudirect::launcher::check_node
