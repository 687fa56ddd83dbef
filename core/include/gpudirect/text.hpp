// Small text helpers every floor shares, so every value is parsed with the same strictness:
// an integer is all digits (a leading '-' only for signed types), in range, with nothing around it.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpudirect {

// The items with `separator` between each two: join({"a", "b"}) is "a,b"; join({}) is "".
std::string join(const std::vector<std::string>& items, std::string_view separator = ",");

// Without leading and trailing blanks (space, tab, CR, LF).
std::string_view trim(std::string_view text);

// The fields between `separator`s, empty ones included: split("a,,b", ',') is {"a", "", "b"};
// split("", ',') is {""}.
std::vector<std::string_view> split(std::string_view text, char separator);

// `text` as an integer in [min, max] (base 10, or 16 without a 0x prefix). Rejects "", "+1",
// " 1", "1x", "0x10", and values outside [min, max] or the type with std::invalid_argument
// "FIELD: expected an integer in MIN..MAX, got 'TEXT'".
template <std::integral T>
T parse_integer(std::string_view text, std::string_view field, T min, T max, int base = 10);

// Same rules, no message: empty when `text` is not such an integer.
template <std::integral T>
std::optional<T> try_parse_integer(std::string_view text, T min, T max, int base = 10);

// A finite decimal number ("1.5", "2e3", "-1"); the same rules: nothing around it, no '+'.
std::optional<double> try_parse_number(std::string_view text);

// The leading decimal number of `text` and the rest after it ("1.5M" -> 1.5, "M"); empty when
// `text` does not start with one.
std::optional<std::pair<double, std::string_view>> parse_number_prefix(std::string_view text);

// A value from outside (a user's option, an environment variable, a file) made safe to quote in
// one line of a message: at most `max_bytes` of it, control bytes and non-ASCII as \xNN, and
// "... (N bytes)" when it was longer. "tcp\nx" -> "tcp\x0ax".
std::string quote_bounded(std::string_view value, std::size_t max_bytes = 64);

// Names in the order a person counts them: runs of digits compare as numbers, the rest byte by byte
// ("mlx5_9" < "mlx5_10", "eth2" < "eth10"; equal numbers with more leading zeros first).
bool natural_less(std::string_view a, std::string_view b);

// Whether `path` is `dir` or a path below it, by text: "/a/b" is within "/a", "/ab" is not.
bool is_path_within(std::string_view path, std::string_view dir);

// This machine's host name as gethostname() gives it; "unknown-host" if it cannot.
std::string host_name();

// Appends `value` escaped for XML text and attribute values: & < > " as entities, tab, newline and
// carriage return as character references (so attributes keep them), any other control character
// (not allowed in XML 1.0) as a space.
void append_xml_escaped(std::string& out, std::string_view value);
std::string xml_escaped(std::string_view value);

}  // namespace gpudirect
