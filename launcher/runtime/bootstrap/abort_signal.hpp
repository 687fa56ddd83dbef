// A job-wide "stop now" flag with the reason, shared by the rendezvous store (which learns of a
// dead rank, a lost server, or a rank's own report) and the transports (whose progress loops check
// it on every turn, so an in-flight collective fails within milliseconds instead of hanging).
#pragma once

#include <atomic>
#include <mutex>
#include <string>

namespace gpudirect::bootstrap {

class AbortSignal {
 public:
  // Cheap enough for a progress loop: one atomic load.
  bool raised() const noexcept { return raised_.load(std::memory_order_acquire); }

  std::string message() const {
    std::lock_guard lock(mutex_);
    return message_;
  }

  // The first reason wins (later ones are consequences); returns whether this call raised it.
  bool raise(const std::string& message) {
    std::lock_guard lock(mutex_);
    if (raised_.load(std::memory_order_relaxed)) return false;
    message_ = message;
    raised_.store(true, std::memory_order_release);
    return true;
  }

 private:
  std::atomic<bool> raised_{false};
  mutable std::mutex mutex_;
  std::string message_;
};

}  // namespace gpudirect::bootstrap
