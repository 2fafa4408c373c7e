#include "common/segment/dim_filter.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace sluice {
namespace segment {
namespace {

using Row = std::vector<std::optional<absl::string_view>>;

constexpr char kPath[] = "dataSchema.transformSpec.filter";

sluice::v1::DimFilter Parse(const std::string& text) {
  sluice::v1::DimFilter filter;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &filter)) << text;
  return filter;
}

DimFilterMatcher MustCreate(const std::string& text) {
  absl::StatusOr<DimFilterMatcher> m = DimFilterMatcher::Create(Parse(text), kPath);
  EXPECT_TRUE(m.ok()) << m.status();
  return *std::move(m);
}

std::string CreateError(const std::string& text) {
  absl::StatusOr<DimFilterMatcher> m = DimFilterMatcher::Create(Parse(text), kPath);
  if (m.ok()) return "OK";
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(m.status().message());
}

TEST(DimFilterTest, SelectorMatchesEqualValueOnly) {
  DimFilterMatcher m = MustCreate(R"pb(type: "selector" dimension: "page" value: "Main")pb");
  EXPECT_EQ(m.dimensions(), std::vector<std::string>{"page"});
  EXPECT_TRUE(m.Matches(Row{"Main"}));
  EXPECT_FALSE(m.Matches(Row{"main"}));
  EXPECT_FALSE(m.Matches(Row{""}));
  EXPECT_FALSE(m.Matches(Row{std::nullopt}));
}

TEST(DimFilterTest, SelectorWithoutValueMatchesNull) {
  DimFilterMatcher m = MustCreate(R"pb(type: "selector" dimension: "page")pb");
  EXPECT_TRUE(m.Matches(Row{std::nullopt}));
  EXPECT_FALSE(m.Matches(Row{""}));
  EXPECT_FALSE(m.Matches(Row{"x"}));
}

TEST(DimFilterTest, InMatchesAnyListedValueAndNeverNull) {
  DimFilterMatcher m =
      MustCreate(R"pb(type: "in" dimension: "country" values: [ "fr", "de", "" ])pb");
  EXPECT_TRUE(m.Matches(Row{"fr"}));
  EXPECT_TRUE(m.Matches(Row{"de"}));
  EXPECT_TRUE(m.Matches(Row{""}));
  EXPECT_FALSE(m.Matches(Row{"us"}));
  EXPECT_FALSE(m.Matches(Row{std::nullopt}));
  DimFilterMatcher empty = MustCreate(R"pb(type: "in" dimension: "country")pb");
  EXPECT_FALSE(empty.Matches(Row{"fr"}));
}

TEST(DimFilterTest, LexicographicBoundComparesBytes) {
  DimFilterMatcher m = MustCreate(
      R"pb(type: "bound" dimension: "d" lower: "b" upper: "d" upper_strict: true)pb");
  EXPECT_FALSE(m.Matches(Row{"a"}));
  EXPECT_TRUE(m.Matches(Row{"b"}));
  EXPECT_TRUE(m.Matches(Row{"cz"}));
  EXPECT_FALSE(m.Matches(Row{"d"}));
  EXPECT_FALSE(m.Matches(Row{std::nullopt}));
  // Bytes >= 0x80 sort after ASCII (unsigned comparison).
  DimFilterMatcher high = MustCreate(R"pb(type: "bound" dimension: "d" lower: "z")pb");
  EXPECT_TRUE(high.Matches(Row{"\xc3\xa9"}));
  EXPECT_FALSE(high.Matches(Row{"Z"}));
  // "10" < "9" lexicographically.
  DimFilterMatcher lex = MustCreate(R"pb(type: "bound" dimension: "d" upper: "9")pb");
  EXPECT_TRUE(lex.Matches(Row{"10"}));
}

TEST(DimFilterTest, NumericBoundParsesNumbersAndSkipsOthers) {
  DimFilterMatcher m = MustCreate(R"pb(type: "bound" dimension: "n" ordering: "numeric"
                                       lower: "9" lower_strict: true upper: "1e2")pb");
  EXPECT_FALSE(m.Matches(Row{"9"}));
  EXPECT_TRUE(m.Matches(Row{"9.5"}));
  EXPECT_TRUE(m.Matches(Row{"10"}));
  EXPECT_TRUE(m.Matches(Row{"100"}));
  EXPECT_FALSE(m.Matches(Row{"100.01"}));
  EXPECT_FALSE(m.Matches(Row{"abc"}));
  EXPECT_FALSE(m.Matches(Row{" 10"}));
  EXPECT_FALSE(m.Matches(Row{"nan"}));
  EXPECT_FALSE(m.Matches(Row{""}));
  EXPECT_FALSE(m.Matches(Row{std::nullopt}));
  DimFilterMatcher upper_only =
      MustCreate(R"pb(type: "bound" dimension: "n" ordering: "numeric" upper: "-1")pb");
  EXPECT_TRUE(upper_only.Matches(Row{"-2.5"}));
  EXPECT_FALSE(upper_only.Matches(Row{"0"}));
}

TEST(DimFilterTest, AndOrNotCombineAndShareDimensions) {
  DimFilterMatcher m = MustCreate(R"pb(
    type: "or"
    fields {
      type: "and"
      fields { type: "selector" dimension: "a" value: "1" }
      fields { type: "not" field { type: "in" dimension: "b" values: "x" } }
    }
    fields { type: "selector" dimension: "c" value: "yes" }
    fields { type: "selector" dimension: "a" value: "2" }
  )pb");
  EXPECT_EQ(m.dimensions(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(m.Matches(Row{"1", "y", std::nullopt}));
  EXPECT_TRUE(m.Matches(Row{"1", std::nullopt, std::nullopt}));  // not(null in [x])
  EXPECT_FALSE(m.Matches(Row{"1", "x", std::nullopt}));
  EXPECT_TRUE(m.Matches(Row{"1", "x", "yes"}));
  EXPECT_TRUE(m.Matches(Row{"2", "x", std::nullopt}));
  EXPECT_FALSE(m.Matches(Row{"3", "y", "no"}));
}

TEST(DimFilterTest, CopiesMatchIndependently) {
  DimFilterMatcher original = MustCreate(R"pb(type: "in" dimension: "d" values: [ "a", "b" ])pb");
  DimFilterMatcher copy = original;
  DimFilterMatcher moved = std::move(original);
  EXPECT_TRUE(copy.Matches(Row{"a"}));
  EXPECT_TRUE(moved.Matches(Row{"b"}));
  EXPECT_FALSE(copy.Matches(Row{"c"}));
}

TEST(DimFilterTest, RefusesBadFiltersNamingThePath) {
  EXPECT_EQ(CreateError(R"pb(type: "or" fields { type: "selector" dimension: "a" }
                             fields { type: "regex" dimension: "a" })pb"),
            "dataSchema.transformSpec.filter.fields[1].type: unknown filter type \"regex\"; "
            "one of selector, in, bound, and, or, not");
  EXPECT_EQ(CreateError(""),
            "dataSchema.transformSpec.filter.type: required; one of selector, in, bound, and, "
            "or, not");
  EXPECT_EQ(CreateError(R"pb(type: "and")pb"),
            "dataSchema.transformSpec.filter.fields: an \"and\" filter needs at least one field");
  EXPECT_EQ(CreateError(R"pb(type: "or")pb"),
            "dataSchema.transformSpec.filter.fields: an \"or\" filter needs at least one field");
  EXPECT_EQ(CreateError(R"pb(type: "not")pb"),
            "dataSchema.transformSpec.filter.field: a \"not\" filter needs a field");
  EXPECT_EQ(CreateError(R"pb(type: "not" field { type: "selector" value: "x" })pb"),
            "dataSchema.transformSpec.filter.field.dimension: a \"selector\" filter needs a "
            "dimension");
  EXPECT_EQ(CreateError(R"pb(type: "in" values: "x")pb"),
            "dataSchema.transformSpec.filter.dimension: a \"in\" filter needs a dimension");
  EXPECT_EQ(CreateError(R"pb(type: "bound" dimension: "d")pb"),
            "dataSchema.transformSpec.filter.lower: a \"bound\" filter needs lower or upper (or "
            "both)");
  EXPECT_EQ(CreateError(R"pb(type: "bound" dimension: "d" lower: "a" ordering: "alphanumeric")pb"),
            "dataSchema.transformSpec.filter.ordering: unknown ordering \"alphanumeric\"; one of "
            "lexicographic (the default), numeric");
  EXPECT_EQ(CreateError(R"pb(type: "bound" dimension: "d" upper: "ten" ordering: "numeric")pb"),
            "dataSchema.transformSpec.filter.upper: not a number, and the ordering is numeric");
  EXPECT_EQ(CreateError(R"pb(type: "selector" dimension: "d" values: "x")pb"),
            "dataSchema.transformSpec.filter.values: not used by a \"selector\" filter");
  EXPECT_EQ(CreateError(R"pb(type: "in" dimension: "d" upper_strict: true)pb"),
            "dataSchema.transformSpec.filter.upperStrict: not used by a \"in\" filter");
  EXPECT_EQ(CreateError(R"pb(type: "and" dimension: "d"
                             fields { type: "selector" dimension: "d" })pb"),
            "dataSchema.transformSpec.filter.dimension: not used by a \"and\" filter");
}

std::string Nested(int depth) {
  std::string text = R"pb(type: "selector" dimension: "d" value: "x")pb";
  for (int i = 1; i < depth; ++i) text = absl::StrCat("type: \"not\" field { ", text, " }");
  return text;
}

TEST(DimFilterTest, NestingLimitIsSixteenLevels) {
  DimFilterMatcher m = MustCreate(Nested(kMaxDimFilterDepth));  // 15 nots: odd, so inverted
  EXPECT_FALSE(m.Matches(Row{"x"}));
  EXPECT_TRUE(m.Matches(Row{"y"}));
  std::string path = kPath;
  for (int i = 0; i < kMaxDimFilterDepth; ++i) path += ".field";
  EXPECT_EQ(CreateError(Nested(kMaxDimFilterDepth + 1)),
            path + ": filters nested more than 16 levels deep");
}

TEST(DimFilterTest, ValueLimitCountsAllValues) {
  sluice::v1::DimFilter filter;
  filter.set_type("or");
  sluice::v1::DimFilter* in = filter.add_fields();
  in->set_type("in");
  in->set_dimension("d");
  for (int i = 0; i < kMaxDimFilterValues - 1; ++i) in->add_values(absl::StrCat("v", i));
  sluice::v1::DimFilter* sel = filter.add_fields();
  sel->set_type("selector");
  sel->set_dimension("e");
  sel->set_value("last");
  absl::StatusOr<DimFilterMatcher> ok = DimFilterMatcher::Create(filter, kPath);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(ok->Matches(Row{"v9998", std::nullopt}));
  EXPECT_TRUE(ok->Matches(Row{"nope", "last"}));
  EXPECT_FALSE(ok->Matches(Row{"v9999", std::nullopt}));

  sluice::v1::DimFilter* bound = filter.add_fields();
  bound->set_type("bound");
  bound->set_dimension("f");
  bound->set_lower("a");
  absl::StatusOr<DimFilterMatcher> over = DimFilterMatcher::Create(filter, kPath);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().message(),
            "dataSchema.transformSpec.filter.fields[2].lower: the filter holds more than 10000 "
            "values in all");
}

TEST(DimFilterTest, ParseFilterNumber) {
  EXPECT_EQ(ParseFilterNumber("12"), 12.0);
  EXPECT_EQ(ParseFilterNumber("-0.5"), -0.5);
  EXPECT_EQ(ParseFilterNumber("1e3"), 1000.0);
  EXPECT_EQ(ParseFilterNumber(""), std::nullopt);
  EXPECT_EQ(ParseFilterNumber("1 "), std::nullopt);
  EXPECT_EQ(ParseFilterNumber("1x"), std::nullopt);
  EXPECT_EQ(ParseFilterNumber("nan"), std::nullopt);
}

}  // namespace
}  // namespace segment
}  // namespace sluice
