// Two real ranks of one rendezvous do their work while a test plays hostile peers against rank 0's
// server; the ranks must finish as if nothing happened.
#pragma once

#include <catch2/catch.hpp>

#include "bootstrap/local_spawn.hpp"
#include "bootstrap/store.hpp"
#include "store_test_ranks.hpp"

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace gpudirect::bootstrap::testing {

// Two real ranks do a store round trip while `hostile` runs against the same server.
template <typename Hostile>
void ranks_survive(Hostile hostile) {
  const int port = free_local_port();
  std::vector<std::string> gathered(2);
  std::thread rank1([&] {
    auto store = connect_store(rank_of(1, 2, port), std::chrono::seconds(10));
    gathered[1] = store->all_gather("names", "one")[0];
    store->barrier("end");
  });
  {
    auto store = connect_store(rank_of(0, 2, port), std::chrono::seconds(10));
    hostile(port);
    gathered[0] = store->all_gather("names", "zero")[1];
    store->barrier("end");
    rank1.join();
  }
  CHECK(gathered[0] == "one");
  CHECK(gathered[1] == "zero");
}

}  // namespace gpudirect::bootstrap::testing
