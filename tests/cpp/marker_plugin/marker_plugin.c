/* A shared library that writes "$KVLINT_TEST_MARKER_DIR/plugin.ran" the moment anything loads
 * it. tests/cpp names it as a Clang plugin (-fplugin=, -Xclang -load, -fpass-plugin=) in a
 * compile database: static analysis must never load it. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void write_marker(void) {
  const char* dir = getenv("KVLINT_TEST_MARKER_DIR");
  if (!dir) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/plugin.ran", dir);
  FILE* marker = fopen(path, "w");
  if (marker) fclose(marker);
}
