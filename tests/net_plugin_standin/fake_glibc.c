/* A stand-in "libc.so.6" whose one symbol has the version GLIBC_9.99 (fake_glibc.map), newer than
 * any real glibc. A library linked against it records that it needs GLIBC_9.99 from libc.so.6 (its
 * ELF version needs), and at run time the real libc.so.6 is the one the loader finds and it lacks
 * that version: the doctor's glibc check (launcher/commands/doctor/glibc_check.hpp) reads the need
 * without loading the library. Never loaded itself. */
int gpudirect_standin_glibc_9_99(void) { return 0; }
