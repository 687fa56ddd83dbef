#include <catch2/catch.hpp>

#include "reporting/prometheus_textfile.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

using namespace gpudirect::launcher::metrics;

namespace {

std::string read_all(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// A fresh directory under the system's temporary directory, removed at the end of the test.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gpudirect-prom-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(path)) names.push_back(entry.path().filename().string());
    return names;
  }
};

}  // namespace

TEST_CASE("metric names follow [a-zA-Z_:][a-zA-Z0-9_:]*", "[prometheus]") {
  for (const char* good : {"a", "gpudirect_bench_busbw_gbps", "_x", ":recording:rule", "A9_:b"}) {
    INFO(good);
    CHECK(is_valid_metric_name(good));
  }
  for (const char* bad : {"", "9lives", "bus-bw", "bus bw", "busbw{", "é", "a.b"}) {
    INFO(bad);
    CHECK_FALSE(is_valid_metric_name(bad));
  }
}

TEST_CASE("label names follow [a-zA-Z_][a-zA-Z0-9_]* and never start with __", "[prometheus]") {
  for (const char* good : {"host", "_rank", "job_id", "r2"}) {
    INFO(good);
    CHECK(is_valid_label_name(good));
  }
  for (const char* bad : {"", "__name__", "__x", "2nd", "a:b", "a-b", "a b"}) {
    INFO(bad);
    CHECK_FALSE(is_valid_label_name(bad));
  }
}

TEST_CASE("label values escape backslash, quote and newline, HELP escapes backslash and newline", "[prometheus]") {
  CHECK(escape_label_value("plain a3-mega-0") == "plain a3-mega-0");
  CHECK(escape_label_value("C:\\dir") == "C:\\\\dir");
  CHECK(escape_label_value("say \"hi\"") == "say \\\"hi\\\"");
  CHECK(escape_label_value("two\nlines") == "two\\nlines");
  CHECK(escape_help("a \"quoted\" \\ and\nnewline") == "a \"quoted\" \\\\ and\\nnewline");
}

TEST_CASE("values: NaN, +Inf, -Inf and the shortest decimal that reads back the same", "[prometheus]") {
  CHECK(format_value(std::numeric_limits<double>::quiet_NaN()) == "NaN");
  CHECK(format_value(std::numeric_limits<double>::infinity()) == "+Inf");
  CHECK(format_value(-std::numeric_limits<double>::infinity()) == "-Inf");
  CHECK(format_value(0) == "0");
  CHECK(format_value(2) == "2");
  CHECK(format_value(187.5) == "187.5");
  CHECK(format_value(-0.25) == "-0.25");
  CHECK(format_value(1e-9) == "1e-09");
  CHECK(format_value(1700000000) == "1700000000");
  CHECK(format_value(-3) == "-3");
  CHECK(format_value(-0.0) == "-0");
  CHECK(format_value(1e20) == "1e+20");
  for (const double v : {0.1, 1.0 / 3, 123456789.123, 6.02e23, 4.9e-324, 1e15, 999999999999999.0, 1700000000.25})
    CHECK(std::strtod(format_value(v).c_str(), nullptr) == v);
}

TEST_CASE("a file renders HELP, TYPE and samples family by family, in the order declared", "[prometheus]") {
  PrometheusTextfile file;
  file.declare("gpudirect_bench_busbw_gbps", MetricType::gauge, "Average bus bandwidth in GB/s (1e9 bytes/s)");
  file.declare("gpudirect_bench_runs_total", MetricType::counter, "Runs of the bench");
  file.declare("gpudirect_unused", MetricType::gauge, "declared but never given a sample: left out");
  file.add("gpudirect_bench_runs_total", {}, 3);
  file.add("gpudirect_bench_busbw_gbps", {{"collective", "all_gather"}, {"host", "node \"0\"\n"}}, 187.5);
  file.add("gpudirect_bench_busbw_gbps", {{"collective", "all_reduce"}, {"host", "node-1"}}, std::nan(""), 1700000000123);
  CHECK(file.has_samples());
  CHECK(file.text() ==
        "# HELP gpudirect_bench_busbw_gbps Average bus bandwidth in GB/s (1e9 bytes/s)\n"
        "# TYPE gpudirect_bench_busbw_gbps gauge\n"
        "gpudirect_bench_busbw_gbps{collective=\"all_gather\",host=\"node \\\"0\\\"\\n\"} 187.5\n"
        "gpudirect_bench_busbw_gbps{collective=\"all_reduce\",host=\"node-1\"} NaN 1700000000123\n"
        "# HELP gpudirect_bench_runs_total Runs of the bench\n"
        "# TYPE gpudirect_bench_runs_total counter\n"
        "gpudirect_bench_runs_total 3\n");
}

TEST_CASE("an empty file has no samples and renders nothing", "[prometheus]") {
  PrometheusTextfile file;
  file.declare("gpudirect_x", MetricType::gauge, "x");
  CHECK_FALSE(file.has_samples());
  CHECK(file.text().empty());
}

TEST_CASE("invalid families and samples are refused with the metric named", "[prometheus]") {
  PrometheusTextfile file;
  CHECK_THROWS_WITH(file.declare("bus-bw", MetricType::gauge, "h"), Catch::Contains("'bus-bw'") && Catch::Contains("[a-zA-Z_:]"));
  CHECK_THROWS_WITH(file.declare("gpudirect_runs", MetricType::counter, "h"), Catch::Contains("must end in _total"));
  CHECK_THROWS_WITH(file.declare("gpudirect_x", MetricType::gauge, ""), Catch::Contains("help text"));
  file.declare("gpudirect_x", MetricType::gauge, "x");
  file.declare("gpudirect_n_total", MetricType::counter, "n");
  CHECK_THROWS_WITH(file.declare("gpudirect_x", MetricType::gauge, "again"), Catch::Contains("declared twice"));
  CHECK_THROWS_WITH(file.add("gpudirect_y", {}, 1), Catch::Contains("'gpudirect_y'") && Catch::Contains("declare()"));
  CHECK_THROWS_WITH(file.add("gpudirect_x", {{"__name__", "v"}}, 1), Catch::Contains("label name '__name__'"));
  CHECK_THROWS_WITH(file.add("gpudirect_x", {{"a:b", "v"}}, 1), Catch::Contains("label name 'a:b'"));
  CHECK_THROWS_WITH(file.add("gpudirect_x", {{"host", "a"}, {"host", "b"}}, 1), Catch::Contains("'host' is given twice"));
  CHECK_THROWS_WITH(file.add("gpudirect_x", {{"host", "bad\xff"}}, 1), Catch::Contains("not UTF-8"));
  CHECK_THROWS_WITH(file.add("gpudirect_x", {{"host", "cut\xc3"}}, 1), Catch::Contains("not UTF-8"));
  CHECK_THROWS_WITH(file.add("gpudirect_x", {{"host", "overlong\xc0\xaf"}}, 1), Catch::Contains("not UTF-8"));
  CHECK_NOTHROW(file.add("gpudirect_x", {{"host", "n\xc5\x93ud-\xe2\x82\xac-\xf0\x9f\x98\x80"}}, 1));
  CHECK_THROWS_WITH(file.add("gpudirect_n_total", {}, -1), Catch::Contains("finite count"));
  CHECK_THROWS_WITH(file.add("gpudirect_n_total", {}, std::numeric_limits<double>::infinity()), Catch::Contains("finite count"));
  file.add("gpudirect_x", {{"rank", "0"}, {"host", "h"}}, 1);
  CHECK_THROWS_WITH(file.add("gpudirect_x", {{"host", "h"}, {"rank", "0"}}, 2), Catch::Contains("same labels"));
  CHECK_NOTHROW(file.add("gpudirect_x", {{"host", "h"}, {"rank", "1"}}, 2));
}

TEST_CASE("write replaces the file by rename: a reader holding the old file still sees it whole", "[prometheus]") {
  TempDir dir;
  const auto path = dir.path / "gpudirect_bench.prom";
  PrometheusTextfile first;
  first.declare("gpudirect_a", MetricType::gauge, "a");
  first.add("gpudirect_a", {}, 1);
  first.write(path);
  CHECK(read_all(path) == first.text());

  std::ifstream reader(path);  // opened before the second write, as node_exporter might be
  PrometheusTextfile second;
  second.declare("gpudirect_b", MetricType::gauge, "b");
  second.add("gpudirect_b", {{"host", "x"}}, 2);
  second.write(path);
  std::stringstream old_text;
  old_text << reader.rdbuf();
  CHECK(old_text.str() == first.text());
  CHECK(read_all(path) == second.text());

  struct stat info {};
  REQUIRE(::stat(path.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0644);
  CHECK(dir.entries() == std::vector<std::string>{"gpudirect_bench.prom"});  // no temporary file left behind
}

TEST_CASE("write errors name the path and leave no temporary file", "[prometheus]") {
  TempDir dir;
  CHECK_THROWS_WITH(write_file_atomically(dir.path / "missing" / "x.prom", "x 1\n"),
                    Catch::Contains((dir.path / "missing" / "x.prom").string()) && Catch::Contains("temporary file") &&
                        Catch::Contains("No such file or directory"));
  std::filesystem::create_directory(dir.path / "taken.prom");
  CHECK_THROWS_WITH(write_file_atomically(dir.path / "taken.prom", "x 1\n"),
                    Catch::Contains((dir.path / "taken.prom").string()) && Catch::Contains("cannot rename"));
  CHECK(dir.entries() == std::vector<std::string>{"taken.prom"});
  CHECK_THROWS_WITH(write_file_atomically(dir.path.string() + "/", "x 1\n"), Catch::Contains("not a file name"));
}

TEST_CASE("write works with a bare file name (the current directory)", "[prometheus]") {
  TempDir dir;
  const auto previous = std::filesystem::current_path();
  std::filesystem::current_path(dir.path);
  write_file_atomically("here.prom", "gpudirect_a 1\n");
  std::filesystem::current_path(previous);
  CHECK(read_all(dir.path / "here.prom") == "gpudirect_a 1\n");
}

TEST_CASE("check_writable refuses a missing directory or a directory as the file, naming the path", "[prometheus]") {
  TempDir dir;
  CHECK_NOTHROW(check_writable(dir.path / "new.prom"));
  CHECK_THROWS_WITH(check_writable(dir.path / "missing" / "x.prom"),
                    Catch::Contains((dir.path / "missing").string()) && Catch::Contains("does not exist"));
  CHECK_THROWS_WITH(check_writable(dir.path), Catch::Contains("is a directory"));
  CHECK_THROWS_WITH(check_writable(dir.path.string() + "/"), Catch::Contains("not a file name"));
  CHECK(dir.entries().empty());  // checking writes nothing
}
