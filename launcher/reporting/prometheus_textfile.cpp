#include "reporting/prometheus_textfile.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace gpudirect::launcher::metrics {
namespace {

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Prometheus requires label values to be UTF-8; a host name or a path from outside may not be.
bool is_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t extra = 0;
    std::uint32_t code = 0;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xE0) == 0xC0) {
      extra = 1;
      code = c & 0x1Fu;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      code = c & 0x0Fu;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      code = c & 0x07u;
    } else
      return false;
    if (i + extra >= text.size()) return false;  // truncated sequence
    for (std::size_t k = 1; k <= extra; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3Fu);
    }
    // Overlong forms, UTF-16 surrogates and values past U+10FFFF are not UTF-8.
    static constexpr std::uint32_t kSmallest[] = {0, 0x80, 0x800, 0x10000};
    if (code < kSmallest[extra] || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF) return false;
    i += extra + 1;
  }
  return true;
}

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

std::runtime_error write_error(const std::filesystem::path& path, const std::string& step, int error, const char* advice) {
  return std::runtime_error("metrics file " + path.string() + ": " + step + " (" + std::strerror(error) + "); " + advice);
}

}  // namespace

bool is_valid_metric_name(std::string_view name) {
  if (name.empty() || !(is_letter(name[0]) || name[0] == '_' || name[0] == ':')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return is_letter(c) || is_digit(c) || c == '_' || c == ':'; });
}

bool is_valid_label_name(std::string_view name) {
  if (name.empty() || !(is_letter(name[0]) || name[0] == '_') || name.starts_with("__")) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return is_letter(c) || is_digit(c) || c == '_'; });
}

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string escape_help(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (const char c : help) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char text[64];
  // Whole numbers as integers (a timestamp reads 1700000000, not 1.7e+09); the rest in the shortest form.
  const bool whole = std::abs(value) < 1e15 && value == std::trunc(value);
  const auto result =
      whole ? std::to_chars(text, text + sizeof text, value, std::chars_format::fixed) : std::to_chars(text, text + sizeof text, value);
  return std::string(text, result.ptr);
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  if (path.filename().empty()) throw std::runtime_error("metrics file " + path.string() + ": not a file name (it ends in '/')");
  const std::filesystem::path directory = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  std::string temporary = (directory / ("." + path.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0)
    throw write_error(path, "cannot create a temporary file in " + directory.string(), errno,
                      "check that the directory exists and that this user may write to it");
  const auto fail = [&](const std::string& step, int error) {
    ::close(fd);
    ::unlink(temporary.c_str());
    return write_error(path, step + " " + temporary, error, "check the file system's free space and permissions");
  };
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw fail("cannot write", errno);
    done += static_cast<std::size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0) throw fail("cannot make readable", errno);
  if (::fsync(fd) != 0) throw fail("cannot fsync", errno);
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    throw write_error(path, "cannot close " + temporary, error, "check the file system's free space");
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    throw write_error(path, "cannot rename " + temporary + " over it", error, "check that the path is not a directory and is writable");
  }
  // Make the rename itself durable. The new file is in place either way, so a file system that
  // cannot fsync a directory is not an error.
  const int dir_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

void check_writable(const std::filesystem::path& path) {
  if (path.filename().empty()) throw std::runtime_error("metrics file " + path.string() + ": not a file name (it ends in '/')");
  const std::filesystem::path directory = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  std::error_code error;
  if (!std::filesystem::is_directory(directory, error))
    throw std::runtime_error("metrics file " + path.string() + ": the directory " + directory.string() +
                             " does not exist; create it first");
  if (::access(directory.c_str(), W_OK | X_OK) != 0)
    throw write_error(path, "cannot write in " + directory.string(), errno, "choose a directory this user may write to");
  if (std::filesystem::is_directory(path, error))
    throw std::runtime_error("metrics file " + path.string() + ": is a directory; give a file name such as " +
                             (path / "gpudirect.prom").string());
}

PrometheusTextfile::Family& PrometheusTextfile::family(std::string_view name) {
  for (auto& f : families_)
    if (f.name == name) return f;
  throw std::invalid_argument("metric " + in_quotes(name) + " has no declare() before its samples");
}

void PrometheusTextfile::declare(std::string_view name, MetricType type, std::string_view help) {
  if (!is_valid_metric_name(name))
    throw std::invalid_argument("metric name " + in_quotes(name) + " is not valid: expected [a-zA-Z_:][a-zA-Z0-9_:]*");
  if (type == MetricType::counter && !name.ends_with("_total"))
    throw std::invalid_argument("counter " + in_quotes(name) + " must end in _total (Prometheus' naming convention)");
  if (help.empty()) throw std::invalid_argument("metric " + in_quotes(name) + " needs a help text (say what it measures and its unit)");
  for (const auto& f : families_)
    if (f.name == name) throw std::invalid_argument("metric " + in_quotes(name) + " is declared twice");
  families_.push_back({std::string(name), std::string(help), type, {}});
}

void PrometheusTextfile::add(std::string_view name, Labels labels, double value, std::optional<std::int64_t> timestamp_ms) {
  Family& f = family(name);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const auto& [label, text] = labels[i];
    if (!is_valid_label_name(label))
      throw std::invalid_argument("metric " + in_quotes(name) + ": label name " + in_quotes(label) +
                                  " is not valid: expected [a-zA-Z_][a-zA-Z0-9_]* not starting with __");
    for (std::size_t j = 0; j < i; ++j)
      if (labels[j].first == label)
        throw std::invalid_argument("metric " + in_quotes(name) + ": label " + in_quotes(label) + " is given twice");
    if (!is_utf8(text))
      throw std::invalid_argument("metric " + in_quotes(name) + ": the value of label " + in_quotes(label) + " is not UTF-8");
  }
  if (f.type == MetricType::counter && !(value >= 0 && std::isfinite(value)))
    throw std::invalid_argument("counter " + in_quotes(name) + ": value " + format_value(value) + " is not a finite count >= 0");
  Labels sorted = labels;
  std::sort(sorted.begin(), sorted.end());
  for (const auto& sample : f.samples) {
    Labels other = sample.labels;
    std::sort(other.begin(), other.end());
    if (other == sorted) throw std::invalid_argument("metric " + in_quotes(name) + ": two samples with the same labels");
  }
  f.samples.push_back({std::move(labels), value, timestamp_ms});
}

bool PrometheusTextfile::has_samples() const {
  return std::any_of(families_.begin(), families_.end(), [](const Family& f) { return !f.samples.empty(); });
}

std::string PrometheusTextfile::text() const {
  std::string out;
  for (const auto& f : families_) {
    if (f.samples.empty()) continue;
    out += "# HELP " + f.name + " " + escape_help(f.help) + "\n";
    out += "# TYPE " + f.name + (f.type == MetricType::counter ? " counter\n" : " gauge\n");
    for (const auto& sample : f.samples) {
      out += f.name;
      if (!sample.labels.empty()) {
        out += '{';
        for (std::size_t i = 0; i < sample.labels.size(); ++i)
          out += (i ? "," : "") + sample.labels[i].first + "=\"" + escape_label_value(sample.labels[i].second) + "\"";
        out += '}';
      }
      out += " " + format_value(sample.value);
      if (sample.timestamp_ms) out += " " + std::to_string(*sample.timestamp_ms);
      out += "\n";
    }
  }
  return out;
}

void PrometheusTextfile::write(const std::filesystem::path& path) const { write_file_atomically(path, text()); }

}  // namespace gpudirect::launcher::metrics
