// Private to the topology sources: reading a topology XML file safely with libxml2 (no network,
// no entity expansion) and the two XML readers that share one parse with load_topology_file.
#pragma once

#include "gpudirect/topology.hpp"

#include <libxml/tree.h>

#include <memory>
#include <optional>
#include <string>

namespace gpudirect::topology_xml {

struct DocumentFree {
  void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
};
using Document = std::unique_ptr<xmlDoc, DocumentFree>;

// The whole file; TopologyError naming the file when it cannot be read.
std::string read_file(const std::string& path);
// A well-formed document or TopologyError "<path>: line N: <what libxml2 says>". Documents that
// declare entities are refused (no entity expansion, so no billion-laughs).
Document parse(const std::string& path, const std::string& bytes);

bool is_element(const xmlNode* node, const char* name);
std::optional<std::string> attribute(const xmlNode* node, const char* name);

// The hwloc XML document as hwloc is given it: checked, and written again in the one form hwloc's
// minimalistic parser reads as libxml2 did (hwloc_xml_canonical.cpp says why). TopologyError naming
// the file and line for what hwloc would mishandle.
std::string canonical_hwloc_xml(const std::string& path, const xmlDoc& doc);

// The readers behind load_hwloc_xml / load_nccl_topology_xml, given the parsed file.
// hwloc_export: when not null, receives hwloc's XML export of what it loaded (for the cache).
Topology read_hwloc(const std::string& path, const xmlDoc& doc, std::string* hwloc_export = nullptr);
Topology read_nccl(const std::string& path, const xmlDoc& doc);

}  // namespace gpudirect::topology_xml
