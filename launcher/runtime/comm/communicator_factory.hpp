// Picks the communicator for a run: NCCL on GPUs when built with it and a GPU is visible,
// libfabric on host memory otherwise (or as asked).
#pragma once

#include "bootstrap/session.hpp"
#include "comm/communicator.hpp"
#include "comm/stream_priority.hpp"

#include <chrono>
#include <memory>
#include <string>

namespace gpudirect::comm {

struct CommunicatorOptions {
  std::string backend = "auto";                             // "auto", "nccl" or "libfabric"
  std::chrono::milliseconds timeout{30000};                 // a peer silent for this long is an error
  std::string reporter = "gpudirect-launch";                // the command, where the communicator itself must report
  StreamPriority stream_priority = StreamPriority::normal;  // NCCL's CUDA stream (stream_priority.hpp)
};

// Throws CommError (or std::invalid_argument) with the reason.
std::unique_ptr<Communicator> make_communicator(const CommunicatorOptions& options, bootstrap::Session& session);

bool nccl_available();  // built with NCCL and at least one GPU visible

}  // namespace gpudirect::comm
