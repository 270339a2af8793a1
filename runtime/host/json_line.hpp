// One JSON object per line, written by hand: the host runs where no JSON library is installed
// (the lent GPU machine has none of Debian's -dev packages), and its events are flat (one level of arrays of
// flat objects).
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvlint::model_host {

class JsonLine {
 public:
  JsonLine(std::string_view event, std::string_view model) {
    text_ = "{";
    add("event", event);
    add("model", model);
  }
  // A bare object, to nest in an array of objects (a cache's chain frames).
  JsonLine() : text_("{") {}
  JsonLine& add(std::string_view key, std::string_view value) {
    key_(key);
    quote(value);
    return *this;
  }
  JsonLine& add(std::string_view key, const char* value) { return add(key, std::string_view(value)); }
  JsonLine& add(std::string_view key, const std::string& value) { return add(key, std::string_view(value)); }
  JsonLine& add(std::string_view key, std::int64_t value) {
    key_(key);
    text_ += std::to_string(value);
    return *this;
  }
  JsonLine& add(std::string_view key, int value) { return add(key, static_cast<std::int64_t>(value)); }
  JsonLine& add(std::string_view key, bool value) {
    key_(key);
    text_ += value ? "true" : "false";
    return *this;
  }
  JsonLine& add(std::string_view key, const std::vector<std::int64_t>& values) {
    key_(key);
    text_ += "[";
    for (std::size_t i = 0; i < values.size(); ++i) text_ += (i ? "," : "") + std::to_string(values[i]);
    text_ += "]";
    return *this;
  }
  JsonLine& add(std::string_view key, const std::vector<JsonLine>& objects) {
    key_(key);
    text_ += "[";
    for (std::size_t i = 0; i < objects.size(); ++i) text_ += (i ? "," : "") + objects[i].text_ + "}";
    text_ += "]";
    return *this;
  }
  template <typename T>
  JsonLine& add(std::string_view key, const std::optional<T>& value) {
    if (value) return add(key, *value);
    return null(key);
  }
  JsonLine& null(std::string_view key) {
    key_(key);
    text_ += "null";
    return *this;
  }
  std::string str() const { return text_ + "}\n"; }

 private:
  void key_(std::string_view key) {
    if (text_.size() > 1) text_ += ",";
    quote(key);
    text_ += ":";
  }
  // ASCII control characters escaped; other bytes pass through (the host reads UTF-8).
  void quote(std::string_view value) {
    text_ += '"';
    for (unsigned char c : value) {
      if (c == '"' || c == '\\') {
        text_ += '\\';
        text_ += static_cast<char>(c);
      } else if (c < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
        text_ += escaped;
      } else {
        text_ += static_cast<char>(c);
      }
    }
    text_ += '"';
  }
  std::string text_;
};

}  // namespace kvlint::model_host
