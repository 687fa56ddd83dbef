#include "comm/nccl/nccl_communicator.hpp"

#include "comm/collective_table.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace gpudirect::comm {
namespace {

void cuda_check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) throw CommError(std::string("CUDA: ") + what + ": " + cudaGetErrorString(rc));
}

void nccl_check(ncclResult_t rc, const char* what) {
  if (rc != ncclSuccess) throw CommError(std::string("NCCL: ") + what + ": " + ncclGetErrorString(rc));
}

ncclDataType_t to_nccl(DataType type) {
  switch (type) {
    case DataType::float32:
      return ncclFloat32;
    case DataType::float64:
      return ncclFloat64;
    case DataType::float16:
      return ncclFloat16;
    case DataType::bfloat16:
      return ncclBfloat16;
    case DataType::int8:
      return ncclInt8;
    case DataType::uint8:
      return ncclUint8;
    case DataType::int32:
      return ncclInt32;
    case DataType::int64:
      return ncclInt64;
    case DataType::uint64:
      return ncclUint64;
  }
  return ncclFloat32;
}

ncclRedOp_t to_nccl(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return ncclSum;
    case ReduceOp::prod:
      return ncclProd;
    case ReduceOp::min:
      return ncclMin;
    case ReduceOp::max:
      return ncclMax;
    case ReduceOp::avg:
      return ncclAvg;
  }
  return ncclSum;
}

using Clock = std::chrono::steady_clock;

// What every request and the watchdog share: whether the communicator was aborted, and why.
class Health {
 public:
  bool failed() const noexcept { return failed_.load(std::memory_order_acquire); }
  // First reason wins; returns whether this call set it.
  bool fail(const std::string& message, bool timeout) {
    std::lock_guard lock(mutex_);
    if (failed_) return false;
    message_ = message;
    timeout_ = timeout;
    failed_.store(true, std::memory_order_release);
    return true;
  }
  [[noreturn]] void rethrow() const {
    std::lock_guard lock(mutex_);
    if (timeout_) throw CommTimeout(message_);
    throw CommError(message_);
  }

 private:
  std::atomic<bool> failed_{false};
  mutable std::mutex mutex_;
  std::string message_;
  bool timeout_ = false;
};

// Polling a GPU for completion: spin (yielding) for the first 2 ms so short collectives are timed
// right, then sleep in small steps so a long wait does not burn a core.
void pause_since(Clock::time_point start) {
  if (Clock::now() - start < std::chrono::milliseconds(2))
    std::this_thread::yield();
  else
    std::this_thread::sleep_for(std::chrono::microseconds(50));
}

struct Event {
  cudaEvent_t event{};
  Event() { cuda_check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate"); }
  ~Event() { cudaEventDestroy(event); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

// Completes when the stream passes its event; waits give up as soon as the watchdog aborted the
// communicator (instead of cudaEventSynchronize, which would wait for kernels that never end).
class EventRequest final : public Request {
 public:
  EventRequest(std::shared_ptr<Event> event, std::shared_ptr<const Health> health) : event_(std::move(event)), health_(std::move(health)) {}
  bool test() override {
    const cudaError_t rc = cudaEventQuery(event_->event);
    if (rc == cudaErrorNotReady) {
      if (health_->failed()) health_->rethrow();
      return false;
    }
    cuda_check(rc, "cudaEventQuery");
    return true;
  }
  void wait() override {
    const auto start = Clock::now();
    while (!test()) pause_since(start);
  }

 private:
  std::shared_ptr<Event> event_;
  std::shared_ptr<const Health> health_;
};

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(bootstrap::Session& session, std::chrono::milliseconds timeout, StreamPriority priority)
      : rank_(session.context.rank),
        size_(session.context.size),
        timeout_(timeout),
        host_(session.context.hostname),
        health_(std::make_shared<Health>()) {
    const int devices = nccl_device_count();
    if (devices == 0) throw CommError("NCCL: no GPU visible to this rank (CUDA_VISIBLE_DEVICES?)");
    device_ = session.context.local_rank % devices;
    cuda_check(cudaSetDevice(device_), "cudaSetDevice");
    int least = 0, greatest = 0;
    cuda_check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
    cuda_check(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, cuda_stream_priority(priority, least, greatest)),
               "cudaStreamCreateWithPriority");
    ncclUniqueId id{};
    if (size_ > 1) {
      store_ = session.store.get();
      abort_ = store_->abort_signal();
      // An all-gather, not set/get: a generation per call, so a process can build several.
      std::string mine;
      if (rank_ == 0) {
        nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
        mine.assign(reinterpret_cast<const char*>(&id), sizeof id);
      }
      const std::string shared = store_->scoped("nccl")->all_gather("unique_id", mine)[0];
      if (shared.size() != sizeof id) throw CommError("NCCL: malformed unique id from rank 0");
      std::memcpy(&id, shared.data(), sizeof id);
    } else {
      abort_ = std::make_shared<bootstrap::AbortSignal>();
      nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    }
    // Non-blocking: no NCCL call waits for peers inside NCCL, so a dead peer cannot hang us there.
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    call("ncclCommInitRankConfig", [&] { return ncclCommInitRankConfig(&comm_, size_, id, rank_, &config); });
    cudaDeviceProp props{};
    cuda_check(cudaGetDeviceProperties(&props, device_), "cudaGetDeviceProperties");
    char bus[32];
    std::snprintf(bus, sizeof bus, "%04x:%02x:%02x", props.pciDomainID, props.pciBusID, props.pciDeviceID);
    description_ = "device " + std::to_string(device_) + " [" + bus + "] " + props.name;
    int version = 0;
    ncclGetVersion(&version);
    backend_ = "nccl " + std::to_string(version);
    scratch_ = allocate(sizeof(float));
    watchdog_ = std::thread([this] { watch(); });
  }

  ~NcclCommunicator() override {
    stopping_ = true;
    if (watchdog_.joinable()) watchdog_.join();
    if (scratch_) cudaFree(scratch_);
    // An aborted communicator is already freed by ncclCommAbort.
    if (comm_ && !aborted_) ncclCommDestroy(comm_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  MemoryKind memory() const override { return MemoryKind::cuda; }
  std::string backend_name() const override { return backend_; }
  std::string device_description() const override { return description_; }

  std::unique_ptr<Request> all_reduce(const void* s, void* r, std::size_t c, DataType t, ReduceOp op) override {
    call("ncclAllReduce", [&] { return ncclAllReduce(s, r, c, to_nccl(t), to_nccl(op), comm_, stream_); });
    return done(describe(Collective::all_reduce, c, t, op));
  }
  std::unique_ptr<Request> all_gather(const void* s, void* r, std::size_t c, DataType t) override {
    call("ncclAllGather", [&] { return ncclAllGather(s, r, c, to_nccl(t), comm_, stream_); });
    return done(describe(Collective::all_gather, c, t));
  }
  std::unique_ptr<Request> reduce_scatter(const void* s, void* r, std::size_t c, DataType t, ReduceOp op) override {
    call("ncclReduceScatter", [&] { return ncclReduceScatter(s, r, c, to_nccl(t), to_nccl(op), comm_, stream_); });
    return done(describe(Collective::reduce_scatter, c, t, op));
  }
  std::unique_ptr<Request> broadcast(const void* s, void* r, std::size_t c, DataType t, int root) override {
    call("ncclBroadcast", [&] { return ncclBroadcast(s, r, c, to_nccl(t), root, comm_, stream_); });
    return done(describe(Collective::broadcast, c, t));
  }
  std::unique_ptr<Request> reduce(const void* s, void* r, std::size_t c, DataType t, ReduceOp op, int root) override {
    call("ncclReduce", [&] { return ncclReduce(s, r, c, to_nccl(t), to_nccl(op), root, comm_, stream_); });
    return done(describe(Collective::reduce, c, t, op));
  }
  std::unique_ptr<Request> alltoall(const void* s, void* r, std::size_t c, DataType t) override {
    const std::size_t block = c * size_of(t);
    call("alltoall (ncclSend/ncclRecv group)", [&] {
      nccl_check(ncclGroupStart(), "ncclGroupStart");
      for (int peer = 0; peer < size_; ++peer) {
        nccl_check(ncclSend(static_cast<const char*>(s) + static_cast<std::size_t>(peer) * block, c, to_nccl(t), peer, comm_, stream_),
                   "ncclSend");
        nccl_check(ncclRecv(static_cast<char*>(r) + static_cast<std::size_t>(peer) * block, c, to_nccl(t), peer, comm_, stream_),
                   "ncclRecv");
      }
      return ncclGroupEnd();
    });
    return done(describe(Collective::alltoall, c, t));
  }
  std::unique_ptr<Request> sendrecv(const void* s, void* r, std::size_t c, DataType t) override {
    call("sendrecv (ncclSend/ncclRecv group)", [&] {
      nccl_check(ncclGroupStart(), "ncclGroupStart");
      nccl_check(ncclSend(s, c, to_nccl(t), (rank_ + 1) % size_, comm_, stream_), "ncclSend");
      nccl_check(ncclRecv(r, c, to_nccl(t), (rank_ - 1 + size_) % size_, comm_, stream_), "ncclRecv");
      return ncclGroupEnd();
    });
    return done(describe(Collective::sendrecv, c, t));
  }

  void* allocate(std::size_t bytes) override {
    void* p = nullptr;
    cuda_check(cudaMalloc(&p, std::max<std::size_t>(bytes, 1)), "cudaMalloc");
    return p;
  }
  void release(void* buffer) override { cudaFree(buffer); }
  // On the collectives' stream: it is non-blocking, so a plain cudaMemcpy (legacy default stream,
  // which may return before a pageable host-to-device copy lands) would not be ordered with them.
  void copy_to_device(void* dst, const void* src, std::size_t bytes) override {
    cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
    cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override {
    cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync");
    cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  void synchronize() override {
    const auto start = Clock::now();
    for (;;) {
      const cudaError_t rc = cudaStreamQuery(stream_);
      if (rc == cudaSuccess) return;
      if (rc != cudaErrorNotReady) cuda_check(rc, "cudaStreamQuery");
      if (health_->failed()) health_->rethrow();
      pause_since(start);
    }
  }
  void* cuda_stream() const override { return stream_; }
  void barrier() override {
    // A one-element all_reduce is NCCL's barrier.
    call("ncclAllReduce", [&] { return ncclAllReduce(scratch_, scratch_, 1, ncclFloat32, ncclSum, comm_, stream_); });
    done("barrier")->wait();
  }

 private:
  // What the watchdog's messages call an enqueued collective; its bytes are those of `count` elements.
  static std::string describe(Collective c, std::size_t count, DataType type, ReduceOp op = ReduceOp::sum) {
    const CollectiveInfo& collective = info_of(c);
    return std::string(collective.name) + " of " + std::to_string(count * size_of(type)) + " bytes (" + name_of(type) +
           (collective.reduces ? std::string(" ") + name_of(op) : std::string()) + ")";
  }

  std::string seconds() const {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", static_cast<double>(timeout_.count()) / 1000.0);
    return text;
  }

  // Makes NCCL calls on the communicator under comm_mutex_ (the watchdog aborts under it too, so
  // nothing touches a freed communicator). A non-blocking communicator may answer ncclInProgress:
  // wait (bounded, abortable) until the call is through before the next one, as NCCL requires.
  template <typename NcclCall>
  void call(const char* what, NcclCall nccl_call) {
    std::unique_lock lock(comm_mutex_);
    if (health_->failed()) health_->rethrow();
    const ncclResult_t rc = nccl_call();
    if (rc != ncclSuccess && rc != ncclInProgress) nccl_check(rc, what);
    const auto deadline = Clock::now() + timeout_;
    for (;;) {
      if (health_->failed()) health_->rethrow();
      ncclResult_t state = ncclSuccess;
      nccl_check(ncclCommGetAsyncError(comm_, &state), "ncclCommGetAsyncError");
      if (state == ncclSuccess) return;
      if (state != ncclInProgress) nccl_check(state, what);
      if (abort_->raised()) abort_locked(abort_->message() + " (in " + what + ")", false);
      if (Clock::now() > deadline)
        abort_locked("rank " + std::to_string(rank_) + " on " + host_ + ": " + what + " did not complete within " + seconds() +
                         " s (--timeout): a rank is missing or its network is down; NCCL communicator aborted",
                     true);
      if (health_->failed()) health_->rethrow();
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      lock.lock();
    }
  }

  std::unique_ptr<Request> done(std::string what) {
    auto event = std::make_shared<Event>();
    cuda_check(cudaEventRecord(event->event, stream_), "cudaEventRecord");
    {
      std::lock_guard lock(mutex_);
      in_flight_.push_back({event, Clock::now(), std::move(what)});
    }
    return std::make_unique<EventRequest>(std::move(event), health_);
  }

  // With comm_mutex_ held: aborts once (first reason wins) and tells the other ranks when this
  // rank saw the failure first.
  void abort_locked(const std::string& why, bool timeout) {
    if (!health_->fail(why, timeout)) return;
    if (store_ && !abort_->raised()) store_->abort(why);
    if (comm_) ncclCommAbort(comm_);
    aborted_ = true;
  }

  // Follows enqueued calls in order; the oldest one running longer than the timeout, an error
  // NCCL reports, or an abort from the rendezvous ends the communicator.
  void watch() {
    cudaSetDevice(device_);
    while (!stopping_ && !health_->failed()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      std::string oldest;
      bool late = false;
      {
        std::lock_guard lock(mutex_);
        while (!in_flight_.empty() && cudaEventQuery(in_flight_.front().event->event) != cudaErrorNotReady) in_flight_.pop_front();
        if (!in_flight_.empty()) {
          oldest = in_flight_.front().what;
          late = Clock::now() - in_flight_.front().start > timeout_;
        }
      }
      if (late) {
        std::lock_guard lock(comm_mutex_);
        abort_locked("rank " + std::to_string(rank_) + " on " + host_ + ": " + oldest + " did not complete within " + seconds() +
                         " s (--timeout): a peer rank is dead or unreachable; NCCL communicator aborted",
                     true);
      } else if (abort_->raised()) {
        std::lock_guard lock(comm_mutex_);
        abort_locked(abort_->message() + (oldest.empty() ? "" : ", during " + oldest), false);
      } else {
        std::lock_guard lock(comm_mutex_);
        ncclResult_t state = ncclSuccess;
        if (!aborted_ && ncclCommGetAsyncError(comm_, &state) == ncclSuccess && state != ncclSuccess && state != ncclInProgress)
          abort_locked("rank " + std::to_string(rank_) + " on " + host_ + ": NCCL reported " + ncclGetErrorString(state) +
                           (oldest.empty() ? "" : " during " + oldest) + " (a peer failed or a link broke; see NCCL_DEBUG=WARN output)",
                       false);
      }
    }
  }

  struct InFlight {
    std::shared_ptr<Event> event;
    Clock::time_point start;
    std::string what;
  };

  int rank_, size_;
  std::chrono::milliseconds timeout_;
  std::string host_;
  std::shared_ptr<Health> health_;
  bootstrap::Store* store_ = nullptr;  // the session's; outlives this communicator
  std::shared_ptr<bootstrap::AbortSignal> abort_;
  int device_ = 0;
  cudaStream_t stream_{};
  ncclComm_t comm_{};
  void* scratch_ = nullptr;
  std::string description_, backend_;
  std::mutex mutex_, comm_mutex_;
  std::deque<InFlight> in_flight_;
  std::atomic<bool> stopping_{false}, aborted_{false};
  std::thread watchdog_;
};

}  // namespace

int nccl_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

std::unique_ptr<Communicator> make_nccl_communicator(bootstrap::Session& session, std::chrono::milliseconds timeout,
                                                     StreamPriority priority) {
  return std::make_unique<NcclCommunicator>(session, timeout, priority);
}

}  // namespace gpudirect::comm
