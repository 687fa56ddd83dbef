// One interface for collectives, whatever moves the bytes: NCCL on GPU memory, libfabric on host
// memory. Calls are asynchronous: they return a Request that completes later, so training can
// overlap communication with compute. Buffers are device pointers for NCCL, host pointers for
// libfabric; `Communicator::memory()` says which. A communicator's calls complete in the order they
// were made (NCCL: one stream; host: one worker), so waiting for a call waits for every earlier one.
// Implementations: nccl/, and host_communicator.hpp over transport/, algorithms/ and shm/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace gpudirect::comm {

enum class DataType { float32, float64, float16, bfloat16, int8, uint8, int32, int64, uint64 };
enum class ReduceOp { sum, prod, min, max, avg };
enum class MemoryKind { host, cuda };

std::size_t size_of(DataType type);
const char* name_of(DataType type);  // nccl-tests names: "float", "double", "half", "bfloat16", "int8", "uint8", "int32", "int64", "uint64"
const char* name_of(ReduceOp op);    // "sum", "prod", "min", "max", "avg"

class Request {
 public:
  virtual ~Request() = default;
  virtual bool test() = 0;  // true once complete; never blocks
  virtual void wait() = 0;  // blocks until complete; throws CommError on failure (again on every later wait)
};

class CommError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// No progress within the timeout (a cut link, a stuck peer): nccl-tests calls this a timeout.
class CommTimeout : public CommError {
 public:
  using CommError::CommError;
};

// Counts are elements per rank buffer, exactly as in nccl-tests/NCCL (collective_table.hpp has them as data):
//  all_reduce/broadcast/reduce: send and recv hold `count`;
//  all_gather: send holds `count`, recv holds count*size;
//  reduce_scatter: send holds count*size, recv holds `count`;
//  alltoall: send and recv hold count*size (block i goes to / comes from rank i);
//  sendrecv: send `count` to (rank+1)%size, receive `count` from (rank-1+size)%size.
// In-place: pass the same pointer (for all_gather the send block at recv + rank*count,
// for reduce_scatter the recv block at send + rank*count), as NCCL defines it.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual MemoryKind memory() const = 0;
  virtual std::string backend_name() const = 0;        // "nccl", "libfabric:tcp;ofi_rxm", ...
  virtual std::string device_description() const = 0;  // for the nccl-tests "#  Rank ..." line

  virtual std::unique_ptr<Request> all_reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) = 0;
  virtual std::unique_ptr<Request> all_gather(const void* send, void* recv, std::size_t count, DataType type) = 0;
  virtual std::unique_ptr<Request> reduce_scatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) = 0;
  virtual std::unique_ptr<Request> broadcast(const void* send, void* recv, std::size_t count, DataType type, int root) = 0;
  virtual std::unique_ptr<Request> reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root) = 0;
  virtual std::unique_ptr<Request> alltoall(const void* send, void* recv, std::size_t count, DataType type) = 0;
  virtual std::unique_ptr<Request> sendrecv(const void* send, void* recv, std::size_t count, DataType type) = 0;

  // Buffers in the communicator's memory kind (cudaMalloc for NCCL, page-aligned pre-faulted host
  // memory for libfabric, which the other ranks of a host may read in place: collectives on them
  // can skip a copy); valid until released or until the communicator is destroyed. Copy helpers
  // so benchmark code stays memory-agnostic.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void release(void* buffer) = 0;
  virtual void copy_to_device(void* dst, const void* host_src, std::size_t bytes) = 0;
  virtual void copy_to_host(void* host_dst, const void* src, std::size_t bytes) = 0;
  virtual void synchronize() = 0;  // all outstanding work of this rank is complete
  // CUDA communicators: the cudaStream_t (as void*) the collectives are enqueued on, so a caller can
  // order them after its own kernels (cudaStreamWaitEvent) and time them with events. nullptr for host memory.
  virtual void* cuda_stream() const { return nullptr; }
  virtual void barrier() = 0;  // every rank reached this point
};

}  // namespace gpudirect::comm
