// The allow-list of compile options (compile_flags.hpp): parsed with the Clang driver's own
// option table, so joined, separate and comma forms (-MF x, -MFx, -Wp,-MD,x) and aliases
// (--include-directory=) are recognised as Clang itself would read them.
#include "analyzers/cpp/compile_flags.hpp"

#include <clang/Driver/Options.h>
#include <llvm/ADT/ArrayRef.h>
#include <llvm/Option/Arg.h>
#include <llvm/Option/ArgList.h>
#include <llvm/Option/OptTable.h>
#include <llvm/Option/Option.h>

#include <array>
#include <filesystem>

namespace kvlint::cpp {

namespace {

namespace options = clang::driver::options;

// Options that only say how the source is read: where headers are, which macros are set,
// what is included first, which language, standard, library and target. None writes a file.
constexpr std::array kReadingOptions = {
    // Header search.
    options::OPT_I,
    options::OPT_isystem,
    options::OPT_iquote,
    options::OPT_idirafter,
    options::OPT_cxx_isystem,
    options::OPT_isystem_after,
    options::OPT_iprefix,
    options::OPT_iwithprefix,
    options::OPT_iwithprefixbefore,
    options::OPT_iwithsysroot,
    options::OPT_isysroot,
    options::OPT__sysroot_EQ,
    options::OPT__sysroot,
    options::OPT_F,
    options::OPT_iframework,
    options::OPT_iframeworkwithsysroot,
    options::OPT_nostdinc,
    options::OPT_nostdincxx,
    options::OPT_nostdlibinc,
    options::OPT_nobuiltininc,
    options::OPT_stdlib_EQ,
    options::OPT_gcc_toolchain,
    options::OPT_cuda_path_EQ,
    options::OPT_nogpuinc,
    // Macros and forced includes.
    options::OPT_D,
    options::OPT_U,
    options::OPT_undef,
    options::OPT_include,
    options::OPT_imacros,
    options::OPT_pthread,
    // Language, standard and target.
    options::OPT_x,
    options::OPT_std_EQ,
    options::OPT_ansi,
    options::OPT_target,
    options::OPT_m32,
    options::OPT_m64,
    options::OPT_mx32,
    options::OPT_march_EQ,
    options::OPT_mcpu_EQ,
    options::OPT_mtune_EQ,
    options::OPT_mfpu_EQ,
    options::OPT_mfloat_abi_EQ,
    options::OPT_cuda_host_only,
    // -f options that change what the preprocessor defines or what the parser accepts.
    options::OPT_fexceptions,
    options::OPT_fno_exceptions,
    options::OPT_fcxx_exceptions,
    options::OPT_fno_cxx_exceptions,
    options::OPT_frtti,
    options::OPT_fno_rtti,
    options::OPT_fms_extensions,
    options::OPT_fno_ms_extensions,
    options::OPT_fms_compatibility,
    options::OPT_fno_ms_compatibility,
    options::OPT_fms_compatibility_version,
    options::OPT_fdelayed_template_parsing,
    options::OPT_fno_delayed_template_parsing,
    options::OPT_fsigned_char,
    options::OPT_fno_signed_char,
    options::OPT_funsigned_char,
    options::OPT_fno_unsigned_char,
    options::OPT_fchar8__t,
    options::OPT_fno_char8__t,
    options::OPT_fcoroutines_ts,
    options::OPT_fgnu_keywords,
    options::OPT_fno_gnu_keywords,
    options::OPT_fshort_wchar,
    options::OPT_fno_short_wchar,
    options::OPT_fPIC,
    options::OPT_fpic,
    options::OPT_fPIE,
    options::OPT_fpie,
    options::OPT_fno_pic,
    options::OPT_fno_PIC,
    options::OPT_ffast_math,
    options::OPT_fno_fast_math,
    options::OPT_ffinite_math_only,
    options::OPT_fno_finite_math_only,
    options::OPT_fno_operator_names,
    options::OPT_fsized_deallocation,
    options::OPT_fno_sized_deallocation,
    options::OPT_faligned_allocation,
    options::OPT_fno_aligned_allocation,
    options::OPT_ftemplate_depth_EQ,
    options::OPT_fconstexpr_depth_EQ,
    options::OPT_fbracket_depth_EQ,
    options::OPT_fgnu89_inline,
    options::OPT_fblocks,
    options::OPT_fdeclspec,
    options::OPT_fdollars_in_identifiers,
    options::OPT_fno_dollars_in_identifiers,
    options::OPT_fopenmp,
    options::OPT_fopenmp_EQ,
    options::OPT_fopenmp_simd,
    options::OPT_fno_openmp,
};

// Groups whose every member only selects target features or an optimisation level (which
// set macros such as __AVX2__ and __OPTIMIZE__).
constexpr std::array kReadingGroups = {
    options::OPT_O_Group,
    options::OPT_m_x86_Features_Group,
    options::OPT_m_arm_Features_Group,
    options::OPT_m_aarch64_Features_Group,
};

bool reads_the_source(const llvm::opt::Option& option) {
  for (const auto id : kReadingOptions)
    if (option.matches(id)) return true;
  for (const auto group : kReadingGroups)
    if (option.matches(group)) return true;
  return false;
}

bool names_the_source(const std::string& input, const std::string& source) {
  return std::filesystem::path(input).filename() == std::filesystem::path(source).filename();
}

}  // namespace

ReadingCommand reading_options_only(const std::vector<std::string>& argv, const std::string& source) {
  ReadingCommand out;
  if (argv.empty()) return out;  // an empty command stays empty: nothing says how to read the file
  const bool c_source = std::filesystem::path(source).extension() == ".c";
  out.arguments.emplace_back(c_source ? "clang" : "clang++");

  std::vector<const char*> raw;
  raw.reserve(argv.size());
  for (std::size_t i = 1; i < argv.size(); ++i) raw.push_back(argv[i].c_str());
  unsigned missing_index = 0;
  unsigned missing_count = 0;
  // GCC mode, as the driver parses a command that is not clang-cl's: options of clang-cl and of
  // cc1 alone are not recognised (a `/Fo<path>` is an input, and dropped with the inputs).
  const llvm::opt::InputArgList parsed = clang::driver::getDriverOptTable().ParseArgs(
      llvm::ArrayRef<const char*>(raw), missing_index, missing_count, /*FlagsToInclude=*/0,
      /*FlagsToExclude=*/options::CLOption | options::NoDriverOption | options::FlangOnlyOption);

  for (const llvm::opt::Arg* arg : parsed) {
    const llvm::opt::Option& option = arg->getOption();
    if (option.getKind() == llvm::opt::Option::InputClass) {
      if (!names_the_source(arg->getValue(), source)) out.dropped.emplace_back(arg->getValue());
      continue;
    }
    if (option.getKind() == llvm::opt::Option::UnknownClass || !reads_the_source(option)) {
      out.dropped.push_back(arg->getAsString(parsed));
      continue;
    }
    llvm::opt::ArgStringList rendered;
    arg->render(parsed, rendered);
    for (const char* piece : rendered) out.arguments.emplace_back(piece);
  }
  // An option at the end that lacks its value is not parsed at all.
  if (missing_count > 0)
    for (std::size_t i = missing_index; i < raw.size(); ++i) out.dropped.emplace_back(raw[i]);
  out.arguments.push_back(source);
  return out;
}

}  // namespace kvlint::cpp
