/* A stand-in libnvidia-ml.so.1 for tests on machines without a GPU. Its
 * structs are declared as in NVIDIA's nvml.h, so the C compiler, not our Go
 * code, decides sizes and padding: the Go decoders are checked against
 * that. Two GPUs; GPU 0 has the H200 figures of the recorded capture.
 * Build variants drop symbols to act as an older driver:
 *   -DOLD_DRIVER  unversioned init/count/handle, no _v3 process call, no memory v2, no CUDA version,
 *                 no persistence/ECC/compute mode: only v1 calls remain. */
#include <string.h>
#include <stdio.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_VALUE_NOT_AVAILABLE (-1)

typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned int version; unsigned long long total, reserved, free, used; } nvmlMemory_v2_t;
typedef struct { unsigned int pid; unsigned long long usedGpuMemory; } nvmlProcessInfo_v1_t;
typedef struct { unsigned int pid; unsigned long long usedGpuMemory; unsigned int gpuInstanceId, computeInstanceId; } nvmlProcessInfo_t;
typedef struct { char busIdLegacy[16]; unsigned int domain, bus, device, pciDeviceId, pciSubSystemId; char busId[32]; } nvmlPciInfo_t;
typedef struct { char busId[16]; unsigned int domain, bus, device, pciDeviceId, pciSubSystemId, r0, r1, r2, r3; } nvmlPciInfo_v1_t;

_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "memory v2");
_Static_assert(sizeof(nvmlProcessInfo_t) == 24, "process info");
_Static_assert(sizeof(nvmlProcessInfo_v1_t) == 16, "process info v1");
_Static_assert(sizeof(nvmlPciInfo_t) == 68, "pci info");

#ifdef OLD_DRIVER /* before the _v2 entry points (NVML 4.x era names) */
#define nvmlInit_v2 nvmlInit
#define nvmlDeviceGetCount_v2 nvmlDeviceGetCount
#define nvmlDeviceGetHandleByIndex_v2 nvmlDeviceGetHandleByIndex
#endif

static struct nvmlDevice_st { int index; } devs[2] = {{0}, {1}};
static int inited;

nvmlReturn_t nvmlInit_v2(void) { inited = 1; return NVML_SUCCESS; }
nvmlReturn_t nvmlShutdown(void) { inited = 0; return NVML_SUCCESS; }
const char *nvmlErrorString(nvmlReturn_t r) { return r == 2 ? "Invalid Argument" : "Unknown Error"; }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) { *n = 2; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) {
	if (i > 1) return NVML_ERROR_INVALID_ARGUMENT;
	*d = &devs[i]; return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int len) {
	snprintf(name, len, "NVIDIA H200"); return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int len) {
	snprintf(uuid, len, d->index == 0 ? "GPU-bd4603f9-2ede-ea65-a968-b198a041ece1" : "GPU-00000000-0000-0000-0000-000000000001");
	return NVML_SUCCESS;
}
static const unsigned long long TOTAL = 150754820096ULL, FREE0 = 145793089536ULL, USED0 = 4316790784ULL, RES = 644939776ULL;
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m) {
	m->total = TOTAL;
	m->free = d->index == 0 ? FREE0 : TOTAL - RES;
	m->used = TOTAL - m->free;
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int len) { snprintf(v, len, "580.159.04"); return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t d, unsigned int size, unsigned long *set) {
	for (unsigned int i = 0; i < size; i++) set[i] = 0;
	if (size < 2) return NVML_ERROR_INSUFFICIENT_SIZE;
	if (d->index == 0) set[0] = 0xffff; else set[1] = 0x3; /* CPUs 64, 65 */
	return NVML_SUCCESS;
}

/* GPU 0 runs pid 517 and pid 4242 (whose usage NVML will not tell);
 * GPU 1 runs nothing. */
static unsigned int nprocs(nvmlDevice_t d) { return d->index == 0 ? 2 : 0; }

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_v1_t *p) {
	unsigned int want = nprocs(d);
	if (*n < want) { *n = want; return want ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS; }
	*n = want;
	if (want) { p[0].pid = 517; p[0].usedGpuMemory = 4307550208ULL; p[1].pid = 4242; p[1].usedGpuMemory = (unsigned long long)NVML_VALUE_NOT_AVAILABLE; }
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t d, nvmlPciInfo_v1_t *p) {
	memset(p, 0, sizeof *p);
	snprintf(p->busId, sizeof p->busId, "0000:00:0%d.0", 6 + d->index);
	return NVML_SUCCESS;
}

#ifndef OLD_DRIVER
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m) {
	if (m->version != (unsigned int)(sizeof(nvmlMemory_v2_t) | (2 << 24))) return 25; /* ARGUMENT_VERSION_MISMATCH */
	m->total = TOTAL; m->reserved = RES;
	m->free = d->index == 0 ? FREE0 : TOTAL - RES;
	m->used = TOTAL - RES - m->free;
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p) {
	unsigned int want = nprocs(d);
	if (*n < want) { *n = want; return want ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS; }
	*n = want;
	if (want) {
		p[0].pid = 517; p[0].usedGpuMemory = 4307550208ULL; p[0].gpuInstanceId = 0xFFFFFFFF; p[0].computeInstanceId = 0xFFFFFFFF;
		p[1].pid = 4242; p[1].usedGpuMemory = (unsigned long long)NVML_VALUE_NOT_AVAILABLE; p[1].gpuInstanceId = 0xFFFFFFFF; p[1].computeInstanceId = 0xFFFFFFFF;
	}
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p) {
	memset(p, 0, sizeof *p);
	snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "0000:00:0%d.0", 6 + d->index);
	snprintf(p->busId, sizeof p->busId, "00000000:00:0%d.0", 6 + d->index);
	p->bus = 0; p->device = 6 + d->index;
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { *v = 13000; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int *m) { *m = 1; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, int *cur, int *pend) { *cur = d->index == 0; *pend = 1; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t d, int *m) { *m = d->index == 0 ? 0 : 3; return NVML_SUCCESS; }
#endif
