/* A stand-in for libnvidia-ml.so.1 in unit tests: the few NVML entry points gpudirect's resolver
 * calls, answering for two GPUs (0000:04:00.0 and 0000:05:00.0) and two MIG slices of the first.
 * Not NVML: only the ABI (signatures, nvmlPciInfo_t layout, 0 = success, 6 = not found). */
#include <stdio.h>
#include <string.h>

struct device {
  const char* uuid;
  int parent; /* index of the parent GPU for a MIG slice, -1 for a GPU */
  unsigned domain, bus;
};

static const struct device devices[] = {
    {"GPU-11111111-2222-3333-4444-555555555555", -1, 0, 0x04},
    {"GPU-66666666-7777-8888-9999-000000000000", -1, 0, 0x05},
    {"MIG-aaaaaaaa-0000-0000-0000-000000000001", 0, 0, 0},
    {"MIG-aaaaaaaa-0000-0000-0000-000000000002", 0, 0, 0},
};
static int initialised;

typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

int nvmlInit_v2(void) {
  initialised = 1;
  return 0;
}
int nvmlShutdown(void) {
  initialised = 0;
  return 0;
}
const char* nvmlErrorString(int rc) { return rc == 6 ? "Not Found" : rc == 1 ? "Uninitialized" : "Unknown Error"; }

int nvmlDeviceGetHandleByUUID(const char* uuid, const struct device** out) {
  if (!initialised) return 1;
  for (size_t i = 0; i < sizeof devices / sizeof devices[0]; ++i)
    if (strcmp(devices[i].uuid, uuid) == 0) {
      *out = &devices[i];
      return 0;
    }
  return 6;
}

int nvmlDeviceIsMigDeviceHandle(const struct device* d, unsigned int* is_mig) {
  *is_mig = d->parent >= 0;
  return 0;
}

int nvmlDeviceGetDeviceHandleFromMigDeviceHandle(const struct device* d, const struct device** parent) {
  if (d->parent < 0) return 2;
  *parent = &devices[d->parent];
  return 0;
}

int nvmlDeviceGetPciInfo_v3(const struct device* d, nvmlPciInfo_t* pci) {
  memset(pci, 0, sizeof *pci);
  pci->domain = d->domain;
  pci->bus = d->bus;
  snprintf(pci->busId, sizeof pci->busId, "%08x:%02x:00.0", d->domain, d->bus);
  return 0;
}
