// N ranks as N threads of one process: every exchange goes through shared in-memory mailboxes.
// The collective algorithms run over it unchanged, so they can be tested at any rank count without
// starting processes, and a program can run several ranks in one process.
#pragma once

#include "comm/transport/transport.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace gpudirect::comm {

// One Transport per rank (element i is rank i), all sharing the mailboxes; each is used from its
// own thread. Sends never block (messages are copied); a receive waits at most `timeout`, then
// throws CommError naming the rank, the peer and the tag. The transports may be destroyed in any
// order. With `remote_reads`, peers' buffers are also read directly (one address space), so the
// direct-read algorithms run in tests as they do over libfabric's shm provider. With `pieces`,
// exchanges also run in pieces (overlaps_transfers), as over a network. `hosts` (empty, or one
// per rank): the hosts the transports report, as if the ranks ran there.
std::vector<std::unique_ptr<Transport>> make_thread_transports(int size, std::chrono::milliseconds timeout, bool remote_reads = false,
                                                               bool pieces = false, const std::vector<std::string>& hosts = {});

}  // namespace gpudirect::comm
