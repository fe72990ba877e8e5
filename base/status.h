// Error values shared by every llmplan module.
//
// Recoverable problems (bad input, a missing file, an impossible plan) travel
// as a Status or a Result<T>; the message names the file, field or JSON path
// at fault so that `main` can print it as one line. Programming errors trip
// LLMPLAN_CHECK and abort. No exception crosses a module boundary.
#ifndef LLMPLAN_BASE_STATUS_H_
#define LLMPLAN_BASE_STATUS_H_

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace llmplan {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the caller's input is wrong (a field, a flag, a plan)
  kNotFound,         // a named preset, file or column does not exist
  kIoError,          // a file could not be read or written
  kParseError,       // malformed JSON or CSV
  kFailedPrecondition,  // the request is well formed but cannot be served here
  kInternal,         // a bug that was caught instead of crashing
  kUsage,            // a command line that contradicts itself or its inputs (exit status 2)
};

// The outcome of an operation that returns no value: OK, or a code plus a
// one-line message. Cheap to copy when OK.
class Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return Status(); }
  static Status invalid_argument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status not_found(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status io_error(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status parse_error(std::string m) { return {StatusCode::kParseError, std::move(m)}; }
  static Status failed_precondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  static Status usage(std::string m) { return {StatusCode::kUsage, std::move(m)}; }
  // The same message as a usage error (OK stays OK).
  Status as_usage() const { return ok() ? *this : Status(StatusCode::kUsage, message_); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is "prefix: message" (used to add the file
  // name or JSON path as an error travels outwards). OK stays OK.
  Status with_prefix(const std::string& prefix) const {
    if (ok()) return *this;
    return Status(code_, prefix + ": " + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Either a T or a non-OK Status. Accessing value() of an error is a bug
// (checked).
template <typename T>
class Result {
 public:
  Result(T value) : data_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : data_(std::move(status)) {  // NOLINT
    if (std::get<Status>(data_).ok()) {
      data_ = Status::internal("Result constructed from an OK status without a value");
    }
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(data_);
  }
  const T& value() const& { check(); return std::get<T>(data_); }
  T& value() & { check(); return std::get<T>(data_); }
  T&& value() && { check(); return std::get<T>(std::move(data_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  void check() const {
    if (!ok()) {
      std::fprintf(stderr, "llmplan: value() of an error Result: %s\n",
                   std::get<Status>(data_).message().c_str());
      std::abort();
    }
  }
  std::variant<T, Status> data_;
};

}  // namespace llmplan

// Aborts with the failed condition's text: for invariants only, never for
// input validation.
#define LLMPLAN_CHECK(cond)                                                              \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);      \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

#define LLMPLAN_STATUS_CONCAT_INNER(a, b) a##b
#define LLMPLAN_STATUS_CONCAT(a, b) LLMPLAN_STATUS_CONCAT_INNER(a, b)

// Returns the Status of `expr` from the enclosing function when it is not OK.
#define LLMPLAN_RETURN_IF_ERROR(expr)          \
  do {                                         \
    ::llmplan::Status llmplan_status_ = (expr); \
    if (!llmplan_status_.ok()) return llmplan_status_; \
  } while (0)

// `LLMPLAN_ASSIGN_OR_RETURN(auto x, make_x());` declares x from a Result or
// returns its error.
#define LLMPLAN_ASSIGN_OR_RETURN(lhs, expr)                                          \
  auto LLMPLAN_STATUS_CONCAT(llmplan_result_, __LINE__) = (expr);                     \
  if (!LLMPLAN_STATUS_CONCAT(llmplan_result_, __LINE__).ok())                         \
    return LLMPLAN_STATUS_CONCAT(llmplan_result_, __LINE__).status();                 \
  lhs = std::move(LLMPLAN_STATUS_CONCAT(llmplan_result_, __LINE__)).value()

#endif  // LLMPLAN_BASE_STATUS_H_
