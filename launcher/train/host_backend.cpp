#include "train/host_backend.hpp"

#include "train/gradient_sync.hpp"
#include "train/optimizer.hpp"

#include <algorithm>
#include <cstring>

namespace gpudirect::train {
namespace {

class HostBackend final : public TrainBackend {
 public:
  HostBackend(Model& model, comm::Communicator& comm, const TrainSettings& settings)
      : model_(model),
        comm_(comm),
        sync_(comm, model.layout(), zero1_in_effect(settings, comm.size()), settings.first_bucket_bytes, settings.bucket_bytes),
        adamw_(model.layout(), sync_.owned(), settings.adamw) {}

  int rank() const override { return comm_.rank(); }
  int world() const override { return comm_.size(); }
  bool zero1() const override { return sync_.zero1(); }
  std::size_t bucket_count() const override { return sync_.buckets().size(); }

  void broadcast_parameters() override {
    if (comm_.size() == 1) return;
    const std::span<float> p = model_.parameters();
    comm_.broadcast(p.data(), p.data(), p.size(), comm::DataType::float32, 0)->wait();
  }

  void begin_gradients() override { sync_.begin(model_.gradients()); }
  void gradient_ready(std::size_t offset, std::size_t count) override { sync_.ready(offset, count); }
  double finish_gradients() override { return sync_.finish(); }
  double global_sum_of_squares(double& exposed_seconds) override {
    return sync_.global_sum_of_squares(model_.gradients(), exposed_seconds);
  }
  void optimizer_step(float lr, float grad_scale, long t) override {
    adamw_.step(model_.parameters(), model_.gradients(), lr, grad_scale, t);
  }
  double gather_parameters() override { return sync_.gather_parameters(model_.parameters()); }

  void gather_moments(std::span<float> first, std::span<float> second) override {
    if (sync_.zero1()) {
      sync_.gather_state(adamw_.first_moment(), first);
      sync_.gather_state(adamw_.second_moment(), second);
    } else if (comm_.rank() == 0) {
      std::copy(adamw_.first_moment().begin(), adamw_.first_moment().end(), first.begin());
      std::copy(adamw_.second_moment().begin(), adamw_.second_moment().end(), second.begin());
    }
  }

  void load_state(Checkpoint& checkpoint) override {
    const std::size_t n = model_.layout().total();
    if (comm_.rank() != 0) {
      checkpoint.parameters.resize(n);
      checkpoint.first_moment.resize(n);
      checkpoint.second_moment.resize(n);
    }
    if (comm_.size() > 1)
      for (auto* buffer : {&checkpoint.parameters, &checkpoint.first_moment, &checkpoint.second_moment})
        comm_.broadcast(buffer->data(), buffer->data(), n, comm::DataType::float32, 0)->wait();
    std::copy(checkpoint.parameters.begin(), checkpoint.parameters.end(), model_.parameters().begin());
    sync_.scatter_state(checkpoint.first_moment, adamw_.first_moment());
    sync_.scatter_state(checkpoint.second_moment, adamw_.second_moment());
  }

  void broadcast_host(void* values, std::size_t count, comm::DataType type) override {
    if (comm_.size() > 1) comm_.broadcast(values, values, count, type, 0)->wait();
  }
  void all_gather_host(const void* mine, void* all, std::size_t count, comm::DataType type) override {
    if (comm_.size() == 1)
      std::memcpy(all, mine, count * comm::size_of(type));
    else
      comm_.all_gather(mine, all, count, type)->wait();
  }

 private:
  Model& model_;
  comm::Communicator& comm_;
  GradientSync sync_;
  AdamW adamw_;
};

}  // namespace

std::unique_ptr<TrainBackend> make_host_backend(Model& model, comm::Communicator& comm, const TrainSettings& settings) {
  return std::make_unique<HostBackend>(model, comm, settings);
}

GradientMemory gradients_in_communicator_memory(comm::Communicator& comm) {
  return {[&comm](std::size_t bytes) { return comm.allocate(bytes); }, [&comm](void* buffer) { comm.release(buffer); }};
}

}  // namespace gpudirect::train
