#include "gpudirect/text.hpp"

#include <locale.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace gpudirect {

std::string_view trim(std::string_view text) {
  constexpr std::string_view kBlanks = " \t\r\n";
  const auto first = text.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kBlanks) - first + 1);
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> fields;
  for (std::size_t start = 0;;) {
    const auto end = text.find(separator, start);
    if (end == std::string_view::npos) {
      fields.push_back(text.substr(start));
      return fields;
    }
    fields.push_back(text.substr(start, end - start));
    start = end + 1;
  }
}

template <std::integral T>
std::optional<T> try_parse_integer(std::string_view text, T min, T max, int base) {
  // from_chars already refuses '+', blanks and "0x"; it accepts '-' for signed types only.
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value, base);
  if (text.empty() || ec != std::errc{} || ptr != end || value < min || value > max) return std::nullopt;
  return value;
}

template <std::integral T>
T parse_integer(std::string_view text, std::string_view field, T min, T max, int base) {
  if (auto value = try_parse_integer<T>(text, min, max, base)) return *value;
  throw std::invalid_argument(std::string(field) + ": expected " + (base == 16 ? "a hexadecimal integer" : "an integer") + " in " +
                              std::to_string(min) + ".." + std::to_string(max) + ", got '" + std::string(text) + "'");
}

#define GPUDIRECT_INSTANTIATE(T)                                               \
  template std::optional<T> try_parse_integer<T>(std::string_view, T, T, int); \
  template T parse_integer<T>(std::string_view, std::string_view, T, T, int);
GPUDIRECT_INSTANTIATE(int)
GPUDIRECT_INSTANTIATE(unsigned)
GPUDIRECT_INSTANTIATE(long)
GPUDIRECT_INSTANTIATE(unsigned long)
GPUDIRECT_INSTANTIATE(long long)
GPUDIRECT_INSTANTIATE(unsigned long long)
#undef GPUDIRECT_INSTANTIATE

namespace {

// Length of the longest prefix of text in from_chars' decimal grammar: [-] digits [. digits] [e [+-] digits],
// where the mantissa needs a digit on either side of the point. No blanks, '+', hex, "inf" or "nan".
std::size_t decimal_prefix_length(std::string_view text) {
  const auto digits_from = [&](std::size_t at) {
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
    return at;
  };
  std::size_t at = !text.empty() && text[0] == '-' ? 1 : 0;
  const std::size_t integer_end = digits_from(at);
  std::size_t end = integer_end;
  bool any_digit = integer_end > at;
  if (end < text.size() && text[end] == '.') {
    const std::size_t fraction_end = digits_from(end + 1);
    any_digit = any_digit || fraction_end > end + 1;
    end = fraction_end;
  }
  if (!any_digit) return 0;
  if (end < text.size() && (text[end] == 'e' || text[end] == 'E')) {
    std::size_t exponent = end + 1;
    if (exponent < text.size() && (text[exponent] == '+' || text[exponent] == '-')) ++exponent;
    const std::size_t exponent_end = digits_from(exponent);
    if (exponent_end > exponent) end = exponent_end;
  }
  return end;
}

}  // namespace

std::optional<std::pair<double, std::string_view>> parse_number_prefix(std::string_view text) {
  // GCC 10's libstdc++ has no from_chars for double: strtod in the C locale ("1.5" whatever LC_NUMERIC
  // says), on exactly the prefix from_chars would take.
  const std::size_t length = decimal_prefix_length(text);
  if (length == 0) return std::nullopt;
  static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", locale_t{});
  if (c_locale == locale_t{}) return std::nullopt;
  const std::string prefix(text.substr(0, length));
  char* end = nullptr;
  errno = 0;
  const double value = strtod_l(prefix.c_str(), &end, c_locale);
  if (errno == ERANGE || end != prefix.c_str() + prefix.size() || !std::isfinite(value)) return std::nullopt;
  return std::pair{value, text.substr(length)};
}

std::optional<double> try_parse_number(std::string_view text) {
  const auto parsed = parse_number_prefix(text);
  if (!parsed || !parsed->second.empty()) return std::nullopt;
  return parsed->first;
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    out += items[i];
  }
  return out;
}

bool is_path_within(std::string_view path, std::string_view dir) {
  return path == dir || (path.size() > dir.size() && path.starts_with(dir) && path[dir.size()] == '/');
}

bool natural_less(std::string_view a, std::string_view b) {
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      std::size_t ia = i, jb = j;
      while (ia < a.size() && is_digit(a[ia])) ++ia;
      while (jb < b.size() && is_digit(b[jb])) ++jb;
      std::string_view x = a.substr(i, ia - i), y = b.substr(j, jb - j);
      const std::size_t x_zeros = x.find_first_not_of('0'), y_zeros = y.find_first_not_of('0');
      const std::string_view xv = x_zeros == std::string_view::npos ? "" : x.substr(x_zeros);
      const std::string_view yv = y_zeros == std::string_view::npos ? "" : y.substr(y_zeros);
      if (xv.size() != yv.size()) return xv.size() < yv.size();  // no overflow however long the run
      if (xv != yv) return xv < yv;
      if (x.size() != y.size()) return x.size() > y.size();
      i = ia;
      j = jb;
    } else {
      if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

std::string quote_bounded(std::string_view value, std::size_t max_bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < value.size() && i < max_bytes; ++i) {
    const auto byte = static_cast<unsigned char>(value[i]);
    if (byte < 0x20 || byte >= 0x7f || byte == '\\') {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += static_cast<char>(byte);
    }
  }
  if (value.size() > max_bytes) out += "... (" + std::to_string(value.size()) + " bytes)";
  return out;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "unknown-host";
  return name;
}

void append_xml_escaped(std::string& out, std::string_view value) {
  for (const char c : value) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\t':
        out += "&#9;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\r':
        out += "&#13;";
        break;
      default:
        out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
  }
}

std::string xml_escaped(std::string_view value) {
  std::string out;
  append_xml_escaped(out, value);
  return out;
}

}  // namespace gpudirect
