// NCCL on GPU memory: one GPU per rank (the local rank's among the visible ones), the unique id
// shared through the rendezvous store. Only compiled where CUDA and NCCL were found.
#pragma once

#include "bootstrap/session.hpp"
#include "comm/communicator.hpp"

#include <memory>

namespace gpudirect::comm {

int nccl_device_count();  // 0 when no GPU or no driver
std::unique_ptr<Communicator> make_nccl_communicator(bootstrap::Session& session);

}  // namespace gpudirect::comm
