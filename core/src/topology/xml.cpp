#include "topology/xml.hpp"

#include "gpudirect/topology_sources.hpp"

#include <libxml/parser.h>
#include <libxml/xmlerror.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

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
  // Plain read(2): the plugin reads this once per job step, and iostreams cost more than the read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw TopologyError("cannot open topology file " + path + ": " + std::strerror(errno));
  std::string bytes;
  struct stat info {};
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0 && info.st_size < INT_MAX)
    bytes.reserve(static_cast<std::size_t>(info.st_size));
  char buffer[65536];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got == 0) break;
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int saved = errno;
      ::close(fd);
      throw TopologyError("cannot read topology file " + path + ": " + std::strerror(saved));
    }
    bytes.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(fd);
  return bytes;
}

Document parse(const std::string& path, const std::string& bytes) {
  if (bytes.empty()) throw TopologyError(path + ": the file is empty, expected hwloc or NCCL topology XML");
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) throw TopologyError(path + ": file too large");
  std::unique_ptr<xmlParserCtxt, ContextFree> context(xmlNewParserCtxt());
  if (!context) throw TopologyError(path + ": out of memory creating the XML parser");
  // No XML_PARSE_NOENT (entities stay unexpanded), no DTD loading, no network.
  const int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
  Document doc(xmlCtxtReadMemory(context.get(), bytes.data(), static_cast<int>(bytes.size()), path.c_str(), nullptr, options));
  if (!doc) {
    const xmlError* error = xmlCtxtGetLastError(context.get());
    std::string why = error && error->message ? trimmed(error->message) : "unknown XML error";
    const int line = error ? error->line : 0;
    throw TopologyError(path + ": not well-formed XML" + (line > 0 ? " (line " + std::to_string(line) + ": " : " (") + why +
                        "); is the file truncated?");
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
