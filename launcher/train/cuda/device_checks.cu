// Host-buffer entry points to single device kernels, so the GPU check can compare them with the CPU
// code element by element (tests/gpu/train_cuda_check.cpp).
#include "train/cuda/cuda_training.hpp"
#include "train/cuda/gpt_cuda.cuh"

namespace gpudirect::train::cuda {
namespace {

template <typename T>
DeviceArray<T> upload(std::span<const T> host) {
  DeviceArray<T> device(host.size());
  GPUDIRECT_CUDA(cudaMemcpy(device.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return device;
}

template <typename T>
void download(std::span<T> host, const DeviceArray<T>& device) {
  GPUDIRECT_CUDA(cudaMemcpy(host.data(), device.get(), host.size() * sizeof(T), cudaMemcpyDeviceToHost));
}

}  // namespace

void adamw_step_on_device(const ParameterLayout& layout, const AdamWSettings& settings, std::span<float> parameters,
                          std::span<const float> gradients, std::span<float> m, std::span<float> v, float lr, float grad_scale, long t) {
  auto p = upload<float>(parameters), g = upload<float>(gradients), dm = upload<float>(m), dv = upload<float>(v);
  adamw_step(adamw_pieces(layout, {{0, layout.total()}}), p.get(), g.get(), dm.get(), dv.get(), settings, lr, grad_scale, t, nullptr);
  GPUDIRECT_CUDA(cudaDeviceSynchronize());
  download(parameters, p);
  download(m, dm);
  download(v, dv);
}

double sum_of_squares_on_device(std::span<const float> values) {
  auto x = upload<float>(values);
  DeviceArray<double> partials(kSumOfSquaresBlocks), result(1);
  sum_of_squares(result.get(), partials.get(), x.get(), values.size(), false, nullptr);
  GPUDIRECT_CUDA(cudaDeviceSynchronize());
  double sum = 0;
  GPUDIRECT_CUDA(cudaMemcpy(&sum, result.get(), sizeof sum, cudaMemcpyDeviceToHost));
  return sum;
}

}  // namespace gpudirect::train::cuda
