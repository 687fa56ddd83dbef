// libxml2, loaded only when the plugin reads a topology file (a topology-cache miss, or an NCCL
// topology file): linking it would load it, with the ICU and libstdc++ it needs, into every srun,
// sbatch and slurmstepd, --gpu-direct or not (perf/plugin_hook_times measures the cost). The core's
// calls bind to these definitions (the version script keeps them private to the plugin), which
// forward to the real library.
#include "gpudirect/topology_sources.hpp"

#include <dlfcn.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include <mutex>
#include <string>

namespace {

struct Libxml2 {
  void* handle = nullptr;
  std::string error;
  xmlParserCtxtPtr (*new_parser_ctxt)() = nullptr;
  void (*free_parser_ctxt)(xmlParserCtxtPtr) = nullptr;
  xmlDocPtr (*ctxt_read_memory)(xmlParserCtxtPtr, const char*, int, const char*, const char*, int) = nullptr;
  xmlErrorPtr (*ctxt_get_last_error)(void*) = nullptr;
  void (*free_doc)(xmlDocPtr) = nullptr;
  long (*get_line_no)(const xmlNode*) = nullptr;
  xmlNodePtr (*doc_get_root_element)(const xmlDoc*) = nullptr;
  xmlAttrPtr (*has_prop)(const xmlNode*, const xmlChar*) = nullptr;
};

template <typename F>
void bind(void* handle, const char* name, F& out, std::string& error) {
  out = reinterpret_cast<F>(dlsym(handle, name));
  if (!out && error.empty()) error = std::string("libxml2.so.2 has no ") + name;
}

// Loaded once per process, on first use; never unloaded (the plugin's own dlclose leaves it).
const Libxml2& libxml2() {
  static Libxml2 lib;
  static std::once_flag once;
  std::call_once(once, [] {
    lib.handle = dlopen("libxml2.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib.handle) {
      const char* why = dlerror();
      lib.error = std::string("cannot load libxml2.so.2: ") + (why ? why : "unknown error");
      return;
    }
    bind(lib.handle, "xmlNewParserCtxt", lib.new_parser_ctxt, lib.error);
    bind(lib.handle, "xmlFreeParserCtxt", lib.free_parser_ctxt, lib.error);
    bind(lib.handle, "xmlCtxtReadMemory", lib.ctxt_read_memory, lib.error);
    bind(lib.handle, "xmlCtxtGetLastError", lib.ctxt_get_last_error, lib.error);
    bind(lib.handle, "xmlFreeDoc", lib.free_doc, lib.error);
    bind(lib.handle, "xmlGetLineNo", lib.get_line_no, lib.error);
    bind(lib.handle, "xmlDocGetRootElement", lib.doc_get_root_element, lib.error);
    bind(lib.handle, "xmlHasProp", lib.has_prop, lib.error);
  });
  return lib;
}

// Every document and context comes from the library, so these never run without it.
const Libxml2& loaded() {
  const Libxml2& lib = libxml2();
  if (!lib.error.empty())
    throw gpudirect::TopologyError("gpudirect: reading a topology file needs libxml2 and " + lib.error +
                                   "; install the libxml2 package on the node");
  return lib;
}

}  // namespace

extern "C" {

xmlParserCtxtPtr xmlNewParserCtxt(void) { return loaded().new_parser_ctxt(); }

void xmlFreeParserCtxt(xmlParserCtxtPtr context) {
  if (context) libxml2().free_parser_ctxt(context);
}

xmlDocPtr xmlCtxtReadMemory(xmlParserCtxtPtr context, const char* buffer, int size, const char* url, const char* encoding, int options) {
  return loaded().ctxt_read_memory(context, buffer, size, url, encoding, options);
}

xmlErrorPtr xmlCtxtGetLastError(void* context) { return loaded().ctxt_get_last_error(context); }

void xmlFreeDoc(xmlDocPtr doc) {
  if (doc) libxml2().free_doc(doc);
}

long xmlGetLineNo(const xmlNode* node) { return loaded().get_line_no(node); }

xmlNodePtr xmlDocGetRootElement(const xmlDoc* doc) { return loaded().doc_get_root_element(doc); }

xmlAttrPtr xmlHasProp(const xmlNode* node, const xmlChar* name) { return loaded().has_prop(node, name); }

}  // extern "C"
