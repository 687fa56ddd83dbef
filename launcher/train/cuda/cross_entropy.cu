#include "train/cuda/cuda_check.cuh"
#include "train/cuda/fused_classifier.hpp"
#include "train/cuda/kernels.cuh"
#include "train/cuda/reductions.cuh"

namespace gpudirect::train::cuda {
namespace {

// One block per row: the max, the sum of exp(x - max), the loss in log-sum-exp form (exact even when
// the target's probability underflows), then the gradient from the same two numbers.
__global__ void softmax_cross_entropy_kernel(float* losses, bf16* dlogits, const float* logits, const std::int32_t* targets, float dloss,
                                             int V, int stride) {
  __shared__ float shared[kThreadsPerBlock / kWarpSize];
  const std::size_t at = static_cast<std::size_t>(blockIdx.x) * stride;
  const float* x = logits + at;
  float local_max = -INFINITY;
  for (int i = threadIdx.x; i < V; i += blockDim.x) local_max = fmaxf(local_max, x[i]);
  const float max = block_max(local_max, shared);
  float local_sum = 0.0f;
  for (int i = threadIdx.x; i < V; i += blockDim.x) local_sum += expf(x[i] - max);
  const float sum = block_sum(local_sum, shared);
  const int target = targets[blockIdx.x];
  if (threadIdx.x == 0) losses[blockIdx.x] = logf(sum) + max - x[target];
  if (dlogits == nullptr) return;
  const float inv = 1.0f / sum;
  for (int i = threadIdx.x; i < V; i += blockDim.x) {
    const float p = expf(x[i] - max) * inv;
    dlogits[at + i] = __float2bfloat16_rn(dloss * (p - (i == target ? 1.0f : 0.0f)));
  }
}

// --fused-classifier (fused_classifier.hpp): one block per row of bf16 logits, `stride` apart. Thread
// 0 reads the target's logit first (before the reductions' barriers, so before anything is
// overwritten); each thread keeps an online max and sum over columns tid, tid + blockDim, ...; the
// block takes the largest max and adds the sums rescaled to it; then each thread overwrites its
// columns with their gradients.
__global__ void fused_classifier_kernel(float* losses, bf16* logits, const std::int32_t* targets, float dloss, int V, int stride,
                                        bool write_dlogits) {
  __shared__ float shared[kThreadsPerBlock / kWarpSize];
  bf16* x = logits + static_cast<std::size_t>(blockIdx.x) * stride;
  const int target = targets[blockIdx.x];
  const float target_logit = threadIdx.x == 0 ? __bfloat162float(x[target]) : 0.0f;
  SoftmaxStats s;
  for (int i = threadIdx.x; i < V; i += blockDim.x) s = softmax_add(s, __bfloat162float(x[i]));
  const float max = block_max(s.max, shared);
  const float sum = block_sum(softmax_rescaled_sum(s, max), shared);
  if (threadIdx.x == 0) losses[blockIdx.x] = classifier_loss(max, sum, target_logit);
  if (!write_dlogits) return;
  const float inv = 1.0f / sum;
  for (int i = threadIdx.x; i < V; i += blockDim.x)
    x[i] = __float2bfloat16_rn(classifier_dlogit(__bfloat162float(x[i]), max, inv, dloss, i == target));
}

}  // namespace

void fused_classifier(float* losses, bf16* logits, const std::int32_t* targets, float dloss, int N, int V, int stride, bool write_dlogits,
                      cudaStream_t stream) {
  fused_classifier_kernel<<<static_cast<unsigned>(N), kThreadsPerBlock, 0, stream>>>(losses, logits, targets, dloss, V, stride,
                                                                                     write_dlogits);
  GPUDIRECT_LAUNCHED();
}

void softmax_cross_entropy(float* losses, bf16* dlogits, const float* logits, const std::int32_t* targets, float dloss, int N, int V,
                           int stride, cudaStream_t stream) {
  softmax_cross_entropy_kernel<<<static_cast<unsigned>(N), kThreadsPerBlock, 0, stream>>>(losses, dlogits, logits, targets, dloss, V,
                                                                                          stride);
  GPUDIRECT_LAUNCHED();
}

}  // namespace gpudirect::train::cuda
