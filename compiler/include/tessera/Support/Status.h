//===- Status.h - Error values for the Tessera API --------------*- C++ -*-===//
//
// `Status` and `StatusOr<T>` carry errors across every Tessera API boundary
// (no exceptions). A Status is either OK or holds a code and a message; the
// message may span several lines (compiler diagnostics with source carets).
// Plain C++: no LLVM, MLIR or CUDA types, so public runtime headers may use it.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_SUPPORT_STATUS_H
#define TESSERA_SUPPORT_STATUS_H

#include <cassert>
#include <cstdarg>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace tessera {

/// Broad classes of failure; callers branch on these, humans read messages.
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,   ///< Bad input: malformed source, wrong shapes/dtypes.
  kNotFound,          ///< A named kernel, file or device does not exist.
  kUnavailable,       ///< A device or library is missing on this machine.
  kUnimplemented,     ///< Valid input that Tessera does not support yet.
  kResourceExhausted, ///< Out of memory, shared memory or registers.
  kFailedPrecondition,///< The object is not in a state for this call.
  kDataLoss,          ///< A persisted file was corrupt or truncated.
  kInternal,          ///< A Tessera bug; the message says where.
  kAborted,           ///< Stopped on request or by a concurrent writer.
};

/// Human-readable name of a code, e.g. "INVALID_ARGUMENT".
const char *statusCodeName(StatusCode code);

/// An OK value or an error code with a message. Cheap to copy when OK.
class [[nodiscard]] Status {
public:
  /// OK.
  Status() = default;
  Status(StatusCode code, std::string message);

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  /// The message ("" when OK).
  const std::string &message() const;

  /// Returns a copy whose message is "<context>: <message>".
  Status withContext(std::string_view context) const;

  /// "INVALID_ARGUMENT: message" or "OK".
  std::string toString() const;

  explicit operator bool() const = delete;

private:
  struct State {
    StatusCode code;
    std::string message;
  };
  std::shared_ptr<const State> state_;
};

/// The OK status.
inline Status okStatus() { return Status(); }

/// printf-style constructors for the common codes.
Status invalidArgument(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
Status notFound(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
Status unavailable(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
Status unimplemented(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
Status resourceExhausted(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
Status failedPrecondition(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
Status dataLoss(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
Status internalError(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
Status makeStatus(StatusCode code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/// printf into a std::string.
std::string formatString(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string formatStringV(const char *fmt, va_list args);

/// A value of type T or an error Status. Accessing the value of an error is
/// a programming mistake (asserts).
template <typename T> class [[nodiscard]] StatusOr {
public:
  StatusOr(Status status) : status_(std::move(status)) {
    assert(!status_.ok() && "StatusOr constructed from an OK status");
    if (status_.ok())
      status_ = Status(StatusCode::kInternal, "StatusOr from OK status");
  }
  StatusOr(T value) : value_(std::move(value)) {}
  template <typename U,
            typename = std::enable_if_t<std::is_convertible_v<U &&, T> &&
                                        !std::is_same_v<std::decay_t<U>, Status> &&
                                        !std::is_same_v<std::decay_t<U>, T>>>
  StatusOr(U &&value) : value_(T(std::forward<U>(value))) {}

  bool ok() const { return value_.has_value(); }
  const Status &status() const { return status_; }

  T &value() & {
    assert(ok());
    return *value_;
  }
  const T &value() const & {
    assert(ok());
    return *value_;
  }
  T &&value() && {
    assert(ok());
    return std::move(*value_);
  }
  T &operator*() & { return value(); }
  const T &operator*() const & { return value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }

private:
  Status status_;
  std::optional<T> value_;
};

namespace detail {
inline Status toStatus(const Status &s) { return s; }
template <typename T> Status toStatus(const StatusOr<T> &s) {
  return s.status();
}
} // namespace detail

} // namespace tessera

#define TESSERA_CONCAT_IMPL(a, b) a##b
#define TESSERA_CONCAT(a, b) TESSERA_CONCAT_IMPL(a, b)

/// Returns the Status of `expr` from the enclosing function if it is an
/// error. Optional trailing printf-style arguments add context.
#define TESSERA_RETURN_IF_ERROR(expr, ...)                                     \
  do {                                                                         \
    ::tessera::Status _tessera_st = ::tessera::detail::toStatus(expr);         \
    if (!_tessera_st.ok())                                                     \
      return _tessera_st __VA_OPT__(.withContext(::tessera::formatString(      \
          __VA_ARGS__)));                                                      \
  } while (0)

/// `TESSERA_ASSIGN_OR_RETURN(auto x, makeX())`: declares/assigns the value or
/// returns the error.
#define TESSERA_ASSIGN_OR_RETURN(lhs, expr)                                    \
  TESSERA_ASSIGN_OR_RETURN_IMPL(TESSERA_CONCAT(_tessera_so_, __LINE__), lhs,   \
                                expr)
#define TESSERA_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)                          \
  auto tmp = (expr);                                                           \
  if (!tmp.ok())                                                               \
    return tmp.status();                                                       \
  lhs = std::move(tmp).value()

#endif // TESSERA_SUPPORT_STATUS_H
