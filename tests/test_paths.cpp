#include "tests/test_paths.hpp"

namespace kvlint::test_paths {
const char* source_dir() { return KVLINT_TEST_SOURCE_DIR; }
const char* binary() { return KVLINT_TEST_BINARY; }
const char* sarif_schema() { return KVLINT_TEST_SARIF_SCHEMA; }
const char* python() { return KVLINT_TEST_PYTHON; }
}  // namespace kvlint::test_paths
