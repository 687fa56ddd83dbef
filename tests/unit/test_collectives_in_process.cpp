// Every collective algorithm of comm/algorithms/ at 1..8 ranks (threads of this process over
// the thread transport), awkward element counts, every datatype and reduction, in place and out of
// place, against a serial reference computed from every rank's inputs.
#include <catch2/catch.hpp>

#include "comm/algorithms/collectives.hpp"
#include "comm/host_communicator.hpp"
#include "comm/reduce_kernels.hpp"
#include "comm/shm/peer_readable_buffers.hpp"
#include "comm/shm/staged_collectives.hpp"
#include "comm/transport/thread_transport.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

using namespace gpudirect::comm;

namespace {

constexpr std::chrono::milliseconds kTimeout{10000};  // a broken algorithm fails, never hangs the test

enum class Kind { all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv };
const char* kind_name(Kind k) {
  switch (k) {
    case Kind::all_reduce:
      return "all_reduce";
    case Kind::all_gather:
      return "all_gather";
    case Kind::reduce_scatter:
      return "reduce_scatter";
    case Kind::broadcast:
      return "broadcast";
    case Kind::reduce:
      return "reduce";
    case Kind::alltoall:
      return "alltoall";
    case Kind::sendrecv:
      return "sendrecv";
  }
  return "?";
}
bool reducing(Kind k) { return k == Kind::all_reduce || k == Kind::reduce_scatter || k == Kind::reduce; }

const DataType kTypes[] = {DataType::float32, DataType::float64, DataType::float16, DataType::bfloat16, DataType::int8,
                           DataType::uint8,   DataType::int32,   DataType::int64,   DataType::uint64};
const ReduceOp kOps[] = {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::avg};

bool is_unsigned(DataType t) { return t == DataType::uint8 || t == DataType::uint64; }
bool is_integer(DataType t) {
  return t == DataType::int8 || t == DataType::uint8 || t == DataType::int32 || t == DataType::int64 || t == DataType::uint64;
}

// Element i of buffer p as a double, and back (integers wrap as the type does).
double load(const void* p, std::size_t i, DataType t) {
  const char* at = static_cast<const char*>(p) + i * size_of(t);
  auto get = [at]<typename T>(T) {
    T v;
    std::memcpy(&v, at, sizeof v);
    return v;
  };
  switch (t) {
    case DataType::float32:
      return get(float{});
    case DataType::float64:
      return get(double{});
    case DataType::float16:
      return half_to_float(get(std::uint16_t{}));
    case DataType::bfloat16:
      return bfloat16_to_float(get(std::uint16_t{}));
    case DataType::int8:
      return get(std::int8_t{});
    case DataType::uint8:
      return get(std::uint8_t{});
    case DataType::int32:
      return get(std::int32_t{});
    case DataType::int64:
      return static_cast<double>(get(std::int64_t{}));
    case DataType::uint64:
      return static_cast<double>(get(std::uint64_t{}));
  }
  return 0;
}

void store(void* p, std::size_t i, DataType t, double value) {
  char* at = static_cast<char*>(p) + i * size_of(t);
  auto put = [at](auto v) { std::memcpy(at, &v, sizeof v); };
  const auto whole = static_cast<long long>(value);
  switch (t) {
    case DataType::float32:
      put(static_cast<float>(value));
      break;
    case DataType::float64:
      put(value);
      break;
    case DataType::float16:
      put(float_to_half(static_cast<float>(value)));
      break;
    case DataType::bfloat16:
      put(float_to_bfloat16(static_cast<float>(value)));
      break;
    case DataType::int8:
      put(static_cast<std::int8_t>(whole));
      break;
    case DataType::uint8:
      put(static_cast<std::uint8_t>(whole));
      break;
    case DataType::int32:
      put(static_cast<std::int32_t>(whole));
      break;
    case DataType::int64:
      put(static_cast<std::int64_t>(whole));
      break;
    case DataType::uint64:
      put(static_cast<std::uint64_t>(whole));
      break;
  }
}

// Rank r's input element i: small integers, so every reduction order gives the exact same result
// in every type (sums stay within bfloat16's exact integers; products are at most 2^3).
double input(int r, std::size_t i, DataType t, ReduceOp op) {
  const auto k = static_cast<long long>(i);
  if (op == ReduceOp::prod) {
    if ((r + k) % 3 == 0) return 2;
    return !is_unsigned(t) && (r + 2 * k) % 5 == 0 ? -1 : 1;
  }
  const long long v = (r * 13 + k * 7 + (k / 41) * 3) % 41;  // period 41 * 41 in i: misplaced blocks show
  return is_unsigned(t) ? static_cast<double>(v) : static_cast<double>(v - 20);
}

// The reduction of element i over all ranks, rounded into the type as the algorithms do.
double reduced(int n, DataType t, ReduceOp op, const std::function<double(int)>& value_of) {
  double acc = value_of(0);
  for (int r = 1; r < n; ++r) {
    const double v = value_of(r);
    switch (op) {
      case ReduceOp::sum:
      case ReduceOp::avg:
        acc += v;
        break;
      case ReduceOp::prod:
        acc *= v;
        break;
      case ReduceOp::min:
        acc = std::min(acc, v);
        break;
      case ReduceOp::max:
        acc = std::max(acc, v);
        break;
    }
  }
  std::vector<char> cell(8);
  store(cell.data(), 0, t, acc);  // integers wrap here, as they do in the algorithm
  if (op != ReduceOp::avg) return load(cell.data(), 0, t);
  const double wrapped = load(cell.data(), 0, t);
  store(cell.data(), 0, t, is_integer(t) ? std::trunc(wrapped / n) : wrapped / n);
  return load(cell.data(), 0, t);
}

struct Case {
  Kind kind;
  DataType type;
  ReduceOp op;
  std::size_t count;
  bool in_place;
  int root;
  // all_reduce and reduce: element i reduced over every rank, computed once for all ranks.
  std::shared_ptr<const std::vector<double>> reduction;
};

std::string describe(const Case& c, int n) {
  std::ostringstream out;
  out << kind_name(c.kind) << " n=" << n << " count=" << c.count << " " << name_of(c.type) << " " << name_of(c.op)
      << (c.in_place ? " in-place" : " out-of-place") << " root=" << c.root;
  return out.str();
}

// Runs one case on rank r; returns "" or what was wrong.
// The case's buffers: vectors, or (`shared`) allocations the peers may read in place, new for
// every case (so peers map many, and evict old ones).
class CaseBuffer {
 public:
  CaseBuffer(std::size_t bytes, ShareableMemory* shared) : shared_(shared) {
    data_ = shared ? static_cast<char*>(shared->allocate(bytes)) : (vector_.resize(bytes), vector_.data());
    if (!data_) throw std::runtime_error("no shareable memory");
    std::memset(data_, 0x5a, bytes);  // garbage where output goes
  }
  ~CaseBuffer() {
    if (shared_) shared_->release(data_);
  }
  CaseBuffer(const CaseBuffer&) = delete;
  CaseBuffer& operator=(const CaseBuffer&) = delete;
  char* data() const { return data_; }

 private:
  ShareableMemory* shared_;
  std::vector<char> vector_;
  char* data_;
};

std::string run_case(Collectives& coll, const Case& c, int r, int n, ShareableMemory* shared = nullptr) {
  const std::size_t e = size_of(c.type), count = c.count, un = static_cast<std::size_t>(n), ur = static_cast<std::size_t>(r);
  const std::size_t send_elements = (c.kind == Kind::reduce_scatter || c.kind == Kind::alltoall) ? count * un : count;
  const std::size_t recv_elements = (c.kind == Kind::all_gather || c.kind == Kind::alltoall) ? count * un : count;
  CaseBuffer send(std::max<std::size_t>(send_elements, recv_elements) * e + 1, shared);
  CaseBuffer recv(std::max<std::size_t>(send_elements, recv_elements) * e + 1, shared);
  // Inputs where the call reads them (NCCL's in-place layouts, see communicator.hpp).
  char* in = c.in_place ? recv.data() : send.data();
  std::size_t in_offset = (c.in_place && c.kind == Kind::all_gather) ? ur * count : 0;
  for (std::size_t i = 0; i < send_elements; ++i) store(in, in_offset + i, c.type, input(r, i, c.type, c.op));
  const void* s = in + in_offset * e;
  char* out = recv.data();
  if (c.in_place && c.kind == Kind::reduce_scatter) out = recv.data() + ur * count * e;
  switch (c.kind) {
    case Kind::all_reduce:
      coll.all_reduce(s, out, count, c.type, c.op);
      break;
    case Kind::all_gather:
      coll.all_gather(s, out, count, c.type);
      break;
    case Kind::reduce_scatter:
      coll.reduce_scatter(s, out, count, c.type, c.op);
      break;
    case Kind::broadcast:
      coll.broadcast(s, out, count, c.type, c.root);
      break;
    case Kind::reduce:
      coll.reduce(s, out, count, c.type, c.op, c.root);
      break;
    case Kind::alltoall:
      coll.alltoall(s, out, count, c.type);
      break;
    case Kind::sendrecv:
      coll.sendrecv(s, out, count, c.type);
      break;
  }
  const ReduceOp op = c.op;
  const DataType t = c.type;
  auto expected = [&](std::size_t i) -> double {
    switch (c.kind) {
      case Kind::all_reduce:
      case Kind::reduce:
        return (*c.reduction)[i];
      case Kind::reduce_scatter:
        return reduced(n, t, op, [&](int q) { return input(q, ur * count + i, t, op); });
      case Kind::all_gather:
        return input(static_cast<int>(i / count), i % count, t, op);
      case Kind::broadcast:
        return input(c.root, i, t, op);
      case Kind::alltoall:
        return input(static_cast<int>(i / count), ur * count + i % count, t, op);
      case Kind::sendrecv:
        return input((r - 1 + n) % n, i, t, op);
    }
    return 0;
  };
  if (c.kind == Kind::reduce && r != c.root) return "";  // only the root's output is defined
  for (std::size_t i = 0; i < recv_elements; ++i) {
    const double want = expected(i), got = load(out, i, t);
    if (want != got) {
      std::ostringstream why;
      why << describe(c, n) << ": rank " << r << " element " << i << " is " << got << ", expected " << want;
      return why.str();
    }
  }
  return "";
}

// Runs `body(rank, transport)` on n threads; returns every rank's failures (exceptions included).
std::vector<std::string> on_threads(int n, const std::function<std::vector<std::string>(int, std::unique_ptr<Transport>&)>& body,
                                    bool remote_reads = false, bool pieces = false, const std::vector<std::string>& hosts = {}) {
  auto transports = make_thread_transports(n, kTimeout, remote_reads, pieces, hosts);
  std::vector<std::vector<std::string>> failures(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      auto& mine = failures[static_cast<std::size_t>(r)];
      try {
        mine = body(r, transports[static_cast<std::size_t>(r)]);
      } catch (const std::exception& e) {
        mine.push_back("rank " + std::to_string(r) + " threw: " + e.what());
      }
    });
  for (auto& t : threads) t.join();
  std::vector<std::string> all;
  for (auto& f : failures) all.insert(all.end(), f.begin(), f.end());
  return all;
}

std::vector<Case> cases_for(int n) {
  // 0, 1, primes, counts below, at and not divisible by n, and all_reduce beyond the
  // recursive-doubling limit (kSmallAllReduceBytes) so the ring path runs for every type.
  const std::vector<std::size_t> counts{0, 1, 2, 7, 13, static_cast<std::size_t>(n) + 1, 61, 1009};
  std::vector<int> roots{0, n - 1, n / 2};
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  std::map<std::tuple<DataType, ReduceOp, std::size_t>, std::shared_ptr<const std::vector<double>>> reductions;
  auto reduction = [&](DataType t, ReduceOp op, std::size_t count) {
    auto& cached = reductions[{t, op, count}];
    if (!cached) {
      auto values = std::make_shared<std::vector<double>>(count);
      for (std::size_t i = 0; i < count; ++i) (*values)[i] = reduced(n, t, op, [&](int q) { return input(q, i, t, op); });
      cached = values;
    }
    return cached;
  };
  std::vector<Case> cases;
  auto add = [&](Case c) {
    if (c.kind == Kind::all_reduce || c.kind == Kind::reduce) c.reduction = reduction(c.type, c.op, c.count);
    cases.push_back(std::move(c));
  };
  for (Kind kind :
       {Kind::all_reduce, Kind::all_gather, Kind::reduce_scatter, Kind::broadcast, Kind::reduce, Kind::alltoall, Kind::sendrecv})
    for (DataType type : kTypes)
      for (ReduceOp op : kOps) {
        if (!reducing(kind) && op != ReduceOp::sum) continue;
        for (bool in_place : {false, true})
          for (int root : roots) {
            // Roots matter to the tree, not to the type: every root for two types, the last for all.
            if (kind != Kind::broadcast && kind != Kind::reduce ? root != 0
                                                                : root != n - 1 && type != DataType::float32 && type != DataType::int8)
              continue;
            for (std::size_t count : counts) add({kind, type, op, count, in_place, root, nullptr});
            if (kind == Kind::all_reduce && op == ReduceOp::sum)
              add({kind, type, op, kSmallAllReduceBytes / size_of(type) + 7, in_place, root, nullptr});
          }
      }
  return cases;
}

}  // namespace

TEST_CASE("every collective algorithm at 1..8 ranks, every type and op, in and out of place", "[collectives][in-process]") {
  // Messages only (the ring, recursive doubling, trees); with direct reads of peers' memory at
  // every size, in chunks of a few elements so every block spans several chunks and a partial one;
  // staged through shared rings (here one zeroed allocation the threads share) of two slots of
  // 24 bytes, so the rings wrap many times within a call, and every call follows the last on them;
  // and with exchanges in pieces of 24 bytes (as over a network: the ring reduces each as it lands);
  // staged with every buffer in shareable memory, read in place by the peers (slots of 64 bytes:
  // where a rank's buffers lie must fit one); and staged with only the even ranks' buffers
  // shareable (all_gather mixes blocks read in place and through the slots, the reductions agree to
  // go through the rings). And as a job across hosts, all_reduce, all_gather and reduce_scatter by
  // host at every size, with messages and with pieces: 4 ranks on 2 hosts, 6 on 3 with the hosts'
  // ranks interleaved, 8 on 2 (other rank counts form no host groups: the modes above again).
  enum class Mode { messages, direct, staged, pieces, staged_in_place, staged_mixed, by_host, by_host_pieces };
  for (const Mode mode : {Mode::messages, Mode::direct, Mode::staged, Mode::pieces, Mode::staged_in_place, Mode::staged_mixed,
                          Mode::by_host, Mode::by_host_pieces}) {
    CollectiveTuning tuning;
    tuning.chunk_bytes = 4096;  // the ring's steps in several chunks, the last one partial
    if (mode == Mode::direct)
      tuning = {.direct_all_reduce_bytes = 0, .direct_all_gather_bytes = 0, .direct_reduce_scatter_bytes = 0, .chunk_bytes = 24};
    if (mode == Mode::pieces || mode == Mode::by_host_pieces) tuning.piece_bytes = 24;
    const bool by_host = mode == Mode::by_host || mode == Mode::by_host_pieces;
    if (by_host) tuning.by_host_bytes = 0;
    for (int n = 1; n <= 8; ++n) {
      if (by_host && n != 4 && n != 6 && n != 8) continue;
      std::vector<std::string> hosts;
      for (int r = 0; by_host && r < n; ++r) hosts.push_back("host" + std::to_string(n == 6 ? r % 3 : r / (n / 2)));
      const auto cases = cases_for(n);
      const bool staged_mode = mode == Mode::staged || mode == Mode::staged_in_place || mode == Mode::staged_mixed;
      const StagingLayout layout{.ranks = n, .chunk_bytes = mode == Mode::staged ? 24u : 64u, .slots = 2};
      std::vector<char> rings(staged_mode ? layout.bytes() : 0, 0);
      const auto failures = on_threads(
          n,
          [&](int r, std::unique_ptr<Transport>& transport) {
            std::unique_ptr<ShareableMemory> shared;
            std::optional<DirectReads> reads;
            if (mode == Mode::staged_in_place || mode == Mode::staged_mixed) {
              shared = std::make_unique<ShareableMemory>();
              reads = DirectReads{
                  .own = shared.get(), .pids = std::vector<pid_t>(static_cast<std::size_t>(n), ::getpid()), .min_block_bytes = 0};
            }
            ShareableMemory* buffers = mode == Mode::staged_mixed && r % 2 ? nullptr : shared.get();
            std::unique_ptr<StagedCollectives> staged;
            if (staged_mode)
              staged = std::make_unique<StagedCollectives>(
                  rings.data(), layout, r, StagingWait{.timeout = kTimeout, .abort = nullptr, .on_failure = {}, .host = "this host"},
                  reads);
            Collectives coll(*transport, tuning, staged.get());
            std::vector<std::string> wrong;
            for (const Case& c : cases)
              if (auto why = run_case(coll, c, r, n, buffers); !why.empty() && wrong.size() < 5) wrong.push_back(why);
            coll.barrier();
            return wrong;
          },
          mode == Mode::direct, mode == Mode::pieces || mode == Mode::by_host_pieces, hosts);
      INFO((mode == Mode::messages          ? "messages, "
            : mode == Mode::direct          ? "direct reads, "
            : mode == Mode::staged          ? "staged, "
            : mode == Mode::pieces          ? "pieces, "
            : mode == Mode::staged_in_place ? "staged, read in place, "
            : mode == Mode::staged_mixed    ? "staged, even ranks' read in place, "
            : mode == Mode::by_host         ? "by host, "
                                            : "by host in pieces, ")
           << n << " ranks, " << cases.size() << " cases");
      CHECK(failures.empty());
      for (const auto& f : failures) FAIL_CHECK(f);
    }
  }
}

TEST_CASE("the thread transport reports a silent peer and a size mismatch instead of hanging", "[collectives][in-process]") {
  auto transports = make_thread_transports(2, std::chrono::milliseconds(50));
  char byte = 0;
  CHECK_THROWS_WITH(transports[0]->recv(1, &byte, 1, 7), Catch::Contains("rank 0 got no message from rank 1 (tag 7)"));
  const char two[2] = {1, 2};
  transports[1]->send(0, two, 2, 9);
  CHECK_THROWS_WITH(transports[0]->recv(1, &byte, 1, 9), Catch::Contains("expected 1 bytes from rank 1") && Catch::Contains("got 2"));
  CHECK_THROWS_AS(make_thread_transports(0, kTimeout), std::invalid_argument);
}

TEST_CASE("a communicator is created, used, destroyed and created again in one process", "[collectives][in-process]") {
  constexpr int n = 4;
  for (int round = 0; round < 3; ++round) {
    const auto failures = on_threads(n, [&](int r, std::unique_ptr<Transport>& transport) {
      auto comm = make_host_communicator(std::move(transport), "threads");
      std::vector<std::string> wrong;
      std::vector<std::int64_t> values(100, r + round);
      comm->all_reduce(values.data(), values.data(), values.size(), DataType::int64, ReduceOp::sum)->wait();
      const std::int64_t want = n * (n - 1) / 2 + n * round;
      if (std::any_of(values.begin(), values.end(), [&](std::int64_t v) { return v != want; }))
        wrong.push_back("round " + std::to_string(round) + " rank " + std::to_string(r) + ": all_reduce gave " + std::to_string(values[0]) +
                        ", expected " + std::to_string(want));
      comm->barrier();
      return wrong;  // comm is destroyed here, with its worker thread
    });
    INFO("round " << round);
    CHECK(failures.empty());
    for (const auto& f : failures) FAIL_CHECK(f);
  }
}

TEST_CASE("small calls run in the caller's thread only when nothing is queued: issue order is kept", "[collectives][in-process]") {
  // A large call goes to the worker; the small ones right after it must queue behind it (running
  // them at once would reorder the collectives on this rank and mix up the data).
  constexpr int n = 3;
  const auto failures = on_threads(n, [&](int r, std::unique_ptr<Transport>& transport) {
    auto comm = make_host_communicator(std::move(transport), "threads");
    std::vector<std::string> wrong;
    std::vector<std::int64_t> large(1 << 17, r);  // 1 MiB: runs on the worker
    std::vector<std::vector<std::int64_t>> small(8);
    std::vector<std::unique_ptr<Request>> requests;
    requests.push_back(comm->all_reduce(large.data(), large.data(), large.size(), DataType::int64, ReduceOp::sum));
    for (std::size_t i = 0; i < small.size(); ++i) {
      small[i].assign(16, static_cast<std::int64_t>(i) * 100 + r);
      requests.push_back(comm->all_reduce(small[i].data(), small[i].data(), small[i].size(), DataType::int64, ReduceOp::sum));
    }
    for (auto& request : requests) request->wait();
    if (large.front() != n * (n - 1) / 2 || large.back() != n * (n - 1) / 2) wrong.push_back("large all_reduce wrong");
    for (std::size_t i = 0; i < small.size(); ++i)
      if (small[i].front() != static_cast<std::int64_t>(i) * 100 * n + n * (n - 1) / 2)
        wrong.push_back("rank " + std::to_string(r) + ": small all_reduce " + std::to_string(i) + " gave " +
                        std::to_string(small[i].front()));
    // And a small call on an idle communicator completes before it returns.
    std::int64_t one = r;
    auto request = comm->all_reduce(&one, &one, 1, DataType::int64, ReduceOp::max);
    if (!request->test()) wrong.push_back("an inline call was not complete when it returned");
    request->wait();
    if (one != n - 1) wrong.push_back("max gave " + std::to_string(one));
    return wrong;
  });
  CHECK(failures.empty());
  for (const auto& f : failures) FAIL_CHECK(f);
}

TEST_CASE("a small call that fails in the caller's thread fails every later call with its error", "[collectives][in-process]") {
  auto transports = make_thread_transports(2, std::chrono::milliseconds(50));
  auto comm = make_host_communicator(std::move(transports[0]), "threads");  // rank 1 never takes part
  std::int64_t value = 1;
  auto first = comm->all_reduce(&value, &value, 1, DataType::int64, ReduceOp::sum);
  CHECK(first->test());
  CHECK_THROWS_WITH(first->wait(), Catch::Contains("during all_reduce of 8 bytes (int64 sum)"));
  CHECK_THROWS_WITH(comm->all_gather(&value, &value, 1, DataType::int64), Catch::Contains("during all_reduce of 8 bytes"));
  std::vector<std::int64_t> large(1 << 17, 1);
  CHECK_THROWS_WITH(comm->all_reduce(large.data(), large.data(), large.size(), DataType::int64, ReduceOp::sum),
                    Catch::Contains("during all_reduce of 8 bytes"));
}

TEST_CASE("a call that fails on the worker: every wait on its request throws its error, not a future's", "[collectives][in-process]") {
  auto transports = make_thread_transports(2, std::chrono::milliseconds(50));
  auto comm = make_host_communicator(std::move(transports[0]), "threads");  // rank 1 never takes part
  std::vector<std::int64_t> large(1 << 17, 1);                              // 1 MiB: runs on the worker
  auto request = comm->all_reduce(large.data(), large.data(), large.size(), DataType::int64, ReduceOp::sum);
  CHECK_THROWS_WITH(request->wait(), Catch::Contains("during all_reduce of 1048576 bytes (int64 sum)"));
  CHECK(request->test());
  CHECK_THROWS_WITH(request->wait(), Catch::Contains("during all_reduce of 1048576 bytes (int64 sum)"));  // bench waits twice
}

TEST_CASE("ring all_reduce whose blocks straddle a chunk boundary unevenly (a rank with one piece fewer)", "[collectives][in-process]") {
  // 3 ranks, 16 floats per chunk, 19201 floats (past recursive doubling's limit): blocks of 6400,
  // 6400 and 6401, so one rank's first step needs 400 pieces and its neighbours' 401. It used to
  // fall a tag behind them and the ring hung.
  CollectiveTuning tuning;
  tuning.chunk_bytes = 64;
  const auto floats = [](int n, std::size_t extra) { return static_cast<std::size_t>(n) * 6400 + extra; };
  static_assert(3 * 6400 * sizeof(float) > kSmallAllReduceBytes);
  for (int n = 3; n <= 6; ++n)
    for (const std::size_t count : {floats(n, 1), floats(n, static_cast<std::size_t>(n) - 1)}) {
      const auto failures = on_threads(n, [&](int r, std::unique_ptr<Transport>& transport) {
        Collectives coll(*transport, tuning);
        std::vector<float> values(count);
        for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<float>(r + 1) * static_cast<float>(i % 7);
        coll.all_reduce(values.data(), values.data(), count, DataType::float32, ReduceOp::sum);
        std::vector<std::string> wrong;
        const float ranks_sum = static_cast<float>(n * (n + 1) / 2);
        for (std::size_t i = 0; i < count && wrong.empty(); ++i)
          if (values[i] != ranks_sum * static_cast<float>(i % 7))
            wrong.push_back("rank " + std::to_string(r) + " element " + std::to_string(i) + ": " + std::to_string(values[i]));
        return wrong;
      });
      INFO(n << " ranks, " << count << " floats");
      CHECK(failures.empty());
      for (const auto& f : failures) FAIL_CHECK(f);
    }
}

namespace {
// Passes everything to a thread transport and counts the bytes this rank sends to ranks on
// other hosts: what would cross the network.
class CountingTransport final : public Transport {
 public:
  explicit CountingTransport(Transport& inner) : inner_(inner), hosts_(inner.hosts()) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::vector<std::string> hosts() const override { return hosts_; }
  void exchange(int to, const void* send, std::size_t send_bytes, int from, void* recv, std::size_t recv_bytes,
                std::uint32_t tag) override {
    count(to, send_bytes);
    inner_.exchange(to, send, send_bytes, from, recv, recv_bytes, tag);
  }
  std::size_t across_hosts = 0;

 private:
  void count(int to, std::size_t bytes) {
    if (to >= 0 && hosts_[static_cast<std::size_t>(to)] != hosts_[static_cast<std::size_t>(rank())]) across_hosts += bytes;
  }
  Transport& inner_;
  std::vector<std::string> hosts_;
};
}  // namespace

TEST_CASE("by host, each byte crosses between hosts once a direction, not with every ring step", "[collectives][in-process]") {
  // 2 hosts x 2 ranks, 1 MiB of floats. all_reduce by host: each rank all_reduces its 512 KiB block
  // with its peer on the other host (a 2-rank ring: 256 KiB out in each of its two steps), 2 MiB in
  // all; one ring 0-1-2-3: ranks 1 and 3 send 3 steps x 256 KiB twice over the host boundary, 3 MiB.
  // all_gather and reduce_scatter (256 KiB blocks) by host: each rank sends one block to its peer
  // on the other host, 1 MiB; one ring: ranks 1 and 3 send 3 blocks each, 1.5 MiB.
  const std::vector<std::string> hosts = {"a", "a", "b", "b"};
  const std::size_t total = 1 << 18, block = total / 4;
  const Kind kind = GENERATE(Kind::all_reduce, Kind::all_gather, Kind::reduce_scatter);
  for (const bool by_host : {true, false}) {
    CollectiveTuning tuning;
    if (!by_host) tuning.by_host_bytes = CollectiveTuning::kNever;
    std::vector<std::size_t> crossed(4);
    const auto failures = on_threads(
        4,
        [&](int r, std::unique_ptr<Transport>& transport) {
          CountingTransport counting(*transport);
          Collectives coll(counting, tuning);
          std::vector<float> in(total), out(total);
          for (std::size_t i = 0; i < total; ++i) in[i] = static_cast<float>(r + 1) + static_cast<float>(i % 5);
          std::vector<std::string> wrong;
          auto expect = [&](std::size_t i, float want, float got) {
            if (got != want && wrong.empty())
              wrong.push_back("rank " + std::to_string(r) + " element " + std::to_string(i) + ": " + std::to_string(got));
          };
          if (kind == Kind::all_reduce) {
            coll.all_reduce(in.data(), out.data(), total, DataType::float32, ReduceOp::avg);
            for (std::size_t i = 0; i < total; ++i) expect(i, 2.5f + static_cast<float>(i % 5), out[i]);
          } else if (kind == Kind::all_gather) {
            coll.all_gather(in.data(), out.data(), block, DataType::float32);
            for (std::size_t i = 0; i < total; ++i)
              expect(i, static_cast<float>(i / block + 1) + static_cast<float>(i % block % 5), out[i]);
          } else {
            coll.reduce_scatter(in.data(), out.data(), block, DataType::float32, ReduceOp::sum);
            for (std::size_t i = 0; i < block; ++i)
              expect(i, 10.0f + 4.0f * static_cast<float>((static_cast<std::size_t>(r) * block + i) % 5), out[i]);
          }
          crossed[static_cast<std::size_t>(r)] = counting.across_hosts;
          return wrong;
        },
        false, false, hosts);
    INFO(kind_name(kind) << (by_host ? " by host" : " in one ring"));
    CHECK(failures.empty());
    for (const auto& f : failures) FAIL_CHECK(f);
    const std::size_t sum = crossed[0] + crossed[1] + crossed[2] + crossed[3];
    const std::size_t mib = std::size_t(1) << 20;
    CHECK(sum == (kind == Kind::all_reduce ? (by_host ? 2 * mib : 3 * mib) : (by_host ? mib : 3 * mib / 2)));
  }
}

namespace {
// A transport whose exchanges block, deaf to the job's abort, until released: a call stuck inside
// libfabric (a peer killed while holding a shared-memory queue's lock).
class DeafTransport final : public Transport {
 public:
  explicit DeafTransport(std::shared_future<void> release) : release_(std::move(release)) {}
  int rank() const override { return 0; }
  int size() const override { return 2; }
  void exchange(int, const void*, std::size_t, int, void*, std::size_t, std::uint32_t) override { release_.wait(); }

 private:
  std::shared_future<void> release_;
};
}  // namespace

TEST_CASE("a call still stuck in the transport after the job aborted ends the rank with one report line", "[collectives][in-process]") {
  std::promise<void> release;
  auto abort = std::make_shared<gpudirect::bootstrap::AbortSignal>();
  std::promise<std::string> reported;
  StuckCallPolicy stuck;
  stuck.abort = abort;
  stuck.grace = std::chrono::milliseconds(300);
  stuck.reporter = "gpudirect test";
  stuck.on_stuck = [&](const std::string& line) { reported.set_value(line); };
  auto report = reported.get_future();
  {
    auto comm = make_host_communicator(std::make_unique<DeafTransport>(release.get_future().share()), "deaf", {}, stuck);
    std::vector<std::int64_t> large(1 << 17, 1);  // 1 MiB: runs on the worker
    auto request = comm->all_reduce(large.data(), large.data(), large.size(), DataType::int64, ReduceOp::sum);
    // Slow is not stuck: nothing happens before the job aborts.
    CHECK(report.wait_for(std::chrono::milliseconds(600)) == std::future_status::timeout);
    const auto aborted = std::chrono::steady_clock::now();
    abort->raise("rank 1 on host-b is gone");
    REQUIRE(report.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
    CHECK(std::chrono::steady_clock::now() - aborted >= std::chrono::milliseconds(300));
    CHECK_THAT(report.get(), Catch::StartsWith("gpudirect test: rank 1 on host-b is gone, during all_reduce of 1048576 bytes (int64 sum) "
                                               "(the transport had not returned 0.3 s later"));
    release.set_value();
    request->wait();
  }
}

TEST_CASE("an abort while no call runs, or one that ends its call in time, is left to the caller", "[collectives][in-process]") {
  auto abort = std::make_shared<gpudirect::bootstrap::AbortSignal>();
  std::atomic<int> reports{0};
  StuckCallPolicy stuck;
  stuck.abort = abort;
  // The transport ends its call after 100 ms, the grace is ten times that: the call ends in time even
  // on a slow machine (a 200 ms grace was missed under qemu-user on a loaded host).
  stuck.grace = std::chrono::milliseconds(1000);
  stuck.on_stuck = [&](const std::string&) { ++reports; };
  auto transports = make_thread_transports(2, std::chrono::milliseconds(100));
  auto comm = make_host_communicator(std::move(transports[0]), "threads", {}, stuck);  // rank 1 never takes part
  abort->raise("rank 1 on host-b is gone");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::vector<std::int64_t> large(1 << 17, 1);
  const auto started = std::chrono::steady_clock::now();
  auto request = comm->all_reduce(large.data(), large.data(), large.size(), DataType::int64, ReduceOp::sum);
  CHECK_THROWS(request->wait());  // the thread transport's own check ends it
  // Past the moment a report would have come, for the idle abort and for the call alike.
  std::this_thread::sleep_until(started + stuck.grace + std::chrono::milliseconds(300));
  CHECK(reports == 0);
}

TEST_CASE("a transport that cannot close after the job aborted ends the rank too", "[collectives][in-process]") {
  // Its calls fail at once; closing it blocks (libfabric's endpoint waiting on a dead peer).
  class UnclosableTransport final : public Transport {
   public:
    explicit UnclosableTransport(std::shared_future<void> release) : release_(std::move(release)) {}
    ~UnclosableTransport() override { release_.wait(); }
    int rank() const override { return 0; }
    int size() const override { return 2; }
    void exchange(int, const void*, std::size_t, int, void*, std::size_t, std::uint32_t) override { throw CommError("rank 1 is gone"); }

   private:
    std::shared_future<void> release_;
  };
  std::promise<void> release;
  auto abort = std::make_shared<gpudirect::bootstrap::AbortSignal>();
  std::promise<std::string> reported;
  auto report = reported.get_future();
  StuckCallPolicy stuck;
  stuck.abort = abort;
  stuck.grace = std::chrono::milliseconds(200);
  stuck.reporter = "gpudirect test";
  stuck.on_stuck = [&](const std::string& line) { reported.set_value(line); };
  auto comm = make_host_communicator(std::make_unique<UnclosableTransport>(release.get_future().share()), "unclosable", {}, stuck);
  std::vector<std::int64_t> large(1 << 17, 1);
  CHECK_THROWS(comm->all_gather(large.data(), large.data(), large.size() / 2, DataType::int64)->wait());
  abort->raise("rank 1 on host-b is gone");
  std::thread closing([&] { comm.reset(); });
  REQUIRE(report.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  CHECK_THAT(report.get(), Catch::StartsWith("gpudirect test: rank 1 on host-b is gone, during all_gather of 1048576 bytes (int64)"));
  release.set_value();
  closing.join();
}
