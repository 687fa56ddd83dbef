// Which Google gIB machine a node is, for the files nccl-gib ships per machine
// (/usr/local/gib/configs/tuner_config_<machine>.txtpb). The GPUs' PCI device id tells them apart:
// H200 (10de:2335) is A3 Ultra (a3-ultragpu-8g, "a3u"), B200 (10de:2901) is A4 (a4-highgpu-8g,
// "a4"), GB200 (10de:2941) is A4X (a4x-highgpu-4g, "a4x", arm64). gib_machine= in plugstack.conf
// overrides it (another GPU, a new machine).
//
// A3 Ultra and A4 share one network (8 CX-7 RoCE NICs, 2 gVNICs) and the values Google bakes into
// their images are public (docs/profiles.md); A4X's are not (no public image or job script sets its
// tuner config or the NCCL_IB_* values), so gib_image_machine() is empty there and the profile
// leaves those variables to NCCL/gIB.
#pragma once

#include "gpudirect/topology.hpp"

#include <string>

namespace gpudirect {

struct GibMachine {
  std::string name;  // "a3u", "a4", "a4x"; empty when the GPUs name no gIB machine
  std::string why;   // what the GPUs are, for the message when name is empty
};

GibMachine gib_machine(const Topology& topology);

// The machine whose image values (tuner config, NCCL_IB_TC ...) the gib profile may set: the name,
// except for a machine whose values are not public (a4x), where it is "".
std::string gib_image_machine(const GibMachine& machine);

}  // namespace gpudirect
