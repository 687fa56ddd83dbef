// `gpudirect-launch bench COLLECTIVE`: nccl-tests' flags, table and footers (so existing parsing
// scripts work), over NCCL on GPUs or libfabric on host memory, plus JSON output, a pass/fail
// threshold, the slowest rank named when it is a straggler, and a Prometheus metrics file.
#include "command_errors.hpp"
#include "command_registry.hpp"

#include "bench/check_data.hpp"
#include "bench/collective.hpp"
#include "bootstrap/session.hpp"
#include "comm/collective_table.hpp"
#include "comm/communicator_factory.hpp"
#include "gpudirect/text.hpp"
#include "reporting/bench_metrics.hpp"
#include "reporting/straggler.hpp"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <numeric>

namespace gpudirect::launcher {
namespace {

using comm::DataType;
using comm::ReduceOp;

struct BenchOptions {
  std::string collective;
  std::string min_bytes = "32M", max_bytes = "32M", step_bytes;
  double step_factor = 2;
  int iters = 20, warmup = 5, check = 1, root = 0, average = 1, blocking = 0, graph = 0, threads = 1, gpus = 1;
  std::string op = "sum", datatype = "float", json, backend = "auto", metrics_file;
  double min_busbw = 0;
};

struct Measurement {
  double time_us = 0, algbw = 0, busbw = 0;
  std::size_t wrong = 0;
  std::vector<double> rank_times;
};

const std::vector<std::pair<std::string, DataType>> kTypes{
    {"float", DataType::float32},     {"double", DataType::float64}, {"half", DataType::float16},
    {"bfloat16", DataType::bfloat16}, {"int8", DataType::int8},      {"uint8", DataType::uint8},
    {"int32", DataType::int32},       {"int64", DataType::int64},    {"uint64", DataType::uint64}};
const std::vector<std::pair<std::string, ReduceOp>> kOps{
    {"sum", ReduceOp::sum}, {"prod", ReduceOp::prod}, {"min", ReduceOp::min}, {"max", ReduceOp::max}, {"avg", ReduceOp::avg}};

template <typename T>
std::vector<std::pair<std::string, T>> select(const std::string& wanted, const std::vector<std::pair<std::string, T>>& all,
                                              const char* what) {
  if (wanted == "all") return all;
  for (const auto& entry : all)
    if (entry.first == wanted || (std::string(what) == "datatype" &&
                                  ((wanted == "float32" && entry.first == "float") || (wanted == "float64" && entry.first == "double") ||
                                   (wanted == "float16" && entry.first == "half"))))
      return {entry};
  std::string names;
  for (const auto& entry : all) names += (names.empty() ? "" : ", ") + entry.first;
  throw UsageError(std::string("unknown ") + what + " '" + wanted + "': expected " + names + " or all");
}

std::string format_time(double us) {
  char text[32];
  std::snprintf(text, sizeof text, us >= 10000.0 ? "%7.0f" : us >= 100.0 ? "%7.1f" : "%7.2f", us);
  return text;
}

class Runner {
 public:
  Runner(const BenchOptions& options, bootstrap::Session& session, comm::Communicator& comm, const comm::CollectiveInfo& collective)
      : o_(options), session_(session), comm_(comm), collective_(collective) {}

  int run() {
    const std::size_t min = bench::parse_size(o_.min_bytes), max = bench::parse_size(o_.max_bytes);
    const std::size_t increment = o_.step_bytes.empty() ? 0 : bench::parse_size(o_.step_bytes);
    const auto sizes = bench::size_sequence(min, max, o_.step_factor, increment);
    const auto types = select(o_.datatype, kTypes, "datatype");
    const auto ops =
        collective_.reduces ? select(o_.op, kOps, "op") : std::vector<std::pair<std::string, ReduceOp>>{{"none", ReduceOp::sum}};
    if (collective_.has_root && (o_.root < 0 || o_.root >= comm_.size()))
      throw UsageError("-r/--root " + std::to_string(o_.root) + " is not a rank (0.." + std::to_string(comm_.size() - 1) + ")");

    print_header(min, max, increment);
    // Buffers for the largest row, allocated (and pre-faulted) once.
    std::size_t largest = 0;
    for (const auto& [type_name, type] : types)
      for (std::size_t bytes : sizes) {
        const auto shape = bench::row_shape(collective_.collective, bytes, comm::size_of(type), comm_.size());
        largest = std::max({largest, shape.send_elements * comm::size_of(type), shape.recv_elements * comm::size_of(type)});
      }
    send_ = comm_.allocate(largest);
    recv_ = comm_.allocate(largest);
    double busbw_sum = 0;
    int busbw_rows = 0;
    for (const auto& [type_name, type] : types)
      for (const auto& [op_name, op] : ops)
        for (std::size_t bytes : sizes) {
          const auto shape = bench::row_shape(collective_.collective, bytes, comm::size_of(type), comm_.size());
          const Measurement out_of_place = measure(shape, type, op, false);
          const Measurement in_place = measure(shape, type, op, true);
          wrong_total_ += out_of_place.wrong + in_place.wrong;
          busbw_sum += out_of_place.busbw + in_place.busbw;
          busbw_rows += 2;
          print_row(shape, type_name, op_name, out_of_place, in_place);
          keep_result(shape, type_name, op_name, out_of_place, false);
          keep_result(shape, type_name, op_name, in_place, true);
        }
    comm_.release(send_);
    comm_.release(recv_);
    const double average = busbw_rows ? busbw_sum / busbw_rows : 0;
    const double threshold = min_busbw();
    if (rank0()) {
      std::printf("# Out of bounds values : %zu %s\n", wrong_total_, wrong_total_ ? "FAILED" : "OK");
      std::printf("# Avg bus bandwidth    : %g %s\n", average, threshold > 0 ? (average < 0.9 * threshold ? "FAILED" : "OK") : "");
      std::printf("#\n");
      std::fflush(stdout);
      const bool passed = wrong_total_ == 0 && !(threshold > 0 && average < 0.9 * threshold);
      const metrics::BenchRunResult result = run_result(average, threshold, passed);
      if (!o_.json.empty()) write_json(result);
      if (!o_.metrics_file.empty()) write_metrics(result);
    }
    if (wrong_total_ > 0) return kExitWrong;
    if (threshold > 0 && average < 0.9 * threshold) {
      if (rank0())
        std::fprintf(stderr, "gpudirect bench: average bus bandwidth %g GB/s is under 0.9 x the threshold %g GB/s\n", average, threshold);
      return kExitWrong;
    }
    return 0;
  }

 private:
  bool rank0() const { return comm_.rank() == 0; }

  double min_busbw() const {
    if (o_.min_busbw > 0) return o_.min_busbw;
    if (const char* env = std::getenv("NCCL_TESTS_MIN_BW")) {
      const auto value = try_parse_number(env);
      if (!value || *value < 0) throw UsageError(std::string("NCCL_TESTS_MIN_BW=") + env + " is not a bandwidth in GB/s (e.g. 40)");
      return *value;
    }
    return 0;
  }

  std::vector<std::string> gather(const std::string& name, const std::string& value) {
    if (!session_.store) return {value};
    return session_.store->all_gather(name + "/" + std::to_string(sequence_++), value);
  }

  void print_header(std::size_t min, std::size_t max, std::size_t increment) {
    const std::string line = "#  Rank " + pad(comm_.rank(), 2) + " Group  0 Pid " + pad(static_cast<int>(::getpid()), 6) + " on " +
                             pad_text(session_.context.hostname, 10) + " " + device_text();
    const auto lines = gather("bench/ranks", line);
    if (!rank0()) return;
    std::printf("# gpudirect-launch bench %s (nccl-tests format), backend %s\n", collective_.name, comm_.backend_name().c_str());
    std::printf("# nThread 1 nGpus 1 minBytes %zu maxBytes %zu step: %s warmup iters: %d iters: %d agg iters: 1 validation: %d graph: 0\n",
                min, max, increment ? (std::to_string(increment) + "(bytes)").c_str() : (format_factor() + "(factor)").c_str(), o_.warmup,
                o_.iters, o_.check);
    std::printf("#\n# Using devices\n");
    for (const auto& l : lines) std::printf("%s\n", l.c_str());
    std::printf("#\n");
    std::printf("#                                                              out-of-place                       in-place          \n");
    std::printf("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n");
    std::printf("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n");
    std::fflush(stdout);
  }

  std::string format_factor() const {
    char text[32];
    std::snprintf(text, sizeof text, "%g", o_.step_factor);
    return text;
  }

  static std::string pad(int value, int width) {
    std::string text = std::to_string(value);
    return std::string(static_cast<std::size_t>(std::max(0, width - static_cast<int>(text.size()))), ' ') + text;
  }
  static std::string pad_text(const std::string& text, std::size_t width) {
    return std::string(width > text.size() ? width - text.size() : 0, ' ') + text;
  }

  std::string device_text() const {
    if (comm_.memory() == comm::MemoryKind::cuda) return comm_.device_description();
    return "device " + pad(session_.context.local_rank, 2) + " [host] " + comm_.backend_name();
  }

  // Runs the collective once on the prepared buffers.
  std::unique_ptr<comm::Request> launch(const bench::RowShape& shape, DataType type, ReduceOp op, bool in_place) {
    const std::size_t element = comm::size_of(type);
    const std::size_t c = shape.call_count;
    char* recv = static_cast<char*>(recv_);
    const void* send = send_;
    if (in_place) {
      send = recv + collective_.in_place_input_offset(c, comm_.rank()) * element;
      recv += collective_.in_place_output_offset(c, comm_.rank()) * element;
    }
    return collective_.start(comm_, send, recv, c, type, op, o_.root);
  }

  // Puts this rank's input where the call reads it (the send buffer, or its place in recv).
  void prepare_input(const bench::RowShape& shape, DataType type, ReduceOp op, bool in_place) {
    const std::size_t element = comm::size_of(type);
    std::vector<char> input;
    bench::fill_input(input, shape.send_elements, type, comm_.rank(), op);
    char* target = static_cast<char*>(in_place ? recv_ : send_);
    if (in_place) target += collective_.in_place_input_offset(shape.call_count, comm_.rank()) * element;
    if (!input.empty()) comm_.copy_to_device(target, input.data(), input.size());
  }

  Measurement measure(const bench::RowShape& shape, DataType type, ReduceOp op, bool in_place) {
    Measurement m;
    prepare_input(shape, type, op, in_place);
    for (int i = 0; i < o_.warmup; ++i) launch(shape, type, op, in_place)->wait();
    comm_.barrier();
    const auto start = std::chrono::steady_clock::now();
    // At most kInFlight calls queued: the same pipelining as unbounded, bounded memory for a large
    // -n, and a failure stops the loop within a few calls. Calls complete in issue order, so this
    // thread waits for the newest of a batch (one wake-up per batch, as nccl-tests synchronizes its
    // stream once) and then collects the batch's results (errors included) without blocking: a
    // wake-up per call cost 10-80 us per call on a 2-core VM, more than a 1 MiB call itself.
    constexpr std::size_t kInFlight = 64;
    std::deque<std::unique_ptr<comm::Request>> pending;
    auto finish = [&](std::size_t calls) {
      pending[calls - 1]->wait();
      for (std::size_t c = 0; c < calls; ++c) {
        pending.front()->wait();
        pending.pop_front();
      }
    };
    for (int i = 0; i < o_.iters; ++i) {
      auto request = launch(shape, type, op, in_place);
      if (o_.blocking)
        request->wait();
      else
        pending.push_back(std::move(request));
      if (pending.size() > kInFlight) finish(kInFlight / 2);
    }
    if (!pending.empty()) finish(pending.size());
    comm_.synchronize();
    const double elapsed_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    const double mine = o_.iters > 0 ? elapsed_us / o_.iters : 0;

    std::size_t wrong = 0;
    for (int c = 0; c < o_.check; ++c) {
      prepare_input(shape, type, op, in_place);
      launch(shape, type, op, in_place)->wait();
      comm_.synchronize();
      const auto expected = bench::expected_output(collective_.collective, shape, type, op, comm_.rank(), comm_.size(), o_.root);
      std::vector<char> actual(expected.size());
      const std::size_t element = comm::size_of(type);
      const char* source = static_cast<const char*>(recv_);
      if (in_place) source += collective_.in_place_output_offset(shape.call_count, comm_.rank()) * element;
      if (!actual.empty()) comm_.copy_to_host(actual.data(), source, actual.size());
      wrong += bench::count_wrong(actual, expected, element);
    }

    const auto values = gather("bench/row", std::to_string(mine) + " " + std::to_string(wrong));
    for (const auto& v : values) {
      double t = 0;
      unsigned long long w = 0;
      std::sscanf(v.c_str(), "%lf %llu", &t, &w);
      m.rank_times.push_back(t);
      m.wrong += w;
    }
    const auto& times = m.rank_times;
    switch (o_.average) {
      case 0:
        m.time_us = times[0];
        break;
      case 2:
        m.time_us = *std::min_element(times.begin(), times.end());
        break;
      case 3:
        m.time_us = *std::max_element(times.begin(), times.end());
        break;
      default:
        m.time_us = std::accumulate(times.begin(), times.end(), 0.0) / static_cast<double>(times.size());
    }
    m.algbw = m.time_us > 0 ? static_cast<double>(shape.shown_bytes) / (m.time_us * 1e3) : 0;  // GB/s = 1e9 B/s
    m.busbw = m.algbw * collective_.bus_factor(comm_.size());
    return m;
  }

  void print_row(const bench::RowShape& shape, const std::string& type, const std::string& op, const Measurement& out,
                 const Measurement& in) {
    const auto half = [this](const Measurement& m) {
      return nlohmann::json{
          {"time_us", m.time_us},          {"algbw", m.algbw}, {"busbw", m.busbw}, {"wrong", m.wrong}, {"rank_times_us", m.rank_times},
          {"straggler", straggler_json(m)}};
    };
    rows_.push_back({{"size", shape.shown_bytes},
                     {"count", shape.shown_count},
                     {"type", type},
                     {"redop", op},
                     {"root", collective_.has_root ? o_.root : -1},
                     {"out_of_place", half(out)},
                     {"in_place", half(in)}});
    if (!rank0()) return;
    const std::string redop = collective_.reduces ? op : "none";
    const std::string root = collective_.has_root ? std::to_string(o_.root) : "-1";
    std::printf("%12zu  %12zu  %8s  %6s  %6s", shape.shown_bytes, shape.shown_count, type.c_str(), redop.c_str(), root.c_str());
    std::printf("  %7s  %6.2f  %6.2f  %6g", format_time(out.time_us).c_str(), out.algbw, out.busbw, static_cast<double>(out.wrong));
    std::printf("  %7s  %6.2f  %6.2f  %6g\n", format_time(in.time_us).c_str(), in.algbw, in.busbw, static_cast<double>(in.wrong));
    report_outlier(out, "out-of-place", shape.shown_bytes);
    report_outlier(in, "in-place", shape.shown_bytes);
    std::fflush(stdout);
  }

  // The row's slowest rank when the shared rule (reporting/straggler.hpp) names it a straggler.
  std::optional<metrics::SlowestRank> straggler(const Measurement& m) const {
    std::vector<double> seconds;
    for (const double us : m.rank_times) seconds.push_back(us * 1e-6);
    auto slowest = metrics::slowest_rank(seconds, metrics::kBenchStragglerRule);
    if (!slowest || !slowest->straggler) return std::nullopt;
    return slowest;
  }

  std::string host_of(std::size_t rank) const { return rank < gather_hosts_.size() ? gather_hosts_[rank] : "?"; }

  nlohmann::json straggler_json(const Measurement& m) const {
    const auto s = straggler(m);
    if (!s) return nullptr;
    return {{"rank", s->rank}, {"host", host_of(s->rank)}, {"time_us", s->seconds * 1e6}, {"median_us", s->median_seconds * 1e6}};
  }

  // A bad node shows up in one run: name the slowest rank when it is far off the median.
  void report_outlier(const Measurement& m, const char* which, std::size_t bytes) const {
    if (const auto s = straggler(m))
      std::printf("#  slow rank: %zu bytes %s: rank %zu on %s took %.1f us, median %.1f us\n", bytes, which, s->rank,
                  host_of(s->rank).c_str(), s->seconds * 1e6, s->median_seconds * 1e6);
  }

  void keep_result(const bench::RowShape& shape, const std::string& type, const std::string& op, const Measurement& m, bool in_place) {
    results_.push_back(
        {shape.shown_bytes, type, collective_.reduces ? op : "none", in_place, m.time_us, m.algbw, m.busbw, m.wrong, m.rank_times});
  }

  metrics::BenchRunResult run_result(double average, double threshold, bool passed) const {
    const char* job = std::getenv("SLURM_JOB_ID");
    return {collective_.name, comm_.backend_name(),
            job ? job : "",   gather_hosts_,
            results_,         average,
            threshold,        wrong_total_,
            passed,           std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count()};
  }

  void write_metrics(const metrics::BenchRunResult& result) const {
    try {
      metrics::bench_metrics(result).write(o_.metrics_file);
    } catch (const std::runtime_error& e) {
      throw UsageError(e.what());
    }
  }

  void write_json(const metrics::BenchRunResult& result) {
    nlohmann::json slowest = nullptr;
    if (const auto s = metrics::bench_slowest_rank(result))
      slowest = {{"rank", s->rank},
                 {"host", host_of(s->rank)},
                 {"time_us", s->seconds * 1e6},
                 {"median_us", s->median_seconds * 1e6},
                 {"straggler", s->straggler}};
    nlohmann::json out{{"collective", collective_.name},
                       {"ranks", comm_.size()},
                       {"backend", comm_.backend_name()},
                       {"hosts", gather_hosts_},
                       {"rows", rows_},
                       {"avg_busbw", result.avg_busbw_gbps},
                       {"wrong_total", wrong_total_},
                       {"min_busbw", result.min_busbw_gbps},
                       {"iters", o_.iters},
                       {"warmup_iters", o_.warmup},
                       {"job_id", result.job_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(result.job_id)},
                       {"slowest_rank", slowest}};
    std::ofstream file(o_.json);
    if (!file) throw UsageError("cannot write the JSON output " + o_.json);
    file << out.dump(2) << "\n";
  }

 public:
  void set_hosts(std::vector<std::string> hosts) { gather_hosts_ = std::move(hosts); }

 private:
  const BenchOptions& o_;
  bootstrap::Session& session_;
  comm::Communicator& comm_;
  const comm::CollectiveInfo& collective_;
  void* send_ = nullptr;
  void* recv_ = nullptr;
  std::size_t wrong_total_ = 0;
  int sequence_ = 0;
  nlohmann::json rows_ = nlohmann::json::array();
  std::vector<metrics::BenchRowResult> results_;
  std::vector<std::string> gather_hosts_;
};

int run_bench(const BenchOptions& options, const bootstrap::SessionOptions& session_options) {
  const auto collective = comm::parse_collective(options.collective);
  if (!collective)
    throw UsageError("unknown collective '" + options.collective +
                     "': expected all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall or sendrecv");
  if (options.graph > 0) throw UsageError("-G (CUDA graphs) is not supported by gpudirect-launch bench");
  if (options.threads != 1 || options.gpus != 1) throw UsageError("-t and -g must be 1: run one rank per GPU (srun or --np)");
  if (options.iters < 1 || options.warmup < 0 || options.check < 0) throw UsageError("-n must be at least 1; -w and -c at least 0");
  if (options.average < 0 || options.average > 3) throw UsageError("-a must be 0 (rank 0), 1 (average), 2 (min) or 3 (max)");
  bootstrap::Session session = bootstrap::open_session(session_options);
  // Rank 0 writes the metrics file at the end: refuse a path it cannot write before the run, not after.
  if (!options.metrics_file.empty() && session.context.rank == 0) {
    try {
      metrics::check_writable(options.metrics_file);
    } catch (const std::runtime_error& e) {
      throw UsageError(e.what());
    }
  }
  auto communicator =
      comm::make_communicator({options.backend, session_options.timeout, "gpudirect bench", comm::StreamPriority::normal}, session);
  Runner runner(options, session, *communicator, comm::info_of(*collective));
  if (session.store)
    runner.set_hosts(session.store->all_gather("bench/hosts", session.context.hostname));
  else
    runner.set_hosts({session.context.hostname});
  const int status = runner.run();
  communicator->synchronize();
  if (session.store) session.store->barrier("bench/end");
  return status;
}

// nccl-tests' exit code for what ended the run: usage, a peer that failed, a timeout, CUDA.
int bench_exit_code(const std::exception& e) {
  if (dynamic_cast<const std::invalid_argument*>(&e)) return kExitUsage;  // UsageError is one
  if (dynamic_cast<const bootstrap::PeerFailure*>(&e)) return kExitComm;
  if (dynamic_cast<const bootstrap::StoreError*>(&e)) return kExitTimeout;
  if (dynamic_cast<const comm::CommTimeout*>(&e)) return kExitTimeout;
  if (dynamic_cast<const comm::CommError*>(&e)) return std::string_view(e.what()).starts_with("CUDA") ? kExitCuda : kExitComm;
  return kExitComm;
}

}  // namespace

void register_bench(CLI::App& app, CommandContext& context) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* bench =
      app.add_subcommand("bench",
                         "Collective benchmark in the nccl-tests format: NCCL on GPUs, libfabric on host memory. Run one rank per GPU "
                         "(srun -n N, or --np N before 'bench'). Exit codes as nccl-tests: 0 ok, 2 CUDA, 3 communication (a peer rank "
                         "died or failed), 4 timeout (a rank, a link or the rendezvous silent for --timeout), "
                         "6 usage, 7 wrong results or average bus bandwidth under 0.9 x --min-busbw / NCCL_TESTS_MIN_BW.");
  bench
      ->add_option("collective", o->collective,
                   "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv (or all_reduce_perf ...)")
      ->required();
  bench->add_option("-b,--minbytes", o->min_bytes, "smallest size in bytes, K/M/G suffixes (default 32M)");
  bench->add_option("-e,--maxbytes", o->max_bytes, "largest size (default 32M)");
  bench->add_option("-f,--stepfactor", o->step_factor, "multiply the size by this between rows (default 2)");
  bench->add_option("-i,--stepbytes", o->step_bytes, "add this many bytes between rows instead of -f");
  bench->add_option("-n,--iters", o->iters, "timed iterations per row (default 20)");
  bench->add_option("-w,--warmup_iters", o->warmup, "untimed iterations first (default 5)");
  bench->add_option("-c,--check", o->check, "correctness-check iterations per row, 0 to skip (default 1)");
  bench->add_option("-o,--op", o->op, "sum, prod, min, max, avg or all (default sum)");
  bench->add_option("-d,--datatype", o->datatype,
                    "float, double, half, bfloat16, int8, uint8, int32, int64, uint64 or all (default float)");
  bench->add_option("-r,--root", o->root, "root rank of broadcast and reduce (default 0)");
  bench->add_option("-z,--blocking", o->blocking, "1: wait for each call before the next (default 0)");
  bench->add_option("-a,--average", o->average, "time across ranks: 0 rank 0, 1 average (default), 2 min, 3 max");
  bench->add_option("-J,--json", o->json, "also write every row and per-rank timing as JSON to this file");
  bench->add_option("-G,--cudagraph", o->graph, "CUDA graph replays (not supported: must be 0)");
  bench->add_option("-t,--nthreads", o->threads, "threads per process (must be 1)");
  bench->add_option("-g,--ngpus", o->gpus, "GPUs per thread (must be 1)");
  bench->add_option("--backend", o->backend, "auto (NCCL when built with it and a GPU is visible), nccl or libfabric");
  bench->add_option("--min-busbw", o->min_busbw, "fail (exit 7) when the average bus bandwidth is under 0.9 x this, in GB/s");
  bench->add_option("--metrics-file", o->metrics_file,
                    "rank 0 writes the results in the Prometheus text format for node_exporter's textfile collector "
                    "(gpudirect_bench_* gauges; a PATH ending in .prom in --collector.textfile.directory), replaced atomically");
  bench->callback([o, &context] {
    context.exit_code = run_command(
        "gpudirect bench", [&] { return run_bench(*o, context.session); }, bench_exit_code);
  });
}

}  // namespace gpudirect::launcher
