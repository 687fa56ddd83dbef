#include "comm/host_communicator.hpp"

#include "comm/algorithms/collectives.hpp"
#include "comm/collective_table.hpp"
#include "gpudirect/text.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

namespace gpudirect::comm {
namespace {

class FutureRequest final : public Request {
 public:
  explicit FutureRequest(std::future<void> future) : future_(std::move(future)) {}
  bool test() override { return !future_.valid() || future_.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }
  void wait() override {
    if (future_.valid()) {  // get() once; later waits answer the same
      try {
        future_.get();
      } catch (...) {
        failed_ = std::current_exception();
      }
    }
    if (failed_) std::rethrow_exception(failed_);
  }

 private:
  std::future<void> future_;
  std::exception_ptr failed_;
};

// A call that ran in the caller's thread: complete when returned.
class CompletedRequest final : public Request {
 public:
  explicit CompletedRequest(std::exception_ptr failed) : failed_(std::move(failed)) {}
  bool test() override { return true; }
  void wait() override {
    if (failed_) std::rethrow_exception(failed_);
  }

 private:
  std::exception_ptr failed_;
};

// What a call is, for failure messages: "all_reduce of 67108864 bytes (float sum)". Kept as parts
// and written out only when a call fails (no string per call).
struct CallDescription {
  const char* collective = "";
  std::size_t count = 0;
  DataType type = DataType::float32;
  const char* op = nullptr;

  std::size_t bytes() const { return count * size_of(type); }
  std::string text() const {
    if (!*collective) return "";
    return std::string(collective) + " of " + std::to_string(bytes()) + " bytes (" + name_of(type) +
           (op ? std::string(" ") + op : std::string()) + ")";
  }
};

// A call of at most this many bytes runs in the caller's thread when nothing is queued or running:
// handing it to the worker and back costs two thread wake-ups, as long as the call itself; a
// larger call (a gradient bucket) still runs in the background so it overlaps.
// GPUDIRECT_COMM_INLINE_BYTES changes it (0: every call on the worker), to measure.
constexpr std::size_t kInlineCallBytes = 256 * 1024;

std::size_t inline_call_bytes() {
  const char* set = std::getenv("GPUDIRECT_COMM_INLINE_BYTES");
  return set ? parse_integer<std::size_t>(set, "GPUDIRECT_COMM_INLINE_BYTES", 0, std::size_t(1) << 40) : kInlineCallBytes;
}

class HostCommunicator final : public Communicator {
 public:
  HostCommunicator(std::unique_ptr<Transport> transport, std::string description, NodeStaging staging, StuckCallPolicy stuck)
      : transport_(std::move(transport)),
        staging_(std::move(staging)),
        collectives_(*transport_, tuning_from_environment(), staging_.collectives.get()),
        description_(std::move(description)),
        stuck_(std::move(stuck)) {
    worker_ = std::thread([this] { run(); });
    if (stuck_.abort) watcher_ = std::thread([this] { watch_for_stuck_calls(); });
  }

  ~HostCommunicator() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    worker_.join();
    // Closing the transport may wait on a peer too (a dead one): still under the watcher's eye.
    staging_.collectives.reset();
    staging_.memory.reset();
    transport_.reset();
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    watch_wake_.notify_all();
    if (watcher_.joinable()) watcher_.join();
  }

  int rank() const override { return transport_->rank(); }
  int size() const override { return transport_->size(); }
  MemoryKind memory() const override { return MemoryKind::host; }
  std::string backend_name() const override { return description_; }
  std::string device_description() const override { return "host memory [" + description_ + "]"; }

  std::unique_ptr<Request> all_reduce(const void* s, void* r, std::size_t c, DataType t, ReduceOp op) override {
    return submit(describe(Collective::all_reduce, c, t, op), [=, this] { collectives_.all_reduce(s, r, c, t, op); });
  }
  std::unique_ptr<Request> all_gather(const void* s, void* r, std::size_t c, DataType t) override {
    return submit(describe(Collective::all_gather, c, t), [=, this] { collectives_.all_gather(s, r, c, t); });
  }
  std::unique_ptr<Request> reduce_scatter(const void* s, void* r, std::size_t c, DataType t, ReduceOp op) override {
    return submit(describe(Collective::reduce_scatter, c, t, op), [=, this] { collectives_.reduce_scatter(s, r, c, t, op); });
  }
  std::unique_ptr<Request> broadcast(const void* s, void* r, std::size_t c, DataType t, int root) override {
    check_root(root);
    return submit(describe(Collective::broadcast, c, t), [=, this] { collectives_.broadcast(s, r, c, t, root); });
  }
  std::unique_ptr<Request> reduce(const void* s, void* r, std::size_t c, DataType t, ReduceOp op, int root) override {
    check_root(root);
    return submit(describe(Collective::reduce, c, t, op), [=, this] { collectives_.reduce(s, r, c, t, op, root); });
  }
  std::unique_ptr<Request> alltoall(const void* s, void* r, std::size_t c, DataType t) override {
    return submit(describe(Collective::alltoall, c, t), [=, this] { collectives_.alltoall(s, r, c, t); });
  }
  std::unique_ptr<Request> sendrecv(const void* s, void* r, std::size_t c, DataType t) override {
    return submit(describe(Collective::sendrecv, c, t), [=, this] { collectives_.sendrecv(s, r, c, t); });
  }

  void* allocate(std::size_t bytes) override {
    // Where peers on this host read buffers in place, memory they can map (private where it cannot
    // be had: only slower).
    if (staging_.shareable)
      if (void* shared = staging_.shareable->allocate(bytes)) return shared;
    // Pre-faulted: first-touch page faults are very slow on VMs and would land in the timings.
    void* p = ::mmap(nullptr, std::max<std::size_t>(bytes, 1), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) throw CommError("cannot allocate " + std::to_string(bytes) + " bytes of host memory");
    std::lock_guard lock(mutex_);
    sizes_[p] = std::max<std::size_t>(bytes, 1);
    return p;
  }
  void release(void* buffer) override {
    if (staging_.shareable && staging_.shareable->release(buffer)) return;
    std::lock_guard lock(mutex_);
    if (auto it = sizes_.find(buffer); it != sizes_.end()) {
      ::munmap(buffer, it->second);
      sizes_.erase(it);
    }
  }
  void copy_to_device(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void synchronize() override {
    submit({}, [] {})->wait();
  }
  void barrier() override {
    submit({"barrier"}, [this] { collectives_.barrier(); })->wait();
  }

 private:
  // GPUDIRECT_COMM_CHUNK_BYTES: the chunk the ring and the direct reads move at a time (to measure).
  static CollectiveTuning tuning_from_environment() {
    CollectiveTuning tuning;
    if (const char* from = std::getenv("GPUDIRECT_COMM_STAGED_MIN_BYTES"))
      tuning.staged_min_bytes = parse_integer<std::size_t>(from, "GPUDIRECT_COMM_STAGED_MIN_BYTES", 0, std::size_t(1) << 50);
    if (const char* piece = std::getenv("GPUDIRECT_COMM_PIECE_BYTES"))
      tuning.piece_bytes = parse_integer<std::size_t>(piece, "GPUDIRECT_COMM_PIECE_BYTES", 64, std::size_t(1) << 40);
    if (const char* chunk = std::getenv("GPUDIRECT_COMM_CHUNK_BYTES"))
      tuning.chunk_bytes = parse_integer<std::size_t>(chunk, "GPUDIRECT_COMM_CHUNK_BYTES", 64, std::size_t(1) << 40);
    // GPUDIRECT_COMM_BY_HOST=0: one ring over all ranks of a job across hosts (to compare).
    if (const char* by_host = std::getenv("GPUDIRECT_COMM_BY_HOST");
        by_host && parse_integer<int>(by_host, "GPUDIRECT_COMM_BY_HOST", 0, 1) == 0)
      tuning.by_host_bytes = CollectiveTuning::kNever;
    return tuning;
  }

  // A call's description counts the elements of its larger buffer (all of an all_gather's output).
  CallDescription describe(Collective c, std::size_t count, DataType type, ReduceOp op = ReduceOp::sum) const {
    const CollectiveInfo& collective = info_of(c);
    return {collective.name, collective.total_elements(count, size()), type, collective.reduces ? name_of(op) : nullptr};
  }

  void check_root(int root) const {
    if (root < 0 || root >= size())
      throw CommError("root " + std::to_string(root) + " is not a rank (0.." + std::to_string(size() - 1) + ")");
  }

  // Failures name the call, so the one-line report says what the ranks were doing.
  struct Task {
    CallDescription what;
    std::function<void()> work;
    std::promise<void> done;
  };

  template <typename Work>
  std::unique_ptr<Request> submit(const CallDescription& what, Work&& work) {
    {
      std::unique_lock lock(mutex_);
      // A failed communicator refuses new work at once: a caller queueing many calls learns now.
      if (failed_) std::rethrow_exception(failed_);
      if (queue_.empty() && !busy_ && inline_bytes_ > 0 && what.bytes() <= inline_bytes_) {
        busy_ = true;  // the worker leaves the transport alone until we are done
        running_ = what, ++started_;
        lock.unlock();
        std::exception_ptr failed;
        run_one(what, work, failed);
        lock.lock();
        busy_ = false;
        if (failed) failed_ = failed;
        if (!queue_.empty()) wake_.notify_one();  // queued meanwhile by another thread
        return std::make_unique<CompletedRequest>(failed);
      }
    }
    Task task{what, std::forward<Work>(work), {}};
    auto future = task.done.get_future();
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(task));
    }
    wake_.notify_one();
    return std::make_unique<FutureRequest>(std::move(future));
  }

  void run() {
    std::exception_ptr failed;  // once one call failed, the rest fail at once with its error
    for (;;) {
      Task task;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || (!queue_.empty() && !busy_); });
        if (queue_.empty()) return;
        task = std::move(queue_.front());
        queue_.pop_front();
        busy_ = true;
        running_ = task.what, ++started_;
        if (!failed) failed = failed_;  // a call that ran in the caller's thread failed
      }
      if (!failed) run_one(task.what, task.work, failed);
      {
        // Idle again before the caller learns the call is complete, so its next small call runs
        // in its own thread.
        std::lock_guard lock(mutex_);
        busy_ = false;
        if (failed) failed_ = failed;
      }
      if (failed)
        task.done.set_exception(failed);
      else
        task.done.set_value();
    }
  }

  // See StuckCallPolicy. Looks ten times a second; stuck: the same call still running, or the
  // communicator still closing, `grace` after the abort was first seen.
  void watch_for_stuck_calls() {
    std::unique_lock lock(mutex_);
    std::uint64_t call = 0;
    bool closing = false;
    std::chrono::steady_clock::time_point since;
    bool seen = false;
    while (!closed_) {
      watch_wake_.wait_for(lock, std::chrono::milliseconds(100));
      if (closed_) return;
      if (!stuck_.abort->raised() || !(busy_ || stopping_)) {
        seen = false;
        continue;
      }
      const auto now = std::chrono::steady_clock::now();
      if (!seen || call != started_ || closing != stopping_) {
        seen = true, call = started_, closing = stopping_, since = now;
        continue;
      }
      if (now - since < stuck_.grace) continue;
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%.1f", static_cast<double>(stuck_.grace.count()) / 1000.0);
      const std::string call_text = running_.text();
      const std::string line = stuck_.reporter + ": " + stuck_.abort->message() + (call_text.empty() ? "" : ", during " + call_text) +
                               " (the transport had not returned " + seconds +
                               " s later, as when a peer on this host dies in the middle of a shared-memory transfer: this rank exits)";
      lock.unlock();
      if (stuck_.on_stuck) {
        stuck_.on_stuck(line);
        return;
      }
      std::fprintf(stderr, "%s\n", line.c_str());
      std::fflush(stderr);
      ::_exit(3);
    }
  }

  // Runs one call; a failure is named after the call and becomes `failed`.
  template <typename Work>
  static void run_one(const CallDescription& what, Work& work, std::exception_ptr& failed) {
    try {
      work();
      return;
    } catch (const CommTimeout& e) {
      const std::string call = what.text();
      failed = std::make_exception_ptr(CommTimeout(std::string(e.what()) + (call.empty() ? "" : ", during " + call)));
    } catch (const CommError& e) {
      const std::string call = what.text();
      failed = std::make_exception_ptr(CommError(std::string(e.what()) + (call.empty() ? "" : ", during " + call)));
    } catch (...) {
      failed = std::current_exception();
    }
  }

  std::unique_ptr<Transport> transport_;
  NodeStaging staging_;
  Collectives collectives_;
  std::string description_;
  std::mutex mutex_;
  std::condition_variable wake_;        // the worker's: work queued, or stopping
  std::condition_variable watch_wake_;  // the stuck-call watcher's: the transport is closed
  std::deque<Task> queue_;
  std::exception_ptr failed_;
  std::map<void*, std::size_t> sizes_;
  bool stopping_ = false;
  bool closed_ = false;  // the transport is closed: the watcher may stop
  const std::size_t inline_bytes_ = inline_call_bytes();
  bool busy_ = false;          // a call is running (on the worker or in a caller's thread)
  CallDescription running_;    // the latest call started
  std::uint64_t started_ = 0;  // calls started so far
  StuckCallPolicy stuck_;
  std::thread worker_;
  std::thread watcher_;
};

}  // namespace

std::unique_ptr<Communicator> make_host_communicator(std::unique_ptr<Transport> transport, std::string description, NodeStaging staging,
                                                     StuckCallPolicy stuck) {
  return std::make_unique<HostCommunicator>(std::move(transport), std::move(description), std::move(staging), std::move(stuck));
}

std::unique_ptr<Communicator> make_fabric_communicator(const bootstrap::LaunchContext& context, bootstrap::Store& store,
                                                       const FabricOptions& options, const std::string& reporter) {
  std::string description;
  auto transport = make_fabric_transport(context, store, options, &description);
  auto staging = stage_on_one_host(context, store, options.timeout);
  if (staging.collectives) description += "+staging";
  StuckCallPolicy stuck;
  stuck.abort = store.abort_signal();
  stuck.reporter = reporter;
  return make_host_communicator(std::move(transport), description, std::move(staging), std::move(stuck));
}

}  // namespace gpudirect::comm
