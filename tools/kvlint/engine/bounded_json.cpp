#include "tools/kvlint/engine/bounded_json.hpp"

#include <fmt/format.h>

#include <exception>

namespace kvlint {
namespace {

using nlohmann::json;

// nlohmann's DOM builder with a nesting bound: returning false from start_object/start_array
// stops the reader before it goes any deeper.
class BoundedDomBuilder : public nlohmann::detail::json_sax_dom_parser<json> {
 public:
  explicit BoundedDomBuilder(json& result) : json_sax_dom_parser(result, /*allow_exceptions=*/false) {}
  bool start_object(std::size_t size) { return enter() && json_sax_dom_parser::start_object(size); }
  bool end_object() {
    --depth_;
    return json_sax_dom_parser::end_object();
  }
  bool start_array(std::size_t size) { return enter() && json_sax_dom_parser::start_array(size); }
  bool end_array() {
    --depth_;
    return json_sax_dom_parser::end_array();
  }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& ex) {
    // Without the library's "[json.exception.parse_error.101] " tag: the message is for users.
    const std::string_view what = ex.what();
    const std::size_t tag_end =
        what.starts_with("[json.exception") ? what.find("] ") : std::string_view::npos;
    message_ = tag_end == std::string_view::npos ? what : what.substr(tag_end + 2);
    return json_sax_dom_parser::parse_error(position, token, ex);
  }
  bool too_deep() const { return too_deep_; }
  const std::string& message() const { return message_; }

 private:
  bool enter() {
    too_deep_ = ++depth_ > kMaxJsonNesting;
    return !too_deep_;
  }
  std::size_t depth_ = 0;
  bool too_deep_ = false;
  std::string message_;
};

}  // namespace

std::optional<json> parse_json_bounded(std::string_view bytes, std::string& error, JsonEncoding encoding) {
  try {
    json result;
    BoundedDomBuilder builder(result);
    const bool read = encoding == JsonEncoding::Cbor
                          ? json::sax_parse(bytes.begin(), bytes.end(), &builder, json::input_format_t::cbor,
                                            /*strict=*/true)
                          : json::sax_parse(bytes.begin(), bytes.end(), &builder, json::input_format_t::json,
                                            /*strict=*/true);
    if (builder.too_deep()) {
      error = fmt::format("nested deeper than {} levels", kMaxJsonNesting);
      return std::nullopt;
    }
    if (!read || builder.is_errored()) {
      error = builder.message().empty() ? std::string("not valid JSON") : builder.message();
      return std::nullopt;
    }
    return result;
  } catch (const std::exception& e) {
    error = e.what();  // e.g. a declared length beyond max_size()
    return std::nullopt;
  }
}

}  // namespace kvlint
