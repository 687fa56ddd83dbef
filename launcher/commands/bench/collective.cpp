#include "bench/collective.hpp"

#include "gpudirect/text.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpudirect::bench {

std::optional<Collective> parse_collective(const std::string& raw) {
  std::string name = raw;
  if (name.size() > 5 && name.ends_with("_perf")) name.resize(name.size() - 5);
  std::erase(name, '_');
  if (name == "allreduce") return Collective::all_reduce;
  if (name == "allgather") return Collective::all_gather;
  if (name == "reducescatter") return Collective::reduce_scatter;
  if (name == "broadcast" || name == "bcast") return Collective::broadcast;
  if (name == "reduce") return Collective::reduce;
  if (name == "alltoall") return Collective::alltoall;
  if (name == "sendrecv") return Collective::sendrecv;
  return std::nullopt;
}

const char* name_of(Collective c) {
  switch (c) {
    case Collective::all_reduce: return "all_reduce";
    case Collective::all_gather: return "all_gather";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::broadcast: return "broadcast";
    case Collective::reduce: return "reduce";
    case Collective::alltoall: return "alltoall";
    case Collective::sendrecv: return "sendrecv";
  }
  return "?";
}

bool is_reducing(Collective c) {
  return c == Collective::all_reduce || c == Collective::reduce_scatter || c == Collective::reduce;
}

bool has_root(Collective c) { return c == Collective::broadcast || c == Collective::reduce; }

double bus_factor(Collective c, int ranks) {
  const double n = ranks;
  switch (c) {
    case Collective::all_reduce: return 2.0 * (n - 1) / n;
    case Collective::all_gather: case Collective::reduce_scatter: case Collective::alltoall: return (n - 1) / n;
    default: return 1.0;
  }
}

RowShape row_shape(Collective c, std::size_t bytes, std::size_t element, int ranks) {
  const auto n = static_cast<std::size_t>(ranks);
  RowShape shape;
  const std::size_t total = bytes / element;
  switch (c) {
    case Collective::all_gather:
    case Collective::reduce_scatter:
    case Collective::alltoall: {
      // The size column is the whole gathered/scattered buffer: n blocks of call_count elements.
      shape.call_count = total / n;
      shape.shown_count = shape.call_count * n;
      shape.send_elements = c == Collective::all_gather ? shape.call_count : shape.call_count * n;
      shape.recv_elements = c == Collective::reduce_scatter ? shape.call_count : shape.call_count * n;
      break;
    }
    default:
      shape.call_count = total;
      shape.shown_count = total;
      shape.send_elements = shape.recv_elements = total;
  }
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
  if (suffix == "K" || suffix == "k") scale = 1024.0;
  else if (suffix == "M" || suffix == "m") scale = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g") scale = 1024.0 * 1024 * 1024;
  else if (!suffix.empty() && suffix != "B" && suffix != "b") throw std::invalid_argument("size '" + text + "': unknown suffix (K, M or G)");
  if (value < 0) throw std::invalid_argument("size '" + text + "' is negative");
  return static_cast<std::size_t>(value * scale);
}

std::vector<std::size_t> size_sequence(std::size_t min, std::size_t max, double factor, std::size_t increment) {
  if (max < min) throw std::invalid_argument("-e (maxbytes) is smaller than -b (minbytes)");
  if (increment == 0 && factor <= 1.0) throw std::invalid_argument("-f (stepfactor) must be greater than 1");
  std::vector<std::size_t> sizes;
  for (std::size_t size = min; size <= max;) {
    sizes.push_back(size);
    const std::size_t next = increment ? size + increment : static_cast<std::size_t>(static_cast<double>(std::max<std::size_t>(size, 1)) * factor);
    if (next <= size) break;
    size = next;
    if (sizes.size() > 100000) throw std::invalid_argument("too many sizes: raise -f or -i");
  }
  return sizes;
}

}  // namespace gpudirect::bench
