// What a missing header is replaced with in degraded mode (LibTorch / CUDA / the
// kvlint header absent where the linter runs): declarations of what model code
// routinely gets from those headers (fixed-width integers and the standard containers
// torch brings in transitively, tensors, options, dtypes, modules and TORCH_MODULE,
// torch::indexing, CUDA graphs and streams, TorchScript modules, pybind11), so that a
// file naming them is analysed as written and the facts come from the same AST shapes
// as with the real headers. Only used for headers that were NOT found.
//
// The declarations come in families, each guarded so that it is seen once per
// translation unit: whichever LibTorch / ATen / c10 / CUDA / pybind11 header is missing
// first brings all of them; the kvlint header brings its own. A family whose real
// headers ARE on the include path (torch found, only the CUDA toolkit missing) is never
// served: the real declarations would clash with it.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace kvlint::cpp {

enum class HeaderFamily { Torch, Pybind11, CudaRuntime, ModelLocalKv, Ggml, OnnxRuntime };

// A header whose presence on the include path shows a family's real headers are there.
std::string_view probe_header(HeaderFamily family);

// The content served for a missing `#include <name>`; `real_available(f)` says whether
// family f's real headers can be found (asked only for the families the name brings).
std::string degraded_header(std::string_view name, const std::function<bool(HeaderFamily)>& real_available);

// Empty definitions, each under #ifndef, of the all-caps words `source` puts between `class` or
// `struct` and the name of a class it defines (`class ATTN_EXPORT Attn : ...`): export macros,
// defined by a header generated at build time (CMake's GenerateExportHeader), which is missing
// where kvlint runs. Served with a missing header, so the class is not lost to a parse error;
// a macro a found header defines keeps its own definition.
std::string class_head_macros(std::string_view source);

}  // namespace kvlint::cpp
