/* A stand-in for libnvidia-ml.so.1 in tests: the NVML entry points gpudirect calls. By default two
 * GPUs (0000:04:00.0 and 0000:05:00.0, healthy H100s) and two MIG slices of the first, for the MIG
 * resolver. For the node check (check-node) the GPUs and their faults are set per test in a file
 * named by NVML_STANDIN_CONFIG, one setting a line:
 *   count N                      GPUs the driver reports (1..16)
 *   name TEXT                    every GPU's name (default "NVIDIA H100 80GB HBM3")
 *   driver TEXT                  nvmlSystemGetDriverVersion (default 550.90.07)
 *   gpu I ecc_volatile N         uncorrected ECC errors since the driver loaded
 *   gpu I ecc_aggregate N        uncorrected ECC errors over the GPU's life
 *   gpu I retired_pending 1      a page retirement pending
 *   gpu I remap_pending 1        a row remap pending
 *   gpu I remap_failed 1         a row remap failed
 *   gpu I nvlink_down L          NVLink L inactive (of 18)
 *   gpu I nvlink_recovery N      recovery errors on NVLink 0
 *   gpu I throttle MASK          clock throttle reasons (hex, e.g. 0x40 HW thermal)
 *   gpu I pcie_width N           current PCIe width (max 16)
 *   gpu I pcie_max_gen N         maximum PCIe generation (default 5)
 * Not NVML: only the ABI (signatures, nvmlPciInfo_t layout, 0 = success, 2 = invalid argument,
 * 6 = not found). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GPUS 16
#define NVLINKS 18

struct device {
  const char* uuid;
  int parent; /* index of the parent GPU for a MIG slice, -1 for a GPU */
  unsigned domain, bus;
  unsigned long long ecc_volatile, ecc_aggregate, nvlink_recovery, throttle;
  int retired_pending, remap_pending, remap_failed;
  int nvlink_down[NVLINKS];
  unsigned pcie_width, pcie_max_gen;
};

static struct device devices[MAX_GPUS + 2];
static unsigned gpu_count = 2;
static char gpu_name[96] = "NVIDIA H100 80GB HBM3";
static char driver_version[32] = "550.90.07";
static int initialised;

typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

static void reset(void) {
  memset(devices, 0, sizeof devices);
  for (unsigned i = 0; i < MAX_GPUS; ++i) {
    devices[i].parent = -1;
    devices[i].bus = 0x04 + i;
    devices[i].pcie_width = 16;
    devices[i].pcie_max_gen = 5;
  }
  devices[0].uuid = "GPU-11111111-2222-3333-4444-555555555555";
  devices[1].uuid = "GPU-66666666-7777-8888-9999-000000000000";
  devices[MAX_GPUS].uuid = "MIG-aaaaaaaa-0000-0000-0000-000000000001";
  devices[MAX_GPUS + 1].uuid = "MIG-aaaaaaaa-0000-0000-0000-000000000002";
  devices[MAX_GPUS].parent = devices[MAX_GPUS + 1].parent = 0;
  gpu_count = 2;
}

static void set_gpu(unsigned i, const char* key, unsigned long long value) {
  struct device* d = &devices[i];
  if (strcmp(key, "ecc_volatile") == 0)
    d->ecc_volatile = value;
  else if (strcmp(key, "ecc_aggregate") == 0)
    d->ecc_aggregate = value;
  else if (strcmp(key, "retired_pending") == 0)
    d->retired_pending = (int)value;
  else if (strcmp(key, "remap_pending") == 0)
    d->remap_pending = (int)value;
  else if (strcmp(key, "remap_failed") == 0)
    d->remap_failed = (int)value;
  else if (strcmp(key, "nvlink_down") == 0 && value < NVLINKS)
    d->nvlink_down[value] = 1;
  else if (strcmp(key, "nvlink_recovery") == 0)
    d->nvlink_recovery = value;
  else if (strcmp(key, "throttle") == 0)
    d->throttle = value;
  else if (strcmp(key, "pcie_width") == 0)
    d->pcie_width = (unsigned)value;
  else if (strcmp(key, "pcie_max_gen") == 0)
    d->pcie_max_gen = (unsigned)value;
  else
    fprintf(stderr, "nvml_standin: unknown setting %s\n", key);
}

static void read_config(void) {
  const char* path = getenv("NVML_STANDIN_CONFIG");
  if (!path || !*path) return;
  FILE* file = fopen(path, "r");
  if (!file) return;
  char line[256];
  while (fgets(line, sizeof line, file)) {
    line[strcspn(line, "\n")] = '\0';
    char key[64];
    unsigned index;
    char value[128];
    if (strncmp(line, "name ", 5) == 0) {
      snprintf(gpu_name, sizeof gpu_name, "%s", line + 5);
    } else if (strncmp(line, "driver ", 7) == 0) {
      snprintf(driver_version, sizeof driver_version, "%s", line + 7);
    } else if (sscanf(line, "count %u", &index) == 1 && index >= 1 && index <= MAX_GPUS) {
      gpu_count = index;
    } else if (sscanf(line, "gpu %u %63s %127s", &index, key, value) == 3 && index < MAX_GPUS) {
      set_gpu(index, key, strtoull(value, NULL, 0));
    }
  }
  fclose(file);
}

int nvmlInit_v2(void) {
  reset();
  read_config();
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
    if (devices[i].uuid && strcmp(devices[i].uuid, uuid) == 0) {
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

int nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  snprintf(version, length, "%s", driver_version);
  return 0;
}
int nvmlSystemGetCudaDriverVersion_v2(int* version) {
  *version = 12040;
  return 0;
}
int nvmlDeviceGetCount_v2(unsigned int* count) {
  if (!initialised) return 1;
  *count = gpu_count;
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, const struct device** out) {
  if (!initialised) return 1;
  if (index >= gpu_count) return 2;
  *out = &devices[index];
  return 0;
}
int nvmlDeviceGetName(const struct device* d, char* name, unsigned int length) {
  (void)d;
  snprintf(name, length, "%s", gpu_name);
  return 0;
}
/* errorType 1: uncorrected; counterType 0: volatile, 1: aggregate. */
int nvmlDeviceGetTotalEccErrors(const struct device* d, int error_type, int counter_type, unsigned long long* count) {
  if (error_type != 1) {
    *count = 0;
    return 0;
  }
  *count = counter_type == 0 ? d->ecc_volatile : d->ecc_aggregate;
  return 0;
}
int nvmlDeviceGetRetiredPagesPendingStatus(const struct device* d, int* pending) {
  *pending = d->retired_pending;
  return 0;
}
int nvmlDeviceGetRemappedRows(const struct device* d, unsigned* corrected, unsigned* uncorrected, unsigned* pending, unsigned* failed) {
  *corrected = 0;
  *uncorrected = 0;
  *pending = (unsigned)d->remap_pending;
  *failed = (unsigned)d->remap_failed;
  return 0;
}
int nvmlDeviceGetNvLinkState(const struct device* d, unsigned link, int* active) {
  if (link >= NVLINKS) return 2;
  *active = !d->nvlink_down[link];
  return 0;
}
/* counter 1: DL recovery; the others stay 0. */
int nvmlDeviceGetNvLinkErrorCounter(const struct device* d, unsigned link, int counter, unsigned long long* value) {
  if (link >= NVLINKS) return 2;
  *value = link == 0 && counter == 1 ? d->nvlink_recovery : 0;
  return 0;
}
int nvmlDeviceGetCurrentClocksThrottleReasons(const struct device* d, unsigned long long* reasons) {
  *reasons = d->throttle;
  return 0;
}
int nvmlDeviceGetMaxPcieLinkGeneration(const struct device* d, unsigned* value) {
  *value = d->pcie_max_gen;
  return 0;
}
int nvmlDeviceGetCurrPcieLinkWidth(const struct device* d, unsigned* value) {
  *value = d->pcie_width;
  return 0;
}
int nvmlDeviceGetMaxPcieLinkWidth(const struct device* d, unsigned* value) {
  (void)d;
  *value = 16;
  return 0;
}
