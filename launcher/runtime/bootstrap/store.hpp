// A small TCP key/value store for rendezvous: rank 0 serves, every rank (rank 0 included) is a
// client. Used to exchange the NCCL unique id, libfabric endpoint addresses, host names and
// per-rank timings. Every blocking call has a deadline: a missing rank or an unreachable host is a
// StoreError naming what was waited for, never a silent hang.
//
// Contracts:
//  - Keys are namespaced by their user: `store.scoped("bench")` is a view whose keys, barriers and
//    all-gathers live under "bench/", so two users of one store cannot collide.
//  - barrier(name) and all_gather(name) may be called again and again under the same name (each
//    call is a new generation), as long as every rank makes the same calls in the same order; so
//    one process can build several communicators on one store.
//  - Liveness: every rank keeps a second connection open to rank 0 for the whole session. When a
//    rank's connection closes without a goodbye (killed, crashed, exited with an error), rank 0
//    publishes an abort naming that rank and its host; when rank 0 goes away, every rank sees it.
//    abort_signal() is raised at once on every rank, and pending store calls fail with PeerFailure.
//  - Authentication: every connection (requests and liveness alike) first proves the step's secret
//    (LaunchContext::rendezvous_secret, from GPUDIRECT_RENDEZVOUS_SECRET) by a challenge-response
//    (rendezvous_auth.hpp), and rank 0 proves it back. Before that rank 0 serves nothing: a peer
//    without the secret, with a wrong one, or replaying another connection's answer is refused,
//    learns no key, rank or host, and is named by address in one rate-limited line on rank 0's
//    stderr; one that says nothing is dropped after the timeout (10 s at most). connect_store throws
//    a StoreError saying how to set a secret when there is none.
//  - Rank 0's server answers a malformed or hostile client (oversized or truncated frames, unknown
//    operations, garbage, a client that never reads) with an error and drops it; it never crashes
//    or blocks the other ranks.
#pragma once

#include "bootstrap/abort_signal.hpp"
#include "bootstrap/launch_context.hpp"

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

// Another rank died, lost its connection, or reported a failure: the job cannot go on.
class PeerFailure : public StoreError {
 public:
  using StoreError::StoreError;
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

  // Tells every rank to stop, with this rank's reason (a one-line message naming what failed).
  // Safe from any thread.
  virtual void abort(const std::string& reason) = 0;
  // Raised on this rank when any rank aborts or dies; transports poll it.
  virtual std::shared_ptr<AbortSignal> abort_signal() = 0;

  // A view of this store with every key under "prefix/". The view must not outlive this store.
  std::unique_ptr<Store> scoped(const std::string& prefix);
};

// Connects (and on rank 0 also serves) according to the context. `timeout` bounds every wait.
std::unique_ptr<Store> connect_store(const LaunchContext& context, std::chrono::milliseconds timeout);

}  // namespace gpudirect::bootstrap
