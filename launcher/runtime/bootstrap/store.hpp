// A small TCP key/value store for rendezvous: rank 0 serves, every rank (rank 0 included) is a
// client. Used to exchange the NCCL unique id, libfabric endpoint addresses, host names and
// per-rank timings. Every blocking call has a deadline: a missing rank or an unreachable host is a
// StoreError naming what was waited for, never a silent hang.
#pragma once

#include "launch_context.hpp"

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpudirect::bootstrap {

class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Store {
 public:
  virtual ~Store() = default;
  virtual void set(const std::string& key, const std::string& value) = 0;
  // Blocks until the key exists or the timeout passes (StoreError).
  virtual std::string get(const std::string& key) = 0;
  // Every rank calls it with the same name; returns when all ranks have arrived.
  virtual void barrier(const std::string& name) = 0;
  // Every rank contributes one value; returns all of them in rank order.
  virtual std::vector<std::string> all_gather(const std::string& name, const std::string& value) = 0;
};

// Connects (and on rank 0 also serves) according to the context. `timeout` bounds every wait.
std::unique_ptr<Store> connect_store(const LaunchContext& context, std::chrono::milliseconds timeout);

}  // namespace gpudirect::bootstrap
