// Which Google gIB machine a node is, for the files nccl-gib ships per machine
// (/usr/local/gib/configs/tuner_config_<machine>.txtpb). The machine types share one network
// (8 CX-7 RoCE NICs, 2 gVNICs) and differ in their GPUs, so the GPUs' PCI device id tells them
// apart: H200 (10de:2335) is A3 Ultra (a3-ultragpu-8g, "a3u"), B200 (10de:2901) is A4
// (a4-highgpu-8g, "a4"). gib_machine= in plugstack.conf overrides it (another GPU, a new machine).
#pragma once

#include "gpudirect/topology.hpp"

#include <string>

namespace gpudirect {

struct GibMachine {
  std::string name;  // "a3u", "a4"; empty when the GPUs name no gIB machine
  std::string why;   // what the GPUs are, for the message when name is empty
};

GibMachine gib_machine(const Topology& topology);

}  // namespace gpudirect
