// SPDX-License-Identifier: Apache-2.0
// attnsel._torch_call: one SDPA call's description read from the tensors' C++ side, the key of
// attnsel.torch.select_sdpa's answers. Reading it through Python attributes (shape, dtype, grad flag,
// nested flag) costs about 330 ns a tensor; here it is a few loads. Built only against the torch it runs
// with (python/torch_ext/CMakeLists.txt); the module refuses to load under another torch version.
#include <ATen/Context.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/python_variable.h>

#include <Python.h>

#include <cstdint>
#include <cstring>

#ifndef ATTNSEL_TORCH_VERSION
#  error "ATTNSEL_TORCH_VERSION: the torch.__version__ this module is built against"
#endif

namespace {

// Tensors of more dimensions are described by Python (select_sdpa's attribute key).
constexpr int max_dims = 8;

class key_words {
 public:
  void add(std::int64_t v) noexcept { words_[size_++] = v; }
  PyObject* to_bytes() const {
    return PyBytes_FromStringAndSize(reinterpret_cast<const char*>(words_), size_ * sizeof(std::int64_t));
  }

 private:
  // 3 tensors of (dims, sizes, dtype and grad), the mask's 2 words, 6 flags: at most 3 * 10 + 2 + 6.
  std::int64_t words_[3 * (max_dims + 2) + 2 + 6] = {};
  std::size_t size_ = 0;
};

// A plain Tensor or Parameter (a subclass may answer its own attributes), or nullptr.
const at::Tensor* plain_tensor(PyObject* obj) noexcept {
  if (!THPVariable_CheckExact(obj)) return nullptr;
  const at::Tensor& t = THPVariable_Unpack(obj);
  return t.defined() ? &t : nullptr;
}

std::int64_t dtype_and_grad(const at::Tensor& t) {
  return static_cast<std::int64_t>(t.scalar_type()) | (t.requires_grad() ? std::int64_t{1} << 16 : 0);
}

// Adds the tensor's rank, sizes, dtype and grad flag; false when Python must describe it: nested
// (ragged sizes, answered afresh), symbolic sizes, or more than max_dims dimensions.
bool add_tensor(key_words& key, const at::Tensor& t) {
  if (t.is_nested() || t.unsafeGetTensorImpl()->has_symbolic_sizes_strides()) return false;
  const auto dims = t.dim();
  if (dims > max_dims) return false;
  key.add(dims);
  for (const auto size : t.sizes()) key.add(size);
  key.add(dtype_and_grad(t));
  return true;
}

// call_key(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa) -> bytes | None
// Equal bytes for two calls mean attnsel.torch.query_from_sdpa builds equal queries for them on the
// same device: the three tensors' ranks, sizes, dtypes and grad flags, the mask's rank, dtype and grad
// flag, grad mode, deterministic mode without warn_only, dropout_p > 0, is_causal, enable_gqa, and the
// query's device. None when a tensor is not a plain dense Tensor (select_sdpa describes it in Python).
PyObject* call_key(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 7) {
    PyErr_Format(PyExc_TypeError,
                 "call_key() takes 7 positional arguments (query, key, value, attn_mask, dropout_p, is_causal, "
                 "enable_gqa), got %zd",
                 nargs);
    return nullptr;
  }
  try {
    key_words key;
    const at::Tensor* q = nullptr;
    for (int i = 0; i < 3; ++i) {
      const at::Tensor* t = plain_tensor(args[i]);
      if (t == nullptr || !add_tensor(key, *t)) Py_RETURN_NONE;
      if (i == 0) q = t;
    }
    if (args[3] == Py_None) {
      key.add(-1);
    } else {
      const at::Tensor* mask = plain_tensor(args[3]);
      if (mask == nullptr) Py_RETURN_NONE;
      key.add(mask->dim());
      key.add(dtype_and_grad(*mask));
    }
    const double dropout = PyFloat_AsDouble(args[4]);
    if (dropout == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();  // not a number: Python's own comparison decides (and raises) on the slow path
      Py_RETURN_NONE;
    }
    const int causal = PyObject_IsTrue(args[5]);
    const int gqa = PyObject_IsTrue(args[6]);
    if (causal < 0 || gqa < 0) return nullptr;
    const auto& context = at::globalContext();
    key.add(static_cast<std::int64_t>(c10::GradMode::is_enabled()) |
            static_cast<std::int64_t>(context.deterministicAlgorithms() && !context.deterministicAlgorithmsWarnOnly())
                << 1 |
            static_cast<std::int64_t>(dropout > 0.0) << 2 | static_cast<std::int64_t>(causal) << 3 |
            static_cast<std::int64_t>(gqa) << 4);
    const auto device = q->device();
    key.add(static_cast<std::int64_t>(device.type()) << 8 | static_cast<std::int64_t>(device.index() + 1));
    return key.to_bytes();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
}

PyMethodDef methods[] = {
    {"call_key", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(call_key)), METH_FASTCALL,
     "call_key(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa) -> bytes | None\n--\n\n"
     "The description of one SDPA call that attnsel.torch.select_sdpa keys its answers by, or None when a "
     "tensor is not a plain dense Tensor."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_torch_call",
                          "The SDPA call key of attnsel.torch, read in C++ (built against one torch version).", -1,
                          methods};

}  // namespace

PyMODINIT_FUNC PyInit__torch_call() {
  // The tensors' layout is torch's: refuse a torch other than the one this module was compiled against.
  PyObject* torch = PyImport_ImportModule("torch");
  if (torch == nullptr) return nullptr;
  PyObject* version = PyObject_GetAttrString(torch, "__version__");
  Py_DECREF(torch);
  if (version == nullptr) return nullptr;
  const char* running = PyUnicode_AsUTF8(version);
  const bool same = running != nullptr && std::strcmp(running, ATTNSEL_TORCH_VERSION) == 0;
  if (!same) {
    if (running != nullptr)
      PyErr_Format(PyExc_ImportError, "attnsel._torch_call was built against torch %s, this process runs torch %s",
                   ATTNSEL_TORCH_VERSION, running);
    Py_DECREF(version);
    return nullptr;
  }
  Py_DECREF(version);
  PyObject* module = PyModule_Create(&module_def);
  if (module != nullptr && PyModule_AddStringConstant(module, "TORCH_VERSION", ATTNSEL_TORCH_VERSION) < 0) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
