#include "task/header_filter.h"

#include <gtest/gtest.h>

#include <string>

#include "google/protobuf/util/json_util.h"

namespace sluice::task {
namespace {

HeaderFilter Make(const std::string& json) {
  v1::HeaderBasedFilterConfig config;
  auto parsed = google::protobuf::util::JsonStringToMessage(json, &config);
  EXPECT_TRUE(parsed.ok()) << parsed.ToString();
  auto filter = HeaderFilter::Create(config);
  EXPECT_TRUE(filter.ok()) << filter.status();
  return *std::move(filter);
}

HeaderFilter::Outcome Eval(HeaderFilter& filter, std::vector<KafkaHeader> headers) {
  KafkaEnvelope meta;
  meta.headers = std::move(headers);
  std::string error;
  return filter.Evaluate(meta, &error);
}

using Outcome = HeaderFilter::Outcome;

TEST(HeaderFilter, MatchesOnHeaderValuesTheLastOfARepeatedNameCounting) {
  HeaderFilter filter = Make(R"({"filter": {"type": "and", "fields": [
      {"type": "selector", "dimension": "env", "value": "prod"},
      {"type": "not", "field": {"type": "in", "dimension": "team", "values": ["x", "y"]}}]}})");
  EXPECT_EQ(Eval(filter, {{"env", "prod", true}}), Outcome::kPass);
  EXPECT_EQ(Eval(filter, {{"env", "dev", true}}), Outcome::kSkip);
  EXPECT_EQ(Eval(filter, {}), Outcome::kSkip);  // absent: null
  EXPECT_EQ(Eval(filter, {{"env", "prod", true}, {"team", "x", true}}), Outcome::kSkip);
  EXPECT_EQ(Eval(filter, {{"env", "dev", true}, {"env", "prod", true}}), Outcome::kPass);
  EXPECT_EQ(Eval(filter, {{"env", "prod", true}, {"env", "dev", true}}), Outcome::kSkip);
  // A header without a value is null.
  EXPECT_EQ(Eval(filter, {{"env", "", false}}), Outcome::kSkip);
}

TEST(HeaderFilter, ValuesAreDecodedPerTheEncoding) {
  HeaderFilter hex = Make(
      R"({"filter": {"type": "selector", "dimension": "id", "value": "00ff"}, "encoding": "HEX"})");
  EXPECT_EQ(Eval(hex, {{"id", absl::string_view("\x00\xff", 2), true}}), Outcome::kPass);
  HeaderFilter utf8 = Make(R"({"filter": {"type": "selector", "dimension": "id", "value": "a"}})");
  KafkaEnvelope meta;
  meta.headers = {{"id", "\xff", true}};
  std::string error;
  EXPECT_EQ(utf8.Evaluate(meta, &error), Outcome::kBadHeader);
  EXPECT_NE(error.find("header \"id\" is not valid UTF-8"), std::string::npos) << error;
}

TEST(HeaderFilter, CreateNamesTheField) {
  v1::HeaderBasedFilterConfig config;
  auto missing = HeaderFilter::Create(config);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("ioConfig.headerBasedFilterConfig.filter"),
            absl::string_view::npos);
  config.mutable_filter()->set_type("selector");
  config.mutable_filter()->set_dimension("a");
  config.set_encoding("nope");
  auto bad = HeaderFilter::Create(config);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("ioConfig.headerBasedFilterConfig.encoding"),
            absl::string_view::npos);
}

}  // namespace
}  // namespace sluice::task
