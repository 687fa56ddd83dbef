// The CPU backend: parameters, gradients and AdamW state in host memory, gradient buckets averaged
// by GradientSync over a host communicator (libfabric, shared memory, loopback).
#pragma once

#include "comm/communicator.hpp"
#include "train/cpu/cpu_model.hpp"
#include "train/model.hpp"
#include "train/train_backend.hpp"
#include "train/train_settings.hpp"

#include <memory>

namespace gpudirect::train {

// `model`'s parameters() and gradients() must be host memory that stays put (the CPU model, a test's
// model); `comm` must move host memory. Both must outlive the backend.
std::unique_ptr<TrainBackend> make_host_backend(Model& model, comm::Communicator& comm, const TrainSettings& settings);

// Where the CPU model's gradients belong for this backend: the communicator's memory, so the ranks
// of one host reduce them reading each other's buffers in place instead of through staging slots.
GradientMemory gradients_in_communicator_memory(comm::Communicator& comm);

}  // namespace gpudirect::train
