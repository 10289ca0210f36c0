// One error type for everything a user can get wrong: the field, the value given and what would
// be accepted. Front ends map it: exit code 2 on the CLI, HTTP 400 with JSON on the server.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace vramplan {

struct Error {
  std::string field;  // the input that is wrong, as the user named it: "tp", "config.hidden_size"
  std::string value;  // what the user gave, as text
  std::string accepted;  // what would be accepted instead
  std::string reason;    // optional: why the value is wrong ("32 heads are not divisible by 3")

  // "tp = 3: 32 attention heads are not divisible by 3; accepted: a divisor of 32 ..."
  std::string message() const;
};

// A JSON key as the user wrote it, for Error::field: the empty key shows as "" so that the
// error still names a field.
inline std::string key_as_written(const std::string& key) { return key.empty() ? "\"\"" : key; }

// A value or the Error that prevented it. Errors travel as values, never as exceptions across
// the public API.
template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT: implicit by design
  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  // REQUIRES: ok()
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T* operator->() const { return &std::get<T>(v_); }
  const T& operator*() const { return std::get<T>(v_); }
  // REQUIRES: !ok()
  const Error& error() const { return std::get<Error>(v_); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace vramplan
