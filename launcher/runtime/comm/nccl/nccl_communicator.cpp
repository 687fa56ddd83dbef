#include "comm/nccl/nccl_communicator.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace gpudirect::comm {
namespace {

void cuda_check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) throw CommError(std::string("CUDA: ") + what + ": " + cudaGetErrorString(rc));
}

void nccl_check(ncclResult_t rc, const char* what) {
  if (rc != ncclSuccess) throw CommError(std::string("NCCL: ") + what + ": " + ncclGetErrorString(rc));
}

ncclDataType_t to_nccl(DataType type) {
  switch (type) {
    case DataType::float32: return ncclFloat32;
    case DataType::float64: return ncclFloat64;
    case DataType::float16: return ncclFloat16;
    case DataType::bfloat16: return ncclBfloat16;
    case DataType::int8: return ncclInt8;
    case DataType::uint8: return ncclUint8;
    case DataType::int32: return ncclInt32;
    case DataType::int64: return ncclInt64;
    case DataType::uint64: return ncclUint64;
  }
  return ncclFloat32;
}

ncclRedOp_t to_nccl(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::prod: return ncclProd;
    case ReduceOp::min: return ncclMin;
    case ReduceOp::max: return ncclMax;
    case ReduceOp::avg: return ncclAvg;
  }
  return ncclSum;
}

class EventRequest final : public Request {
 public:
  explicit EventRequest(cudaStream_t stream) {
    cuda_check(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate");
    cuda_check(cudaEventRecord(event_, stream), "cudaEventRecord");
  }
  ~EventRequest() override { cudaEventDestroy(event_); }
  bool test() override {
    const cudaError_t rc = cudaEventQuery(event_);
    if (rc == cudaErrorNotReady) return false;
    cuda_check(rc, "cudaEventQuery");
    return true;
  }
  void wait() override { cuda_check(cudaEventSynchronize(event_), "cudaEventSynchronize"); }

 private:
  cudaEvent_t event_{};
};

class NcclCommunicator final : public Communicator {
 public:
  explicit NcclCommunicator(bootstrap::Session& session) : rank_(session.context.rank), size_(session.context.size) {
    const int devices = nccl_device_count();
    if (devices == 0) throw CommError("NCCL: no GPU visible to this rank (CUDA_VISIBLE_DEVICES?)");
    device_ = session.context.local_rank % devices;
    cuda_check(cudaSetDevice(device_), "cudaSetDevice");
    cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    ncclUniqueId id{};
    if (size_ > 1) {
      std::string shared;
      if (rank_ == 0) {
        nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
        shared.assign(reinterpret_cast<const char*>(&id), sizeof id);
        session.store->set("nccl/unique_id", shared);
      } else {
        shared = session.store->get("nccl/unique_id");
        if (shared.size() != sizeof id) throw CommError("NCCL: malformed unique id from rank 0");
        std::memcpy(&id, shared.data(), sizeof id);
      }
    } else {
      nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    }
    nccl_check(ncclCommInitRank(&comm_, size_, id, rank_), "ncclCommInitRank");
    cudaDeviceProp props{};
    cuda_check(cudaGetDeviceProperties(&props, device_), "cudaGetDeviceProperties");
    char bus[32];
    std::snprintf(bus, sizeof bus, "%04x:%02x:%02x", props.pciDomainID, props.pciBusID, props.pciDeviceID);
    description_ = "device " + std::to_string(device_) + " [" + bus + "] " + props.name;
    int version = 0;
    ncclGetVersion(&version);
    backend_ = "nccl " + std::to_string(version);
  }

  ~NcclCommunicator() override {
    if (comm_) ncclCommDestroy(comm_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  MemoryKind memory() const override { return MemoryKind::cuda; }
  std::string backend_name() const override { return backend_; }
  std::string device_description() const override { return description_; }

  std::unique_ptr<Request> all_reduce(const void* s, void* r, std::size_t c, DataType t, ReduceOp op) override {
    nccl_check(ncclAllReduce(s, r, c, to_nccl(t), to_nccl(op), comm_, stream_), "ncclAllReduce");
    return done();
  }
  std::unique_ptr<Request> all_gather(const void* s, void* r, std::size_t c, DataType t) override {
    nccl_check(ncclAllGather(s, r, c, to_nccl(t), comm_, stream_), "ncclAllGather");
    return done();
  }
  std::unique_ptr<Request> reduce_scatter(const void* s, void* r, std::size_t c, DataType t, ReduceOp op) override {
    nccl_check(ncclReduceScatter(s, r, c, to_nccl(t), to_nccl(op), comm_, stream_), "ncclReduceScatter");
    return done();
  }
  std::unique_ptr<Request> broadcast(const void* s, void* r, std::size_t c, DataType t, int root) override {
    nccl_check(ncclBroadcast(s, r, c, to_nccl(t), root, comm_, stream_), "ncclBroadcast");
    return done();
  }
  std::unique_ptr<Request> reduce(const void* s, void* r, std::size_t c, DataType t, ReduceOp op, int root) override {
    nccl_check(ncclReduce(s, r, c, to_nccl(t), to_nccl(op), root, comm_, stream_), "ncclReduce");
    return done();
  }
  std::unique_ptr<Request> alltoall(const void* s, void* r, std::size_t c, DataType t) override {
    const std::size_t block = c * size_of(t);
    nccl_check(ncclGroupStart(), "ncclGroupStart");
    for (int peer = 0; peer < size_; ++peer) {
      nccl_check(ncclSend(static_cast<const char*>(s) + static_cast<std::size_t>(peer) * block, c, to_nccl(t), peer, comm_, stream_), "ncclSend");
      nccl_check(ncclRecv(static_cast<char*>(r) + static_cast<std::size_t>(peer) * block, c, to_nccl(t), peer, comm_, stream_), "ncclRecv");
    }
    nccl_check(ncclGroupEnd(), "ncclGroupEnd");
    return done();
  }
  std::unique_ptr<Request> sendrecv(const void* s, void* r, std::size_t c, DataType t) override {
    nccl_check(ncclGroupStart(), "ncclGroupStart");
    nccl_check(ncclSend(s, c, to_nccl(t), (rank_ + 1) % size_, comm_, stream_), "ncclSend");
    nccl_check(ncclRecv(r, c, to_nccl(t), (rank_ - 1 + size_) % size_, comm_, stream_), "ncclRecv");
    nccl_check(ncclGroupEnd(), "ncclGroupEnd");
    return done();
  }

  void* allocate(std::size_t bytes) override {
    void* p = nullptr;
    cuda_check(cudaMalloc(&p, std::max<std::size_t>(bytes, 1)), "cudaMalloc");
    return p;
  }
  void release(void* buffer) override { cudaFree(buffer); }
  void copy_to_device(void* dst, const void* src, std::size_t bytes) override {
    cuda_check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override {
    cuda_check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  }
  void synchronize() override { cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }
  void barrier() override {
    // A one-element all_reduce is NCCL's barrier.
    void* scratch = allocate(sizeof(float));
    nccl_check(ncclAllReduce(scratch, scratch, 1, ncclFloat32, ncclSum, comm_, stream_), "ncclAllReduce");
    synchronize();
    release(scratch);
  }

 private:
  std::unique_ptr<Request> done() { return std::make_unique<EventRequest>(stream_); }

  int rank_, size_;
  int device_ = 0;
  cudaStream_t stream_{};
  ncclComm_t comm_{};
  std::string description_, backend_;
};

}  // namespace

int nccl_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

std::unique_ptr<Communicator> make_nccl_communicator(bootstrap::Session& session) {
  return std::make_unique<NcclCommunicator>(session);
}

}  // namespace gpudirect::comm
