// The step loop of ../trainer.cpp on the GPU. Two streams: the model's (compute) and the NCCL
// communicator's (communication). When backward has enqueued the kernels of a gradient bucket, an
// event on the compute stream orders that bucket's all-reduce (or reduce-scatter) on the
// communication stream after them, so backward continues while the bucket travels. The optimizer
// waits for the last collective with another event. Exposed communication is measured on the GPU's
// clock: from the end of backward to the end of the last gradient collective, plus the norm
// all-reduce and the parameter all-gather under ZeRO-1 (nothing hides those).
#include "train/checkpoint.hpp"
#include "train/cuda/cuda_training.hpp"
#include "train/cuda/gpt_cuda.cuh"
#include "train/zero1_shards.hpp"
#include "train/gradient_sync.hpp"
#include "train/rank_step_report.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>

namespace gpudirect::train::cuda {
namespace {

using Clock = std::chrono::steady_clock;

class Event {
 public:
  explicit Event(bool timing) { GPUDIRECT_CUDA(cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault : cudaEventDisableTiming)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_{};
};

// Seconds from `start` to `end` (both recorded and complete); 0 when end came first.
double seconds_between(const Event& start, const Event& end) {
  float ms = 0;
  GPUDIRECT_CUDA(cudaEventElapsedTime(&ms, start.get(), end.get()));
  return std::max(0.0, static_cast<double>(ms) / 1e3);
}

class CudaTrainer final : public TrainLoop {
 public:
  CudaTrainer(CudaGpt& model, comm::Communicator& comm, DataSource& data, const TrainSettings& settings)
      : model_(model),
        comm_(comm),
        data_(data),
        settings_(settings),
        world_(comm.size()),
        rank_(comm.rank()),
        zero1_(settings.zero1 && comm.size() > 1),
        compute_(model.stream()),
        comm_stream_(static_cast<cudaStream_t>(comm.cuda_stream())),
        buckets_(plan_buckets(model.layout().tensors(), settings.first_bucket_bytes, settings.bucket_bytes)),
        tracker_(buckets_),
        owned_(zero1_ ? owned_segments(buckets_, world_, rank_) : std::vector<Segment>{{0, model.layout().total()}}),
        state_at_(zero1_ ? state_offsets(buckets_, world_, rank_) : std::vector<std::size_t>{}),
        pieces_(adamw_pieces(model.layout(), owned_)),
        ready_(false), backward_done_(true), grads_done_(true), comm_start_(true), comm_end_(true),
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
      for (const Bucket& b : buckets_) {
        const std::size_t padded = shard_of(b, world_, rank_).chunk * static_cast<std::size_t>(world_);
        staging_.emplace_back(padded);
        GPUDIRECT_CUDA(cudaMemsetAsync(staging_.back().get(), 0, padded * sizeof(float), compute_));
      }
    }
    const GptConfig& c = model.config();
    const auto tokens = static_cast<std::size_t>(c.micro_batch) * static_cast<std::size_t>(c.seq_len);
    inputs_.resize(tokens);
    targets_.resize(tokens);
    GPUDIRECT_CUDA(cudaStreamSynchronize(compute_));
  }

  void broadcast_initial_parameters() override {
    if (world_ == 1) return;
    GPUDIRECT_CUDA(cudaStreamSynchronize(compute_));
    float* p = model_.device_parameters();
    comm_.broadcast(p, p, model_.layout().total(), comm::DataType::float32, 0)->wait();
    model_.parameters_changed();
    GPUDIRECT_CUDA(cudaStreamSynchronize(compute_));
  }

  StepResult step(bool stop_requested) override {
    const GptConfig& c = model_.config();
    const auto start = Clock::now();
    StepResult result;
    result.step = step_;
    micro_done_.store(0, std::memory_order_relaxed);
    model_.zero_gradients();
    double loss = 0;
    const float scale = 1.0f / static_cast<float>(c.grad_accum);
    for (int micro = 0; micro < c.grad_accum; ++micro) {
      data_.fill(step_, micro, inputs_, targets_);
      const bool last = micro + 1 == c.grad_accum;
      if (last) begin_buckets();
      loss += model_.forward_backward(inputs_, targets_, scale, last ? GradientReady([this](std::size_t o, std::size_t n) { on_ready(o, n); })
                                                                   : GradientReady{});
      micro_done_.store(micro + 1, std::memory_order_relaxed);
    }
    loss /= c.grad_accum;
    double exposed = finish_buckets();
    const double norm = std::sqrt(global_sum_of_squares(exposed));
    const float clip = clip_scale(norm, settings_.grad_clip);
    result.lr = settings_.schedule.at(static_cast<int>(step_));
    adamw(result.lr, clip, step_ + 1);
    exposed += gather_parameters();
    model_.parameters_changed();
    GPUDIRECT_CUDA(cudaStreamSynchronize(compute_));
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    result.exposed_comm_seconds = exposed;
    result.grad_norm = norm;

    const RankReport mine = rank_report(loss, result, stop_requested);
    std::vector<double> all(kRankReportFields * static_cast<std::size_t>(world_));
    all_gather_host(mine.data(), all.data(), sizeof(double) * kRankReportFields);
    merge_rank_reports(all, result);
    ++step_;
    return result;
  }

  long next_step() const override { return step_; }
  int micro_batches_done() const override { return micro_done_.load(std::memory_order_relaxed); }
  std::size_t bucket_count() const override { return buckets_.size(); }

  int broadcast_from_leader(int value) override {
    if (world_ > 1) broadcast_host(&value, sizeof value);
    return value;
  }

  std::vector<int> check_parameters_agree() override {
    const std::uint64_t mine = parameter_checksum(model_.parameters());
    if (world_ == 1) return {};
    std::vector<std::uint64_t> all(static_cast<std::size_t>(world_));
    all_gather_host(&mine, all.data(), sizeof mine);
    std::vector<int> different;
    for (int r = 1; r < world_; ++r)
      if (all[static_cast<std::size_t>(r)] != all[0]) different.push_back(r);
    return different;
  }

  void save_checkpoint(const std::string& path, const std::string& data_description) override {
    const std::size_t n = model_.layout().total();
    std::vector<float> m(zero1_ || rank_ == 0 ? n : 0), v(m.size());
    gather_state(m_.get(), m);
    gather_state(v_.get(), v);
    const std::span<float> parameters = model_.parameters();
    int failed = 0;
    std::string error;
    if (rank_ == 0) {
      try {
        write_checkpoint(path, header(data_description), parameters, m, v);
      } catch (const CheckpointError& e) {
        failed = 1;
        error = e.what();
      }
    }
    failed = broadcast_from_leader(failed);
    if (failed) throw CheckpointError(rank_ == 0 ? error : "rank 0 could not write checkpoint " + path);
  }

  void load_checkpoint(const std::string& path, const std::string& data_description) override {
    const std::size_t n = model_.layout().total();
    Checkpoint checkpoint;
    int failed = 0;
    std::string error;
    if (rank_ == 0) {
      try {
        checkpoint = read_checkpoint(path);
        check_compatible(checkpoint.header, header(data_description), path);
      } catch (const CheckpointError& e) {
        failed = 1;
        error = e.what();
      }
    }
    failed = broadcast_from_leader(failed);
    if (failed) throw CheckpointError(rank_ == 0 ? error : "rank 0 refused checkpoint " + path);
    long step = checkpoint.header.step;
    if (world_ > 1) broadcast_host(&step, sizeof step);
    if (rank_ == 0) model_.upload_parameters(checkpoint.parameters);
    broadcast_initial_parameters();
    // The full moments to every rank through one device buffer, then each rank keeps its segments.
    DeviceArray<float> full(n);
    for (auto [host, state] : {std::pair{&checkpoint.first_moment, m_.get()}, std::pair{&checkpoint.second_moment, v_.get()}}) {
      if (rank_ == 0) GPUDIRECT_CUDA(cudaMemcpy(full.get(), host->data(), n * sizeof(float), cudaMemcpyHostToDevice));
      if (world_ > 1) comm_.broadcast(full.get(), full.get(), n, comm::DataType::float32, 0)->wait();
      std::size_t at = 0;
      for (const Segment& s : owned_) {
        GPUDIRECT_CUDA(cudaMemcpy(state + at, full.get() + s.offset, s.count * sizeof(float), cudaMemcpyDeviceToDevice));
        at += s.count;
      }
    }
    step_ = step;
  }

 private:
  static constexpr std::size_t kScratchBytes = 1 << 16;  // small host values through NCCL (which needs device memory)

  CheckpointHeader header(const std::string& data_description) const {
    CheckpointHeader h;
    h.config = model_.config();
    h.step = step_;
    h.world = world_;
    h.zero1 = zero1_;
    h.data = data_description;
    h.parameters = model_.layout().total();
    h.adamw = settings_.adamw;
    h.schedule = settings_.schedule;
    h.grad_clip = settings_.grad_clip;
    return h;
  }

  // The communication stream waits for what the compute stream has enqueued so far, and back.
  void comm_after_compute() {
    GPUDIRECT_CUDA(cudaEventRecord(ready_.get(), compute_));
    GPUDIRECT_CUDA(cudaStreamWaitEvent(comm_stream_, ready_.get(), 0));
  }

  void begin_buckets() {
    tracker_.reset();
    pending_.clear();
    backward_recorded_ = false;
  }

  // GradientReady: the kernels writing [offset, offset+count) are enqueued on the compute stream.
  void on_ready(std::size_t offset, std::size_t count) {
    const std::vector<std::size_t> launch = tracker_.mark_ready(offset, count);
    if (launch.empty()) return;
    if (tracker_.launched() == buckets_.size()) {
      GPUDIRECT_CUDA(cudaEventRecord(backward_done_.get(), compute_));
      backward_recorded_ = true;
    }
    if (world_ == 1) return;
    comm_after_compute();
    for (const std::size_t b : launch) launch_bucket(b);
  }

  void launch_bucket(std::size_t b) {
    float* grads = model_.device_gradients() + buckets_[b].offset;
    if (!zero1_) {
      pending_.push_back(comm_.all_reduce(grads, grads, buckets_[b].count, comm::DataType::float32, comm::ReduceOp::avg));
      return;
    }
    const Shard s = shard_of(buckets_[b], world_, rank_);
    float* staging = staging_[b].get();
    // The padding beyond count stays zero: set at construction, and every collective writes zeros there.
    GPUDIRECT_CUDA(cudaMemcpyAsync(staging, grads, buckets_[b].count * sizeof(float), cudaMemcpyDeviceToDevice, comm_stream_));
    pending_.push_back(comm_.reduce_scatter(staging, staging + static_cast<std::size_t>(rank_) * s.chunk, s.chunk,
                                            comm::DataType::float32, comm::ReduceOp::avg));
  }

  // Launches any bucket the model did not report, waits for every collective (abortable waits that
  // give up when the communicator's watchdog fires) and returns the exposed seconds.
  double finish_buckets() {
    if (tracker_.launched() < buckets_.size()) {
      if (world_ > 1) comm_after_compute();
      for (std::size_t b = tracker_.launched(); b < buckets_.size(); ++b) {
        tracker_.mark_ready(buckets_[b].offset, buckets_[b].count);
        if (world_ > 1) launch_bucket(b);
      }
    }
    if (!backward_recorded_) GPUDIRECT_CUDA(cudaEventRecord(backward_done_.get(), compute_));
    if (world_ == 1) return 0;
    GPUDIRECT_CUDA(cudaEventRecord(grads_done_.get(), comm_stream_));
    for (auto& request : pending_) request->wait();
    pending_.clear();
    GPUDIRECT_CUDA(cudaStreamWaitEvent(compute_, grads_done_.get(), 0));
    if (zero1_) {
      for (std::size_t b = 0; b < buckets_.size(); ++b) {
        const Shard s = shard_of(buckets_[b], world_, rank_);
        GPUDIRECT_CUDA(cudaMemcpyAsync(model_.device_gradients() + buckets_[b].offset + s.begin, staging_[b].get() + s.begin,
                                       (s.end - s.begin) * sizeof(float), cudaMemcpyDeviceToDevice, compute_));
      }
    }
    GPUDIRECT_CUDA(cudaEventSynchronize(backward_done_.get()));
    GPUDIRECT_CUDA(cudaEventSynchronize(grads_done_.get()));
    return seconds_between(backward_done_, grads_done_);
  }

  double global_sum_of_squares(double& exposed) {
    const float* grads = model_.device_gradients();
    for (std::size_t i = 0; i < owned_.size(); ++i)
      sum_of_squares(sum_of_squares_.get(), partials_.get(), grads + owned_[i].offset, owned_[i].count, i > 0, compute_);
    if (zero1_) {
      comm_after_compute();
      GPUDIRECT_CUDA(cudaEventRecord(comm_start_.get(), comm_stream_));
      comm_.all_reduce(sum_of_squares_.get(), sum_of_squares_.get(), 1, comm::DataType::float64, comm::ReduceOp::sum)->wait();
      GPUDIRECT_CUDA(cudaEventRecord(comm_end_.get(), comm_stream_));
      GPUDIRECT_CUDA(cudaEventSynchronize(comm_end_.get()));
      exposed += seconds_between(comm_start_, comm_end_);
    } else {
      GPUDIRECT_CUDA(cudaStreamSynchronize(compute_));
    }
    double sum = 0;
    GPUDIRECT_CUDA(cudaMemcpy(&sum, sum_of_squares_.get(), sizeof sum, cudaMemcpyDeviceToHost));
    return sum;
  }

  void adamw(float lr, float grad_scale, long t) {
    adamw_step(pieces_, model_.device_parameters(), model_.device_gradients(), m_.get(), v_.get(), settings_.adamw, lr, grad_scale, t,
               compute_);
  }

  // Under ZeRO-1: every rank's updated elements to every rank. Returns the seconds it took.
  double gather_parameters() {
    if (!zero1_) return 0;
    comm_after_compute();
    GPUDIRECT_CUDA(cudaEventRecord(comm_start_.get(), comm_stream_));
    float* p = model_.device_parameters();
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      const Shard s = shard_of(buckets_[b], world_, rank_);
      float* staging = staging_[b].get();
      GPUDIRECT_CUDA(cudaMemcpyAsync(staging, p + buckets_[b].offset, buckets_[b].count * sizeof(float), cudaMemcpyDeviceToDevice, comm_stream_));
      pending_.push_back(comm_.all_gather(staging + static_cast<std::size_t>(rank_) * s.chunk, staging, s.chunk, comm::DataType::float32));
      GPUDIRECT_CUDA(cudaMemcpyAsync(p + buckets_[b].offset, staging, buckets_[b].count * sizeof(float), cudaMemcpyDeviceToDevice, comm_stream_));
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
  void gather_state(const float* state, std::vector<float>& full) {
    GPUDIRECT_CUDA(cudaStreamSynchronize(compute_));
    if (!zero1_) {
      if (!full.empty()) GPUDIRECT_CUDA(cudaMemcpy(full.data(), state, full.size() * sizeof(float), cudaMemcpyDeviceToHost));
      return;
    }
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      const Shard s = shard_of(buckets_[b], world_, rank_);
      float* staging = staging_[b].get();
      GPUDIRECT_CUDA(cudaMemset(staging, 0, s.chunk * static_cast<std::size_t>(world_) * sizeof(float)));
      GPUDIRECT_CUDA(cudaMemcpy(staging + s.begin, state + state_at_[b], (s.end - s.begin) * sizeof(float), cudaMemcpyDeviceToDevice));
      comm_.all_gather(staging + static_cast<std::size_t>(rank_) * s.chunk, staging, s.chunk, comm::DataType::float32)->wait();
      GPUDIRECT_CUDA(cudaMemcpy(full.data() + buckets_[b].offset, staging, buckets_[b].count * sizeof(float), cudaMemcpyDeviceToHost));
    }
  }

  // Small host values through the device scratch buffer (NCCL moves device memory only).
  void all_gather_host(const void* mine, void* all, std::size_t bytes) {
    if (world_ == 1) {
      std::memcpy(all, mine, bytes);
      return;
    }
    check_scratch(bytes * static_cast<std::size_t>(world_));
    std::uint8_t* scratch = scratch_.get();
    GPUDIRECT_CUDA(cudaMemcpy(scratch + static_cast<std::size_t>(rank_) * bytes, mine, bytes, cudaMemcpyHostToDevice));
    comm_.all_gather(scratch + static_cast<std::size_t>(rank_) * bytes, scratch, bytes, comm::DataType::uint8)->wait();
    GPUDIRECT_CUDA(cudaMemcpy(all, scratch, bytes * static_cast<std::size_t>(world_), cudaMemcpyDeviceToHost));
  }

  void broadcast_host(void* value, std::size_t bytes) {
    check_scratch(bytes);
    GPUDIRECT_CUDA(cudaMemcpy(scratch_.get(), value, bytes, cudaMemcpyHostToDevice));
    comm_.broadcast(scratch_.get(), scratch_.get(), bytes, comm::DataType::uint8, 0)->wait();
    GPUDIRECT_CUDA(cudaMemcpy(value, scratch_.get(), bytes, cudaMemcpyDeviceToHost));
  }

  void check_scratch(std::size_t bytes) const {
    if (bytes > kScratchBytes)
      throw std::logic_error("gpudirect-launch train: " + std::to_string(bytes) + " bytes of host values exceed the CUDA trainer's scratch of " +
                             std::to_string(kScratchBytes) + " (too many ranks for one small all-gather)");
  }

  CudaGpt& model_;
  comm::Communicator& comm_;
  DataSource& data_;
  TrainSettings settings_;
  int world_, rank_;
  bool zero1_;
  cudaStream_t compute_, comm_stream_;
  std::vector<Bucket> buckets_;
  BucketTracker tracker_;
  std::vector<Segment> owned_;
  std::vector<std::size_t> state_at_;
  std::vector<AdamWPiece> pieces_;
  Event ready_, backward_done_, grads_done_, comm_start_, comm_end_;
  DeviceArray<double> partials_, sum_of_squares_;
  DeviceArray<std::uint8_t> scratch_;
  DeviceArray<float> m_, v_;
  std::vector<DeviceArray<float>> staging_;
  std::vector<std::unique_ptr<comm::Request>> pending_;
  bool backward_recorded_ = false;
  long step_ = 0;
  std::atomic<int> micro_done_{0};
  std::vector<std::int32_t> inputs_, targets_;
};

}  // namespace

std::unique_ptr<TrainLoop> make_cuda_trainer(Model& model, comm::Communicator& comm, DataSource& data, const TrainSettings& settings) {
  return std::make_unique<CudaTrainer>(as_cuda_model(model), comm, data, settings);
}

}  // namespace gpudirect::train::cuda
