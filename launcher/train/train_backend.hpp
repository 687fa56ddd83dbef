// Where a data-parallel run's parameters, gradients and AdamW state live and how they travel between
// ranks: host memory over a host communicator (host_backend.hpp) or GPU memory over NCCL
// (cuda/cuda_training.hpp). The Trainer owns the step loop; a backend only moves and updates buffers,
// so both backends run the same loop, checkpoints and checks.
#pragma once

#include "comm/communicator.hpp"
#include "train/checkpoint.hpp"

#include <cstddef>
#include <span>

namespace gpudirect::train {

// A step calls, in this order: begin_gradients, gradient_ready (from the model's backward of the
// last micro-batch), finish_gradients, global_sum_of_squares, optimizer_step, gather_parameters.
// Every call except rank/world/zero1/bucket_count/gradient_ready is collective: every rank makes it,
// in the same order.
class TrainBackend {
 public:
  virtual ~TrainBackend() = default;

  virtual int rank() const = 0;
  virtual int world() const = 0;
  // ZeRO-1 in effect: asked for and more than one rank (one rank has nothing to shard).
  virtual bool zero1() const = 0;
  virtual std::size_t bucket_count() const = 0;

  // Rank 0's parameters to every rank.
  virtual void broadcast_parameters() = 0;

  // Before the last micro-batch's backward: its gradient buckets travel as backward finishes them.
  virtual void begin_gradients() = 0;
  // The model's GradientReady: [offset, offset+count) of the gradient buffer is final.
  virtual void gradient_ready(std::size_t offset, std::size_t count) = 0;
  // Launches what backward did not report, waits for every bucket and leaves the averaged gradients
  // in this rank's owned elements. Returns the seconds of communication backward did not hide.
  virtual double finish_gradients() = 0;
  // The global sum of squares of the averaged gradients; adds the seconds spent communicating.
  virtual double global_sum_of_squares(double& exposed_seconds) = 0;
  // AdamW on this rank's owned elements, gradients scaled by grad_scale first; t is 1-based.
  virtual void optimizer_step(float lr, float grad_scale, long t) = 0;
  // Every rank's updated elements to every rank (ZeRO-1), and the parameters ready for the next
  // forward once it returns. Returns the seconds of communication (0 without ZeRO-1).
  virtual double gather_parameters() = 0;

  // The full AdamW moments for a checkpoint: assembled from every rank's shard under ZeRO-1 (every
  // rank passes full-size buffers), else rank 0's own (the others pass empty buffers).
  virtual void gather_moments(std::span<float> first, std::span<float> second) = 0;
  // Rank 0's `checkpoint` (parameters and full moments) to every rank's model and optimizer; the
  // other ranks' `checkpoint` is empty on entry and may serve as their receive buffers.
  virtual void load_state(Checkpoint& checkpoint) = 0;

  // Small host values (flags, the step, the per-step report, checksums): rank 0's to every rank, and
  // every rank's `count` values to `all` in rank order.
  virtual void broadcast_host(void* values, std::size_t count, comm::DataType type) = 0;
  virtual void all_gather_host(const void* mine, void* all, std::size_t count, comm::DataType type) = 0;
};

}  // namespace gpudirect::train
