// A CUDA event owned by an object, and the time between two of them: the backend measures exposed
// communication on the GPU's clock, where the host's clock would include unrelated queued work.
#pragma once

#include "train/cuda/cuda_check.cuh"

#include <cuda_runtime.h>

#include <algorithm>

namespace gpudirect::train::cuda {

class Event {
 public:
  explicit Event(bool timing) { GPUDIRECT_CUDA(cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault : cudaEventDisableTiming)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_{};
};

// Seconds from `start` to `end` (both recorded and complete); 0 when end came first.
inline double seconds_between(const Event& start, const Event& end) {
  float ms = 0;
  GPUDIRECT_CUDA(cudaEventElapsedTime(&ms, start.get(), end.get()));
  return std::max(0.0, static_cast<double>(ms) / 1e3);
}

}  // namespace gpudirect::train::cuda
