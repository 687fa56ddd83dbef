#include "comm/transport/fabric_transport.hpp"

#include "comm/communicator.hpp"
#include "comm/transport/cma_speed.hpp"
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
#include <functional>
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
    if (::fstatat(::dirfd(dir), entry->d_name, &info, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(info.st_mode) && info.st_uid == ::geteuid())
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
  for (std::size_t i = 0; i + 1 < text.size(); i += 2)
    out.push_back(static_cast<char>(
        parse_integer<unsigned>(std::string_view(text).substr(i, 2), "libfabric address from the rendezvous store", 0, 255, 16)));
  return out;
}

struct Operation {
  fi_context2 context;  // first: libfabric hands it back in the completion
  bool done = false;
  int peer = -1;
};

// fi_getinfo's hints for RDM tagged messages on `provider` (and RMA reads of virtual addresses,
// when `reads`). The caller frees them.
fi_info* tagged_rdm_hints(const std::string& provider, bool reads) {
  fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_TAGGED | (reads ? FI_RMA | FI_READ | FI_REMOTE_READ : 0);
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  hints->domain_attr->mr_mode = reads ? FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED : 0;
  hints->fabric_attr->prov_name = ::strdup(provider.c_str());
  return hints;
}

// One libfabric endpoint and what it needs: a provider's fabric, domain, completion queue and
// address table.
struct Link {
  fi_info* info = nullptr;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_cq* cq = nullptr;
  fid_av* av = nullptr;
  fid_ep* ep = nullptr;
  int status = 0;  // fi_getinfo's answer, when open() found no provider

  // false (status set) where `provider` offers no RDM tagged messaging (with RMA reads of virtual
  // addresses, when `reads`); throws CommError where it does but the endpoint cannot be made.
  bool open(const std::string& provider, bool reads) {
    fi_info* hints = tagged_rdm_hints(provider, reads);
    status = fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &info);
    fi_freeinfo(hints);
    if (status != 0) {
      info = nullptr;
      return false;
    }
    check(fi_fabric(info->fabric_attr, &fabric, nullptr), "fi_fabric");
    check(fi_domain(fabric, info, &domain, nullptr), "fi_domain");
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.size = 4096;
    check(fi_cq_open(domain, &cq_attr, &cq, nullptr), "fi_cq_open");
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    check(fi_av_open(domain, &av_attr, &av, nullptr), "fi_av_open");
    if (provider == "shm") remove_stale_shm_regions_of_this_pid();
    check(fi_endpoint(domain, info, &ep, nullptr), "fi_endpoint");
    check(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)");
    check(fi_ep_bind(ep, &av->fid, 0), "fi_ep_bind(av)");
    check(fi_enable(ep), "fi_enable");
    return true;
  }

  std::string provider() const { return info->fabric_attr->prov_name; }

  std::vector<char> name() const {
    std::vector<char> bytes(256);
    std::size_t length = bytes.size();
    check(fi_getname(&ep->fid, bytes.data(), &length), "fi_getname");
    bytes.resize(length);
    return bytes;
  }

  void close() {
    if (ep) fi_close(&ep->fid);
    if (av) fi_close(&av->fid);
    if (cq) fi_close(&cq->fid);
    if (domain) fi_close(&domain->fid);
    if (fabric) fi_close(&fabric->fid);
    if (info) fi_freeinfo(info);
    *this = Link{};
  }
};

class FabricTransport final : public Transport {
 public:
  FabricTransport(const bootstrap::LaunchContext& context, bootstrap::Store& store, const FabricOptions& options, std::string* description)
      : rank_(context.rank), size_(context.size), timeout_(options.timeout), store_(store), abort_(store.abort_signal()) {
    hosts_ = store.all_gather("fabric/hosts", context.hostname);
    const auto& hosts = hosts_;
    const bool one_host = std::all_of(hosts.begin(), hosts.end(), [&](const std::string& h) { return h == hosts[0]; });
    std::string provider = options.provider;
    if (provider.empty() && std::getenv("FI_PROVIDER")) provider = std::getenv("FI_PROVIDER");
    // The plugin's NIC for this task: libfabric's tcp provider reads FI_TCP_IFACE, net FI_NET_IFACE.
    std::string interface = options.interface;
    if (interface.empty() && std::getenv("FI_TCP_IFACE")) interface = std::getenv("FI_TCP_IFACE");
    if (interface.empty() && std::getenv("GPUDIRECT_NICS")) {
      const std::string nics = std::getenv("GPUDIRECT_NICS");
      interface = nics.substr(0, nics.find(','));
    }
    if (!interface.empty()) {
      ::setenv("FI_TCP_IFACE", interface.c_str(), 1);
      ::setenv("FI_NET_IFACE", interface.c_str(), 1);
    }
    // Ranks that share a host in a job across hosts talk over shared memory (shm), not through
    // the network stack's loopback, unless FI_PROVIDER names one provider for all or
    // GPUDIRECT_FABRIC_LOCAL_SHM=0. Decided from the host list, so every rank decides alike.
    const char* local_shm = std::getenv("GPUDIRECT_FABRIC_LOCAL_SHM");
    const bool host_shared =
        std::any_of(hosts.begin(), hosts.end(), [&](const std::string& h) { return std::count(hosts.begin(), hosts.end(), h) > 1; });
    const bool two_links = provider.empty() && !one_host && host_shared && !(local_shm && std::string(local_shm) == "0");
    if (provider.empty() && one_host) provider = "shm";

    // On shm, one-sided reads too: with FI_MR_VIRT_ADDR and no RMA ordering the provider does a
    // read as one process_vm_readv (CMA) from the caller's thread, so the collectives reduce
    // straight from a peer's buffer. GPUDIRECT_FABRIC_DIRECT_READS=0 turns them off (to compare).
    const char* direct = std::getenv("GPUDIRECT_FABRIC_DIRECT_READS");
    // Before any fi_getinfo of the process (shm reads its parameters then).
    const bool cma = (provider == "shm" || two_links) && use_cma(store);
    // Across hosts: net, where this libfabric has it, is RDM straight over its sockets; rxm over
    // tcp adds a rendezvous round trip and copies, and is slower (docs/performance.md).
    if (provider.empty()) provider = provider_offered("net") ? "net" : "tcp;ofi_rxm";
    // shm: the caller's thread does the copies. GPUDIRECT_FABRIC_PIECES=0: one round trip per piece (to compare).
    const char* pieces = std::getenv("GPUDIRECT_FABRIC_PIECES");
    overlaps_ = provider != "shm" && !(pieces && std::string(pieces) == "0");
    // Reads only where every peer is on one shm link (the algorithms read from any peer).
    const bool want_reads = cma && !two_links && !(direct && std::string(direct) == "0");
    links_.push_back(std::make_unique<Link>());
    remote_reads_ = want_reads && links_[0]->open(provider, true);
    if (!remote_reads_ && !links_[0]->open(provider, false))
      throw CommError("libfabric: no provider '" + provider + "' with RDM tagged messaging (" + fi_strerror(-links_[0]->status) +
                      "); check `fi_info -p " + provider + "`, or set FI_PROVIDER");
    if (two_links) {
      links_.push_back(std::make_unique<Link>());
      if (!links_[1]->open("shm", false))
        throw CommError(std::string("libfabric: no shm provider for the ranks of one host (") + fi_strerror(-links_[1]->status) +
                        "); set GPUDIRECT_FABRIC_LOCAL_SHM=0 to use " + provider + " between them too");
    }
    max_message_ = std::size_t(4) << 20;
    for (const auto& link : links_) max_message_ = std::min<std::size_t>(max_message_, link->info->ep_attr->max_msg_size);
    if (const char* spin = std::getenv("GPUDIRECT_FABRIC_SPIN_US"))
      spin_ = std::chrono::microseconds(parse_integer<long>(spin, "GPUDIRECT_FABRIC_SPIN_US", 0, 1000000));

    // Every rank must speak the same provider (one libfabric without net among the hosts would
    // otherwise leave the others waiting for connections it cannot make): each link's provider
    // goes with its address ("net HEX shm HEX").
    std::string mine;
    for (const auto& link : links_) mine += (mine.empty() ? "" : " ") + link->provider() + " " + to_hex(link->name());
    const auto names = store.all_gather("fabric/names", mine);
    peers_.resize(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r) {
      const auto fields = split(names[static_cast<std::size_t>(r)], ' ');
      const bool local = two_links && hosts_[static_cast<std::size_t>(r)] == hosts_[static_cast<std::size_t>(rank_)];
      const std::size_t which = local ? 1 : 0;
      if (fields.size() < 2 * (which + 1) || fields[2 * which] != links_[which]->provider()) {
        // The lower rank named first: whichever of the two reports, the message is the same.
        const std::string theirs(fields.size() > 2 * which ? fields[2 * which] : "?"), ours = links_[which]->provider();
        const bool they_first = r < rank_;
        throw CommError("libfabric: " + who(they_first ? r : rank_) + " uses provider " + (they_first ? theirs : ours) + ", " +
                        who(they_first ? rank_ : r) + " uses " + (they_first ? ours : theirs) +
                        " (different libfabric installs?); set the same FI_PROVIDER for every rank");
      }
      const auto address = from_hex(std::string(fields[2 * which + 1]));
      Peer& peer = peers_[static_cast<std::size_t>(r)];
      peer.link = links_[which].get();
      if (fi_av_insert(peer.link->av, address.data(), 1, &peer.address, 0, nullptr) != 1)
        throw CommError("libfabric: cannot insert the address of rank " + std::to_string(r) + " (provider " + peer.link->provider() + ")");
    }
    if (description)
      *description = "libfabric:" + links_[0]->provider() + (two_links ? "+shm" : "") + (interface.empty() ? "" : " on " + interface);
  }

  ~FabricTransport() override {
    // After a failed transfer the endpoint may still hold our operations (into buffers that are
    // gone by now), and libfabric 1.17's rxm crashed closing it and its address vector (SIGSEGV in
    // fi_close, seen in test_rank_failure.sh when a link went down): leave them to the process's
    // exit, which follows a failure; a crash would replace the one-line report.
    if (!broken_.empty()) return;
    for (auto& [range, mr] : registered_) fi_close(&mr->fid);
    for (auto& link : links_) link->close();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::vector<std::string> hosts() const override { return hosts_; }

  bool can_read_remote() const override { return remote_reads_; }
  bool overlaps_transfers() const override { return overlaps_; }

  void exchange_pieces(int to, const void* send, std::size_t send_bytes, int from, void* recv, std::size_t recv_bytes, std::uint32_t tag,
                       std::size_t piece_bytes, const std::function<void(std::size_t, std::size_t)>& received) override {
    if (!broken_.empty()) throw CommError(broken_);
    auto pieces = [&](int peer, std::size_t bytes) { return peer >= 0 && bytes ? (bytes + piece_bytes - 1) / piece_bytes : 0; };
    const std::size_t recv_pieces = piece_bytes ? pieces(from, recv_bytes) : 0, send_pieces = piece_bytes ? pieces(to, send_bytes) : 0;
    if (!overlaps_ || piece_bytes == 0 || recv_pieces > kMaxPieces || send_pieces > kMaxPieces)
      throw std::logic_error("libfabric: an exchange in " + std::to_string(piece_bytes) + "-byte pieces is not possible here");
    if (piece_bytes > max_message_) {  // pieces larger than a message (blocks past 1 GiB): one exchange, then the pieces
      exchange(to, send, send_bytes, from, recv, recv_bytes, tag);
      for (std::size_t at = 0; at < recv_bytes && from >= 0; at += piece_bytes) received(at, std::min(piece_bytes, recv_bytes - at));
      return;
    }
    try {
      post_in_pieces(to, send, send_bytes, from, recv, recv_bytes, tag, piece_bytes);
      std::size_t delivered = 0;  // pieces handed to `received`, in order
      wait_for_all([&] {
        for (; delivered < recv_pieces && ops_[delivered].done; ++delivered)
          received(delivered * piece_bytes, std::min(piece_bytes, recv_bytes - delivered * piece_bytes));
      });
    } catch (const CommError& e) {
      broken_ = e.what();
      throw;
    }
  }

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
      const Link& link = *links_[0];  // reads only with one link
      const std::uint64_t key = (link.info->domain_attr->mr_mode & FI_MR_PROV_KEY) ? 0 : ++last_key_;
      check(fi_mr_reg(link.domain, data, bytes, FI_REMOTE_READ, 0, key, 0, &mr, nullptr), "fi_mr_reg");
      it = registered_.emplace(std::make_pair(address, bytes), mr).first;
    }
    return {(links_[0]->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ? address : 0, fi_mr_key(it->second)};
  }

  void read(int peer, const RemoteRegion& region, std::size_t offset, void* local, std::size_t bytes) override {
    if (!broken_.empty()) throw CommError(broken_);
    if (bytes == 0) return;
    try {
      ops_.assign(1, Operation{});
      ops_[0].peer = peer;
      post([&] { return fi_read(ep(peer), local, bytes, nullptr, address(peer), region.address + offset, region.key, &ops_[0].context); },
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
  // Whether shm moves large messages with CMA. Unless FI_SHM_DISABLE_CMA says, every rank measures
  // CMA against memcpy (cma_speed.hpp) and all turn it off together where it is much slower (the
  // provider then copies through shared memory, both sides at once). Must run before the first
  // fi_getinfo of the process: the provider reads its parameters then.
  static bool use_cma(bootstrap::Store& store) {
    if (const char* set = std::getenv("FI_SHM_DISABLE_CMA")) {
      const std::string value = set;
      return !(value == "1" || value == "yes" || value == "true" || value == "on");
    }
    char mine[32];
    std::snprintf(mine, sizeof mine, "%.3f", cma_speed_relative_to_memcpy());
    const auto all = store.all_gather("fabric/cma", mine);
    const double slowest = std::strtod(std::min_element(all.begin(), all.end(),
                                                        [](const std::string& a, const std::string& b) {
                                                          return std::strtod(a.c_str(), nullptr) < std::strtod(b.c_str(), nullptr);
                                                        })
                                           ->c_str(),
                                       nullptr);
    if (slowest >= kCmaWorthIt) return true;
    ::setenv("FI_SHM_DISABLE_CMA", "1", 1);
    return false;
  }
  static constexpr double kCmaWorthIt = 0.6;  // below: two copies in parallel through shared memory win

  // fi_getinfo for RDM tagged messages (and RMA reads on virtual addresses, when `reads`).
  static bool provider_offered(const std::string& provider) {
    fi_info* hints = tagged_rdm_hints(provider, false);
    fi_info* found = nullptr;
    const int rc = fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &found);
    fi_freeinfo(hints);
    if (found) fi_freeinfo(found);
    return rc == 0;
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
    post_in_pieces(to, send, send_bytes, from, recv, recv_bytes, tag, max_message_);
    wait_for_all();
  }

  // Posts the receive from `from` and the send to `to` as messages of at most `piece` bytes (the
  // chunk number in the tag), the receives first so a peer's early send finds its buffer; ops_
  // holds the receives, in order, then the sends. Reused call after call: no allocation per
  // exchange (the vector only grows).
  void post_in_pieces(int to, const void* send, std::size_t send_bytes, int from, void* recv, std::size_t recv_bytes, std::uint32_t tag,
                      std::size_t piece) {
    const std::size_t send_pieces = to >= 0 && send_bytes ? (send_bytes + piece - 1) / piece : 0;
    const std::size_t recv_pieces = from >= 0 && recv_bytes ? (recv_bytes + piece - 1) / piece : 0;
    ops_.assign(recv_pieces + send_pieces, Operation{});
    for (std::size_t c = 0; c < recv_pieces; ++c) {
      char* base = static_cast<char*>(recv) + c * piece;
      const std::size_t bytes = std::min(piece, recv_bytes - c * piece);
      ops_[c].peer = from;
      post([&] { return fi_trecv(ep(from), base, bytes, nullptr, address(from), full_tag(tag, from, c), 0, &ops_[c].context); }, "fi_trecv",
           from);
    }
    for (std::size_t c = 0; c < send_pieces; ++c) {
      const char* base = static_cast<const char*>(send) + c * piece;
      const std::size_t bytes = std::min(piece, send_bytes - c * piece);
      Operation& op = ops_[recv_pieces + c];
      op.peer = to;
      post([&] { return fi_tsend(ep(to), base, bytes, nullptr, address(to), full_tag(tag, rank_, c), &op.context); }, "fi_tsend", to);
    }
  }

  // Progresses until every operation in ops_ completed. Spins for spin_ after the last progress
  // (a peer on another core answers within microseconds), then yields the core on every empty
  // poll: ranks often outnumber cores, and a spinning rank would starve the peer it waits for.
  // `progressed` runs after every completion seen (and once first): exchange_pieces hands over
  // the pieces that arrived.
  void wait_for_all(const std::function<void()>& progressed = {}) {
    if (progressed) progressed();
    std::size_t outstanding = static_cast<std::size_t>(std::count_if(ops_.begin(), ops_.end(), [](const Operation& o) { return !o.done; }));
    auto last_progress = Clock::now();
    while (outstanding > 0) {
      if (abort_->raised()) throw CommError(abort_->message());
      const std::size_t done = progress();
      if (done > 0) {
        if (progressed) progressed();
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

  std::size_t progress() {
    std::size_t done = 0;
    for (const auto& link : links_) done += progress(*link);
    return done;
  }

  std::size_t progress(const Link& link) {
    fi_cq_tagged_entry entries[64];
    const ssize_t n = fi_cq_read(link.cq, entries, 64);
    if (n > 0) {
      for (ssize_t i = 0; i < n; ++i) reinterpret_cast<Operation*>(entries[i].op_context)->done = true;
      return static_cast<std::size_t>(n);
    }
    if (n == -FI_EAGAIN) return 0;
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry error{};
      fi_cq_readerr(link.cq, &error, 0);
      const int peer = error.op_context ? reinterpret_cast<Operation*>(error.op_context)->peer : -1;
      fail((peer >= 0 ? who(peer) : std::string("a peer")) + ": a transfer with it from " + who(rank_) +
               " failed: " + fi_cq_strerror(link.cq, error.prov_errno, error.err_data, nullptr, 0) + " (" + fi_strerror(error.err) + ")",
           false);
    }
    throw CommError("libfabric: " + fi_error("fi_cq_read", n));
  }

  fid_ep* ep(int peer) const { return peers_[static_cast<std::size_t>(peer)].link->ep; }
  fi_addr_t address(int peer) const { return peers_[static_cast<std::size_t>(peer)].address; }

  int rank_, size_;
  std::chrono::milliseconds timeout_;
  bootstrap::Store& store_;  // outlives the transport (the session owns it)
  std::shared_ptr<bootstrap::AbortSignal> abort_;
  std::vector<std::string> hosts_;
  std::string broken_;
  std::vector<std::unique_ptr<Link>> links_;  // [0] the job's provider; [1] shm for this host's ranks, in a job across hosts
  struct Peer {
    Link* link = nullptr;
    fi_addr_t address = 0;
  };
  std::vector<Peer> peers_;
  std::size_t max_message_ = 0;
  std::vector<Operation> ops_;  // the operations of the exchange or read in progress
  bool remote_reads_ = false;
  bool overlaps_ = false;
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
