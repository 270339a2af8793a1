#include "analyzers/facts/facts_binary.hpp"

#include <memory>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzers/facts/compact.hpp"
#include "analyzers/facts/enum_names.hpp"
#include "analyzers/facts/fields.hpp"

namespace kvlint::facts {
namespace {

class Encoder {
 public:
  Encoder(BinaryWriter& out, const std::string& path) : out_(out), path_(path) {}

  void operator()(std::uint32_t v) { out_.varint(v); }
  void operator()(bool v) { out_.varint(v ? 1 : 0); }
  template <class E>
  requires std::is_enum_v<E>
  void operator()(E v) { out_.varint(static_cast<std::uint64_t>(v)); }
  void operator()(const std::string& s) { out_.text(s); }
  // 0: the facts' own path; 1: another file, its path follows.
  void operator()(const Location& l) {
    if (l.file == path_) {
      out_.varint(0);
    } else {
      out_.varint(1);
      out_.text(l.file.str());
    }
    all(l.line, l.column, l.end_line, l.end_column);
  }
  template <class T>
  void operator()(const std::optional<T>& o) {
    out_.varint(o ? 1 : 0);
    if (o) (*this)(*o);
  }
  template <class T>
  void operator()(const std::vector<T>& v) {
    out_.varint(v.size());
    for (const auto& x : v) (*this)(x);
  }
  // Each distinct guard once: 0 and the guard (it takes the next index), or 1 + the index of
  // an equal guard written before.
  void operator()(const Guards& guards) {
    out_.varint(guards.size());
    for (const Guard& g : guards) {
      if (auto met = by_address_.find(&g); met != by_address_.end()) {
        out_.varint(met->second + 1);
        continue;
      }
      std::optional<std::size_t> index = written_.find(g);
      if (index) {
        out_.varint(*index + 1);
      } else {
        out_.varint(0);
        index = written_.add(g);
        fields(g, [&](const auto&... parts) { all(parts...); });
      }
      by_address_.emplace(&g, *index);
    }
  }
  template <HasFields T>
  void operator()(const T& x) {
    fields(x, [&](const auto&... parts) { all(parts...); });
  }

 private:
  template <class... Parts>
  void all(const Parts&... parts) {
    ((*this)(parts), ...);
  }
  BinaryWriter& out_;
  const std::string& path_;
  // The guards written so far (the facts being written outlive the encoder), and what each
  // guard met so far became: the front end's shared guards are met many times.
  GuardIndex written_;
  std::unordered_map<const Guard*, std::size_t> by_address_;
};

class Decoder {
 public:
  explicit Decoder(BinaryReader& in) : in_(in) {}

  void operator()(std::uint32_t& v) { v = in_.u32(); }
  void operator()(bool& v) { v = in_.flag(); }
  template <class E>
  requires std::is_enum_v<E>
  void operator()(E& v) {
    const std::uint64_t raw = in_.varint();
    for (const auto& [value, name] : enum_table(E{}))
      if (static_cast<std::uint64_t>(value) == raw) {
        v = value;
        return;
      }
    throw BinaryFormatError("unknown enum value");
  }
  void operator()(std::string& s) { s = in_.text(); }
  void operator()(Location& l) {
    if (in_.flag())
      l.file = FilePath(in_.text());
    else
      l.file = path_;
    all(l.line, l.column, l.end_line, l.end_column);
  }
  template <class T>
  void operator()(std::optional<T>& o) {
    if (in_.flag()) (*this)(o.emplace());
  }
  template <class T>
  void operator()(std::vector<T>& v) {
    v.resize(in_.count());  // exact: what facts::compact would leave
    for (auto& x : v) (*this)(x);
  }
  void operator()(Guards& guards) {
    auto& list = guards.shared();
    list.resize(in_.count());
    for (auto& shared : list) {
      const std::uint64_t ref = in_.varint();
      if (ref == 0) {
        Guard g;
        fields(g, [&](auto&... parts) { all(parts...); });
        read_.push_back(std::make_shared<const Guard>(std::move(g)));
        shared = read_.back();
      } else if (ref <= read_.size()) {
        shared = read_[ref - 1];
      } else {
        throw BinaryFormatError("guard index beyond those read");
      }
    }
  }
  template <HasFields T>
  void operator()(T& x) {
    fields(x, [&](auto&... parts) { all(parts...); });
  }
  void operator()(FileFacts& f) {
    (*this)(f.path);
    path_ = FilePath(f.path);
    fields(f, [&](auto& path, auto&... rest) {
      static_cast<void>(path);  // read above: every location after it may share it
      all(rest...);
    });
  }

 private:
  template <class... Parts>
  void all(Parts&... parts) {
    ((*this)(parts), ...);
  }
  BinaryReader& in_;
  FilePath path_;
  std::vector<std::shared_ptr<const Guard>> read_;
};

}  // namespace

void write_file_facts(BinaryWriter& out, const FileFacts& facts) {
  Encoder encoder(out, facts.path);
  encoder(facts);
}

FileFacts read_file_facts(BinaryReader& in) {
  FileFacts facts;
  Decoder decoder(in);
  decoder(facts);
  return facts;
}

}  // namespace kvlint::facts
