// What hwloc reads from an hwloc XML file: libxml2's parse of it, checked and written again in the
// one form hwloc's own minimalistic parser reads exactly as libxml2 did.
//
// Why: hwloc 2.9 leaks, or dereferences what it never set, on many inputs that are not what lstopo
// writes, and fuzzing kept finding more (tests/fuzz/regressions/hwloc_xml/). Most came from its
// parser reading a file differently than libxml2 (comments, single quotes, text, entities, the
// order of elements); the rest from values it does not check. hwloc now sees only our own writing
// of a document we have checked: elements and attributes it knows, values in the forms it writes,
// nothing else. What the plugin does not read (user data, page types, memory attributes, CPU kinds,
// support flags) is left out.
#include "topology/xml.hpp"

#include "gpudirect/pci_address.hpp"
#include "gpudirect/text.hpp"
#include "gpudirect/topology_sources.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace gpudirect::topology_xml {
namespace {

// The largest PU or NUMA node index a file may give (hwloc sizes its bitmaps by the largest index).
constexpr unsigned kMaxOsIndex = 1u << 20;
// NUMA nodes in one distance matrix: real machines have at most a few dozen.
constexpr unsigned kMaxDistanceObjects = 1024;

const char* const kRefresh = "; save the file again with `lstopo --of xml`";

std::string name_of(const xmlNode* node) { return reinterpret_cast<const char*>(node->name); }

std::string line_of(const std::string& path, const xmlNode* node) { return path + ": line " + std::to_string(xmlGetLineNo(node)) + ": "; }

// hwloc's parser knows attribute names of lower-case letters and '_' only.
bool is_hwloc_attribute_name(std::string_view name) {
  if (name.empty()) return false;
  for (const char c : name)
    if (!((c >= 'a' && c <= 'z') || c == '_')) return false;
  return true;
}

// What hwloc writes for a cpuset or nodeset: "0x" and 1..8 hex digits per 32-bit word, words
// separated by commas, the first possibly "0xf...f" (an infinite set). A zero word between two
// others is written as nothing ("0x000000ff,,0x0"): hwloc_bitmap_snprintf does, and its reader
// takes the empty word as 0. The first and last words are never empty.
bool is_hwloc_bitmap(std::string_view value) {
  const std::vector<std::string_view> words = split(value, ',');
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string_view word = words[i];
    const bool inner = i > 0 && i + 1 < words.size();
    if ((i == 0 && word == "0xf...f") || (inner && word.empty())) continue;
    if (word.size() < 3 || word.size() > 10 || !word.starts_with("0x")) return false;
    for (const char c : word.substr(2))
      if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return !words.empty();
}

void append_attribute(std::string& out, std::string_view name, std::string_view value) {
  out += ' ';
  out += name;
  out += "=\"";
  append_xml_escaped(out, value);
  out += '"';
}

void indent(std::string& out, int depth) { out.append(static_cast<std::size_t>(2 * depth), ' '); }

// The checks hwloc 2.9 lacks on one <object>'s own attributes, each found by fuzzing.
void check_object_attributes(const std::string& path, const xmlNode* node, const std::string& type) {
  const std::string where = line_of(path, node);
  // hwloc leaks the object when a set does not parse ("0x0000008>8").
  for (const char* set : {"cpuset", "complete_cpuset", "allowed_cpuset", "nodeset", "complete_nodeset", "allowed_nodeset"})
    if (const auto value = attribute(node, set); value && !is_hwloc_bitmap(*value))
      throw TopologyError(where + "a " + type + " object's " + set + " '" + quote_bounded(*value, 32) +
                          "' is not an hwloc bitmap (0x1234abcd words separated by commas)" + kRefresh);
  // hwloc stores any "U-D" numbers in its bridge-type enums (2-1 is no enumerator); its own files
  // only have host (0) or PCI (1) upstream and PCI downstream.
  const auto bridge_type = attribute(node, "bridge_type");
  if (bridge_type && *bridge_type != "0-1" && *bridge_type != "1-1")
    throw TopologyError(where + "a " + type + " object has bridge_type '" + quote_bounded(*bridge_type, 16) +
                        "' (hwloc writes 0-1 or 1-1)" + kRefresh);
  // hwloc stores osdev_type's number unchecked (strtoul: "2666..." became -1) in its enum; its
  // files have 0 (block) to 5 (co-processor).
  if (const auto osdev = attribute(node, "osdev_type"); osdev && !(osdev->size() == 1 && (*osdev)[0] >= '0' && (*osdev)[0] <= '5'))
    throw TopologyError(where + "a " + type + " object has osdev_type '" + quote_bounded(*osdev, 16) + "' (hwloc writes 0 to 5)" +
                        kRefresh);
  // hwloc dereferences the cpuset of every object of the CPU side (it crashed on a NUMANode
  // without one); only I/O and Misc objects have none in the files it writes.
  const bool io_or_misc = type == "Bridge" || type == "PCIDev" || type == "OSDev" || type == "Misc";
  if (!io_or_misc && !attribute(node, "cpuset") && !attribute(node, "complete_cpuset"))
    throw TopologyError(where + "a " + type + " object has no cpuset (lstopo writes one for every object but I/O and Misc ones)" +
                        kRefresh);
  // hwloc leaks a bridge without its downstream bus range; it writes one for every bridge.
  if (type == "Bridge" && !attribute(node, "bridge_pci"))
    throw TopologyError(where + "a Bridge object has no bridge_pci attribute" + kRefresh);
  // hwloc takes a PCI object without pci_busid as 0000:00:00.0.
  const bool pci_object = type == "PCIDev" || (type == "Bridge" && bridge_type && !bridge_type->starts_with("0-"));
  if (pci_object) {
    const auto busid = attribute(node, "pci_busid");
    if (!busid) throw TopologyError(where + "a " + type + " object has no pci_busid attribute");
    try {
      (void)PciAddress::parse(*busid);
    } catch (const std::invalid_argument& e) {
      throw TopologyError(where + e.what());
    }
    if (!attribute(node, "pci_type")) throw TopologyError(where + "PCI object " + *busid + " has no pci_type attribute");
  }
  // A PU or NUMA node without os_index is index 2^32-1 to hwloc, which then sizes a bitmap for it:
  // half a GiB and seconds per load. lstopo writes small indices.
  if (type == "PU" || type == "NUMANode") {
    const auto index = attribute(node, "os_index");
    if (!index || !try_parse_integer<unsigned>(*index, 0, kMaxOsIndex))
      throw TopologyError(where + "a " + type + " object needs an os_index from 0 to " + std::to_string(kMaxOsIndex) +
                          (index ? ", not '" + quote_bounded(*index, 32) + "'" : "") + kRefresh);
  }
  if (type == "OSDev" && !attribute(node, "name")) throw TopologyError(where + "an OSDev object has no name attribute");
}

// A number as hwloc 1.x wrote distances ("%f": "1.600000"), nothing else.
bool is_plain_decimal(std::string_view text) {
  const std::size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view fraction = dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
  const auto digits = [](std::string_view part) {
    return std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return !whole.empty() && whole.size() <= 12 && digits(whole) &&
         (dot == std::string_view::npos || (!fraction.empty() && fraction.size() <= 12 && digits(fraction)));
}

// hwloc 1.x's NUMA latency matrix inside an object: <distances nbobjs relative_depth latency_base>
// with nbobjs^2 <latency value/> (hwloc 2 turns it into today's matrix). Checked, then written again.
void write_v1_distances(std::string& out, const std::string& path, const xmlNode* node, int depth) {
  const std::string where = line_of(path, node);
  const auto count = attribute(node, "nbobjs");
  const auto relative_depth = attribute(node, "relative_depth");
  const auto base = attribute(node, "latency_base");
  const auto objects = count ? try_parse_integer<unsigned>(*count, 1, kMaxDistanceObjects) : std::nullopt;
  const auto levels = relative_depth ? try_parse_integer<unsigned>(*relative_depth, 0, 1024) : std::nullopt;
  if (!objects || !levels || !base || !is_plain_decimal(*base))
    throw TopologyError(where + "a hwloc 1.x <distances> element needs nbobjs from 1 to " + std::to_string(kMaxDistanceObjects) +
                        ", a relative_depth and a latency_base" + kRefresh);
  const std::size_t n = *objects;
  std::vector<std::string> values;
  for (const xmlNode* child = node->children; child; child = child->next) {
    if (child->type != XML_ELEMENT_NODE) continue;
    const auto value = attribute(child, "value");
    if (!is_element(child, "latency") || !value || !is_plain_decimal(*value))
      throw TopologyError(line_of(path, child) + "a hwloc 1.x <distances> holds only <latency value=\"1.000000\"/> elements" + kRefresh);
    values.push_back(*value);
  }
  if (values.size() != n * n)
    throw TopologyError(where + "a hwloc 1.x <distances> of " + std::to_string(n) + " objects has " + std::to_string(values.size()) +
                        " latencies, expected " + std::to_string(n * n) + kRefresh);
  indent(out, depth);
  out += "<distances";
  append_attribute(out, "nbobjs", std::to_string(n));
  append_attribute(out, "relative_depth", std::to_string(*levels));
  append_attribute(out, "latency_base", *base);
  out += ">\n";
  for (const std::string& value : values) {
    indent(out, depth + 1);
    out += "<latency";
    append_attribute(out, "value", value);
    out += "/>\n";
  }
  indent(out, depth);
  out += "</distances>\n";
}

// <info name= value=/>: hwloc refuses (and leaks the object) for any other attribute, and skips an
// info without both.
void write_info(std::string& out, const xmlNode* node, int depth) {
  const auto name = attribute(node, "name");
  const auto value = attribute(node, "value");
  if (!name || !value || name->empty()) return;
  indent(out, depth);
  out += "<info";
  append_attribute(out, "name", *name);
  append_attribute(out, "value", *value);
  out += "/>\n";
}

void write_object(std::string& out, const std::string& path, const xmlNode* node, int depth) {
  const auto type = attribute(node, "type");
  if (!type) throw TopologyError(line_of(path, node) + "an <object> has no type attribute");
  check_object_attributes(path, node, *type);
  indent(out, depth);
  out += "<object";
  append_attribute(out, "type", *type);  // hwloc needs the type before any other attribute
  for (const xmlAttr* attr = node->properties; attr; attr = attr->next) {
    const std::string name = reinterpret_cast<const char*>(attr->name);
    if (name == "type" || !is_hwloc_attribute_name(name)) continue;  // hwloc ignores names it cannot read
    append_attribute(out, name, attribute(node, name.c_str()).value_or(""));
  }
  // hwloc dereferences a missing complete_* set when its partner is there. Older writers left the
  // complete set out where it equals the set; write the one that is there for both.
  for (const std::string set : {"cpuset", "nodeset"}) {
    const auto plain = attribute(node, set.c_str());
    const auto complete = attribute(node, ("complete_" + set).c_str());
    if (plain && !complete) append_attribute(out, "complete_" + set, *plain);
    if (complete && !plain) append_attribute(out, set, *complete);
  }
  // hwloc reads an object's info children before its object children; write them in that order.
  std::vector<const xmlNode*> children;
  std::string infos, distances;
  for (const xmlNode* child = node->children; child; child = child->next) {
    if (child->type == XML_TEXT_NODE || child->type == XML_CDATA_SECTION_NODE) {
      if (child->content && !trim(reinterpret_cast<const char*>(child->content)).empty())
        throw TopologyError(line_of(path, child) + "text '" + quote_bounded(reinterpret_cast<const char*>(child->content), 32) +
                            "' inside an <object>" + kRefresh);
      continue;
    }
    if (child->type != XML_ELEMENT_NODE) continue;  // comments, processing instructions
    const std::string name = name_of(child);
    if (name == "object")
      children.push_back(child);
    else if (name == "info")
      write_info(infos, child, depth + 1);
    else if (name == "distances")
      write_v1_distances(distances, path, child, depth + 1);
    else if (name != "page_type" && name != "userdata")  // not read by the plugin
      throw TopologyError(line_of(path, child) + "unknown element <" + quote_bounded(name) + "> in an <object>" + kRefresh);
  }
  if (children.empty() && infos.empty() && distances.empty()) {
    out += "/>\n";
    return;
  }
  out += ">\n";
  out += infos;
  out += distances;  // where hwloc 1.x wrote them: before the children
  for (const xmlNode* child : children) write_object(out, path, child, depth + 1);
  indent(out, depth);
  out += "</object>\n";
}

// The numbers of an <indexes> or <u64values> element: decimal, separated by blanks. hwloc reads them
// with strtoull base 0 (a leading 0 is octal to it), so they are written again plainly.
std::vector<std::uint64_t> numbers_in(const std::string& path, const xmlNode* node) {
  std::vector<std::uint64_t> numbers;
  std::string text;
  for (const xmlNode* child = node->children; child; child = child->next) {
    if (child->type == XML_TEXT_NODE && child->content)
      text += reinterpret_cast<const char*>(child->content);
    else if (child->type == XML_ELEMENT_NODE)
      throw TopologyError(line_of(path, child) + "<" + name_of(node) + "> holds an element; it holds numbers only" + kRefresh);
  }
  std::size_t at = 0;
  while (at < text.size()) {
    if (std::isspace(static_cast<unsigned char>(text[at]))) {
      ++at;
      continue;
    }
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data() + at, text.data() + text.size(), value);
    if (error != std::errc{} || (end != text.data() + text.size() && !std::isspace(static_cast<unsigned char>(*end))))
      throw TopologyError(line_of(path, node) + "<" + name_of(node) + "> holds '" + quote_bounded(text.substr(at), 24) +
                          "', not decimal numbers" + kRefresh);
    numbers.push_back(value);
    at = static_cast<std::size_t>(end - text.data());
  }
  return numbers;
}

void append_numbers(std::string& out, const char* element, const std::vector<std::uint64_t>& numbers) {
  std::string text;
  for (const std::uint64_t number : numbers) {
    if (!text.empty()) text += ' ';
    text += std::to_string(number);
  }
  out += "  <";
  out += element;
  append_attribute(out, "length", std::to_string(text.size()));  // hwloc checks the content's length
  out += '>';
  out += text;
  out += "</";
  out += element;
  out += ">\n";
}

// A <distances2> matrix. Only NUMA-node matrices by OS index are kept: the plugin reads NUMA
// latencies and nothing else.
void write_distances(std::string& out, const std::string& path, const xmlNode* node) {
  const auto type = attribute(node, "type");
  const auto indexing = attribute(node, "indexing");
  if (!type || *type != "NUMANode" || !indexing || *indexing != "os") return;
  const std::string where = line_of(path, node);
  const auto count = attribute(node, "nbobjs");
  const auto kind = attribute(node, "kind");
  const auto objects = count ? try_parse_integer<unsigned>(*count, 1, kMaxDistanceObjects) : std::nullopt;
  const auto kind_bits = kind ? try_parse_integer<unsigned>(*kind, 1, 0xffffu) : std::nullopt;
  if (!objects || !kind_bits)
    throw TopologyError(where + "a <distances2> element needs nbobjs from 1 to " + std::to_string(kMaxDistanceObjects) + " and a kind" +
                        kRefresh);
  std::vector<std::uint64_t> indexes, values;
  for (const xmlNode* child = node->children; child; child = child->next) {
    if (child->type != XML_ELEMENT_NODE) continue;
    if (!is_element(child, "indexes") && !is_element(child, "u64values"))
      throw TopologyError(line_of(path, child) + "unknown element <" + quote_bounded(name_of(child)) + "> in <distances2>" + kRefresh);
    auto& into = is_element(child, "indexes") ? indexes : values;
    for (const std::uint64_t number : numbers_in(path, child)) into.push_back(number);
  }
  const std::size_t n = *objects;
  if (indexes.size() != n || values.size() != n * n)
    throw TopologyError(where + "a <distances2> matrix of " + std::to_string(n) + " NUMA nodes has " + std::to_string(indexes.size()) +
                        " indexes and " + std::to_string(values.size()) + " values, expected " + std::to_string(n) + " and " +
                        std::to_string(n * n) + kRefresh);
  for (const std::uint64_t index : indexes)
    if (index > kMaxOsIndex)
      throw TopologyError(where + "a <distances2> index " + std::to_string(index) + " is not a NUMA node" + kRefresh);
  out += " <distances2";
  append_attribute(out, "type", "NUMANode");
  append_attribute(out, "nbobjs", std::to_string(n));
  append_attribute(out, "kind", std::to_string(*kind_bits));
  append_attribute(out, "indexing", "os");
  out += ">\n";
  append_numbers(out, "indexes", indexes);
  append_numbers(out, "u64values", values);
  out += " </distances2>\n";
}

// "2.0" -> {2, 0}; hwloc reads versions 1.x and 2.x (and the 0.9 <root> it calls version 0).
std::string version_of(const std::string& path, const xmlNode* root) {
  const auto version = attribute(root, "version");
  if (!version) return "";  // hwloc 1.x wrote <topology> without a version
  const auto dot = version->find('.');
  const auto major = dot == std::string::npos ? std::nullopt : try_parse_integer<unsigned>(version->substr(0, dot), 1, 2);
  const auto minor = dot == std::string::npos ? std::nullopt : try_parse_integer<unsigned>(version->substr(dot + 1), 0, 999);
  if (!major || !minor)
    throw TopologyError(path + ": hwloc XML version '" + quote_bounded(*version, 16) + "' is not one hwloc 2 reads (1.x or 2.x)" +
                        kRefresh);
  return std::to_string(*major) + "." + std::to_string(*minor);
}

}  // namespace

std::string canonical_hwloc_xml(const std::string& path, const xmlDoc& doc) {
  const xmlNode* root = xmlDocGetRootElement(&doc);
  const std::string version = version_of(path, root);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n";
  out += version.empty() ? "<topology>\n" : "<topology version=\"" + version + "\">\n";
  bool have_root_object = false;
  for (const xmlNode* child = root->children; child; child = child->next) {
    if (child->type != XML_ELEMENT_NODE) continue;
    if (!have_root_object) {
      if (!is_element(child, "object"))
        throw TopologyError(line_of(path, child) + "the topology starts with <" + quote_bounded(name_of(child)) +
                            ">, not the machine's <object>" + kRefresh);
      write_object(out, path, child, 1);
      have_root_object = true;
    } else if (is_element(child, "object")) {
      throw TopologyError(line_of(path, child) + "a second top-level <object>; hwloc files have one root object" + kRefresh);
    } else if (is_element(child, "distances2") && !version.empty() && !version.starts_with("1.")) {
      write_distances(out, path, child);
    }  // other matrices, memory attributes, CPU kinds, support flags: not read by the plugin
  }
  if (!have_root_object) throw TopologyError(path + ": the <topology> has no <object>" + kRefresh);
  out += "</topology>\n";
  return out;
}

}  // namespace gpudirect::topology_xml
