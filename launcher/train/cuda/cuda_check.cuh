// Turning CUDA and cuBLAS status codes into exceptions that name the call and where it was made.
#pragma once

#include "train/cuda/cublas_library.cuh"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace gpudirect::train::cuda {

inline void check_cuda(cudaError_t rc, const char* call, const char* file, int line) {
  if (rc != cudaSuccess)
    throw std::runtime_error(std::string("gpudirect-launch train (CUDA): ") + call + " failed at " + file + ":" + std::to_string(line) +
                             ": " + cudaGetErrorString(rc));
}

inline void check_cublas(cublasStatus_t rc, const char* call, const char* file, int line) {
  if (rc != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("gpudirect-launch train (cuBLAS): ") + call + " failed at " + file + ":" + std::to_string(line) +
                             ": " + cublas().status_string(rc));
}

}  // namespace gpudirect::train::cuda

#define GPUDIRECT_CUDA(call) ::gpudirect::train::cuda::check_cuda((call), #call, __FILE__, __LINE__)
#define GPUDIRECT_CUBLAS(call) ::gpudirect::train::cuda::check_cublas((call), #call, __FILE__, __LINE__)
// After a kernel launch: a bad configuration shows here, errors inside the kernel at the next sync.
#define GPUDIRECT_LAUNCHED() GPUDIRECT_CUDA(cudaGetLastError())
