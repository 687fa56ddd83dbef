#include "gpudirect/hostlist.hpp"

#include "gpudirect/text.hpp"

#include <limits>
#include <stdexcept>

namespace gpudirect {
namespace {

constexpr std::size_t kMaxHosts = 1 << 20;  // bounds memory on a hostile "n[0-999999999]"

[[noreturn]] void bad(std::string_view list, const std::string& why) {
  throw std::invalid_argument("invalid host list '" + quote_bounded(list, 128) + "': " + why);
}

// "01-03,7" -> {"01","02","03","7"}
std::vector<std::string> expand_ranges(std::string_view ranges, std::string_view list) {
  std::vector<std::string> out;
  if (ranges.empty()) bad(list, "empty brackets");
  std::size_t start = 0;
  while (start <= ranges.size()) {
    std::size_t comma = ranges.find(',', start);
    if (comma == std::string_view::npos) comma = ranges.size();
    const std::string_view item = ranges.substr(start, comma - start);
    const auto dash = item.find('-');
    const std::string_view first = item.substr(0, dash);
    const std::string_view last = dash == std::string_view::npos ? first : item.substr(dash + 1);
    auto parse = [&](std::string_view digits) {
      const auto value = try_parse_integer<unsigned long>(digits, 0, std::numeric_limits<unsigned long>::max());
      if (!value) bad(list, "'" + quote_bounded(item) + "' is not a number or a range");
      return *value;
    };
    const unsigned long lo = parse(first), hi = parse(last);
    if (hi < lo) bad(list, "range '" + quote_bounded(item) + "' runs backwards");
    if (hi - lo > kMaxHosts || out.size() + (hi - lo) > kMaxHosts) bad(list, "too many hosts");
    const std::size_t width = first.size();
    for (unsigned long v = lo; v <= hi; ++v) {
      std::string digits = std::to_string(v);
      if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
      out.push_back(std::move(digits));
    }
    start = comma + 1;
  }
  return out;
}

void expand_one(std::string_view name, std::string_view list, std::vector<std::string>& out) {
  std::vector<std::string> prefixes{""};
  std::size_t pos = 0;
  while (pos < name.size()) {
    const auto open = name.find('[', pos);
    const std::string_view text = name.substr(pos, open == std::string_view::npos ? std::string_view::npos : open - pos);
    if (text.find(']') != std::string_view::npos) bad(list, "unbalanced ']'");
    for (auto& p : prefixes) p += text;
    if (open == std::string_view::npos) break;
    const auto close = name.find(']', open);
    if (close == std::string_view::npos) bad(list, "unbalanced '['");
    const auto values = expand_ranges(name.substr(open + 1, close - open - 1), list);
    std::vector<std::string> next;
    for (const auto& p : prefixes)
      for (const auto& v : values) {
        if (next.size() >= kMaxHosts) bad(list, "too many hosts");
        next.push_back(p + v);
      }
    prefixes = std::move(next);
    pos = close + 1;
  }
  for (auto& p : prefixes) {
    if (p.empty()) bad(list, "empty host name");
    out.push_back(std::move(p));
  }
}

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view list) {
  std::vector<std::string> hosts;
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size() && list[i] == '[') ++depth;
    if (i < list.size() && list[i] == ']') --depth;
    if (depth < 0 || depth > 1) bad(list, "unbalanced or nested brackets");
    if (i == list.size() || (list[i] == ',' && depth == 0)) {
      const std::string_view item = trim(list.substr(start, i - start));
      if (item.empty()) bad(list, "empty host name");
      expand_one(item, list, hosts);
      if (hosts.size() > kMaxHosts) bad(list, "too many hosts");  // summed over the items too
      start = i + 1;
    }
  }
  if (depth != 0) bad(list, "unbalanced '['");
  return hosts;
}

}  // namespace gpudirect
