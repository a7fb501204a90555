//===- StatusTest.cpp - Tests for Status and StatusOr ---------------------===//

#include "tessera/Support/Status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

using namespace tessera;

namespace {

TEST(Status, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.toString(), "OK");
  EXPECT_TRUE(okStatus().ok());
}

TEST(Status, MessageOfOkIsSharedEmptyString) {
  Status a;
  Status b = okStatus();
  EXPECT_EQ(&a.message(), &b.message());
  EXPECT_TRUE(a.message().empty());
}

TEST(Status, ErrorKeepsCodeAndMessage) {
  Status s(StatusCode::kNotFound, "kernel 'foo' not found");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "kernel 'foo' not found");
  EXPECT_EQ(s.toString(), "NOT_FOUND: kernel 'foo' not found");
}

TEST(Status, ErrorWithEmptyMessageIsStillError) {
  Status s(StatusCode::kInternal, "");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.toString(), "INTERNAL: ");
}

TEST(Status, OkCodeWithMessageIsOk) {
  Status s(StatusCode::kOk, "ignored");
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.message(), "");
}

TEST(Status, CopiesShareTheMessage) {
  Status a = invalidArgument("bad shape %d", 3);
  Status b = a;
  EXPECT_EQ(b.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(b.message(), "bad shape 3");
  EXPECT_EQ(&a.message(), &b.message());
}

TEST(Status, MultiLineMessageIsKept) {
  Status s = invalidArgument("line 1\n  x = y\n      ^");
  EXPECT_EQ(s.message(), "line 1\n  x = y\n      ^");
}

TEST(Status, CodeNamesMatchEveryCode) {
  EXPECT_STREQ(statusCodeName(StatusCode::kOk), "OK");
  EXPECT_STREQ(statusCodeName(StatusCode::kInvalidArgument),
               "INVALID_ARGUMENT");
  EXPECT_STREQ(statusCodeName(StatusCode::kNotFound), "NOT_FOUND");
  EXPECT_STREQ(statusCodeName(StatusCode::kUnavailable), "UNAVAILABLE");
  EXPECT_STREQ(statusCodeName(StatusCode::kUnimplemented), "UNIMPLEMENTED");
  EXPECT_STREQ(statusCodeName(StatusCode::kResourceExhausted),
               "RESOURCE_EXHAUSTED");
  EXPECT_STREQ(statusCodeName(StatusCode::kFailedPrecondition),
               "FAILED_PRECONDITION");
  EXPECT_STREQ(statusCodeName(StatusCode::kDataLoss), "DATA_LOSS");
  EXPECT_STREQ(statusCodeName(StatusCode::kInternal), "INTERNAL");
  EXPECT_STREQ(statusCodeName(StatusCode::kAborted), "ABORTED");
}

TEST(Status, PrintfConstructorsSetCodeAndFormat) {
  struct Case {
    Status status;
    StatusCode code;
  };
  Case cases[] = {
      {invalidArgument("x=%d", 1), StatusCode::kInvalidArgument},
      {notFound("x=%d", 1), StatusCode::kNotFound},
      {unavailable("x=%d", 1), StatusCode::kUnavailable},
      {unimplemented("x=%d", 1), StatusCode::kUnimplemented},
      {resourceExhausted("x=%d", 1), StatusCode::kResourceExhausted},
      {failedPrecondition("x=%d", 1), StatusCode::kFailedPrecondition},
      {dataLoss("x=%d", 1), StatusCode::kDataLoss},
      {internalError("x=%d", 1), StatusCode::kInternal},
      {makeStatus(StatusCode::kAborted, "x=%d", 1), StatusCode::kAborted},
  };
  for (const Case &c : cases) {
    EXPECT_EQ(c.status.code(), c.code);
    EXPECT_EQ(c.status.message(), "x=1");
  }
}

TEST(Status, MakeStatusWithOkCodeIsOk) {
  EXPECT_TRUE(makeStatus(StatusCode::kOk, "fine %d", 1).ok());
}

TEST(Status, WithContextPrefixesMessageAndKeepsCode) {
  Status s = notFound("no file '%s'", "a.tile");
  Status wrapped = s.withContext("loading kernel");
  EXPECT_EQ(wrapped.code(), StatusCode::kNotFound);
  EXPECT_EQ(wrapped.message(), "loading kernel: no file 'a.tile'");
  // The original is unchanged.
  EXPECT_EQ(s.message(), "no file 'a.tile'");
  EXPECT_EQ(wrapped.withContext("outer").message(),
            "outer: loading kernel: no file 'a.tile'");
}

TEST(Status, WithContextOnOkIsOk) {
  Status s = okStatus().withContext("ctx");
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.message(), "");
}

TEST(FormatString, FormatsLikePrintf) {
  EXPECT_EQ(formatString("%s-%d-%.2f", "a", 42, 1.5), "a-42-1.50");
  EXPECT_EQ(formatString("plain"), "plain");
  EXPECT_EQ(formatString("%s", ""), "");
}

TEST(FormatString, HandlesLongOutput) {
  std::string big(10000, 'x');
  std::string out = formatString("[%s]", big.c_str());
  ASSERT_EQ(out.size(), big.size() + 2);
  EXPECT_EQ(out.front(), '[');
  EXPECT_EQ(out.back(), ']');
  EXPECT_EQ(out.substr(1, big.size()), big);
}

TEST(FormatString, EmbeddedNulIsPartOfTheSize) {
  std::string out = formatString("a%cb", '\0');
  EXPECT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1], '\0');
}

// formatStringV must be callable from a user's own varargs function.
std::string formatViaV(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string formatViaV(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string s = formatStringV(fmt, args);
  va_end(args);
  return s;
}

TEST(FormatString, VariantTakesVaList) {
  EXPECT_EQ(formatViaV("%d+%d=%s", 2, 2, "four"), "2+2=four");
}

TEST(StatusOr, HoldsValue) {
  StatusOr<int> v = 7;
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v.ok());
  EXPECT_TRUE(v.status().ok());
  EXPECT_EQ(v.value(), 7);
  EXPECT_EQ(*v, 7);
  *v = 8;
  EXPECT_EQ(v.value(), 8);
}

TEST(StatusOr, HoldsError) {
  StatusOr<int> v = notFound("missing");
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(v.status().message(), "missing");
}

TEST(StatusOr, ConvertsFromConvertibleValue) {
  StatusOr<std::string> v = "text";
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, "text");
  EXPECT_EQ(v->size(), 4u);
}

TEST(StatusOr, MovesOutMoveOnlyValue) {
  StatusOr<std::unique_ptr<int>> v = std::make_unique<int>(5);
  ASSERT_TRUE(v.ok());
  std::unique_ptr<int> p = std::move(v).value();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 5);
}

// Helpers exercising the propagation macros.
Status failIf(bool fail) {
  if (fail)
    return invalidArgument("failed");
  return okStatus();
}

StatusOr<int> parsePositive(int x) {
  if (x <= 0)
    return invalidArgument("%d is not positive", x);
  return x;
}

int reached = 0;

Status returnIfErrorPlain(bool fail) {
  reached = 0;
  TESSERA_RETURN_IF_ERROR(failIf(fail));
  reached = 1;
  return okStatus();
}

Status returnIfErrorWithContext(bool fail, const char *what) {
  reached = 0;
  TESSERA_RETURN_IF_ERROR(failIf(fail), "while doing %s", what);
  reached = 1;
  return okStatus();
}

Status returnIfErrorOnStatusOr(int x) {
  reached = 0;
  TESSERA_RETURN_IF_ERROR(parsePositive(x), "checking %d", x);
  reached = 1;
  return okStatus();
}

StatusOr<int> sumOfTwo(int a, int b) {
  TESSERA_ASSIGN_OR_RETURN(int x, parsePositive(a));
  TESSERA_ASSIGN_OR_RETURN(auto y, parsePositive(b));
  return x + y;
}

Status assignToExisting(int a, int &out) {
  TESSERA_ASSIGN_OR_RETURN(out, parsePositive(a));
  return okStatus();
}

StatusOr<std::unique_ptr<int>> makeBox(int x) {
  if (x < 0)
    return invalidArgument("negative");
  return std::make_unique<int>(x);
}

StatusOr<int> unbox(int x) {
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<int> box, makeBox(x));
  return *box;
}

TEST(StatusMacros, ReturnIfErrorPassesOkThrough) {
  EXPECT_TRUE(returnIfErrorPlain(false).ok());
  EXPECT_EQ(reached, 1);
}

TEST(StatusMacros, ReturnIfErrorReturnsErrorUnchanged) {
  Status s = returnIfErrorPlain(true);
  EXPECT_EQ(reached, 0);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "failed");
}

TEST(StatusMacros, ReturnIfErrorAddsFormattedContext) {
  EXPECT_TRUE(returnIfErrorWithContext(false, "x").ok());
  EXPECT_EQ(reached, 1);
  Status s = returnIfErrorWithContext(true, "lowering");
  EXPECT_EQ(reached, 0);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "while doing lowering: failed");
}

TEST(StatusMacros, ReturnIfErrorAcceptsStatusOr) {
  EXPECT_TRUE(returnIfErrorOnStatusOr(3).ok());
  EXPECT_EQ(reached, 1);
  Status s = returnIfErrorOnStatusOr(-2);
  EXPECT_EQ(reached, 0);
  EXPECT_EQ(s.message(), "checking -2: -2 is not positive");
}

TEST(StatusMacros, AssignOrReturnDeclaresValues) {
  StatusOr<int> sum = sumOfTwo(2, 3);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, 5);
}

TEST(StatusMacros, AssignOrReturnPropagatesFirstError) {
  StatusOr<int> first = sumOfTwo(-1, -2);
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.status().message(), "-1 is not positive");
  StatusOr<int> second = sumOfTwo(1, -2);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().message(), "-2 is not positive");
}

TEST(StatusMacros, AssignOrReturnAssignsExistingVariable) {
  int out = 0;
  EXPECT_TRUE(assignToExisting(9, out).ok());
  EXPECT_EQ(out, 9);
  Status s = assignToExisting(0, out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(out, 9);
}

TEST(StatusMacros, AssignOrReturnMovesMoveOnlyValues) {
  StatusOr<int> ok = unbox(4);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 4);
  EXPECT_FALSE(unbox(-1).ok());
}

} // namespace
