// Whether a training run uses the CUDA model over NCCL or the fp32 CPU model over libfabric, decided
// from what this node offers. Pure, so every rule is tested without a GPU.
#pragma once

#include <string>
#include <string_view>

namespace gpudirect::train {

// What this build and node offer the CUDA model (filled by the caller from train/cuda/).
struct CudaSupport {
  bool built = false;          // this binary has the CUDA model (CUDA, cuBLAS and NCCL were found)
  std::string device_problem;  // empty when a CUDA device is usable, else why not
  std::string cublas_problem;  // empty when cuBLAS loads, else why not
  int devices = 0;             // visible CUDA devices
};

struct BackendDecision {
  bool cuda = false;
  std::string refusal;  // --backend nccl cannot run here: why, and what to do (a usage error)
  std::string reason;   // --backend auto: why it chose what it chose (for the start line)
};

// asked: "nccl", "libfabric" or "auto"; local_ranks: this node's ranks, one GPU each (two ranks on
// one GPU would collide: NCCL refuses a communicator with a GPU twice).
BackendDecision decide_backend(std::string_view asked, const CudaSupport& support, int local_ranks);

}  // namespace gpudirect::train
