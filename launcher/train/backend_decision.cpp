#include "train/backend_decision.hpp"

namespace gpudirect::train {

namespace {
// Empty when the CUDA model can run here with one GPU per local rank; otherwise why not.
std::string cuda_problem(const CudaSupport& s, int local_ranks) {
  if (!s.built)
    return "this gpudirect-launch was built without CUDA (no nvcc, cuBLAS or NCCL when it was configured), so it has no CUDA model";
  if (!s.device_problem.empty()) return "no CUDA device here (" + s.device_problem + ")";
  if (!s.cublas_problem.empty()) return "cuBLAS does not load (" + s.cublas_problem + ")";
  if (local_ranks > s.devices)
    return std::to_string(local_ranks) + " ranks on this node but " + std::to_string(s.devices) +
           " visible GPU(s): ranks would share a GPU";
  return {};
}
}  // namespace

BackendDecision decide_backend(std::string_view asked, const CudaSupport& support, int local_ranks) {
  BackendDecision d;
  if (asked == "libfabric") return d;
  const std::string problem = cuda_problem(support, local_ranks);
  if (asked == "nccl") {
    if (problem.empty())
      d.cuda = true;
    else
      d.refusal = "--backend nccl: " + problem +
                  "; run one rank per GPU on a GPU node (rebuild with CUDA where it is missing), or use "
                  "--backend libfabric for the CPU model";
    return d;
  }
  d.cuda = problem.empty();
  d.reason = d.cuda ? "a GPU per local rank and cuBLAS" : problem;
  return d;
}

}  // namespace gpudirect::train
