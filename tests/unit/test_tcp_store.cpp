#include <catch2/catch.hpp>

#include "bootstrap/local_spawn.hpp"
#include "bootstrap/store.hpp"
#include "store_test_ranks.hpp"

#include <chrono>
#include <thread>

using namespace gpudirect::bootstrap;
using gpudirect::bootstrap::testing::rank_of;
using namespace std::chrono_literals;

TEST_CASE("8 ranks: set/get, barrier, all_gather of large values", "[store]") {
  const int port = free_local_port(), size = 8;
  std::vector<std::vector<std::string>> gathered(size);
  std::vector<std::string> got(size);
  std::vector<std::thread> ranks;
  for (int r = 0; r < size; ++r)
    ranks.emplace_back([&, r] {
      auto store = connect_store(rank_of(r, size, port), 10s);
      if (r == 3) store->set("answer", std::string(1 << 20, 'x'));
      got[static_cast<std::size_t>(r)] = store->get("answer");  // waits for rank 3
      store->barrier("middle");
      gathered[static_cast<std::size_t>(r)] = store->all_gather("names", "rank" + std::to_string(r));
      store->barrier("end");
    });
  for (auto& t : ranks) t.join();
  for (int r = 0; r < size; ++r) {
    CHECK(got[static_cast<std::size_t>(r)].size() == (1u << 20));
    REQUIRE(gathered[static_cast<std::size_t>(r)].size() == 8);
    CHECK(gathered[static_cast<std::size_t>(r)][5] == "rank5");
  }
}

TEST_CASE("a missing rank is a bounded, named error at a barrier", "[store]") {
  const int port = free_local_port();
  std::string error;
  const auto start = std::chrono::steady_clock::now();
  std::thread rank1([&] {
    auto store = connect_store(rank_of(1, 3, port), 1s);
    try {
      store->barrier("step");
    } catch (const StoreError& e) {
      error = e.what();
    }
  });
  {
    auto store = connect_store(rank_of(0, 3, port), 1s);
    try {
      store->barrier("step");
    } catch (const StoreError&) {
    }
    rank1.join();
  }
  CHECK(std::chrono::steady_clock::now() - start < 8s);
  CHECK_THAT(error, Catch::Contains("barrier 'step'") && Catch::Contains("2 of 3 ranks arrived"));
}

TEST_CASE("an unreachable rendezvous fails within the timeout, saying where", "[store]") {
  const int port = free_local_port();  // nobody listens there
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(connect_store(rank_of(2, 4, port), 1s),
                    Catch::Contains("cannot reach the rendezvous at 127.0.0.1:" + std::to_string(port)) && Catch::Contains("rank 2 of 4"));
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  CHECK_THROWS_WITH(connect_store(
                        [] {
                          auto c = rank_of(1, 2, 1);
                          c.rendezvous_host = "no-such-host.invalid";
                          return c;
                        }(),
                        300ms),
                    Catch::Contains("cannot resolve no-such-host.invalid"));
}

TEST_CASE("barriers and all_gathers are reusable under one name: each call is a new generation", "[store]") {
  const int port = free_local_port(), size = 4;
  std::vector<std::vector<std::vector<std::string>>> gathered(size);
  std::vector<std::thread> ranks;
  for (int r = 0; r < size; ++r)
    ranks.emplace_back([&, r] {
      auto store = connect_store(rank_of(r, size, port), 10s);
      for (int round = 0; round < 5; ++round) {
        store->barrier("step");
        gathered[static_cast<std::size_t>(r)].push_back(store->all_gather("values", std::to_string(round * 10 + r)));
      }
      store->barrier("step");
    });
  for (auto& t : ranks) t.join();
  for (int r = 0; r < size; ++r) {
    REQUIRE(gathered[static_cast<std::size_t>(r)].size() == 5);
    for (int round = 0; round < 5; ++round)
      CHECK(gathered[static_cast<std::size_t>(r)][static_cast<std::size_t>(round)] ==
            std::vector<std::string>{std::to_string(round * 10), std::to_string(round * 10 + 1), std::to_string(round * 10 + 2),
                                     std::to_string(round * 10 + 3)});
  }
}

TEST_CASE("scoped views keep their users' keys apart on one store", "[store]") {
  const int port = free_local_port();
  std::vector<std::string> seen(2);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] {
      auto store = connect_store(rank_of(r, 2, port), 10s);
      auto bench = store->scoped("bench");
      auto train = store->scoped("train");
      if (r == 0) {
        bench->set("id", "for bench");
        train->set("id", "for train");
      }
      // Same gather name in two scopes: two separate exchanges.
      const auto a = bench->all_gather("hosts", "b" + std::to_string(r));
      const auto b = train->all_gather("hosts", "t" + std::to_string(r));
      seen[static_cast<std::size_t>(r)] = bench->get("id") + "|" + train->get("id") + "|" + store->get("bench/id") + "|" + a[1] + b[1];
      store->barrier("end");
    });
  for (auto& t : ranks) t.join();
  CHECK(seen[0] == "for bench|for train|for bench|b1t1");
  CHECK(seen[1] == seen[0]);
  const int lone = free_local_port();
  auto store = connect_store(rank_of(0, 1, lone), 2s);
  CHECK_THROWS_WITH(store->scoped("a/b"), Catch::Contains("without '/'"));
}

TEST_CASE("a process can open a store, use it, close it, and open another", "[store]") {
  for (int round = 0; round < 3; ++round) {
    const int port = free_local_port();
    std::vector<std::thread> ranks;
    std::vector<std::string> got(3);
    for (int r = 0; r < 3; ++r)
      ranks.emplace_back([&, r] {
        auto store = connect_store(rank_of(r, 3, port), 10s);
        got[static_cast<std::size_t>(r)] = store->all_gather("x", std::to_string(round))[2];
        store->barrier("end");
      });
    for (auto& t : ranks) t.join();
    CHECK(got == std::vector<std::string>(3, std::to_string(round)));
  }
}
