/* SPDX-License-Identifier: Apache-2.0
 * A stand-in libcuda.so.1 for the differential oracle (docs/oracle.md).
 *
 * vLLM's compiled extensions (vllm/_C_stable_libtorch.abi3.so, the FlashAttention and FlashMLA
 * extensions, ...) list libcuda.so.1 as NEEDED, so on a machine without an NVIDIA driver they cannot
 * be loaded, and `import vllm.platforms.cuda` fails before any selection code runs. This library
 * exports the 17 driver entry points those extensions import; each reports CUDA_ERROR_NO_DEVICE
 * (100), so the extensions load and register their ops, and nothing can run a kernel. The oracle
 * only asks selection code, which never launches one.
 */
#include <stddef.h>

#define NO_DEVICE 100

#define STUB(name) \
    int name(void) { return NO_DEVICE; }

STUB(cuCtxGetCurrent)
STUB(cuCtxSetCurrent)
STUB(cuDeviceGetAttribute)
STUB(cuDevicePrimaryCtxRetain)
STUB(cuGetProcAddress_v2)
STUB(cuGetProcAddress)
STUB(cuInit)
STUB(cuMemAddressFree)
STUB(cuMemAddressReserve)
STUB(cuMemCreate)
STUB(cuMemGetAllocationGranularity)
STUB(cuMemMap)
STUB(cuMemRelease)
STUB(cuMemSetAccess)
STUB(cuMemUnmap)
STUB(cuPointerGetAttribute)
STUB(cuTensorMapEncodeTiled)
STUB(cuDeviceGetCount)

int cuDriverGetVersion(int *version) {
    if (version == NULL) return 1; /* CUDA_ERROR_INVALID_VALUE */
    *version = 0;                  /* no driver */
    return 0;
}

int cuGetErrorString(int error, const char **text) {
    (void)error;
    if (text == NULL) return 1;
    *text = "no CUDA device (attnsel oracle stub libcuda)";
    return 0;
}
