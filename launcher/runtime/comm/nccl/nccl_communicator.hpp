// NCCL on GPU memory: one GPU per rank (the local rank's among the visible ones), the unique id
// shared through the rendezvous store. Only compiled where CUDA and NCCL were found.
// A watchdog aborts the communicator (ncclCommAbort; the communicator is non-blocking so nothing
// waits inside NCCL) when a collective runs longer than `timeout`, when NCCL reports an error, or
// when the rendezvous says a rank died; waits then fail with one line naming the collective.
#pragma once

#include "bootstrap/session.hpp"
#include "comm/communicator.hpp"
#include "comm/stream_priority.hpp"

#include <chrono>
#include <memory>

namespace gpudirect::comm {

int nccl_device_count();  // 0 when no GPU or no driver
// priority: of the communicator's CUDA stream, in the device's range (stream_priority.hpp).
std::unique_ptr<Communicator> make_nccl_communicator(bootstrap::Session& session, std::chrono::milliseconds timeout,
                                                     StreamPriority priority = StreamPriority::normal);

}  // namespace gpudirect::comm
