// Gloo peer: gloo::allreduce (ring) / gloo::allgather over TCP on loopback, float, out of place.
//   gloo_collectives RANK SIZE STORE_DIR -c all_reduce -b 4096 -e 268435456 -n 20 -w 5
#include "peer_common.hpp"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: gloo_collectives RANK SIZE STORE_DIR [options]\n");
    return 6;
  }
  const int rank = std::atoi(argv[1]), size = std::atoi(argv[2]);
  const peer::Args a = peer::parse(argc, argv, 4);
  gloo::transport::tcp::attr attr("127.0.0.1");
  auto device = gloo::transport::tcp::CreateDevice(attr);
  gloo::rendezvous::FileStore store(argv[3]);
  // A fresh context per run: mixing legacy and new algorithms in one context slows Gloo down.
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  context->connectFullMesh(store, device);
  float* send = peer::buffer(a.max_bytes);
  float* recv = peer::buffer(a.max_bytes);
  peer::sweep(
      a, rank,
      [&](std::size_t bytes) {
        if (a.collective == "all_reduce") {
          gloo::AllreduceOptions options(context);
          options.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
          options.setInput(send, bytes / 4);
          options.setOutput(recv, bytes / 4);
          options.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
          gloo::allreduce(options);
        } else {
          const std::size_t per_rank = bytes / 4 / static_cast<std::size_t>(size);
          gloo::AllgatherOptions options(context);
          options.setInput(send, per_rank);
          options.setOutput(recv, per_rank * static_cast<std::size_t>(size));
          gloo::allgather(options);
        }
      },
      [&] {
        gloo::BarrierOptions options(context);
        gloo::barrier(options);
      });
}
