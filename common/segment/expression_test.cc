#include "common/segment/expression.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/segment/format_limits.h"
#include "gtest/gtest.h"

namespace sluice {
namespace segment {
namespace {

// 2026-12-03T15:28:20.045Z, a Thursday.
constexpr int64_t kTime = 1796311700045;

Expression MustCompile(absl::string_view text) {
  absl::StatusOr<Expression> e = Expression::Compile(text);
  EXPECT_TRUE(e.ok()) << text << ": " << e.status();
  return *std::move(e);
}

std::string CompileError(absl::string_view text) {
  absl::StatusOr<Expression> e = Expression::Compile(text);
  if (e.ok()) return "OK";
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(e.status().message());
}

// Evaluates `text` with the fields given as (name, value) where a nullopt
// value is null; a number value is written "#123".
std::optional<std::string> Eval(
    absl::string_view text,
    const std::vector<std::pair<std::string, std::optional<std::string>>>& row = {},
    int64_t time = kTime) {
  Expression e = MustCompile(text);
  std::vector<ExprValue> values;
  for (const std::string& field : e.fields()) {
    ExprValue v;
    for (const auto& [name, value] : row) {
      if (name != field || !value.has_value()) continue;
      v = value->rfind("#", 0) == 0 ? ExprValue::Number(absl::string_view(*value).substr(1))
                                     : ExprValue::String(*value);
    }
    values.push_back(v);
  }
  ExprScratch scratch;
  absl::StatusOr<ExprValue> out = e.Eval(values, time, &scratch);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok() || out->is_null()) return std::nullopt;
  return std::string(out->text);
}

TEST(ExpressionTest, FieldsInFirstUseOrder) {
  Expression e = MustCompile("concat(b, \"a.b-c\", b, lower(a), __time)");
  EXPECT_EQ(e.fields(), (std::vector<std::string>{"b", "a.b-c", "a"}));
  EXPECT_TRUE(e.reads_time());
  EXPECT_FALSE(MustCompile("upper(x)").reads_time());
}

TEST(ExpressionTest, ConcatLowerUpperWithNulls) {
  EXPECT_EQ(Eval("concat(a, '-', b)", {{"a", "x"}, {"b", "#12"}}), "x-12");
  EXPECT_EQ(Eval("concat(a, '-', b)", {{"a", "x"}}), std::nullopt);
  EXPECT_EQ(Eval("concat('only')"), "only");
  EXPECT_EQ(Eval("lower(a)", {{"a", "MiXeD É"}}), "mixed É");
  EXPECT_EQ(Eval("UPPER(a)", {{"a", "MiXeD"}}), "MIXED");
  EXPECT_EQ(Eval("lower(a)"), std::nullopt);
  EXPECT_EQ(Eval("upper(concat(a, b))", {{"a", "x"}}), std::nullopt);
  EXPECT_EQ(Eval("a", {{"a", "as is"}}), "as is");
  EXPECT_EQ(Eval("'it\\'s \\u00e9'"), "it's é");
  EXPECT_EQ(Eval("-1.5e3"), "-1.5e3");
  EXPECT_EQ(Eval("\"we\\\"ird\"", {{"we\"ird", "quoted"}}), "quoted");
}

TEST(ExpressionTest, SubstringIsZeroBasedInCodePoints) {
  EXPECT_EQ(Eval("substring(s, 0, 3)", {{"s", "abcdef"}}), "abc");
  EXPECT_EQ(Eval("substring(s, 2, -1)", {{"s", "abcdef"}}), "cdef");
  EXPECT_EQ(Eval("substring(s, 4, 10)", {{"s", "abcdef"}}), "ef");
  EXPECT_EQ(Eval("substring(s, 1, 2)", {{"s", "é€xy"}}), "€x");
  EXPECT_EQ(Eval("substring(s, 1, 0)", {{"s", "abc"}}), "");
  EXPECT_EQ(Eval("substring(s, 6, 1)", {{"s", "abcdef"}}), std::nullopt);
  EXPECT_EQ(Eval("substring(s, -1, 1)", {{"s", "abcdef"}}), std::nullopt);
  EXPECT_EQ(Eval("substring(s, i, 2)", {{"s", "abcdef"}, {"i", "#1"}}), "bc");
  EXPECT_EQ(Eval("substring(s, i, 2)", {{"s", "abcdef"}, {"i", "x"}}), std::nullopt);
  EXPECT_EQ(Eval("substring(s, 0, 2)"), std::nullopt);
}

TEST(ExpressionTest, TimestampFormatPatternsAndZones) {
  EXPECT_EQ(Eval("timestamp_format(__time)"), "2026-12-03T15:28:20.045Z");
  EXPECT_EQ(Eval("timestamp_format(__time, 'yyyy-MM-dd HH:mm:ss.SSS')"),
            "2026-12-03 15:28:20.045");
  EXPECT_EQ(Eval("timestamp_format(t, 'yyyyMMdd\\'T\\'HH')", {{"t", "#1796311700045"}}),
            "20261203T15");
  EXPECT_EQ(Eval("timestamp_format(t, 'yyyy-MM-dd\\'T\\'HH:mm ZZ', '+05:30')",
                 {{"t", "1796311700045"}}),
            "2026-12-03T20:58 +05:30");
  EXPECT_EQ(Eval("timestamp_format(__time, 'HH:mm Z', '-0800')"), "07:28 -0800");
  EXPECT_EQ(Eval("timestamp_format(__time, 'HH:mm Z', 'UTC')"), "15:28 +0000");
}

TEST(ExpressionTest, TimestampFormatLetters) {
  EXPECT_EQ(Eval("timestamp_format(__time, 'EEE EEEE MMM MMMM yy D a h K k S SS')"),
            "Thu Thursday Dec December 26 337 PM 3 3 15 0 04");
  EXPECT_EQ(Eval("timestamp_format(0, 'yyyy-M-d H:m:s \\'quo\\'\\'ted\\' \\'\\'', '-01:00')"),
            "1969-12-31 23:0:0 quo'ted '");
  EXPECT_EQ(Eval("timestamp_format(-1, 'yyyy-MM-dd HH:mm:ss.SSS')"), "1969-12-31 23:59:59.999");
  EXPECT_EQ(Eval("timestamp_format(__time, 'ZZZ', '+05:30')"), "+05:30");
  absl::TimeZone ny;
  if (absl::LoadTimeZone("America/New_York", &ny)) {
    EXPECT_EQ(Eval("timestamp_format(__time, 'HH:mm ZZ ZZZ', 'America/New_York')"),
              "10:28 -05:00 America/New_York");
  }
}

TEST(ExpressionTest, TimestampFormatOfNonNumbersIsNull) {
  EXPECT_EQ(Eval("timestamp_format(t)", {{"t", "yesterday"}}), std::nullopt);
  EXPECT_EQ(Eval("timestamp_format(t)"), std::nullopt);
  EXPECT_EQ(Eval("timestamp_format(t, 'yyyy')", {{"t", "#1.7963117e12"}}), "2026");
}

TEST(ExpressionTest, CompileErrorsNameTheColumn) {
  EXPECT_EQ(CompileError("concat(a, foo(b))"),
            "unknown function foo (supported: concat, lower, upper, substring, "
            "timestamp_format) at column 11");
  EXPECT_EQ(CompileError("lower(a, b)"), "lower takes 1 argument (got 2) at column 1");
  EXPECT_EQ(CompileError("substring(a, 1)"), "substring takes 3 arguments (got 2) at column 1");
  EXPECT_EQ(CompileError("concat()"), "concat takes at least 1 argument (got 0) at column 1");
  EXPECT_EQ(CompileError("timestamp_format(__time, 'y', 'UTC', 'x')"),
            "timestamp_format takes 1 to 3 arguments (got 4) at column 1");
  EXPECT_EQ(CompileError("timestamp_format(__time, p)"),
            "the pattern of timestamp_format must be a 'string' literal at column 26");
  EXPECT_EQ(CompileError("timestamp_format(__time, 'yyyy-QQ')"),
            "timestamp pattern letter 'Q' is not supported (supported: y M d D E a H k h K m s "
            "S Z and 'quoted text') at column 26");
  EXPECT_EQ(CompileError("timestamp_format(__time, 'yyyy', 'Mars/Olympus')"),
            "unknown time zone 'Mars/Olympus' (UTC, a fixed offset like +05:30, or an IANA "
            "name) at column 34");
  EXPECT_EQ(CompileError("timestamp_format(__time, 'y', '../../etc/passwd')"),
            "unknown time zone '../../etc/passwd' (UTC, a fixed offset like +05:30, or an IANA "
            "name) at column 31");
  EXPECT_EQ(CompileError("timestamp_format(__time, 'y', 'localtime')").substr(0, 30),
            "unknown time zone 'localtime' ");
  EXPECT_EQ(CompileError("timestamp_format(__time, 'y', '+25:00')").substr(0, 26),
            "unknown time zone '+25:00'");
  EXPECT_EQ(CompileError("lower(a"), "expected ')', got the end at column 8");
  EXPECT_EQ(CompileError("lower(a b)"), "expected ',' or ')' at column 9");
  EXPECT_EQ(CompileError("a b"), "unexpected text after the expression at column 3");
  EXPECT_EQ(CompileError(""), "expected an expression, got the end at column 1");
  EXPECT_EQ(CompileError("concat('abc"), "unterminated string literal at column 8");
  EXPECT_EQ(CompileError("\"\""), "empty field name at column 1");
  EXPECT_EQ(CompileError("1x"), "malformed number at column 1");
  EXPECT_EQ(CompileError("a + b"), "unexpected text after the expression at column 3");
  EXPECT_EQ(CompileError("'\\q'"), "unknown escape \\q at column 2");
  EXPECT_EQ(CompileError("#"), "unexpected '#' at column 1");
  EXPECT_EQ(CompileError(std::string(4097, 'a')),
            "an expression of 4097 bytes, beyond the limit of 4096");
  std::string deep;
  for (int i = 0; i < kMaxExpressionDepth; ++i) deep += "lower(";
  deep += "a";
  for (int i = 0; i < kMaxExpressionDepth; ++i) deep += ")";
  EXPECT_EQ(CompileError(deep), absl::StrCat("calls nested more than 64 levels deep at column ",
                                             6 * kMaxExpressionDepth + 1));
}

TEST(ExpressionTest, CopiesEvaluateIndependently) {
  Expression e = MustCompile("concat(a, '!')");
  Expression copy = e;
  ExprScratch s1, s2;
  std::vector<ExprValue> v1 = {ExprValue::String("one")};
  std::vector<ExprValue> v2 = {ExprValue::String("two")};
  absl::StatusOr<ExprValue> r1 = e.Eval(v1, 0, &s1);
  absl::StatusOr<ExprValue> r2 = copy.Eval(v2, 0, &s2);
  EXPECT_EQ(r1->text, "one!");
  EXPECT_EQ(r2->text, "two!");
}

// concat(a, a, ..., a): 2000 references to a field of 50 KB.
std::string ManyRefs(int n) {
  std::string text = "concat(a";
  for (int i = 1; i < n; ++i) text += ",a";
  return text + ")";
}

// Every value an evaluation builds is held to kMaxValueBytes as it grows, not
// only at the end: 100 MB is refused, never allocated.
TEST(ExpressionTest, AValueIsRefusedAsItPassesTheValueLimit) {
  Expression e = MustCompile(ManyRefs(2000));
  const std::string field(50000, 'x');
  std::vector<ExprValue> values = {ExprValue::String(field)};
  ExprScratch scratch;
  absl::StatusOr<ExprValue> out = e.Eval(values, 0, &scratch);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(), "concat builds a value of more than 1048576 bytes (the limit)");
  for (const std::string& buffer : scratch.buffers) EXPECT_LE(buffer.capacity(), 4 * kMaxValueBytes);
  // Nested: the outer call is refused as its value passes the limit.
  Expression nested = MustCompile("upper(concat(lower(concat(a, a)), lower(concat(a, a))))");
  const std::string big(300000, 'y');
  values = {ExprValue::String(big)};
  out = nested.Eval(values, 0, &scratch);
  EXPECT_EQ(out.status().message(), "concat builds a value of more than 1048576 bytes (the limit)");
  // At the limit is fine.
  const std::string half(kMaxValueBytes / 2, 'z');
  values = {ExprValue::String(half)};
  out = MustCompile("concat(a, a)").Eval(values, 0, &scratch);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->text.size(), kMaxValueBytes);
}

// All values one evaluation builds, and several sharing a budget, are bounded
// too: a chain of calls, each within the value limit, cannot copy a value 64
// times.
TEST(ExpressionTest, WhatEvaluationsBuildTogetherIsBounded) {
  std::string chain = "a";
  for (int i = 0; i < 60; ++i) chain = absl::StrCat("lower(", chain, ")");
  Expression e = MustCompile(chain);
  const std::string field(kMaxValueBytes, 'x');
  std::vector<ExprValue> values = {ExprValue::String(field)};
  ExprScratch scratch;
  absl::StatusOr<ExprValue> out = e.Eval(values, 0, &scratch);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(), "lower builds more than the 8388608 bytes left to build");
  // A shared budget: the second evaluation gets what the first left.
  Expression copy = MustCompile("lower(a)");
  size_t budget = 1000;
  const std::string small(600, 'x');
  values = {ExprValue::String(small)};
  ASSERT_TRUE(copy.Eval(values, 0, &scratch, &budget).ok());
  EXPECT_EQ(budget, 400);
  out = copy.Eval(values, 0, &scratch, &budget);
  EXPECT_EQ(out.status().message(), "lower builds more than the 400 bytes left to build");
}

}  // namespace
}  // namespace segment
}  // namespace sluice
