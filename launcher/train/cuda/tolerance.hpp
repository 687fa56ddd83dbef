// How the CUDA model (bf16 weights and activations, fp32 accumulation) is compared with the fp32 CPU
// reference. Element-wise bounds are meaningless at bf16 precision for values near zero, so a tensor
// is compared as a whole: its relative L2 error ||got - want|| / ||want|| (with an absolute floor for
// tensors that are all but zero), plus the worst element for the report.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace gpudirect::train::cuda {

// The bounds tests/gpu/check_cuda_training.sh applies (the reasons are in tolerance.cpp).
struct Tolerance {
  double relative_l2 = 5e-2;    // per gradient tensor
  double absolute_l2 = 1e-6;    // a tensor whose reference norm is below this passes when the difference is too
  double loss_relative = 1e-2;  // the mean cross-entropy
};

struct Comparison {
  double reference_norm = 0;   // ||want||
  double difference_norm = 0;  // ||got - want||
  double relative_l2 = 0;      // difference / reference (0 when both are 0)
  double max_abs = 0;          // worst element
  std::size_t max_index = 0;
  bool finite = true;  // every element of got is finite
};

// Throws std::invalid_argument when the sizes differ.
Comparison compare(std::span<const float> want, std::span<const float> got);
bool within(const Comparison& c, const Tolerance& t);
bool loss_within(double want, double got, const Tolerance& t);
// One line: "rel L2 1.2e-03, max |diff| 4.5e-05 at [17], |ref| 3.2e-01".
std::string describe(const Comparison& c);

}  // namespace gpudirect::train::cuda
