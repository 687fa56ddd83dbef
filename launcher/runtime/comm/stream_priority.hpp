// The priority of the NCCL communicator's CUDA stream (`train --nccl-high-priority`). CUDA numbers
// priorities backwards: cudaDeviceGetStreamPriorityRange gives the least (0, the default) and the
// greatest (a negative number, -5 on current GPUs); the scheduler starts blocks of a higher-priority
// stream's kernels first, so NCCL's kernels are not queued behind backward's. Plain C++, for the host test.
#pragma once

namespace gpudirect::comm {

enum class StreamPriority { normal, high };

// The priority to pass to cudaStreamCreateWithPriority, from the device's range.
constexpr int cuda_stream_priority(StreamPriority priority, int least, int greatest) {
  return priority == StreamPriority::high ? greatest : least;
}

}  // namespace gpudirect::comm
