// Rings: each rank owns one broadcast ring (all_gather's blocks and all_reduce's results, read by
// every other rank) and one ring per peer (its input chunks of that peer's block, read by that peer
// only). A ring is a count of chunks written, a count read by each reader, and `slots` slots of
// `chunk_bytes`: the writer reuses a slot when every reader has moved past it. The counts only grow,
// call after call, and every rank walks the same chunks in the same order, so no call needs a barrier:
// a rank may start the next call while its peers finish this one.
//
// A chunk of input goes into a slot (it stays in cache), the block's owner reduces all ranks' slots
// with its own input in one pass and writes the result once into its output and once into a slot,
// and every other rank copies it out.
//
// Direct reads (where buffers lie in memory from Communicator::allocate, peer_readable_buffers.hpp):
// a rank first writes where its buffers lie into its broadcast ring. all_gather: its peers copy its
// block straight from its buffer, block by block (the others' chunks still come through the slots).
// all_reduce and reduce_scatter, where every rank's buffers can be read so: each owner reduces its
// block from the peers' inputs where they lie, chunk by chunk, into its output, and counts each chunk
// in its ring without a slot; the peers copy the result from its output. A peer marks the
// announcement read once it is done with that rank's buffers, and a rank returns once every peer
// has: its buffers are the caller's again. Otherwise nobody reads a rank's own buffers but the rank
// itself, and the caller may reuse them as soon as the call returns.
#include "comm/shm/staged_collectives.hpp"

#include "comm/block_offsets.hpp"
#include "comm/reduce_kernels.hpp"
#include "comm/shm/cpu_relax.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace gpudirect::comm {
namespace {

constexpr std::size_t kCacheLine = 64;
constexpr std::size_t kPage = 4096;
constexpr std::size_t kMinChunkBytes = 16 * 1024;

std::size_t round_up(std::size_t value, std::size_t to) { return (value + to - 1) / to * to; }

std::uint64_t load(const std::uint64_t* count) {
  return std::atomic_ref<std::uint64_t>(*const_cast<std::uint64_t*>(count)).load(std::memory_order_acquire);
}
void store(std::uint64_t* count, std::uint64_t value) { std::atomic_ref<std::uint64_t>(*count).store(value, std::memory_order_release); }

std::size_t chunks_of(std::size_t elements, std::size_t per_chunk) { return (elements + per_chunk - 1) / per_chunk; }

// What a call with direct reads puts first in a rank's broadcast ring: where its buffers lie (an fd
// of -1: they do not lie in shareable memory). all_gather announces its input block alone.
struct BuffersPlace {
  SharedLocation input;
  SharedLocation output;  // all_reduce only: the peers copy the owner's results from it
};
static_assert(sizeof(BuffersPlace) <= 64, "an announcement fits the smallest slot");

bool readable(const SharedLocation& where) { return where.fd >= 0; }

}  // namespace

StagingLayout StagingLayout::for_ranks(int ranks, std::size_t budget, std::size_t chunk_bytes) {
  if (ranks < 1) throw std::invalid_argument("staging needs at least one rank");
  if (chunk_bytes == 0 || chunk_bytes % kCacheLine != 0)
    throw std::invalid_argument("staging slots of " + std::to_string(chunk_bytes) + " bytes: not a multiple of 64");
  StagingLayout layout;
  layout.ranks = ranks;
  layout.chunk_bytes = chunk_bytes;
  // Rings multiply as ranks squared: first fewer slots (four still keep the pipeline full), then
  // smaller slots (down to 16 KiB), then two slots.
  while (layout.bytes() > budget) {
    if (layout.slots > 4)
      layout.slots /= 2;
    else if (layout.chunk_bytes > kMinChunkBytes && layout.chunk_bytes % 128 == 0)
      layout.chunk_bytes /= 2;
    else if (layout.slots > 2)
      layout.slots /= 2;
    else
      break;
  }
  if (layout.bytes() > budget)
    throw std::invalid_argument(std::to_string(ranks) + " ranks on one host need " + std::to_string(layout.bytes() >> 20) +
                                " MiB of shared memory for staging, more than " + std::to_string(budget >> 20) + " MiB");
  return layout;
}

std::size_t StagingLayout::peer_ring(int writer, int reader) const {
  const auto n = static_cast<std::size_t>(ranks);
  return n + static_cast<std::size_t>(writer) * (n - 1) + static_cast<std::size_t>(reader < writer ? reader : reader - 1);
}

std::vector<std::pair<std::size_t, std::size_t>> StagingLayout::ranges_used_by(int rank) const {
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  auto add = [&](std::size_t ring) { ranges.emplace_back(ring * ring_bytes(), ring_bytes()); };
  for (int other = 0; other < ranks; ++other) {
    add(broadcast_ring(other));
    if (other == rank) continue;
    add(peer_ring(rank, other));
    add(peer_ring(other, rank));
  }
  return ranges;
}

std::size_t StagingLayout::header_bytes() const { return round_up(kCacheLine * (1 + static_cast<std::size_t>(ranks)), kPage); }

// One call's wait for its peers: a turn that moved nothing yields the core (ranks may outnumber
// cores, and the peer we wait for may need ours); no progress for the timeout fails the call.
class StagedCollectives::Progress {
 public:
  Progress(const StagedCollectives& owner, const char* call) : owner_(owner), call_(call), since_(Clock::now()) {}

  void moved() { since_ = Clock::now(); }
  // `waiting_for`: a rank whose chunk (or whose room to write) this rank needs.
  void idle(int waiting_for) {
    const auto& wait = owner_.wait_;
    if (wait.abort && wait.abort->raised()) throw CommError(wait.abort->message());
    if (Clock::now() - since_ > wait.timeout) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%.1f", static_cast<double>(wait.timeout.count()) / 1000.0);
      const std::string who = waiting_for >= 0 ? "rank " + std::to_string(waiting_for) : std::string("a rank");
      const std::string message = who + " on " + wait.host + " made no progress for " + seconds + " s (--timeout) in " + call_ +
                                  " over shared memory, seen from rank " + std::to_string(owner_.rank_) +
                                  ": it is stuck, or called a different collective";
      if (wait.abort && wait.abort->raised()) throw CommError(wait.abort->message());
      if (wait.on_failure) wait.on_failure(message);
      throw CommTimeout(message);
    }
    if (Clock::now() - since_ < wait.spin) {
      cpu_relax();
      return;
    }
    sched_yield();
  }

 private:
  using Clock = std::chrono::steady_clock;
  const StagedCollectives& owner_;
  const char* call_;
  Clock::time_point since_;
};

StagedCollectives::StagedCollectives(void* memory, StagingLayout layout, int rank, StagingWait wait, std::optional<DirectReads> direct)
    : memory_(static_cast<char*>(memory)),
      layout_(layout),
      rank_(rank),
      wait_(std::move(wait)),
      written_by_me_(layout.ring_count(), 0),
      read_by_me_(layout.ring_count(), 0),
      direct_(std::move(direct)) {
  if (rank < 0 || rank >= layout.ranks) throw std::invalid_argument("staging: rank out of range");
  if (direct_) {
    if (!direct_->own || direct_->pids.size() != static_cast<std::size_t>(layout.ranks))
      throw std::invalid_argument("staging: direct reads need this rank's shareable memory and every rank's pid");
    if (layout.chunk_bytes < sizeof(BuffersPlace)) throw std::invalid_argument("staging: slots too small to say where a block lies");
    peer_buffers_ = std::make_unique<PeerBuffers>(direct_->pids);
  }
}

std::uint64_t* StagedCollectives::written(std::size_t ring) const {
  return reinterpret_cast<std::uint64_t*>(memory_ + ring * layout_.ring_bytes());
}

std::uint64_t* StagedCollectives::read_by(std::size_t ring, int reader) const {
  return reinterpret_cast<std::uint64_t*>(memory_ + ring * layout_.ring_bytes() + kCacheLine * (1 + static_cast<std::size_t>(reader)));
}

char* StagedCollectives::slot(std::size_t ring, std::uint64_t chunk) const {
  return memory_ + ring * layout_.ring_bytes() + layout_.header_bytes() + (chunk % layout_.slots) * layout_.chunk_bytes;
}

int StagedCollectives::reader_behind(std::size_t ring, std::uint64_t by, int reader) const {
  auto behind = [&](int r) { return r != rank_ && written_by_me_[ring] - load(read_by(ring, r)) >= by; };
  if (reader >= 0) return behind(reader) ? reader : -1;
  for (int r = 0; r < layout_.ranks; ++r)
    if (behind(r)) return r;
  return -1;
}

bool StagedCollectives::has_chunk(std::size_t ring) const { return load(written(ring)) > read_by_me_[ring]; }

void StagedCollectives::publish(std::size_t ring) { store(written(ring), ++written_by_me_[ring]); }

void StagedCollectives::consume(std::size_t ring) { store(read_by(ring, rank_), ++read_by_me_[ring]); }

const char* StagedCollectives::map_peer(int peer, const SharedLocation& where, std::size_t bytes, const std::string& what) {
  try {
    return peer_buffers_->map(peer, where, bytes);
  } catch (const std::runtime_error& e) {
    const std::string message = "rank " + std::to_string(rank_) + " on " + wait_.host + " cannot read rank " + std::to_string(peer) +
                                "'s " + what + " where it lies (" + e.what() +
                                "); GPUDIRECT_COMM_DIRECT_READS=0 copies it through the staging slots instead";
    if (wait_.on_failure) wait_.on_failure(message);
    throw CommError(message);
  }
}

bool StagedCollectives::read_block_directly(int peer, const char* announcement, char* target, std::size_t bytes) {
  SharedLocation where;
  std::memcpy(&where, announcement, sizeof where);
  if (!readable(where)) return false;
  std::memcpy(target, map_peer(peer, where, bytes, "all_gather input"), bytes);
  return true;
}

void StagedCollectives::all_gather(const void* send, void* recv, std::size_t count, DataType type) {
  const int n = layout_.ranks;
  const std::size_t element = size_of(type), block = count * element;
  char* out = static_cast<char*>(recv);
  char* own = out + static_cast<std::size_t>(rank_) * block;
  const char* input = static_cast<const char*>(send);
  if (n == 1) {
    if (input != own && block) std::memmove(own, input, block);
    return;
  }
  const std::size_t per_chunk = layout_.chunk_bytes / element, chunk = per_chunk * element;
  const std::size_t chunks = chunks_of(count, per_chunk);
  const std::size_t mine = broadcast_ring(rank_);
  // Every rank knows every block's size, so all announce where their blocks lie, or none does.
  const std::size_t announced = direct_ && block > 0 && block >= direct_->min_block_bytes ? 1 : 0;
  const auto where = announced ? direct_->own->locate(input, block) : std::nullopt;
  // Steps through each ring: the announcement, then the chunks unless the block is read in place.
  const std::size_t to_write = announced + (where ? 0 : chunks);
  std::size_t written = 0;
  std::vector<std::size_t> fetched(static_cast<std::size_t>(n), 0), expected(static_cast<std::size_t>(n), announced + chunks);
  expected[static_cast<std::size_t>(rank_)] = 0;
  Progress progress(*this, "all_gather");
  for (;;) {
    bool moved = false;
    int waiting_for = -1;
    if (written < to_write) {
      const int lagging = reader_behind(mine, layout_.slots);
      if (lagging < 0) {
        char* target = slot(mine, written_by_me_[mine]);
        if (written < announced) {
          const SharedLocation place = where.value_or(SharedLocation{});
          std::memcpy(target, &place, sizeof place);
          publish(mine);
          if (where && input != own) std::memcpy(own, input, block);  // while the peers read it
        } else {
          const std::size_t at = (written - announced) * chunk, bytes = std::min(chunk, block - at);
          std::memcpy(target, input + at, bytes);
          if (input != own) std::memcpy(own + at, target, bytes);  // from the slot: in cache now
          publish(mine);
        }
        ++written, moved = true;
      } else {
        waiting_for = lagging;
      }
    }
    for (int s = 1; s < n; ++s) {
      const int peer = (rank_ + s) % n;
      const auto p = static_cast<std::size_t>(peer);
      if (fetched[p] == expected[p]) continue;
      const std::size_t ring = broadcast_ring(peer);
      if (!has_chunk(ring)) {
        waiting_for = peer;
        continue;
      }
      const char* from = slot(ring, read_by_me_[ring]);
      char* target = out + p * block;
      if (fetched[p] < announced) {
        if (read_block_directly(peer, from, target, block)) expected[p] = announced;
      } else {
        const std::size_t at = (fetched[p] - announced) * chunk;
        std::memcpy(target + at, from, std::min(chunk, block - at));
      }
      consume(ring);  // after the copy: a block read in place is its owner's again once every reader has
      ++fetched[p], moved = true;
    }
    bool done = written == to_write && fetched == expected;
    if (done && where) {
      if (const int reading = reader_behind(mine, 1); reading >= 0) done = false, waiting_for = reading;
    }
    if (done) return;
    if (moved)
      progress.moved();
    else
      progress.idle(waiting_for);
  }
}

void StagedCollectives::reduce_blocks(const char* send, char* own_out, const std::vector<std::size_t>& offsets, DataType type, ReduceOp op,
                                      char* results, bool announced) {
  const int n = layout_.ranks;
  const std::size_t element = size_of(type);
  const std::size_t per_chunk = layout_.chunk_bytes / element, chunk = per_chunk * element;
  auto elements_of = [&](int b) { return offsets[static_cast<std::size_t>(b) + 1] - offsets[static_cast<std::size_t>(b)]; };
  auto chunks_in = [&](int b) { return chunks_of(elements_of(b), per_chunk); };
  const std::size_t own_chunks = chunks_in(rank_);
  const char* own_in = send + offsets[static_cast<std::size_t>(rank_)] * element;
  const std::size_t own_bytes = elements_of(rank_) * element;
  std::vector<std::size_t> staged(static_cast<std::size_t>(n), 0), fetched(static_cast<std::size_t>(n), 0);
  // Per peer: 1 while its announcement is still to be read (it starts its broadcast ring).
  std::vector<std::size_t> unheard(static_cast<std::size_t>(n), announced ? 1 : 0);
  unheard[static_cast<std::size_t>(rank_)] = 0;
  std::size_t reduced = 0, remaining = own_chunks;
  for (int s = 1; s < n; ++s) {
    const int peer = (rank_ + s) % n;
    remaining += chunks_in(peer) * (results ? 2 : 1) + unheard[static_cast<std::size_t>(peer)];
  }
  const std::size_t result_ring = broadcast_ring(rank_);
  Progress progress(*this, results ? "all_reduce" : "reduce_scatter");
  while (remaining > 0) {
    bool moved = false;
    int waiting_for = -1;
    // Our input chunks of every other block, to their owners.
    for (int s = 1; s < n; ++s) {
      const int owner = (rank_ + s) % n;
      std::size_t& next = staged[static_cast<std::size_t>(owner)];
      if (next == chunks_in(owner)) continue;
      const std::size_t ring = peer_ring(rank_, owner);
      if (reader_behind(ring, layout_.slots, owner) >= 0) {
        waiting_for = owner;
        continue;
      }
      const std::size_t at = offsets[static_cast<std::size_t>(owner)] * element + next * chunk;
      std::memcpy(slot(ring, written_by_me_[ring]), send + at, std::min(chunk, elements_of(owner) * element - next * chunk));
      publish(ring);
      ++next, --remaining, moved = true;
    }
    // Our block's next chunk, once every peer's part of it is there: own input op each peer's slot,
    // in rank order from ours, into the output (and the result ring) while it is in cache.
    if (reduced < own_chunks) {
      const int lagging = results ? reader_behind(result_ring, layout_.slots) : -1;
      bool ready = lagging < 0;
      if (!ready) waiting_for = lagging;
      for (int s = 1; s < n && ready; ++s) {
        const int peer = (rank_ + s) % n;
        if (!has_chunk(peer_ring(peer, rank_))) ready = false, waiting_for = peer;
      }
      if (ready) {
        const std::size_t at = reduced * chunk, bytes = std::min(chunk, own_bytes - at), elements = bytes / element;
        char* target = own_out + at;
        for (int s = 1; s < n; ++s) {
          const std::size_t ring = peer_ring((rank_ + s) % n, rank_);
          const char* theirs = slot(ring, read_by_me_[ring]);
          if (s == 1)
            reduce_pair(target, own_in + at, theirs, elements, type, op);
          else
            reduce_into(target, theirs, elements, type, op);
          consume(ring);
        }
        if (op == ReduceOp::avg) divide_for_average(target, elements, type, n);
        if (results) {
          std::memcpy(slot(result_ring, written_by_me_[result_ring]), target, bytes);
          publish(result_ring);
        }
        ++reduced, --remaining, moved = true;
      }
    }
    // Other blocks' results, from their owners, after their announcements.
    for (int s = 1; s < n; ++s) {
      const int owner = (rank_ + s) % n;
      const auto o = static_cast<std::size_t>(owner);
      const std::size_t ring = broadcast_ring(owner);
      const bool wanted = unheard[o] || (results && fetched[o] < chunks_in(owner));
      if (!wanted) continue;
      if (!has_chunk(ring)) {
        waiting_for = owner;
        continue;
      }
      if (unheard[o]) {
        unheard[o] = 0;  // the slow way was agreed (reduce()), so what it says no longer matters
      } else {
        const std::size_t at = offsets[o] * element + fetched[o] * chunk;
        std::memcpy(results + at, slot(ring, read_by_me_[ring]), std::min(chunk, elements_of(owner) * element - fetched[o] * chunk));
        ++fetched[o];
      }
      consume(ring);
      --remaining, moved = true;
    }
    if (moved)
      progress.moved();
    else
      progress.idle(waiting_for);
  }
}

void StagedCollectives::reduce(const char* send, char* own_out, const std::vector<std::size_t>& offsets, DataType type, ReduceOp op,
                               char* results) {
  const int n = layout_.ranks;
  const std::size_t bytes = offsets.back() * size_of(type);  // of `send`, and of `results`
  // Every rank knows every block's size, so all announce where their buffers lie, or none does.
  if (!direct_ || bytes == 0 || bytes / static_cast<std::size_t>(n) < direct_->min_block_bytes)
    return reduce_blocks(send, own_out, offsets, type, op, results, false);
  const char* call = results ? "all_reduce" : "reduce_scatter";
  BuffersPlace place;
  if (const auto input = direct_->own->locate(send, bytes)) {
    const auto output = results ? direct_->own->locate(results, bytes) : std::optional<SharedLocation>(SharedLocation{});
    if (output) place.input = *input, place.output = *output;
  }
  auto can_be_read = [&](const BuffersPlace& p) { return readable(p.input) && (!results || readable(p.output)); };
  // Announce, then read the peers' announcements until the way is clear: in place where every
  // rank's buffers can be read so, else through the rings (known as soon as one rank's cannot).
  const std::size_t mine = broadcast_ring(rank_);
  std::vector<BuffersPlace> places(static_cast<std::size_t>(n));
  std::vector<bool> heard(static_cast<std::size_t>(n), false);
  places[static_cast<std::size_t>(rank_)] = place, heard[static_cast<std::size_t>(rank_)] = true;
  bool announced = false, in_place = can_be_read(place);
  Progress progress(*this, call);
  for (;;) {
    bool moved = false;
    int waiting_for = -1;
    if (!announced) {
      if (const int lagging = reader_behind(mine, layout_.slots); lagging < 0) {
        std::memcpy(slot(mine, written_by_me_[mine]), &place, sizeof place);
        publish(mine);
        announced = moved = true;
      } else {
        waiting_for = lagging;
      }
    }
    for (int s = 1; s < n && in_place; ++s) {
      const int peer = (rank_ + s) % n;
      const auto p = static_cast<std::size_t>(peer);
      if (heard[p]) continue;
      const std::size_t ring = broadcast_ring(peer);
      if (!has_chunk(ring)) {
        waiting_for = peer;
        continue;
      }
      std::memcpy(&places[p], slot(ring, read_by_me_[ring]), sizeof places[p]);  // left unread: see reduce_blocks_directly
      heard[p] = moved = true;
      in_place = can_be_read(places[p]);
    }
    if (announced && (!in_place || std::all_of(heard.begin(), heard.end(), [](bool h) { return h; }))) break;
    if (moved)
      progress.moved();
    else
      progress.idle(waiting_for);
  }
  if (!in_place) return reduce_blocks(send, own_out, offsets, type, op, results, true);
  std::vector<const char*> inputs(static_cast<std::size_t>(n), nullptr), outputs(static_cast<std::size_t>(n), nullptr);
  for (int s = 1; s < n; ++s) {
    const int peer = (rank_ + s) % n;
    const auto p = static_cast<std::size_t>(peer);
    inputs[p] = map_peer(peer, places[p].input, bytes, call + std::string(" input"));
    if (results) outputs[p] = map_peer(peer, places[p].output, bytes, call + std::string(" output"));
  }
  reduce_blocks_directly(send, own_out, offsets, type, op, results, inputs, outputs);
}

void StagedCollectives::reduce_blocks_directly(const char* send, char* own_out, const std::vector<std::size_t>& offsets, DataType type,
                                               ReduceOp op, char* results, const std::vector<const char*>& inputs,
                                               const std::vector<const char*>& outputs) {
  const int n = layout_.ranks;
  const std::size_t element = size_of(type);
  const std::size_t per_chunk = layout_.chunk_bytes / element, chunk = per_chunk * element;
  auto elements_of = [&](int b) { return offsets[static_cast<std::size_t>(b) + 1] - offsets[static_cast<std::size_t>(b)]; };
  auto chunks_in = [&](int b) { return chunks_of(elements_of(b), per_chunk); };
  const std::size_t own_at = offsets[static_cast<std::size_t>(rank_)] * element, own_bytes = elements_of(rank_) * element;
  const std::size_t own_chunks = chunks_in(rank_), mine = broadcast_ring(rank_);
  // A peer's ring holds its announcement (still unread), then one count per result chunk it has
  // written into its output. Reading its announcement, once done with its buffers, hands them back.
  std::vector<std::uint64_t> announcement(static_cast<std::size_t>(n)), fetched(static_cast<std::size_t>(n), 0);
  std::vector<bool> done_with(static_cast<std::size_t>(n), false);
  done_with[static_cast<std::size_t>(rank_)] = true;
  for (int peer = 0; peer < n; ++peer) announcement[static_cast<std::size_t>(peer)] = read_by_me_[broadcast_ring(peer)];
  std::size_t reduced = 0;
  Progress progress(*this, results ? "all_reduce" : "reduce_scatter");
  for (;;) {
    bool moved = false;
    int waiting_for = -1;
    // Our block's next chunk: own input op each peer's input where it lies, in rank order from ours.
    if (reduced < own_chunks) {
      const std::size_t at = reduced * chunk, bytes = std::min(chunk, own_bytes - at), elements = bytes / element;
      char* target = own_out + at;
      for (int s = 1; s < n; ++s) {
        const char* theirs = inputs[static_cast<std::size_t>((rank_ + s) % n)] + own_at + at;
        if (s == 1)
          reduce_pair(target, send + own_at + at, theirs, elements, type, op);
        else
          reduce_into(target, theirs, elements, type, op);
      }
      if (op == ReduceOp::avg) divide_for_average(target, elements, type, n);
      if (results) publish(mine);  // a count, no slot: the chunk lies in our output
      ++reduced, moved = true;
    }
    // Other blocks' results, from their owners' outputs; then their buffers are theirs again.
    for (int s = 1; s < n; ++s) {
      const int owner = (rank_ + s) % n;
      const auto o = static_cast<std::size_t>(owner);
      if (done_with[o]) continue;
      const std::size_t ring = broadcast_ring(owner);
      if (results) {
        const std::uint64_t published = std::min<std::uint64_t>(load(written(ring)) - announcement[o] - 1, chunks_in(owner));
        for (; fetched[o] < published; ++fetched[o], moved = true) {
          const std::size_t at = offsets[o] * element + fetched[o] * chunk;
          std::memcpy(results + at, outputs[o] + at, std::min(chunk, elements_of(owner) * element - fetched[o] * chunk));
        }
        if (fetched[o] < chunks_in(owner)) {
          waiting_for = owner;
          continue;
        }
      }
      if (reduced < own_chunks) continue;  // still reading its input
      read_by_me_[ring] = announcement[o] + 1 + (results ? chunks_in(owner) : 0);
      store(read_by(ring, rank_), read_by_me_[ring]);
      done_with[o] = moved = true;
    }
    // Done once every peer is done with our buffers (the caller may reuse them when we return).
    if (std::all_of(done_with.begin(), done_with.end(), [](bool d) { return d; })) {
      const int reading = reader_behind(mine, 1);
      if (reading < 0) return;
      waiting_for = reading;
    }
    if (moved)
      progress.moved();
    else
      progress.idle(waiting_for);
  }
}

void StagedCollectives::all_reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) {
  const std::size_t element = size_of(type);
  char* out = static_cast<char*>(recv);
  if (layout_.ranks == 1) {
    if (send != recv && count) std::memmove(recv, send, count * element);
    if (op == ReduceOp::avg) divide_for_average(recv, count, type, 1);
    return;
  }
  const auto offsets = block_offsets(count, layout_.ranks);
  // In place, our input chunk of a block is staged before its result can exist (the owner waits for
  // it), so a result never overwrites input we still have to send.
  reduce(static_cast<const char*>(send), out + offsets[static_cast<std::size_t>(rank_)] * element, offsets, type, op, out);
}

void StagedCollectives::reduce_scatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) {
  const int n = layout_.ranks;
  std::vector<std::size_t> offsets(static_cast<std::size_t>(n) + 1);
  for (int b = 0; b <= n; ++b) offsets[static_cast<std::size_t>(b)] = static_cast<std::size_t>(b) * count;
  if (n == 1) {
    if (send != recv && count) std::memmove(recv, send, count * size_of(type));
    if (op == ReduceOp::avg) divide_for_average(recv, count, type, 1);
    return;
  }
  reduce(static_cast<const char*>(send), static_cast<char*>(recv), offsets, type, op, nullptr);
}

}  // namespace gpudirect::comm
