// What a NIC is good for. The rules, first match wins:
//  unusable    wireless (class 0x0280, wl*/ww* names), USB (usb*, enx* names), or a function the
//              source lists without any OS device (no driver bound: an unassigned SR-IOV virtual
//              function, a port the container cannot see)
//  rdma        an OpenFabrics/RDMA device (mlx5_0, mlx5_bond_0, bnxt_re0, irdma0, efa_0, hfi1_0, cxi0), or class
//              0x0207 InfiniBand / 0x0208 fabric / 0x0c06 (older InfiniBand HCAs), Amazon EFA, HPE Slingshot
//  management  1GbE chipset parts (Intel I210/I211/I219/I350/82574/82576, Broadcom BCM5719/5720/5709,
//              Realtek RTL8111/8125) or a PCIe link below 1 GB/s (x1: no more than a few Gb/s)
//  ethernet    anything else of network class: plain high-speed Ethernet (gVNIC, ENA, virtio, X710)
#pragma once

#include "gpudirect/topology.hpp"

namespace gpudirect {

// Sets nic.kind and nic.kind_reason from the NIC's class, ids, names and link speed.
void classify_nic(Nic& nic);

}  // namespace gpudirect
