// TODO(front end): placeholder until the tree-sitter walk lands.
#include "analyzers/python/python_frontend.hpp"

namespace kvlint::python {

facts::FileFacts analyze(std::string_view path, std::string_view, const facts::Vocabulary&,
                         std::string module_name) {
  facts::FileFacts out;
  out.path = std::string(path);
  out.module_name = std::move(module_name);
  return out;
}

}  // namespace kvlint::python
