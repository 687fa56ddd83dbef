// The GPU backend of the Trainer. Two streams: the model's (compute) and the NCCL communicator's
// (communication). When backward has enqueued the kernels of a gradient bucket, an event on the
// compute stream orders that bucket's all-reduce (or reduce-scatter) on the communication stream
// after them, so backward continues while the bucket travels. The optimizer waits for the last
// collective with another event. Exposed communication is measured on the GPU's clock: from the end
// of backward to the end of the last gradient collective, plus the norm all-reduce and the parameter
// all-gather under ZeRO-1 (nothing hides those).
#include "train/cuda/cuda_event.cuh"
#include "train/cuda/cuda_training.hpp"
#include "train/cuda/gpt_cuda.cuh"
#include "train/cuda/memory_plan.hpp"
#include "train/cuda/multi_tensor_adamw.hpp"
#include "train/gradient_buckets.hpp"
#include "train/zero1_shards.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace gpudirect::train::cuda {
namespace {

class CudaBackend final : public TrainBackend {
 public:
  CudaBackend(CudaGpt& model, comm::Communicator& comm, const TrainSettings& settings)
      : model_(model),
        comm_(comm),
        adamw_settings_(settings.adamw),
        world_(comm.size()),
        rank_(comm.rank()),
        zero1_(zero1_in_effect(settings, comm.size())),
        compute_(model.stream()),
        comm_stream_(static_cast<cudaStream_t>(comm.cuda_stream())),
        buckets_(plan_buckets(model.layout().tensors(), settings.first_bucket_bytes, settings.bucket_bytes)),
        tracker_(buckets_),
        owned_(zero1_ ? owned_segments(buckets_, world_, rank_) : std::vector<Segment>{{0, model.layout().total()}}),
        state_at_(zero1_ ? state_offsets(buckets_, world_, rank_) : std::vector<std::size_t>{}),
        pieces_(adamw_pieces(model.layout(), owned_)),
        table_(multi_tensor_table(pieces_, settings.adamw.weight_decay)),
        ready_(false),
        backward_done_(true),
        grads_done_(true),
        comm_start_(true),
        comm_end_(true),
        partials_(kSumOfSquaresBlocks),
        sum_of_squares_(1),
        scratch_(kScratchBytes) {
    if (comm.memory() != comm::MemoryKind::cuda || comm_stream_ == nullptr)
      throw std::invalid_argument("gpudirect-launch train: the CUDA model needs a CUDA communicator (--backend nccl), not " +
                                  comm.backend_name());
    std::size_t state = 0;
    for (const Segment& s : owned_) state += s.count;
    m_ = DeviceArray<float>(state);
    v_ = DeviceArray<float>(state);
    GPUDIRECT_CUDA(cudaMemsetAsync(m_.get(), 0, state * sizeof(float), compute_));
    GPUDIRECT_CUDA(cudaMemsetAsync(v_.get(), 0, state * sizeof(float), compute_));
    if (zero1_) {
      // One staging buffer for every bucket: all that uses it runs on the communication stream, in order.
      std::size_t largest = 0;
      for (const Bucket& b : buckets_) largest = std::max(largest, padded_count(b));
      staging_ = DeviceArray<float>(largest);
      GPUDIRECT_CUDA(cudaMemsetAsync(staging_.get(), 0, largest * sizeof(float), compute_));
    }
    if (model.speed().multi_tensor_adamw) {
      // The owned pieces as one table on the device (--multi-tensor-adamw; counted in the memory plan).
      table_on_device_ = DeviceArray<MultiTensorPiece>(table_.pieces.size());
      GPUDIRECT_CUDA(cudaMemcpyAsync(table_on_device_.get(), table_.pieces.data(), table_.pieces.size() * sizeof(MultiTensorPiece),
                                     cudaMemcpyHostToDevice, compute_));
    }
    GPUDIRECT_CUDA(cudaStreamSynchronize(compute_));
  }

  int rank() const override { return rank_; }
  int world() const override { return world_; }
  bool zero1() const override { return zero1_; }
  std::size_t bucket_count() const override { return buckets_.size(); }

  void broadcast_parameters() override {
    if (world_ == 1) return;
    GPUDIRECT_CUDA(cudaStreamSynchronize(compute_));
    float* p = model_.device_parameters();
    comm_.broadcast(p, p, model_.layout().total(), comm::DataType::float32, 0)->wait();
    model_.parameters_changed();
    GPUDIRECT_CUDA(cudaStreamSynchronize(compute_));
  }

  void begin_gradients() override {
    tracker_.reset();
    pending_.clear();
    backward_recorded_ = false;
  }

  // The kernels writing [offset, offset+count) are enqueued on the compute stream.
  void gradient_ready(std::size_t offset, std::size_t count) override {
    const std::vector<std::size_t> launch = tracker_.mark_ready(offset, count);
    if (launch.empty()) return;
    if (tracker_.launched() == buckets_.size()) {
      GPUDIRECT_CUDA(cudaEventRecord(backward_done_.get(), compute_));
      backward_recorded_ = true;
    }
    if (!communicates()) return;
    comm_after_compute();
    for (const std::size_t b : launch) launch_bucket(b);
  }

  // Waits for every collective with the communicator's abortable waits (they give up when its
  // watchdog fires), so a dead peer ends the step with an error rather than a hang.
  double finish_gradients() override {
    if (tracker_.launched() < buckets_.size()) {
      if (communicates()) comm_after_compute();
      for (std::size_t b = tracker_.launched(); b < buckets_.size(); ++b) {
        tracker_.mark_ready(buckets_[b].offset, buckets_[b].count);
        if (communicates()) launch_bucket(b);
      }
    }
    if (!backward_recorded_) GPUDIRECT_CUDA(cudaEventRecord(backward_done_.get(), compute_));
    if (!communicates()) return 0;
    GPUDIRECT_CUDA(cudaEventRecord(grads_done_.get(), comm_stream_));
    for (auto& request : pending_) request->wait();
    pending_.clear();
    GPUDIRECT_CUDA(cudaStreamWaitEvent(compute_, grads_done_.get(), 0));
    GPUDIRECT_CUDA(cudaEventSynchronize(backward_done_.get()));
    GPUDIRECT_CUDA(cudaEventSynchronize(grads_done_.get()));
    return seconds_between(backward_done_, grads_done_);
  }

  double global_sum_of_squares(double& exposed_seconds) override {
    const float* grads = model_.device_gradients();
    for (std::size_t i = 0; i < owned_.size(); ++i)
      sum_of_squares(sum_of_squares_.get(), partials_.get(), grads + owned_[i].offset, owned_[i].count, i > 0, compute_);
    if (zero1_) {
      comm_after_compute();
      GPUDIRECT_CUDA(cudaEventRecord(comm_start_.get(), comm_stream_));
      comm_.all_reduce(sum_of_squares_.get(), sum_of_squares_.get(), 1, comm::DataType::float64, comm::ReduceOp::sum)->wait();
      GPUDIRECT_CUDA(cudaEventRecord(comm_end_.get(), comm_stream_));
      GPUDIRECT_CUDA(cudaEventSynchronize(comm_end_.get()));
      exposed_seconds += seconds_between(comm_start_, comm_end_);
    } else {
      GPUDIRECT_CUDA(cudaStreamSynchronize(compute_));
    }
    double sum = 0;
    GPUDIRECT_CUDA(cudaMemcpy(&sum, sum_of_squares_.get(), sizeof sum, cudaMemcpyDeviceToHost));
    return sum;
  }

  void optimizer_step(float lr, float grad_scale, long t) override {
    if (model_.speed().multi_tensor_adamw) {
      adamw_step_multi_tensor(table_on_device_.get(), static_cast<int>(table_.pieces.size()), table_.total, model_.device_parameters(),
                              model_.device_gradients(), m_.get(), v_.get(), adamw_settings_, lr, grad_scale, t, compute_);
      return;
    }
    adamw_step(pieces_, model_.device_parameters(), model_.device_gradients(), m_.get(), v_.get(), adamw_settings_, lr, grad_scale, t,
               compute_);
  }

  // The shards gathered (ZeRO-1), the bf16 copy refreshed, and the compute stream drained, so the
  // Trainer's step time covers all of this rank's work.
  double gather_parameters() override {
    const double seconds = gather_parameter_shards();
    model_.parameters_changed();
    GPUDIRECT_CUDA(cudaStreamSynchronize(compute_));
    return seconds;
  }

  void gather_moments(std::span<float> first, std::span<float> second) override {
    gather_state(m_.get(), first);
    gather_state(v_.get(), second);
  }

  void load_state(Checkpoint& checkpoint) override {
    const std::size_t n = model_.layout().total();
    if (rank_ == 0) model_.upload_parameters(checkpoint.parameters);
    broadcast_parameters();
    // The full moments to every rank through one device buffer, then each rank keeps its segments.
    DeviceArray<float> full(n);
    for (auto [host, state] : {std::pair{&checkpoint.first_moment, m_.get()}, std::pair{&checkpoint.second_moment, v_.get()}}) {
      if (rank_ == 0) copy_on_comm_stream(full.get(), host->data(), n * sizeof(float), cudaMemcpyHostToDevice);
      if (world_ > 1) comm_.broadcast(full.get(), full.get(), n, comm::DataType::float32, 0)->wait();
      std::size_t at = 0;
      for (const Segment& s : owned_) {
        copy_on_comm_stream(state + at, full.get() + s.offset, s.count * sizeof(float), cudaMemcpyDeviceToDevice);
        at += s.count;
      }
      GPUDIRECT_CUDA(cudaStreamSynchronize(comm_stream_));  // before `full` goes and the compute stream reads the state
    }
  }

  // Small host values through the device scratch buffer (NCCL moves device memory only).
  void broadcast_host(void* values, std::size_t count, comm::DataType type) override {
    if (world_ == 1) return;
    const std::size_t bytes = count * comm::size_of(type);
    check_scratch(bytes);
    copy_on_comm_stream(scratch_.get(), values, bytes, cudaMemcpyHostToDevice);
    comm_.broadcast(scratch_.get(), scratch_.get(), bytes, comm::DataType::uint8, 0)->wait();
    copy_on_comm_stream(values, scratch_.get(), bytes, cudaMemcpyDeviceToHost);
    GPUDIRECT_CUDA(cudaStreamSynchronize(comm_stream_));
  }

  void all_gather_host(const void* mine, void* all, std::size_t count, comm::DataType type) override {
    const std::size_t bytes = count * comm::size_of(type);
    if (world_ == 1) {
      std::memcpy(all, mine, bytes);
      return;
    }
    check_scratch(bytes * static_cast<std::size_t>(world_));
    std::uint8_t* scratch = scratch_.get();
    copy_on_comm_stream(scratch + static_cast<std::size_t>(rank_) * bytes, mine, bytes, cudaMemcpyHostToDevice);
    comm_.all_gather(scratch + static_cast<std::size_t>(rank_) * bytes, scratch, bytes, comm::DataType::uint8)->wait();
    copy_on_comm_stream(all, scratch, bytes * static_cast<std::size_t>(world_), cudaMemcpyDeviceToHost);
    GPUDIRECT_CUDA(cudaStreamSynchronize(comm_stream_));
  }

 private:
  static constexpr std::size_t kScratchBytes = kHostValueScratchBytes;  // memory_plan.hpp

  // Gradients travel: more than one rank, or ZeRO-1 forced at one rank (its paths then only copy).
  bool communicates() const { return world_ > 1 || zero1_; }

  // Copies and sets that feed or read a collective go on the collective's stream: NCCL's stream is
  // non-blocking, so the legacy default stream of a plain cudaMemcpy/cudaMemset is not ordered with
  // it (a device-to-device cudaMemcpy does not even wait on the host).
  void copy_on_comm_stream(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
    GPUDIRECT_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, comm_stream_));
  }

  // The communication stream waits for what the compute stream has enqueued so far.
  void comm_after_compute() {
    GPUDIRECT_CUDA(cudaEventRecord(ready_.get(), compute_));
    GPUDIRECT_CUDA(cudaStreamWaitEvent(comm_stream_, ready_.get(), 0));
  }

  void launch_bucket(std::size_t b) {
    float* grads = model_.device_gradients() + buckets_[b].offset;
    if (!zero1_) {
      pending_.push_back(comm_.all_reduce(grads, grads, buckets_[b].count, comm::DataType::float32, comm::ReduceOp::avg));
      return;
    }
    const Shard s = shard_of(buckets_[b], world_, rank_);
    float* staging = staging_.get();
    const std::size_t count = buckets_[b].count;
    // The bucket, zeros up to the padded size (another bucket may have left values there), the
    // reduce-scatter, and this rank's averaged part back into the gradients: all on the communication
    // stream, so the next bucket reuses the buffer only after.
    copy_on_comm_stream(staging, grads, count * sizeof(float), cudaMemcpyDeviceToDevice);
    GPUDIRECT_CUDA(cudaMemsetAsync(staging + count, 0, (padded_count(buckets_[b]) - count) * sizeof(float), comm_stream_));
    pending_.push_back(comm_.reduce_scatter(staging, staging + static_cast<std::size_t>(rank_) * s.chunk, s.chunk, comm::DataType::float32,
                                            comm::ReduceOp::avg));
    copy_on_comm_stream(grads + s.begin, staging + s.begin, (s.end - s.begin) * sizeof(float), cudaMemcpyDeviceToDevice);
  }

  std::size_t padded_count(const Bucket& bucket) const { return shard_of(bucket, world_, rank_).chunk * static_cast<std::size_t>(world_); }

  // Under ZeRO-1: every rank's updated elements to every rank. Returns the seconds it took.
  double gather_parameter_shards() {
    if (!zero1_) return 0;
    comm_after_compute();
    GPUDIRECT_CUDA(cudaEventRecord(comm_start_.get(), comm_stream_));
    float* p = model_.device_parameters();
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      const Shard s = shard_of(buckets_[b], world_, rank_);
      float* staging = staging_.get();
      GPUDIRECT_CUDA(
          cudaMemcpyAsync(staging, p + buckets_[b].offset, buckets_[b].count * sizeof(float), cudaMemcpyDeviceToDevice, comm_stream_));
      pending_.push_back(comm_.all_gather(staging + static_cast<std::size_t>(rank_) * s.chunk, staging, s.chunk, comm::DataType::float32));
      GPUDIRECT_CUDA(
          cudaMemcpyAsync(p + buckets_[b].offset, staging, buckets_[b].count * sizeof(float), cudaMemcpyDeviceToDevice, comm_stream_));
    }
    GPUDIRECT_CUDA(cudaEventRecord(comm_end_.get(), comm_stream_));
    for (auto& request : pending_) request->wait();
    pending_.clear();
    GPUDIRECT_CUDA(cudaStreamWaitEvent(compute_, comm_end_.get(), 0));
    GPUDIRECT_CUDA(cudaEventSynchronize(comm_end_.get()));
    return seconds_between(comm_start_, comm_end_);
  }

  // The full moment buffer for a checkpoint: every rank's shards under ZeRO-1 (collective), the
  // rank's own state otherwise (rank 0 only: `full` is empty elsewhere).
  void gather_state(const float* state, std::span<float> full) {
    GPUDIRECT_CUDA(cudaStreamSynchronize(compute_));
    if (!zero1_) {
      if (!full.empty()) GPUDIRECT_CUDA(cudaMemcpy(full.data(), state, full.size() * sizeof(float), cudaMemcpyDeviceToHost));
      return;
    }
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      const Shard s = shard_of(buckets_[b], world_, rank_);
      float* staging = staging_.get();
      GPUDIRECT_CUDA(cudaMemsetAsync(staging, 0, s.chunk * static_cast<std::size_t>(world_) * sizeof(float), comm_stream_));
      copy_on_comm_stream(staging + s.begin, state + state_at_[b], (s.end - s.begin) * sizeof(float), cudaMemcpyDeviceToDevice);
      comm_.all_gather(staging + static_cast<std::size_t>(rank_) * s.chunk, staging, s.chunk, comm::DataType::float32)->wait();
      copy_on_comm_stream(full.data() + buckets_[b].offset, staging, buckets_[b].count * sizeof(float), cudaMemcpyDeviceToHost);
    }
    GPUDIRECT_CUDA(cudaStreamSynchronize(comm_stream_));
  }

  void check_scratch(std::size_t bytes) const {
    if (bytes > kScratchBytes)
      throw std::logic_error("gpudirect-launch train: " + std::to_string(bytes) +
                             " bytes of host values exceed the CUDA backend's scratch of " + std::to_string(kScratchBytes) +
                             " (too many ranks for one small all-gather)");
  }

  CudaGpt& model_;
  comm::Communicator& comm_;
  AdamWSettings adamw_settings_;
  int world_, rank_;
  bool zero1_;
  cudaStream_t compute_, comm_stream_;
  std::vector<Bucket> buckets_;
  BucketTracker tracker_;
  std::vector<Segment> owned_;
  std::vector<std::size_t> state_at_;
  std::vector<AdamWPiece> pieces_;
  MultiTensorTable table_;
  DeviceArray<MultiTensorPiece> table_on_device_;  // --multi-tensor-adamw only
  Event ready_, backward_done_, grads_done_, comm_start_, comm_end_;
  DeviceArray<double> partials_, sum_of_squares_;
  DeviceArray<std::uint8_t> scratch_;
  DeviceArray<float> m_, v_;
  DeviceArray<float> staging_;  // ZeRO-1: the padded bucket of the collective in flight
  std::vector<std::unique_ptr<comm::Request>> pending_;
  bool backward_recorded_ = false;
};

}  // namespace

std::unique_ptr<TrainBackend> make_cuda_backend(Model& model, comm::Communicator& comm, const TrainSettings& settings) {
  return std::make_unique<CudaBackend>(as_cuda_model(model), comm, settings);
}

}  // namespace gpudirect::train::cuda
