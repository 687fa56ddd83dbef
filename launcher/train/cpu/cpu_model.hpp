// The fp32 CPU implementation of Model: the reference every other implementation is tested against.
#pragma once

#include "train/model.hpp"

#include <cstddef>
#include <functional>
#include <memory>

namespace gpudirect::train {

// Keeps every activation backward needs, the attention probabilities included (B x H x T x T floats
// per layer), allocated once at construction: fine for tiny and small shapes, gigabytes at gpt2-124m.
// threads: OpenMP threads for the element-wise kernels and OpenBLAS threads for the matrix products;
// 0 or less means every CPU this process may run on (omp_get_max_threads()). OpenBLAS's thread count
// is process-wide, so the last model made sets it. Throws std::invalid_argument for a bad config.
//
// `gradient_memory`: where the gradient buffer lives (empty: the model's own memory). A data-parallel
// run passes the communicator's allocate/release, so that the ranks of one host reduce gradients
// reading each other's buffers in place instead of through staging slots.
struct GradientMemory {
  std::function<void*(std::size_t bytes)> allocate;
  std::function<void(void* buffer)> release;
};
std::unique_ptr<Model> make_cpu_model(const GptConfig& config, int threads, GradientMemory gradient_memory = {});

// The thread count make_cpu_model uses for threads <= 0.
int default_cpu_threads();

}  // namespace gpudirect::train
