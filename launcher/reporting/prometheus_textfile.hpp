// The Prometheus text exposition format (version 0.0.4), as node_exporter's textfile collector
// reads it: every metrics file the commands write (bench, train, health) goes through here, so the
// names, escaping, number formatting and the atomic replace are done one way.
//
//   PrometheusTextfile file;
//   file.declare("gpudirect_bench_busbw_gbps", MetricType::gauge, "Bus bandwidth in GB/s (1e9 bytes/s)");
//   file.add("gpudirect_bench_busbw_gbps", {{"collective", "all_gather"}, {"host", "a3-0"}}, 187.5);
//   file.write("/var/lib/node_exporter/textfile/gpudirect_bench.prom");
//
// node_exporter refuses a textfile whose samples carry timestamps ("unsupported client-side
// timestamps"): for files meant for it, export the time as a gauge (…_timestamp_seconds) instead of
// passing `timestamp_ms`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpudirect::launcher::metrics {

enum class MetricType { gauge, counter };

// A sample's labels, in the order they are written: {{"host", "a3-0"}, {"rank", "3"}}.
using Labels = std::vector<std::pair<std::string, std::string>>;

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool is_valid_metric_name(std::string_view name);
// [a-zA-Z_][a-zA-Z0-9_]* and not starting with "__" (reserved for Prometheus itself).
bool is_valid_label_name(std::string_view name);
// A label value as written between the quotes: \ -> \\, " -> \", newline -> \n.
std::string escape_label_value(std::string_view value);
// A HELP text: \ -> \\, newline -> \n (quotes stay as they are).
std::string escape_help(std::string_view help);
// A sample value: "NaN", "+Inf", "-Inf", a whole number under 1e15 as an integer ("1700000000"),
// else the shortest decimal that reads back as the same double ("0.1", "1e-09", "6.02e+23").
std::string format_value(double value);

// Replaces `path` with `content` so that a reader sees the old file or the new one, never a part:
// a temporary file in the same directory (a name node_exporter skips: it reads only *.prom),
// written, fsync'ed, made readable by all (0644, node_exporter runs as its own user), renamed
// over `path`, then the directory fsync'ed. Throws std::runtime_error naming the path, the step
// that failed and the system's reason; the temporary file is removed on failure.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

// Throws std::runtime_error (naming the path and how to fix it) when write_file_atomically(path)
// could not work: the directory is missing or not writable, or `path` is a directory. For
// commands that write their metrics at the end of a run, so a typo fails before the run.
void check_writable(const std::filesystem::path& path);

// Metric families and their samples, rendered family by family in the order declared.
class PrometheusTextfile {
 public:
  // A family with its # HELP and # TYPE lines. Throws std::invalid_argument for an invalid name,
  // a counter whose name does not end in "_total" (Prometheus' convention; promtool flags it), an
  // empty help, or a name declared before.
  void declare(std::string_view name, MetricType type, std::string_view help);

  // One sample of a declared family. Throws std::invalid_argument for an undeclared family, an
  // invalid or repeated label name, a label value that is not UTF-8, a negative or non-finite
  // counter value, or a second sample with the same labels (Prometheus rejects the whole file).
  void add(std::string_view name, Labels labels, double value, std::optional<std::int64_t> timestamp_ms = std::nullopt);

  bool has_samples() const;

  // The file's text; families without samples are left out.
  std::string text() const;

  // text() written with write_file_atomically.
  void write(const std::filesystem::path& path) const;

 private:
  struct Sample {
    Labels labels;
    double value;
    std::optional<std::int64_t> timestamp_ms;
  };
  struct Family {
    std::string name, help;
    MetricType type;
    std::vector<Sample> samples;
  };
  Family& family(std::string_view name);
  std::vector<Family> families_;
};

}  // namespace gpudirect::launcher::metrics
