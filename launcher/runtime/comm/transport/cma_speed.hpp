// How fast this node copies between processes with CMA (process_vm_readv), against memcpy.
// libfabric's shm provider moves large messages and RMA reads with CMA, one copy by the kernel;
// on some virtual machines pinning the pages makes that copy several times slower than the two
// user-space copies through shared memory that the provider uses without CMA.
#pragma once

namespace gpudirect::comm {

// CMA bandwidth / memcpy bandwidth for a few MiB, best of a few tries; 0 when process_vm_readv is
// not allowed here.
double cma_speed_relative_to_memcpy();

}  // namespace gpudirect::comm
