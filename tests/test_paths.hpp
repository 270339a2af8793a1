// Where the tests find the source tree, the built binary and the tools they run.
// Force-included into every test translation unit (tests/CMakeLists.txt), so the
// build-specific absolute paths live in one small TU (test_paths.cpp): every
// other test TU compiles to the same bytes in any clone and hits ccache.
#pragma once

namespace kvlint::test_paths {
const char* source_dir();    // the project root
const char* binary();        // the built kvlint
const char* sarif_schema();  // SARIF 2.1.0 schema, or "" when not configured
const char* python();        // a Python with jsonschema
}  // namespace kvlint::test_paths

#define KVLINT_SOURCE_DIR (::kvlint::test_paths::source_dir())
#define KVLINT_BINARY (::kvlint::test_paths::binary())
#define KVLINT_SARIF_SCHEMA (::kvlint::test_paths::sarif_schema())
#define KVLINT_PYTHON (::kvlint::test_paths::python())
