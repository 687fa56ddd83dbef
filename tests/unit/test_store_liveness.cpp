// The rendezvous store as the job's liveness channel: a rank that dies (here: destroyed during an
// exception, which says no goodbye, as a killed process would not) or reports a failure is named
// on every other rank at once, and their pending store calls fail instead of waiting.
#include <catch2/catch.hpp>

#include "bootstrap/local_spawn.hpp"
#include "bootstrap/store.hpp"
#include "store_test_ranks.hpp"

#include <chrono>
#include <thread>

using namespace gpudirect::bootstrap;
using gpudirect::bootstrap::testing::rank_of;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

// Runs `size` ranks; rank `dying` leaves by an exception after the first barrier, the others
// wait at a second barrier with a long timeout. Returns each survivor's error and wait time.
struct Outcome {
  std::string error;
  Clock::duration waited{};
  bool signalled = false;
};

std::vector<Outcome> run_with_dying_rank(int size, int dying) {
  const int port = free_local_port();
  std::vector<Outcome> out(static_cast<std::size_t>(size));
  std::vector<std::thread> ranks;
  for (int r = 0; r < size; ++r)
    ranks.emplace_back([&, r] {
      try {
        auto store = connect_store(rank_of(r, size, port), 60s);
        store->barrier("start");
        if (r == dying) {
          std::this_thread::sleep_for(200ms);  // the others are waiting by then
          throw std::runtime_error("this rank fails");
        }
        const auto start = Clock::now();
        try {
          store->barrier("never");
        } catch (const PeerFailure& e) {
          out[static_cast<std::size_t>(r)].error = e.what();
        }
        out[static_cast<std::size_t>(r)].waited = Clock::now() - start;
        out[static_cast<std::size_t>(r)].signalled = store->abort_signal()->raised();
      } catch (const std::runtime_error&) {
      }
    });
  for (auto& t : ranks) t.join();
  return out;
}

}  // namespace

TEST_CASE("a rank that dies is named, with its host, on every other rank within a second", "[store][liveness]") {
  const auto out = run_with_dying_rank(4, 2);
  for (int r : {0, 1, 3}) {
    const auto& o = out[static_cast<std::size_t>(r)];
    CHECK_THAT(o.error, Catch::Contains("rank 2 on host2 is gone"));
    CHECK(o.signalled);
    CHECK(o.waited < 2s);  // 200 ms of it is the dying rank's pause
  }
}

TEST_CASE("rank 0 dying (the server) is named on every other rank", "[store][liveness]") {
  const auto out = run_with_dying_rank(3, 0);
  for (int r : {1, 2}) {
    const auto& o = out[static_cast<std::size_t>(r)];
    // Named by the server (its own client left first) or by the clients (the server went away).
    CHECK_THAT(o.error, Catch::Contains("rank 0 on host0"));
    CHECK(o.waited < 2s);  // 200 ms of it is the dying rank's pause
  }
}

TEST_CASE("abort(reason) from one rank reaches the others' signal and pending calls", "[store][liveness]") {
  const int port = free_local_port();
  std::vector<std::string> errors(3), signals(3);
  std::vector<Clock::duration> waited(3, Clock::duration::zero());  // asserted on this thread, not the ranks'
  std::vector<std::thread> ranks;
  for (int r = 0; r < 3; ++r)
    ranks.emplace_back([&, r] {
      auto store = connect_store(rank_of(r, 3, port), 60s);
      store->barrier("start");
      if (r == 1) {
        std::this_thread::sleep_for(200ms);  // the others are waiting by then
        store->abort("rank 1 on host1: no progress for 5 s in all_reduce");
        signals[1] = store->abort_signal()->message();
        return;
      }
      const auto start = Clock::now();
      try {
        store->get("never-set");
      } catch (const PeerFailure& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
      waited[static_cast<std::size_t>(r)] = Clock::now() - start;
      signals[static_cast<std::size_t>(r)] = store->abort_signal()->message();
    });
  for (auto& t : ranks) t.join();
  // The pending get ends on the abort, not at the store's 60 s timeout (a bound loose enough for a busy machine).
  CHECK(waited[0] < 10s);
  CHECK(waited[2] < 10s);
  for (int r = 0; r < 3; ++r) CHECK(signals[static_cast<std::size_t>(r)] == "rank 1 on host1: no progress for 5 s in all_reduce");
  CHECK(errors[0] == signals[0]);
  CHECK(errors[2] == signals[0]);
}

TEST_CASE("ranks that finish cleanly raise no abort, whatever order they leave in", "[store][liveness]") {
  const int port = free_local_port();
  std::vector<char> raised(4, 1);  // char, not bool: each rank's thread writes its own element
  std::vector<std::thread> ranks;
  for (int r = 0; r < 4; ++r)
    ranks.emplace_back([&, r] {
      auto store = connect_store(rank_of(r, 4, port), 10s);
      store->barrier("end");
      std::this_thread::sleep_for(std::chrono::milliseconds(50 * (3 - r)));  // rank 0 leaves last... or not
      raised[static_cast<std::size_t>(r)] = store->abort_signal()->raised();
    });
  for (auto& t : ranks) t.join();
  CHECK(raised == std::vector<char>(4, 0));
}
