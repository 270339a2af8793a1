// Degraded mode's lookup of a project's own headers: a quoted `#include "x.h"` that the include
// path does not find is looked for where a build's usual -I would have put it, in an `include/`
// or `includes/` directory beside the including file or one of its ancestors up to the project
// root (DeepSpeed's csrc/transformer/inference/csrc/pt_binding.cpp names "inference_context.h",
// which sits in ../includes and is found by the build's -I only).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kvlint::cpp {

struct ProjectHeader {
  std::string directory;            // the directory to search (holds `name`); empty when none
  std::vector<std::string> absent;  // candidates looked at and not there, nearest first
  // Two candidates at the same distance (`include/x.h` and `includes/x.h`): neither is used, and
  // this says which (for the `degraded` note).
  std::string ambiguity;
};

// Where `name` (a relative path without `..`) is a header of the project: the nearest of
// `<ancestor>/include/<name>` and `<ancestor>/includes/<name>` for the ancestors of
// `includer_dir` up to `project_root` (both absolute and normal; none when the includer is not
// inside the project), tested with `is_project_file` (which must reject any file outside the
// project). At most 2 x 32 candidates: no directory is listed.
ProjectHeader find_project_header(std::string_view name, const std::filesystem::path& includer_dir,
                                  const std::filesystem::path& project_root,
                                  const std::function<bool(const std::string&)>& is_project_file);

// Whether the `#include` directive the preprocessor just read (the text before `end`, the lexer's
// position past the directive, in `buffer`) names `name` in quotes rather than angle brackets.
bool names_in_quotes(std::string_view buffer, std::size_t end, std::string_view name);

}  // namespace kvlint::cpp
