// `train --nccl-high-priority` (comm/stream_priority.hpp): the priority handed to
// cudaStreamCreateWithPriority is the device's greatest (CUDA counts down: -5 on current GPUs) when
// asked, its least (0, the default stream priority) otherwise; and the switch reaches the
// communicator's options only for the CUDA model.
#include <catch2/catch.hpp>

#include "comm/communicator_factory.hpp"
#include "comm/stream_priority.hpp"
#include "train/train_options.hpp"

using namespace gpudirect::comm;

TEST_CASE("NCCL stream priority: greatest of the device's range when high, least otherwise", "[train][comm]") {
  // cudaDeviceGetStreamPriorityRange on sm_90: least 0, greatest -5.
  CHECK(cuda_stream_priority(StreamPriority::high, 0, -5) == -5);
  CHECK(cuda_stream_priority(StreamPriority::normal, 0, -5) == 0);
  // A device without priorities reports 0 and 0: both are 0.
  CHECK(cuda_stream_priority(StreamPriority::high, 0, 0) == 0);
  CommunicatorOptions options;
  CHECK(options.stream_priority == StreamPriority::normal);
}

TEST_CASE("NCCL stream priority: --nccl-high-priority is a switch of the CUDA run only", "[train][command]") {
  using namespace gpudirect::launcher::train_command;
  TrainOptions o;
  CHECK_FALSE(speed_for(o, true, "").nccl_high_priority);
  o.speed.nccl_high_priority = true;
  CHECK(speed_for(o, true, "").nccl_high_priority);
  CHECK_THROWS_WITH(speed_for(o, false, ""), Catch::Contains("--nccl-high-priority is a switch of the CUDA model"));
}
