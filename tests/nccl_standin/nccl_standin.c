/* A stand-in for libnccl.so.2 in tests: only ncclGetVersion, which check-node asks for NCCL's version
 * (check-node --nccl-library), so the node check's result does not depend on whether the machine
 * running the tests has an NCCL. Not NCCL: only that entry point's ABI (ncclResult_t 0 = success;
 * the version code of NCCL 2.23.4). */
int ncclGetVersion(int* version) {
  if (!version) return 4; /* ncclInvalidArgument */
  *version = 22304;
  return 0;
}
