#include "bench/collective.hpp"

#include "gpudirect/text.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpudirect::bench {

RowShape row_shape(comm::Collective c, std::size_t bytes, std::size_t element, int ranks) {
  const auto& collective = comm::info_of(c);
  RowShape shape;
  // The size column is the larger buffer: `total_blocks` blocks of call_count elements.
  shape.call_count = bytes / element / collective.total_blocks(ranks);
  shape.shown_count = collective.total_elements(shape.call_count, ranks);
  shape.send_elements = collective.send_elements(shape.call_count, ranks);
  shape.recv_elements = collective.recv_elements(shape.call_count, ranks);
  shape.shown_bytes = shape.shown_count * element;
  return shape;
}

std::size_t parse_size(const std::string& text) {
  if (text.empty()) throw std::invalid_argument("empty size");
  const auto number = parse_number_prefix(text);
  if (!number) throw std::invalid_argument("size '" + text + "' is not a number (e.g. 8, 64K, 1M, 8G)");
  const double value = number->first;
  std::string suffix(number->second);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b') && suffix.size() > 1) suffix.pop_back();
  double scale = 1;
  if (suffix == "K" || suffix == "k")
    scale = 1024.0;
  else if (suffix == "M" || suffix == "m")
    scale = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g")
    scale = 1024.0 * 1024 * 1024;
  else if (!suffix.empty() && suffix != "B" && suffix != "b")
    throw std::invalid_argument("size '" + text + "': unknown suffix (K, M or G)");
  if (value < 0) throw std::invalid_argument("size '" + text + "' is negative");
  return static_cast<std::size_t>(value * scale);
}

std::vector<std::size_t> size_sequence(std::size_t min, std::size_t max, double factor, std::size_t increment) {
  if (max < min) throw std::invalid_argument("-e (maxbytes) is smaller than -b (minbytes)");
  if (increment == 0 && factor <= 1.0) throw std::invalid_argument("-f (stepfactor) must be greater than 1");
  std::vector<std::size_t> sizes;
  for (std::size_t size = min; size <= max;) {
    sizes.push_back(size);
    const std::size_t next =
        increment ? size + increment : static_cast<std::size_t>(static_cast<double>(std::max<std::size_t>(size, 1)) * factor);
    if (next <= size) break;
    size = next;
    if (sizes.size() > 100000) throw std::invalid_argument("too many sizes: raise -f or -i");
  }
  return sizes;
}

}  // namespace gpudirect::bench
