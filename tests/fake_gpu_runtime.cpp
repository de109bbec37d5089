// SPDX-License-Identifier: Apache-2.0
// Stand-ins for libcuda and libcudnn, built by the tests with answers chosen by compile definitions.
#include <cstddef>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

#ifdef FAKE_CUDA
#  ifndef FAKE_CU_INIT_RESULT
#    define FAKE_CU_INIT_RESULT 0
#  endif
// Two devices: 0 is sm_90 (H200), 1 is sm_86.
FAKE_EXPORT int cuInit(unsigned) { return FAKE_CU_INIT_RESULT; }
FAKE_EXPORT int cuDriverGetVersion(int* v) {
  *v = 12080;
  return 0;
}
FAKE_EXPORT int cuDeviceGetCount(int* n) {
  *n = 2;
  return 0;
}
FAKE_EXPORT int cuDeviceGet(int* d, int ordinal) {
  if (ordinal < 0 || ordinal > 1) return 101;
  *d = ordinal;
  return 0;
}
#  ifndef FAKE_CU_NO_ATTRIBUTE
FAKE_EXPORT int cuDeviceGetAttribute(int* value, int attribute, int device) {
  if (attribute == 75)
    *value = device == 0 ? 9 : 8;
  else if (attribute == 76)
    *value = device == 0 ? 0 : 6;
  else
    return 1;
  return 0;
}
#  endif
FAKE_EXPORT int cuDeviceGetName(char* name, int len, int device) {
  const char* text = device == 0 ? "Fake H200" : "Fake A10";
  int i = 0;
  for (; i + 1 < len && text[i] != '\0'; ++i) name[i] = text[i];
  name[i] = '\0';
  return 0;
}
#endif

#ifdef FAKE_CUDNN_VERSION
FAKE_EXPORT std::size_t cudnnGetVersion() { return FAKE_CUDNN_VERSION; }
#endif
#ifdef FAKE_CUDNN_BROKEN
FAKE_EXPORT std::size_t cudnnGetVersionTypo() { return 91900; }
#endif
