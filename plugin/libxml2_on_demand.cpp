// libxml2, loaded only when the plugin reads a topology file (a topology-cache miss, or an NCCL
// topology file): linking it would load it, with the ICU and libstdc++ it needs, into every srun,
// sbatch and slurmstepd, --gpu-direct or not (perf/plugin_hook_times measures the cost). The core's
// calls bind to these definitions (the version script keeps them private to the plugin), which
// forward to the real library.
#include <dlfcn.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include <array>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>

#include "gpudirect/shared_library.hpp"
#include "gpudirect/topology_sources.hpp"

namespace {

// The soname of the libxml2 this plugin was compiled against (CMake reads it from the library), then
// the sonames of the other libxml2 ABIs whose entry points below are the same: libxml2.so.16 (2.14
// and later) and libxml2.so.2 (before), so a node image whose libxml2 moved on still loads one.
constexpr std::array<std::string_view, 2> kOtherSonames{"libxml2.so.16", "libxml2.so.2"};

// Each pointer has the type the headers declare (libxml2 2.12 made xmlCtxtGetLastError return
// const xmlError*), so this compiles against every release.
struct Libxml2 {
  void* handle = nullptr;
  std::string name;
  std::string error;
  decltype(&::xmlNewParserCtxt) new_parser_ctxt = nullptr;
  decltype(&::xmlFreeParserCtxt) free_parser_ctxt = nullptr;
  decltype(&::xmlCtxtReadMemory) ctxt_read_memory = nullptr;
  decltype(&::xmlCtxtGetLastError) ctxt_get_last_error = nullptr;
  decltype(&::xmlFreeDoc) free_doc = nullptr;
  decltype(&::xmlGetLineNo) get_line_no = nullptr;
  decltype(&::xmlDocGetRootElement) doc_get_root_element = nullptr;
  decltype(&::xmlHasProp) has_prop = nullptr;
};

template <typename F>
void bind(const Libxml2& lib, const char* symbol, F& out, std::string& error) {
  out = reinterpret_cast<F>(dlsym(lib.handle, symbol));
  if (!out && error.empty()) error = lib.name + " has no " + symbol + " (not a libxml2 this plugin can use)";
}

// Loaded once per process, on first use; never unloaded (the plugin's own dlclose leaves it).
const Libxml2& libxml2() {
  static Libxml2 lib;
  static std::once_flag once;
  std::call_once(once, [] {
    auto opened = gpudirect::open_first_library(gpudirect::library_names(GPUDIRECT_LIBXML2_SONAME, kOtherSonames), RTLD_NOW | RTLD_LOCAL);
    if (!opened.handle) {
      lib.error = opened.error;
      return;
    }
    lib.handle = opened.handle;
    lib.name = opened.name;
    bind(lib, "xmlNewParserCtxt", lib.new_parser_ctxt, lib.error);
    bind(lib, "xmlFreeParserCtxt", lib.free_parser_ctxt, lib.error);
    bind(lib, "xmlCtxtReadMemory", lib.ctxt_read_memory, lib.error);
    bind(lib, "xmlCtxtGetLastError", lib.ctxt_get_last_error, lib.error);
    bind(lib, "xmlFreeDoc", lib.free_doc, lib.error);
    bind(lib, "xmlGetLineNo", lib.get_line_no, lib.error);
    bind(lib, "xmlDocGetRootElement", lib.doc_get_root_element, lib.error);
    bind(lib, "xmlHasProp", lib.has_prop, lib.error);
  });
  return lib;
}

// Every document and context comes from the library, so these never run without it.
const Libxml2& loaded() {
  const Libxml2& lib = libxml2();
  if (!lib.error.empty())
    throw gpudirect::TopologyError("gpudirect: reading a topology file needs libxml2, and " + lib.error +
                                   ": install libxml2's shared library on the node (the plugin was built against " GPUDIRECT_LIBXML2_SONAME
                                   "; Debian and Ubuntu ship libxml2.so.2 in the libxml2 package)");
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

// const xmlError* from libxml2 2.12, xmlErrorPtr before: whatever the header declares.
std::invoke_result_t<decltype(&::xmlCtxtGetLastError), void*> xmlCtxtGetLastError(void* context) {
  return loaded().ctxt_get_last_error(context);
}

void xmlFreeDoc(xmlDocPtr doc) {
  if (doc) libxml2().free_doc(doc);
}

long xmlGetLineNo(const xmlNode* node) { return loaded().get_line_no(node); }

xmlNodePtr xmlDocGetRootElement(const xmlDoc* doc) { return loaded().doc_get_root_element(doc); }

xmlAttrPtr xmlHasProp(const xmlNode* node, const xmlChar* name) { return loaded().has_prop(node, name); }

}  // extern "C"
