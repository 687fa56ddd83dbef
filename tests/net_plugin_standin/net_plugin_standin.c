/* Stand-ins for an NCCL network plugin (libnccl-net.so), for the doctor's plugin check and the
 * local cluster's lib dirs. NCCL_STANDIN_KIND picks which:
 *   1 loads: exports ncclNetPlugin_v8 as a real plugin does (its contents are never used here);
 *   2 broken: needs a symbol no library has, so dlopen(RTLD_NOW) fails as with a version mismatch;
 *   3 not a plugin: loads but exports no ncclNetPlugin_vN;
 *   4 needs a newer glibc: linked against fake_glibc.c, it needs GLIBC_9.99 from libc.so.6, as a
 *     plugin built on a newer system needs a GLIBC_ version an older container's libc lacks. */
#if NCCL_STANDIN_KIND == 1
const char ncclNetPlugin_v8[64] = "gpudirect-slurm stand-in";
#elif NCCL_STANDIN_KIND == 2
extern int gpudirect_standin_missing_symbol(void);
const char ncclNetPlugin_v8[64] = "gpudirect-slurm stand-in";
int gpudirect_standin_use(void) { return gpudirect_standin_missing_symbol(); }
#elif NCCL_STANDIN_KIND == 4
extern int gpudirect_standin_glibc_9_99(void);
const char ncclNetPlugin_v8[64] = "gpudirect-slurm stand-in";
int gpudirect_standin_use(void) { return gpudirect_standin_glibc_9_99(); }
#else
const char gpudirect_standin_not_a_plugin[] = "no ncclNetPlugin symbol here";
#endif
