#include "train/cuda/cuda_check.cuh"
#include "train/cuda/cuda_training.hpp"
#include "train/cuda/device_peak.hpp"

#include <cstdio>

namespace gpudirect::train::cuda {

std::string device_problem() {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    cudaGetLastError();  // reset the runtime's last error so the next check does not report this one
    return std::string("cudaGetDeviceCount: ") + cudaGetErrorString(rc);
  }
  if (count == 0) return "cudaGetDeviceCount: no CUDA device is visible (CUDA_VISIBLE_DEVICES empty?)";
  return "";
}

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

std::string cublas_problem() {
  try {
    cublas();
    return "";
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

DeviceInfo select_device(int local_rank) {
  const std::string problem = device_problem();
  if (!problem.empty()) throw std::runtime_error("gpudirect-launch train: no GPU for the CUDA model: " + problem);
  const int count = device_count();
  DeviceInfo info;
  info.index = (local_rank < 0 ? 0 : local_rank) % count;
  GPUDIRECT_CUDA(cudaSetDevice(info.index));
  cudaDeviceProp props{};
  GPUDIRECT_CUDA(cudaGetDeviceProperties(&props, info.index));
  info.name = props.name;
  char bus[32];
  std::snprintf(bus, sizeof bus, "%04x:%02x:%02x", props.pciDomainID, props.pciBusID, props.pciDeviceID);
  info.pci_bus = bus;
  int clock_khz = 0;
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, info.index) != cudaSuccess) {
    cudaGetLastError();
    clock_khz = 0;
  }
  info.peak_bf16_flops = dense_bf16_peak_flops(info.name, props.major, props.minor, props.multiProcessorCount, clock_khz);
  info.total_bytes = props.totalGlobalMem;
  return info;
}

std::size_t device_memory_free() {
  std::size_t free_bytes = 0, total_bytes = 0;
  GPUDIRECT_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

std::size_t device_memory_used() {
  std::size_t free_bytes = 0, total_bytes = 0;
  GPUDIRECT_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  return total_bytes - free_bytes;
}

}  // namespace gpudirect::train::cuda
