// Host-buffer entry points to single device kernels, so the GPU check can compare them with the CPU
// code element by element (tests/gpu/train_cuda_check.cpp). They run on the legacy default stream and
// synchronise: checks, not training.
#include "train/cuda/cuda_training.hpp"
#include "train/cuda/gpt_cuda.cuh"

#include <algorithm>
#include <stdexcept>
#include <vector>

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

void attention_on_device(AttentionKind attention, std::span<const float> qkv, std::span<const float> dout, int B, int T, int C, int NH,
                         std::span<float> out, std::span<float> dqkv) {
  const std::size_t btc = static_cast<std::size_t>(B) * T * C, rows = static_cast<std::size_t>(B) * NH * T;
  if (qkv.size() != 3 * btc || dqkv.size() != 3 * btc || dout.size() != btc || out.size() != btc)
    throw std::invalid_argument("attention_on_device: qkv and dqkv need 3 x B x T x C values, dout and out B x T x C");
  std::vector<bf16> host(3 * btc);
  std::transform(qkv.begin(), qkv.end(), host.begin(), [](float x) { return __float2bfloat16_rn(x); });
  auto d_qkv = upload<bf16>(host);
  std::transform(dout.begin(), dout.end(), host.begin(), [](float x) { return __float2bfloat16_rn(x); });
  auto d_dout = upload<bf16>(std::span<const bf16>(host.data(), btc));
  DeviceArray<bf16> d_out(btc), d_dqkv(3 * btc);
  if (attention == AttentionKind::tensor_core) {
    const std::size_t scores = rows * static_cast<std::size_t>(T);
    DeviceArray<bf16> probs(scores), dscores(scores), qkv_heads(3 * btc), dqkv_heads(3 * btc), heads(btc);
    DeviceArray<float> scores_scratch(scores);
    const TensorCoreScratch scratch{qkv_heads.get(), dqkv_heads.get(), heads.get(), scores_scratch.get(), dscores.get()};
    cublasHandle_t handle{};
    GPUDIRECT_CUBLAS(cublas().create(&handle));
    attention_forward_tensor_core(handle, d_out.get(), probs.get(), d_qkv.get(), scratch, B, T, C, NH, nullptr);
    attention_backward_tensor_core(handle, d_dqkv.get(), d_dout.get(), d_qkv.get(), probs.get(), scratch, B, T, C, NH, nullptr);
    GPUDIRECT_CUDA(cudaDeviceSynchronize());
    cublas().destroy(handle);
  } else {
    DeviceArray<float> lse(rows), delta(rows);
    attention_forward(d_out.get(), lse.get(), d_qkv.get(), B, T, C, NH, nullptr);
    attention_backward(d_dqkv.get(), delta.get(), d_dout.get(), d_qkv.get(), d_out.get(), lse.get(), B, T, C, NH, nullptr);
    GPUDIRECT_CUDA(cudaDeviceSynchronize());
  }
  GPUDIRECT_CUDA(cudaMemcpy(host.data(), d_out.get(), btc * sizeof(bf16), cudaMemcpyDeviceToHost));
  std::transform(host.begin(), host.begin() + static_cast<std::ptrdiff_t>(btc), out.begin(), [](bf16 x) { return __bfloat162float(x); });
  GPUDIRECT_CUDA(cudaMemcpy(host.data(), d_dqkv.get(), 3 * btc * sizeof(bf16), cudaMemcpyDeviceToHost));
  std::transform(host.begin(), host.end(), dqkv.begin(), [](bf16 x) { return __bfloat162float(x); });
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
