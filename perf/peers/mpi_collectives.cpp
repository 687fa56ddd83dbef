// Open MPI peer: MPI_Allreduce / MPI_Allgather, float, out of place.
//   mpirun -np N mpi_collectives -c all_reduce -b 4096 -e 268435456 -n 20 -w 5
#include "peer_common.hpp"

#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const peer::Args a = peer::parse(argc, argv, 1);
  float* send = peer::buffer(a.max_bytes);
  float* recv = peer::buffer(a.max_bytes);
  peer::sweep(
      a, rank,
      [&](std::size_t bytes) {
        if (a.collective == "all_reduce") {
          MPI_Allreduce(send, recv, static_cast<int>(bytes / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        } else {
          const int per_rank = static_cast<int>(bytes / 4 / static_cast<std::size_t>(size));
          MPI_Allgather(send, per_rank, MPI_FLOAT, recv, per_rank, MPI_FLOAT, MPI_COMM_WORLD);
        }
      },
      [] { MPI_Barrier(MPI_COMM_WORLD); });
  MPI_Finalize();
}
