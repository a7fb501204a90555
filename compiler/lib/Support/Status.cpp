//===- Status.cpp - Error values for the Tessera API ----------------------===//
//
// Implements Status, the printf-style Status constructors and the string
// formatting helpers declared in tessera/Support/Status.h.
//
//===----------------------------------------------------------------------===//

#include "tessera/Support/Status.h"

#include <cstdio>

using namespace tessera;

const char *tessera::statusCodeName(StatusCode code) {
  switch (code) {
  case StatusCode::kOk:
    return "OK";
  case StatusCode::kInvalidArgument:
    return "INVALID_ARGUMENT";
  case StatusCode::kNotFound:
    return "NOT_FOUND";
  case StatusCode::kUnavailable:
    return "UNAVAILABLE";
  case StatusCode::kUnimplemented:
    return "UNIMPLEMENTED";
  case StatusCode::kResourceExhausted:
    return "RESOURCE_EXHAUSTED";
  case StatusCode::kFailedPrecondition:
    return "FAILED_PRECONDITION";
  case StatusCode::kDataLoss:
    return "DATA_LOSS";
  case StatusCode::kInternal:
    return "INTERNAL";
  case StatusCode::kAborted:
    return "ABORTED";
  }
  return "UNKNOWN";
}

Status::Status(StatusCode code, std::string message) {
  // An "error" with code kOk would make ok() and code() disagree; keep the
  // invariant that OK is exactly the null state and drop the message.
  if (code == StatusCode::kOk)
    return;
  state_ = std::make_shared<const State>(State{code, std::move(message)});
}

const std::string &Status::message() const {
  static const std::string kEmpty;
  return state_ ? state_->message : kEmpty;
}

Status Status::withContext(std::string_view context) const {
  if (ok())
    return Status();
  std::string combined;
  combined.reserve(context.size() + 2 + state_->message.size());
  combined.append(context);
  combined.append(": ");
  combined.append(state_->message);
  return Status(state_->code, std::move(combined));
}

std::string Status::toString() const {
  if (ok())
    return "OK";
  std::string result = statusCodeName(state_->code);
  result.append(": ");
  result.append(state_->message);
  return result;
}

std::string tessera::formatStringV(const char *fmt, va_list args) {
  // vsnprintf consumes the va_list, so measure with a copy and keep `args`
  // for the second pass.
  va_list measureArgs;
  va_copy(measureArgs, args);
  int needed = std::vsnprintf(nullptr, 0, fmt, measureArgs);
  va_end(measureArgs);
  if (needed <= 0)
    return std::string();
  std::string result(static_cast<size_t>(needed), '\0');
  // std::string guarantees a writable terminator slot at data()[size()].
  std::vsnprintf(result.data(), result.size() + 1, fmt, args);
  return result;
}

std::string tessera::formatString(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string result = formatStringV(fmt, args);
  va_end(args);
  return result;
}

Status tessera::makeStatus(StatusCode code, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string message = formatStringV(fmt, args);
  va_end(args);
  return Status(code, std::move(message));
}

// One definition per common code; each forwards its varargs to formatStringV.
#define TESSERA_DEFINE_STATUS_CTOR(name, code)                                 \
  Status tessera::name(const char *fmt, ...) {                                 \
    va_list args;                                                              \
    va_start(args, fmt);                                                       \
    std::string message = formatStringV(fmt, args);                            \
    va_end(args);                                                              \
    return Status(code, std::move(message));                                   \
  }

TESSERA_DEFINE_STATUS_CTOR(invalidArgument, StatusCode::kInvalidArgument)
TESSERA_DEFINE_STATUS_CTOR(notFound, StatusCode::kNotFound)
TESSERA_DEFINE_STATUS_CTOR(unavailable, StatusCode::kUnavailable)
TESSERA_DEFINE_STATUS_CTOR(unimplemented, StatusCode::kUnimplemented)
TESSERA_DEFINE_STATUS_CTOR(resourceExhausted, StatusCode::kResourceExhausted)
TESSERA_DEFINE_STATUS_CTOR(failedPrecondition, StatusCode::kFailedPrecondition)
TESSERA_DEFINE_STATUS_CTOR(dataLoss, StatusCode::kDataLoss)
TESSERA_DEFINE_STATUS_CTOR(internalError, StatusCode::kInternal)

#undef TESSERA_DEFINE_STATUS_CTOR
