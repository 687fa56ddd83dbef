#include "topology_xml.hpp"

#include "gpudirect/topology_sources.hpp"

#include <libxml/parser.h>
#include <libxml/xmlerror.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gpudirect::topology_xml {
namespace {

struct ContextFree {
  void operator()(xmlParserCtxt* context) const { xmlFreeParserCtxt(context); }
};

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TopologyError("cannot open topology file " + path + ": " + std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw TopologyError("cannot read topology file " + path);
  return bytes.str();
}

Document parse(const std::string& path, const std::string& bytes) {
  if (bytes.empty()) throw TopologyError(path + ": the file is empty, expected hwloc or NCCL topology XML");
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) throw TopologyError(path + ": file too large");
  std::unique_ptr<xmlParserCtxt, ContextFree> context(xmlNewParserCtxt());
  if (!context) throw TopologyError(path + ": out of memory creating the XML parser");
  // No XML_PARSE_NOENT (entities stay unexpanded), no DTD loading, no network.
  const int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
  Document doc(xmlCtxtReadMemory(context.get(), bytes.data(), static_cast<int>(bytes.size()), path.c_str(), nullptr,
                                 options));
  if (!doc) {
    const xmlError* error = xmlCtxtGetLastError(context.get());
    std::string why = error && error->message ? trimmed(error->message) : "unknown XML error";
    const int line = error ? error->line : 0;
    throw TopologyError(path + ": not well-formed XML" + (line > 0 ? " (line " + std::to_string(line) + ": " : " (") +
                        why + "); is the file truncated?");
  }
  if (doc->intSubset && doc->intSubset->entities)
    throw TopologyError(path + ": declares XML entities, which topology files never need; refusing to read it");
  if (!xmlDocGetRootElement(doc.get())) throw TopologyError(path + ": the XML document has no root element");
  return doc;
}

bool is_element(const xmlNode* node, const char* name) {
  return node && node->type == XML_ELEMENT_NODE && std::strcmp(reinterpret_cast<const char*>(node->name), name) == 0;
}

std::optional<std::string> attribute(const xmlNode* node, const char* name) {
  // xmlHasProp + the raw text node: values are never entity-expanded (parse() refuses entities).
  const xmlAttr* attr = xmlHasProp(node, reinterpret_cast<const xmlChar*>(name));
  if (!attr) return std::nullopt;
  std::string value;
  for (const xmlNode* child = attr->children; child; child = child->next)
    if (child->type == XML_TEXT_NODE && child->content) value += reinterpret_cast<const char*>(child->content);
  return value;
}

}  // namespace gpudirect::topology_xml
