// --backend nccl | libfabric | auto: the CUDA model only where it can run with one GPU per local rank.
#include <catch2/catch.hpp>

#include "train/backend_decision.hpp"

using namespace gpudirect::train;
using Catch::Contains;

namespace {
CudaSupport gpus(int devices) {
  CudaSupport s;
  s.built = true;
  s.devices = devices;
  return s;
}
}  // namespace

TEST_CASE("backend: auto takes the CUDA model with a GPU per local rank and cuBLAS", "[train]") {
  const BackendDecision d = decide_backend("auto", gpus(8), 8);
  CHECK(d.cuda);
  CHECK(d.refusal.empty());
  CHECK(decide_backend("nccl", gpus(8), 8).cuda);
  CHECK_FALSE(decide_backend("libfabric", gpus(8), 8).cuda);
}

TEST_CASE("backend: auto never puts two local ranks on one GPU, nccl refuses it", "[train]") {
  const BackendDecision automatic = decide_backend("auto", gpus(1), 4);
  CHECK_FALSE(automatic.cuda);
  CHECK_THAT(automatic.reason, Contains("4 ranks on this node but 1 visible GPU(s)"));
  const BackendDecision nccl = decide_backend("nccl", gpus(2), 3);
  CHECK_FALSE(nccl.cuda);
  CHECK_THAT(nccl.refusal, Contains("--backend nccl: 3 ranks on this node but 2 visible GPU(s)") && Contains("--backend libfabric"));
}

TEST_CASE("backend: auto needs cuBLAS too", "[train]") {
  CudaSupport s = gpus(8);
  s.cublas_problem = "libcublas.so.13: cannot open shared object file";
  const BackendDecision d = decide_backend("auto", s, 1);
  CHECK_FALSE(d.cuda);
  CHECK_THAT(d.reason, Contains("cuBLAS does not load (libcublas.so.13"));
  CHECK_THAT(decide_backend("nccl", s, 1).refusal, Contains("cuBLAS does not load"));
}

TEST_CASE("backend: no device or no CUDA build means the CPU model, and nccl is refused naming why", "[train]") {
  CudaSupport none = gpus(0);
  none.device_problem = "cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version";
  CHECK_FALSE(decide_backend("auto", none, 1).cuda);
  CHECK_THAT(decide_backend("nccl", none, 1).refusal, Contains("no CUDA device here (cudaGetDeviceCount: CUDA driver version"));
  const CudaSupport unbuilt;
  CHECK_FALSE(decide_backend("auto", unbuilt, 1).cuda);
  CHECK_THAT(decide_backend("nccl", unbuilt, 1).refusal, Contains("built without CUDA"));
}
