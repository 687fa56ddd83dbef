// Shared-memory staging beyond the results (test_collectives_in_process.cpp checks those): its
// layout, a silent or aborted peer, the segment every rank of a one-host job maps through the
// real rendezvous store (named nowhere in /dev/shm afterwards; all ranks fall back together), and
// the shareable buffers peers read in place.
#include <catch2/catch.hpp>

#include "bootstrap/local_spawn.hpp"
#include "bootstrap/store.hpp"
#include "comm/shm/node_staging.hpp"
#include "comm/shm/staged_collectives.hpp"
#include "comm/shm/staging_segment.hpp"
#include "store_test_ranks.hpp"

#include <dirent.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace gpudirect::comm;
using namespace std::chrono_literals;
using gpudirect::bootstrap::testing::rank_of;

namespace {

// This process's segments only: other test processes (ctest -j2) make and remove their own meanwhile.
std::set<std::string> our_shm_objects() {
  const std::string ours = "gpudirect-comm-" + std::to_string(::getpid()) + "-";
  std::set<std::string> names;
  if (DIR* dir = ::opendir("/dev/shm")) {
    while (const dirent* entry = ::readdir(dir))
      if (std::strncmp(entry->d_name, ours.c_str(), ours.size()) == 0) names.insert(entry->d_name);
    ::closedir(dir);
  }
  return names;
}

// Runs `body(rank, store)` for `size` ranks on threads over a real rendezvous store.
template <typename Body>
void on_store_ranks(int size, Body body, const std::string& hostname = "") {
  const int port = gpudirect::bootstrap::free_local_port();
  std::vector<std::thread> ranks;
  for (int r = 0; r < size; ++r)
    ranks.emplace_back([&, r] {
      auto context = rank_of(r, size, port);
      if (!hostname.empty()) context.hostname = hostname;
      auto store = gpudirect::bootstrap::connect_store(context, 20s);
      body(r, context, *store);
      store->barrier("done");
    });
  for (auto& t : ranks) t.join();
}

}  // namespace

TEST_CASE("staging layout: every ring has its own cache lines, fewer slots as ranks multiply", "[staging]") {
  const auto two = StagingLayout::for_ranks(2);
  CHECK(two.ring_count() == 4);  // two broadcast rings, one ring per ordered pair
  CHECK(two.slots == 8);
  CHECK(two.header_bytes() % 4096 == 0);
  CHECK(two.header_bytes() >= 64 * 3);
  CHECK(two.chunk_bytes == 128 * 1024);
  const auto eight = StagingLayout::for_ranks(8);  // 64 rings: fewer slots, as large
  CHECK(eight.slots == 4);
  CHECK(eight.chunk_bytes == 128 * 1024);
  const auto sixteen = StagingLayout::for_ranks(16);  // 256 rings: smaller slots too
  CHECK(sixteen.slots == 4);
  CHECK(sixteen.chunk_bytes < 128 * 1024);
  CHECK(sixteen.chunk_bytes >= 16 * 1024);
  for (const auto& layout : {two, eight, sixteen}) CHECK(layout.bytes() <= StagingLayout::kDefaultBudget);
  CHECK(StagingLayout::for_ranks(2, StagingLayout::kDefaultBudget, 64 * 1024).chunk_bytes == 64 * 1024);
  CHECK_THROWS_WITH(StagingLayout::for_ranks(2, StagingLayout::kDefaultBudget, 1000), Catch::Contains("not a multiple of 64"));
  CHECK_THROWS_WITH(StagingLayout::for_ranks(64), Catch::Contains("64 ranks on one host need") && Catch::Contains("shared memory"));
  CHECK_THROWS(StagingLayout::for_ranks(0));
}

TEST_CASE("staging: a rank that never joins the call is named within the timeout, and told to the job", "[staging]") {
  const auto layout = StagingLayout::for_ranks(3);
  std::vector<char> rings(layout.bytes(), 0);
  std::string told;
  StagingWait wait{.timeout = 200ms, .abort = nullptr, .on_failure = [&](const std::string& m) { told = m; }, .host = "node7"};
  std::vector<float> in(100000, 1.0f), out(100000);
  // Rank 1 joins, rank 2 never does: rank 0 waits for rank 2's part of its block.
  bool one_timed_out = false;  // Catch2 assertions only on the test's thread
  std::thread one([&] {
    StagedCollectives rank1(rings.data(), layout, 1, StagingWait{.timeout = 200ms, .abort = nullptr, .on_failure = {}, .host = "node7"});
    std::vector<float> mine(in.size(), 1.0f), result(in.size());
    try {
      rank1.all_reduce(mine.data(), result.data(), mine.size(), DataType::float32, ReduceOp::sum);
    } catch (const CommTimeout&) {
      one_timed_out = true;
    }
  });
  StagedCollectives rank0(rings.data(), layout, 0, wait);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(rank0.all_reduce(in.data(), out.data(), in.size(), DataType::float32, ReduceOp::sum),
                    Catch::Contains("rank 2 on node7 made no progress for 0.2 s") && Catch::Contains("in all_reduce over shared memory"));
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  CHECK_THAT(told, Catch::Contains("rank 2 on node7"));
  one.join();
  CHECK(one_timed_out);
}

TEST_CASE("staging: a job-wide abort stops a waiting rank at once with the abort's reason", "[staging]") {
  const auto layout = StagingLayout::for_ranks(2);
  std::vector<char> rings(layout.bytes(), 0);
  auto abort = std::make_shared<gpudirect::bootstrap::AbortSignal>();
  StagedCollectives rank0(rings.data(), layout, 0, StagingWait{.timeout = 60s, .abort = abort, .on_failure = {}, .host = "h"});
  std::thread raiser([&] {
    std::this_thread::sleep_for(100ms);
    abort->raise("rank 1 on h died");
  });
  std::vector<double> in(1000, 2.0), out(2000);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(rank0.all_gather(in.data(), out.data(), in.size(), DataType::float64), "rank 1 on h died");
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  raiser.join();
}

TEST_CASE("a shared segment is mapped by every rank, zeroed, shared, and gone from /dev/shm", "[staging][store]") {
  const auto before = our_shm_objects();
  std::vector<std::string> errors(3);
  std::vector<int> zeroed(3, 0), sees_all(3, 0);  // per rank; checked on the test's thread
  on_store_ranks(3, [&](int r, const gpudirect::bootstrap::LaunchContext&, gpudirect::bootstrap::Store& store) {
    const auto me = static_cast<std::size_t>(r);
    std::string why;
    auto segment = map_staging_segment(store, r, std::size_t(1) << 20, &why);
    errors[me] = why;
    if (!segment) return;
    auto* bytes = static_cast<unsigned char*>(segment->data());
    zeroed[me] = 1;
    for (std::size_t i = 0; i < segment->bytes(); ++i) zeroed[me] &= bytes[i] == 0;
    store.barrier("checked");
    bytes[me * 4096] = static_cast<unsigned char>(r + 1);
    store.barrier("written");
    sees_all[me] = 1;  // every rank's write, seen by all
    for (int q = 0; q < 3; ++q) sees_all[me] &= bytes[static_cast<std::size_t>(q) * 4096] == q + 1;
    store.barrier("read");
  });
  for (const auto& e : errors) CHECK(e.empty());
  CHECK(zeroed == std::vector<int>{1, 1, 1});
  CHECK(sees_all == std::vector<int>{1, 1, 1});
  CHECK(our_shm_objects() == before);  // unlinked once every rank had it
}

TEST_CASE("a segment that /dev/shm cannot hold: every rank gets none, with rank 0's reason, and nothing is left", "[staging][store]") {
  const auto before = our_shm_objects();
  std::vector<std::string> errors(2);
  std::vector<char> got(2, 1);  // char, not bool: each rank's thread writes its own element (vector<bool> shares bytes)
  on_store_ranks(2, [&](int r, const gpudirect::bootstrap::LaunchContext&, gpudirect::bootstrap::Store& store) {
    std::string why;
    got[static_cast<std::size_t>(r)] = map_staging_segment(store, r, std::size_t(1) << 50, &why) != nullptr;  // 1 PiB
    errors[static_cast<std::size_t>(r)] = why;
  });
  for (int r = 0; r < 2; ++r) {
    CHECK_FALSE(got[static_cast<std::size_t>(r)]);
    CHECK_THAT(errors[static_cast<std::size_t>(r)], Catch::StartsWith("rank 0: reserving 1073741824 MiB in /dev/shm"));
  }
  CHECK(our_shm_objects() == before);
}

TEST_CASE("staging is used when every rank is on one host, not across hosts, not when switched off", "[staging][store]") {
  std::vector<char> used(2);  // char, not bool: each rank's thread writes its own element
  on_store_ranks(
      2,
      [&](int r, const gpudirect::bootstrap::LaunchContext& context, gpudirect::bootstrap::Store& store) {
        used[static_cast<std::size_t>(r)] = stage_on_one_host(context, store, 5s).collectives != nullptr;
      },
      "samehost");
  CHECK(used == std::vector<char>{1, 1});
  on_store_ranks(2, [&](int r, const gpudirect::bootstrap::LaunchContext& context, gpudirect::bootstrap::Store& store) {
    used[static_cast<std::size_t>(r)] = stage_on_one_host(context, store, 5s).collectives != nullptr;  // host0, host1
  });
  CHECK(used == std::vector<char>{0, 0});
  ::setenv("GPUDIRECT_COMM_STAGING", "0", 1);
  on_store_ranks(
      2,
      [&](int r, const gpudirect::bootstrap::LaunchContext& context, gpudirect::bootstrap::Store& store) {
        used[static_cast<std::size_t>(r)] = stage_on_one_host(context, store, 5s).collectives != nullptr;
      },
      "samehost");
  ::unsetenv("GPUDIRECT_COMM_STAGING");
  CHECK(used == std::vector<char>{0, 0});
}

TEST_CASE("staging layout: each rank touches only its 3n-2 rings, and together the ranks use every ring", "[staging]") {
  for (int n = 1; n <= 6; ++n) {
    const auto layout = StagingLayout::for_ranks(n);
    std::set<std::size_t> all;
    for (int r = 0; r < n; ++r) {
      const auto ranges = layout.ranges_used_by(r);
      CHECK(ranges.size() == static_cast<std::size_t>(3 * n - 2));
      std::set<std::size_t> mine;
      for (const auto& [offset, bytes] : ranges) {
        CHECK(bytes == layout.ring_bytes());
        CHECK(offset % layout.ring_bytes() == 0);
        CHECK(offset + bytes <= layout.bytes());
        mine.insert(offset / layout.ring_bytes());
      }
      CHECK(mine.size() == ranges.size());  // no ring twice
      CHECK(mine.count(layout.broadcast_ring(r)) == 1);
      for (int q = 0; q < n; ++q)
        if (q != r)
          CHECK((mine.count(layout.peer_ring(r, q)) == 1 && mine.count(layout.peer_ring(q, r)) == 1 &&
                 mine.count(layout.broadcast_ring(q)) == 1));
      all.insert(mine.begin(), mine.end());
    }
    CHECK(all.size() == layout.ring_count());
  }
}

TEST_CASE("staging spins only where the host's ranks have a CPU each: distinct CPUs of the ranks' affinity lists", "[staging]") {
  CHECK(distinct_cpus({"0,1", "0,1"}) == 2);                // --np 2 on 2 cores: spin
  CHECK(distinct_cpus({"0,1", "0,1", "0,1", "0,1"}) == 2);  // --np 4 on 2 cores: yield at once
  CHECK(distinct_cpus({"0", "1", "2,3"}) == 4);             // bound by Slurm, disjoint
  CHECK(distinct_cpus({"0", "0"}) == 1);                    // both bound to one core
  CHECK(distinct_cpus({"", "12,130"}) == 2);                // a rank that could not read its mask adds nothing
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
  const std::string mine = cpus_of_this_process();
  CHECK(mine.find_first_not_of("0123456789,") == std::string::npos);
  CHECK(distinct_cpus({mine}) == static_cast<std::size_t>(CPU_COUNT(&set)));
}

TEST_CASE("shareable memory: zeroed allocations a buffer is located in, whole or not at all", "[staging]") {
  ShareableMemory memory;
  auto* a = static_cast<char*>(memory.allocate(10000));
  REQUIRE(a != nullptr);
  CHECK(std::all_of(a, a + 10000, [](char c) { return c == 0; }));
  const auto whole = memory.locate(a, 10000);
  REQUIRE(whole);
  CHECK(whole->offset == 0);
  CHECK(whole->allocation_bytes >= 10000);
  CHECK(whole->fd >= 0);
  const auto inside = memory.locate(a + 100, 500);
  REQUIRE(inside);
  CHECK(inside->offset == 100);
  CHECK(inside->allocation == whole->allocation);
  CHECK_FALSE(memory.locate(a + 100, whole->allocation_bytes));  // runs past its end
  std::vector<char> elsewhere(100);
  CHECK_FALSE(memory.locate(elsewhere.data(), 10));
  auto* b = static_cast<char*>(memory.allocate(1));
  REQUIRE(b != nullptr);
  CHECK(memory.locate(b, 1)->allocation != whole->allocation);  // ids are never reused
  CHECK_FALSE(memory.release(elsewhere.data()));
  CHECK(memory.release(a));
  CHECK_FALSE(memory.locate(a, 1));
  CHECK(memory.release(b));
}

TEST_CASE("peer buffers: another process's allocation read in place, and clear errors", "[staging]") {
  ShareableMemory memory;
  auto* data = static_cast<std::uint32_t*>(memory.allocate(1 << 20));
  REQUIRE(data != nullptr);
  for (std::uint32_t i = 0; i < (1 << 18); ++i) data[i] = i * 7;
  // This process stands for the peer: the mapping goes through /proc/PID/fd as a peer's would.
  PeerBuffers peers({::getpid(), ::getpid()});
  const auto where = memory.locate(data + 1000, 4000);
  REQUIRE(where);
  const auto* seen = reinterpret_cast<const std::uint32_t*>(peers.map(1, *where, 4000));
  CHECK(seen != data + 1000);  // a mapping of its own
  CHECK(seen[0] == 7000);
  CHECK(seen[999] == 7 * 1999);
  data[1000] = 42;  // shared, not a copy
  CHECK(seen[0] == 42);
  // Allocations beyond the few kept per peer: each still maps, and reads what is there.
  std::vector<void*> more;
  for (std::size_t i = 0; i < PeerBuffers::kKeptPerPeer + 3; ++i) {
    auto* p = static_cast<unsigned char*>(memory.allocate(4096));
    REQUIRE(p != nullptr);
    p[0] = static_cast<unsigned char>(i + 1);
    more.push_back(p);
    CHECK(*reinterpret_cast<const unsigned char*>(peers.map(1, *memory.locate(p, 1), 1)) == i + 1);
  }
  CHECK(reinterpret_cast<const std::uint32_t*>(peers.map(1, *where, 4000))[1] == 7 * 1001);  // mapped again after eviction
  CHECK_THROWS_WITH(peers.map(1, *where, where->allocation_bytes), Catch::Contains("do not fit rank 1's allocation"));
  auto closed = *where;
  closed.fd = 999999;
  closed.allocation = 12345;
  CHECK_THROWS_WITH(peers.map(1, closed, 16), Catch::Contains("/fd/999999") && Catch::Contains("No such file"));
  for (void* p : more) memory.release(p);
  memory.release(data);
}

TEST_CASE("direct-read probes: found with the right token only", "[staging]") {
  const int fd = make_probe_fd(0x1234567890abcdefULL);
  REQUIRE(fd >= 0);
  CHECK(try_mapping_probe(::getpid(), fd, 0x1234567890abcdefULL).empty());
  CHECK_THAT(try_mapping_probe(::getpid(), fd, 1), Catch::Contains("is not the probe of that rank"));
  ::close(fd);
  CHECK_THAT(try_mapping_probe(::getpid(), fd, 0x1234567890abcdefULL), Catch::Contains("open /proc/"));
}

TEST_CASE("staging: a rank that cannot map its peer's buffer stops the job with the cause and the way out", "[staging]") {
  const std::string call = GENERATE("all_gather", "all_reduce", "reduce_scatter");
  const auto layout = StagingLayout::for_ranks(2);
  std::vector<char> rings(layout.bytes(), 0);
  auto abort = std::make_shared<gpudirect::bootstrap::AbortSignal>();
  ShareableMemory memory0, memory1;
  // Rank 1 believes rank 0 runs as a process that does not exist.
  const std::vector<pid_t> truth{::getpid(), ::getpid()}, wrong{std::numeric_limits<pid_t>::max(), ::getpid()};
  auto wait = [&] {
    return StagingWait{.timeout = 10s, .abort = abort, .on_failure = [&](const std::string& m) { abort->raise(m); }, .host = "h"};
  };
  StagedCollectives rank0(rings.data(), layout, 0, wait(), DirectReads{.own = &memory0, .pids = truth});
  StagedCollectives rank1(rings.data(), layout, 1, wait(), DirectReads{.own = &memory1, .pids = wrong});
  const std::size_t count = 1 << 18;  // 1 MiB blocks of float: read in place
  std::vector<float*> buffers;
  for (ShareableMemory* memory : {&memory0, &memory0, &memory1, &memory1})
    buffers.push_back(static_cast<float*>(memory->allocate(2 * count * 4)));
  std::string error0, error1;
  auto run = [&](StagedCollectives& rank, float* in, float* out, std::string& error) {
    try {
      if (call == "all_gather") rank.all_gather(in, out, count, DataType::float32);
      if (call == "all_reduce") rank.all_reduce(in, out, 2 * count, DataType::float32, ReduceOp::sum);
      if (call == "reduce_scatter") rank.reduce_scatter(in, out, count, DataType::float32, ReduceOp::sum);
    } catch (const CommError& e) {
      error = e.what();
    }
  };
  const auto start = std::chrono::steady_clock::now();
  std::thread one([&] { run(rank1, buffers[2], buffers[3], error1); });
  run(rank0, buffers[0], buffers[1], error0);
  one.join();
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  CHECK_THAT(error1, Catch::StartsWith("rank 1 on h cannot read rank 0's " + call + " input where it lies (open /proc/") &&
                         Catch::Contains("GPUDIRECT_COMM_DIRECT_READS=0"));
  CHECK(error0 == error1);  // rank 0 stops on the job's abort, with the same reason
  for (std::size_t b = 0; b < buffers.size(); ++b) (b < 2 ? memory0 : memory1).release(buffers[b]);
}

TEST_CASE("a one-host job reads all_gather inputs in place unless GPUDIRECT_COMM_DIRECT_READS=0", "[staging][store]") {
  std::vector<int> shareable(2, -1);
  auto run = [&] {
    on_store_ranks(
        2,
        [&](int r, const gpudirect::bootstrap::LaunchContext& context, gpudirect::bootstrap::Store& store) {
          shareable[static_cast<std::size_t>(r)] = stage_on_one_host(context, store, 5s).shareable != nullptr;
        },
        "samehost");
  };
  run();
  CHECK(shareable == std::vector<int>{1, 1});
  ::setenv("GPUDIRECT_COMM_DIRECT_READS", "0", 1);
  run();
  ::unsetenv("GPUDIRECT_COMM_DIRECT_READS");
  CHECK(shareable == std::vector<int>{0, 0});
}
