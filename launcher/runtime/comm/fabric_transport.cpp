#include "comm/fabric_transport.hpp"

#include "comm/cma_speed.hpp"
#include "comm/communicator.hpp"
#include "gpudirect/text.hpp"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <thread>
#include <vector>

namespace gpudirect::comm {
namespace {

using Clock = std::chrono::steady_clock;

// libfabric's shm provider names its region /dev/shm/PID:N:M and does not remove it when the
// process is killed; a later process that gets the same pid then fails fi_enable with EBUSY. A
// region named after our own pid belongs to no live process of this pid namespace: remove it.
void remove_stale_shm_regions_of_this_pid() {
  const std::string prefix = std::to_string(::getpid()) + ":";
  DIR* dir = ::opendir("/dev/shm");
  if (!dir) return;
  while (const dirent* entry = ::readdir(dir)) {
    struct stat info {};
    if (std::strncmp(entry->d_name, prefix.c_str(), prefix.size()) != 0) continue;
    if (::fstatat(::dirfd(dir), entry->d_name, &info, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(info.st_mode) &&
        info.st_uid == ::geteuid())
      ::unlinkat(::dirfd(dir), entry->d_name, 0);
  }
  ::closedir(dir);
}

std::string fi_error(const std::string& what, long rc) {
  return what + " failed: " + fi_strerror(static_cast<int>(-rc)) + " (" + std::to_string(rc) + ")";
}

void check(long rc, const std::string& what) {
  if (rc != 0) throw CommError("libfabric: " + fi_error(what, rc));
}

std::string to_hex(const std::vector<char>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    out += digits[(static_cast<unsigned char>(c) >> 4) & 0xf];
    out += digits[static_cast<unsigned char>(c) & 0xf];
  }
  return out;
}

std::vector<char> from_hex(const std::string& text) {
  std::vector<char> out;
  for (std::size_t i = 0; i + 1 < text.size(); i += 2) out.push_back(static_cast<char>(
        parse_integer<unsigned>(std::string_view(text).substr(i, 2), "libfabric address from the rendezvous store", 0, 255, 16)));
  return out;
}

struct Operation {
  fi_context2 context;  // first: libfabric hands it back in the completion
  bool done = false;
  int peer = -1;
};

// One libfabric endpoint and what it stands on, and the addresses of every rank's twin endpoint.
struct Endpoint {
  fi_info* info = nullptr;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_cq* cq = nullptr;
  fid_av* av = nullptr;
  fid_ep* ep = nullptr;
  std::vector<fi_addr_t> peers;

  Endpoint() = default;
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;
  ~Endpoint() {
    if (ep) fi_close(&ep->fid);
    if (av) fi_close(&av->fid);
    if (cq) fi_close(&cq->fid);
    if (domain) fi_close(&domain->fid);
    if (fabric) fi_close(&fabric->fid);
    if (info) fi_freeinfo(info);
  }
};

// What an endpoint is asked for: tagged messages always; one-sided reads of registered memory by
// virtual address; FI_HMEM (device memory), asked for on shm only for a side effect: libfabric's
// shm provider (1.17, smr_ep.c) turns CMA off for such an endpoint, so it moves large messages
// through shared memory (both sides copy at once) while another endpoint keeps CMA for reads.
struct EndpointCaps {
  bool reads = false;
  bool hmem = false;
};

class FabricTransport final : public Transport {
 public:
  FabricTransport(const bootstrap::LaunchContext& context, bootstrap::Store& store, const FabricOptions& options,
                  std::string* description)
      : rank_(context.rank), size_(context.size), timeout_(options.timeout), store_(store), abort_(store.abort_signal()) {
    hosts_ = store.all_gather("fabric/hosts", context.hostname);
    const auto& hosts = hosts_;
    const bool one_host = std::all_of(hosts.begin(), hosts.end(), [&](const std::string& h) { return h == hosts[0]; });
    std::string provider = options.provider;
    if (provider.empty() && std::getenv("FI_PROVIDER")) provider = std::getenv("FI_PROVIDER");
    if (provider.empty()) provider = one_host ? "shm" : "tcp;ofi_rxm";
    // The plugin's NIC for this task: libfabric's tcp provider reads FI_TCP_IFACE.
    std::string interface = options.interface;
    if (interface.empty() && std::getenv("FI_TCP_IFACE")) interface = std::getenv("FI_TCP_IFACE");
    if (interface.empty() && std::getenv("GPUDIRECT_NICS")) {
      const std::string nics = std::getenv("GPUDIRECT_NICS");
      interface = nics.substr(0, nics.find(','));
    }
    if (!interface.empty()) ::setenv("FI_TCP_IFACE", interface.c_str(), 1);

    // On shm, one-sided reads too: with FI_MR_VIRT_ADDR and no RMA ordering the provider does a
    // read as one process_vm_readv (CMA) from the caller's thread, so the collectives copy or reduce
    // straight from a peer's buffer. Where CMA copies much slower than memcpy (VMs), messages go
    // through shared memory instead (faster for the ring's many chunks) and a second endpoint keeps
    // CMA for the reads that save a whole copy (all_gather). GPUDIRECT_FABRIC_DIRECT_READS=0 turns
    // reads off (to compare).
    const char* direct = std::getenv("GPUDIRECT_FABRIC_DIRECT_READS");
    const Cma cma = provider == "shm" ? cma_use(store) : Cma::off;
    const bool want_reads = cma != Cma::off && !(direct && std::string(direct) == "0");
    if (provider == "shm") remove_stale_shm_regions_of_this_pid();  // before our first region exists
    if (cma == Cma::slow && open(messages_, provider, {.hmem = true}) == 0) {
      if (want_reads && open(reads_, provider, {.reads = true}) == 0) reader_ = reads_.get();
    } else if (want_reads && open(messages_, provider, {.reads = true}) == 0) {
      reader_ = messages_.get();  // CMA is fast, or this libfabric cannot keep it from messages
      reads_beat_messages_ = true;
    } else if (const int rc = open(messages_, provider, {}); rc != 0) {
      throw CommError("libfabric: no provider '" + provider + "' with RDM tagged messaging (" + fi_strerror(-rc) +
                      "); check `fi_info -p " + provider + "`, or set FI_PROVIDER");
    }
    max_message_ = std::min<std::size_t>(messages_->info->ep_attr->max_msg_size, std::size_t(4) << 20);
    if (const char* spin = std::getenv("GPUDIRECT_FABRIC_SPIN_US"))
      spin_ = std::chrono::microseconds(parse_integer<long>(spin, "GPUDIRECT_FABRIC_SPIN_US", 0, 1000000));
    learn_peers(*messages_, store, "fabric/names", provider);
    if (reads_) learn_peers(*reads_, store, "fabric/read-names", provider);
    if (description)
      *description = std::string("libfabric:") + messages_->info->fabric_attr->prov_name + (interface.empty() ? "" : " on " + interface);
  }

  ~FabricTransport() override {
    for (auto& [range, mr] : registered_) fi_close(&mr->fid);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  bool can_read_remote() const override { return reader_ != nullptr; }
  bool reads_beat_messages() const override { return reads_beat_messages_; }

  RemoteRegion expose(const void* data, std::size_t bytes) override {
    if (!broken_.empty()) throw CommError(broken_);
    const auto address = reinterpret_cast<std::uintptr_t>(data);
    auto it = registered_.find({address, bytes});
    if (it == registered_.end()) {
      // Buffers are reused call after call (training's buckets, bench's buffers): register once.
      // shm registers no pages (a read is CMA by virtual address), so a stale entry is harmless;
      // the bound only keeps a caller that never reuses a buffer from growing the table.
      if (registered_.size() >= 256) {
        for (auto& [range, mr] : registered_) fi_close(&mr->fid);
        registered_.clear();
      }
      fid_mr* mr = nullptr;
      // Where the provider does not pick keys, ours only need to be unique in this domain.
      const std::uint64_t key = (reader_->info->domain_attr->mr_mode & FI_MR_PROV_KEY) ? 0 : ++last_key_;
      check(fi_mr_reg(reader_->domain, data, bytes, FI_REMOTE_READ, 0, key, 0, &mr, nullptr), "fi_mr_reg");
      it = registered_.emplace(std::make_pair(address, bytes), mr).first;
    }
    return {(reader_->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ? address : 0, fi_mr_key(it->second)};
  }

  void read(int peer, const RemoteRegion& region, std::size_t offset, void* local, std::size_t bytes) override {
    if (!broken_.empty()) throw CommError(broken_);
    if (bytes == 0) return;
    try {
      ops_.assign(1, Operation{});
      ops_[0].peer = peer;
      post([&] { return fi_read(reader_->ep, local, bytes, nullptr, reader_->peers[static_cast<std::size_t>(peer)], region.address + offset, region.key, &ops_[0].context); },
           "fi_read", peer);
      wait_for_all();
    } catch (const CommError& e) {
      broken_ = e.what();
      throw;
    }
  }

  void exchange(int to, const void* send, std::size_t send_bytes, int from, void* recv, std::size_t recv_bytes,
                std::uint32_t tag) override {
    // After a failure the endpoint may still hold our earlier operations: never touch it again.
    if (!broken_.empty()) throw CommError(broken_);
    try {
      exchange_or_throw(to, send, send_bytes, from, recv, recv_bytes, tag);
    } catch (const CommError& e) {
      broken_ = e.what();
      throw;
    }
  }

 private:
  // How shm may use CMA (process_vm_readv). Unless FI_SHM_DISABLE_CMA says, every rank measures
  // CMA against memcpy (cma_speed.hpp) and all decide alike: fast, use it for everything; slow
  // (a VM: 4-6 GB/s against memcpy's 17), only for reads; not permitted (ptrace rules, some
  // containers), off, so the provider does not try. Must run before the first fi_getinfo of the
  // process: the provider reads FI_SHM_DISABLE_CMA then.
  enum class Cma { off, slow, fast };
  static Cma cma_use(bootstrap::Store& store) {
    if (const char* set = std::getenv("FI_SHM_DISABLE_CMA")) {
      const std::string value = set;
      return value == "1" || value == "yes" || value == "true" || value == "on" ? Cma::off : Cma::fast;
    }
    char mine[32];
    std::snprintf(mine, sizeof mine, "%.3f", cma_speed_relative_to_memcpy());
    const auto all = store.all_gather("fabric/cma", mine);
    double slowest = 1e9;
    for (const std::string& speed : all) slowest = std::min(slowest, std::strtod(speed.c_str(), nullptr));
    if (slowest >= kCmaWorthIt) return Cma::fast;
    if (slowest > 0) return Cma::slow;
    ::setenv("FI_SHM_DISABLE_CMA", "1", 1);
    return Cma::off;
  }
  static constexpr double kCmaWorthIt = 0.6;  // below: two copies in parallel through shared memory win for messages

  // Opens an RDM endpoint with tagged messages (and what `caps` asks) into `slot`; 0, or the
  // fi_getinfo error with `slot` empty.
  int open(std::unique_ptr<Endpoint>& slot, const std::string& provider, EndpointCaps caps) {
    slot = std::make_unique<Endpoint>();
    Endpoint& endpoint = *slot;
    fi_info* hints = fi_allocinfo();
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_TAGGED | (caps.reads ? FI_RMA | FI_READ | FI_REMOTE_READ : 0) | (caps.hmem ? FI_HMEM : 0);
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->domain_attr->mr_mode = (caps.reads ? FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED : 0) | (caps.hmem ? FI_MR_HMEM : 0);
    hints->fabric_attr->prov_name = ::strdup(provider.c_str());
    const int rc = fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &endpoint.info);
    fi_freeinfo(hints);
    if (rc != 0) {
      slot.reset();
      return rc;
    }
    check(fi_fabric(endpoint.info->fabric_attr, &endpoint.fabric, nullptr), "fi_fabric");
    check(fi_domain(endpoint.fabric, endpoint.info, &endpoint.domain, nullptr), "fi_domain");
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.size = 4096;
    check(fi_cq_open(endpoint.domain, &cq_attr, &endpoint.cq, nullptr), "fi_cq_open");
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    check(fi_av_open(endpoint.domain, &av_attr, &endpoint.av, nullptr), "fi_av_open");
    check(fi_endpoint(endpoint.domain, endpoint.info, &endpoint.ep, nullptr), "fi_endpoint");
    check(fi_ep_bind(endpoint.ep, &endpoint.cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)");
    check(fi_ep_bind(endpoint.ep, &endpoint.av->fid, 0), "fi_ep_bind(av)");
    check(fi_enable(endpoint.ep), "fi_enable");
    return 0;
  }

  // Every rank's address of its twin of `endpoint`, through the rendezvous store.
  void learn_peers(Endpoint& endpoint, bootstrap::Store& store, const std::string& key, const std::string& provider) {
    std::vector<char> name(256);
    std::size_t length = name.size();
    check(fi_getname(&endpoint.ep->fid, name.data(), &length), "fi_getname");
    name.resize(length);
    const auto names = store.all_gather(key, to_hex(name));
    endpoint.peers.resize(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r) {
      const auto address = from_hex(names[static_cast<std::size_t>(r)]);
      if (fi_av_insert(endpoint.av, address.data(), 1, &endpoint.peers[static_cast<std::size_t>(r)], 0, nullptr) != 1)
        throw CommError("libfabric: cannot insert the address of rank " + std::to_string(r) + " (provider " + provider + ")");
    }
  }

  std::string who(int rank) const {
    const auto r = static_cast<std::size_t>(rank);
    return "rank " + std::to_string(rank) + " on " + (r < hosts_.size() ? hosts_[r] : std::string("?"));
  }

  std::string unreachable(int peer) const {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f", static_cast<double>(timeout_.count()) / 1000.0);
    return who(peer) + " is unreachable from " + who(rank_) + ": no progress for " + seconds +
           " s (--timeout); a link is down or the peer is stuck";
  }

  // A failure this rank saw first: tell every rank (so they stop too, with this message), unless
  // the job is already aborting for a reason that explains ours (a dead peer closes its links).
  [[noreturn]] void fail(const std::string& message, bool timeout) {
    if (!timeout)
      for (int i = 0; i < 100 && !abort_->raised(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (abort_->raised()) throw CommError(abort_->message());
    store_.abort(message);
    if (timeout) throw CommTimeout(message);
    throw CommError(message);
  }

  void exchange_or_throw(int to, const void* send, std::size_t send_bytes, int from, void* recv, std::size_t recv_bytes,
                         std::uint32_t tag) {
    const std::size_t send_chunks = to >= 0 && send_bytes ? (send_bytes + max_message_ - 1) / max_message_ : 0;
    const std::size_t recv_chunks = from >= 0 && recv_bytes ? (recv_bytes + max_message_ - 1) / max_message_ : 0;
    // Reused call after call: no allocation per exchange (the vector only grows).
    ops_.assign(send_chunks + recv_chunks, Operation{});
    std::size_t op = 0;
    // Receives first, so a peer's early send finds its buffer.
    for (std::size_t c = 0; c < recv_chunks; ++c, ++op) {
      char* base = static_cast<char*>(recv) + c * max_message_;
      const std::size_t bytes = std::min(max_message_, recv_bytes - c * max_message_);
      ops_[op].peer = from;
      post([&] { return fi_trecv(messages_->ep, base, bytes, nullptr, messages_->peers[static_cast<std::size_t>(from)], full_tag(tag, from, c), 0, &ops_[op].context); },
           "fi_trecv", from);
    }
    for (std::size_t c = 0; c < send_chunks; ++c, ++op) {
      const char* base = static_cast<const char*>(send) + c * max_message_;
      const std::size_t bytes = std::min(max_message_, send_bytes - c * max_message_);
      ops_[op].peer = to;
      post([&] { return fi_tsend(messages_->ep, base, bytes, nullptr, messages_->peers[static_cast<std::size_t>(to)], full_tag(tag, rank_, c), &ops_[op].context); },
           "fi_tsend", to);
    }
    wait_for_all();
  }

  // Progresses until every operation in ops_ completed. Spins for spin_ after the last progress
  // (a peer on another core answers within microseconds), then yields the core on every empty
  // poll: ranks often outnumber cores, and a spinning rank would starve the peer it waits for.
  void wait_for_all() {
    std::size_t outstanding = static_cast<std::size_t>(std::count_if(ops_.begin(), ops_.end(), [](const Operation& o) { return !o.done; }));
    auto last_progress = Clock::now();
    while (outstanding > 0) {
      if (abort_->raised()) throw CommError(abort_->message());
      const std::size_t done = progress();
      if (done > 0) {
        last_progress = Clock::now();
        outstanding = static_cast<std::size_t>(std::count_if(ops_.begin(), ops_.end(), [](const Operation& o) { return !o.done; }));
        continue;
      }
      const auto idle = Clock::now() - last_progress;
      if (idle > timeout_) {
        // Name the peer we still wait for: the receive side first (the sender may be fine).
        const auto waiting = std::find_if(ops_.begin(), ops_.end(), [](const Operation& o) { return !o.done; });
        fail(unreachable(waiting->peer), true);
      }
      if (idle >= spin_) sched_yield();
    }
  }

  // tag bits: user tag (32) | source rank (20) | chunk (12)
  static std::uint64_t full_tag(std::uint32_t tag, int source, std::size_t chunk) {
    return (static_cast<std::uint64_t>(tag) << 32) | (static_cast<std::uint64_t>(source & 0xfffff) << 12) | (chunk & 0xfff);
  }

  template <typename Post>
  void post(Post attempt, const char* what, int peer) {
    const auto start = Clock::now();
    for (;;) {
      const ssize_t rc = attempt();
      if (rc == 0) return;
      if (rc != -FI_EAGAIN) fail(who(peer) + ": " + fi_error(std::string(what) + " from " + who(rank_), rc), false);
      if (abort_->raised()) throw CommError(abort_->message());
      if (progress() > 0) continue;
      const auto idle = Clock::now() - start;
      if (idle > timeout_) fail(unreachable(peer) + " (send queue full)", true);
      // Full queue (shm allows one segmented send per peer at a time): the peer must run to drain
      // it, and may share our core.
      if (idle >= spin_) sched_yield();
    }
  }

  // Completions of this rank's operations. Both endpoints are polled: a peer's first contact with
  // an endpoint waits until this rank's provider answers it, whichever endpoint we wait on now.
  std::size_t progress() {
    std::size_t done = progress(*messages_);
    if (reads_) done += progress(*reads_);
    return done;
  }

  std::size_t progress(Endpoint& endpoint) {
    fi_cq_tagged_entry entries[64];
    const ssize_t n = fi_cq_read(endpoint.cq, entries, 64);
    if (n > 0) {
      for (ssize_t i = 0; i < n; ++i) reinterpret_cast<Operation*>(entries[i].op_context)->done = true;
      return static_cast<std::size_t>(n);
    }
    if (n == -FI_EAGAIN) return 0;
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry error{};
      fi_cq_readerr(endpoint.cq, &error, 0);
      const int peer = error.op_context ? reinterpret_cast<Operation*>(error.op_context)->peer : -1;
      fail((peer >= 0 ? who(peer) : std::string("a peer")) + ": a transfer with it from " + who(rank_) + " failed: " +
               fi_cq_strerror(endpoint.cq, error.prov_errno, error.err_data, nullptr, 0) + " (" + fi_strerror(error.err) + ")",
           false);
    }
    throw CommError("libfabric: " + fi_error("fi_cq_read", n));
  }

  int rank_, size_;
  std::chrono::milliseconds timeout_;
  bootstrap::Store& store_;  // outlives the transport (the session owns it)
  std::shared_ptr<bootstrap::AbortSignal> abort_;
  std::vector<std::string> hosts_;
  std::string broken_;
  std::unique_ptr<Endpoint> messages_;  // tagged messages (and reads, where CMA is fast)
  std::unique_ptr<Endpoint> reads_;     // reads only, where CMA is slow for messages
  Endpoint* reader_ = nullptr;          // the endpoint that reads, if any
  bool reads_beat_messages_ = false;
  std::size_t max_message_ = 0;
  std::vector<Operation> ops_;  // the operations of the exchange or read in progress
  std::map<std::pair<std::uintptr_t, std::size_t>, fid_mr*> registered_;  // expose()'s cache
  std::uint64_t last_key_ = 0;
  std::chrono::microseconds spin_{0};
};

}  // namespace

std::unique_ptr<Transport> make_fabric_transport(const bootstrap::LaunchContext& context, bootstrap::Store& store,
                                                 const FabricOptions& options, std::string* description) {
  return std::make_unique<FabricTransport>(context, store, options, description);
}

}  // namespace gpudirect::comm
