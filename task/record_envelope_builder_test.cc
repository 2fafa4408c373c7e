#include "task/record_envelope_builder.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace sluice::task {
namespace {

// Column name -> value ("<null>" when absent).
std::map<std::string, std::string> Columns(const segment::RecordEnvelope& envelope) {
  std::map<std::string, std::string> out;
  for (const segment::EnvelopeColumn& c : envelope.columns) {
    EXPECT_EQ(out.count(std::string(c.name)), 0u) << "repeated column " << c.name;
    out[std::string(c.name)] = c.present ? std::string(c.value) : "<null>";
  }
  return out;
}

KafkaEnvelope Meta() {
  KafkaEnvelope meta;
  meta.has_key = true;
  meta.key = "user-1";
  meta.timestamp_ms = 1796004944123;
  meta.topic = "wiki";
  meta.headers = {{"source", "web", true}, {"trace", "", false}, {"source", "app", true}};
  return meta;
}

TEST(RecordEnvelopeBuilder, DefaultColumnNamesAndTheLastOfARepeatedHeader) {
  v1::InputFormat format;
  format.set_type("kafka");
  auto builder = RecordEnvelopeBuilder::Create(format);
  ASSERT_TRUE(builder.ok()) << builder.status();
  std::string error;
  const segment::RecordEnvelope* envelope =
      builder->Build(KafkaRecord{3, 42, "{}"}, Meta(), &error);
  ASSERT_NE(envelope, nullptr) << error;
  const std::map<std::string, std::string> want = {
      {"kafka.key", "user-1"},
      {"kafka.timestamp", "1796004944123"},
      {"kafka.topic", "wiki"},
      {"kafka.header.source", "app"},
      {"kafka.header.trace", "<null>"},
  };
  EXPECT_EQ(Columns(*envelope), want);
  ASSERT_GE(envelope->timestamp_column, 0);
  EXPECT_EQ(envelope->columns[envelope->timestamp_column].name, "kafka.timestamp");
}

TEST(RecordEnvelopeBuilder, NamedColumnsNullKeyNoTimestampAndEncodings) {
  v1::InputFormat format;
  format.set_type("kafka");
  format.set_key_column_name("k");
  format.set_header_column_prefix("h_");
  format.set_timestamp_column_name("ts");
  format.set_topic_column_name("t");
  format.set_partition_column_name("p");
  format.set_offset_column_name("o");
  format.mutable_header_format()->set_encoding("HEX");
  auto builder = RecordEnvelopeBuilder::Create(format);
  ASSERT_TRUE(builder.ok()) << builder.status();
  KafkaEnvelope meta;
  meta.topic = "wiki";
  meta.partition = 3;
  meta.headers = {{"bin", absl::string_view("\x01\xff", 2), true}};
  std::string error;
  // The column holds the Kafka partition, not the stream partition id (7,
  // as a topic-pattern task's record has it).
  const segment::RecordEnvelope* envelope = builder->Build(KafkaRecord{7, 42, "{}"}, meta, &error);
  ASSERT_NE(envelope, nullptr) << error;
  const std::map<std::string, std::string> want = {
      {"k", "<null>"}, {"ts", "<null>"}, {"t", "wiki"}, {"p", "3"}, {"o", "42"}, {"h_bin", "01ff"},
  };
  EXPECT_EQ(Columns(*envelope), want);
  // The buffers are reused: a second record with other headers.
  meta.headers = {{"a", "x", true}, {"b", "y", true}, {"c", "z", true}};
  envelope = builder->Build(KafkaRecord{3, 43, "{}"}, meta, &error);
  ASSERT_NE(envelope, nullptr) << error;
  EXPECT_EQ(Columns(*envelope).at("h_c"), "7a");
  EXPECT_EQ(Columns(*envelope).at("o"), "43");
  EXPECT_EQ(Columns(*envelope).count("h_bin"), 0u);
}

// The Kafka timestamp also as a number, so that the parser takes the row
// time without reading the text back; none when the record has none.
TEST(RecordEnvelopeBuilder, TheKafkaTimestampAlsoAsANumber) {
  v1::InputFormat format;
  format.set_type("kafka");
  auto builder = RecordEnvelopeBuilder::Create(format);
  ASSERT_TRUE(builder.ok()) << builder.status();
  std::string error;
  KafkaEnvelope meta = Meta();
  const segment::RecordEnvelope* envelope = builder->Build(KafkaRecord{0, 1, "{}"}, meta, &error);
  ASSERT_NE(envelope, nullptr) << error;
  ASSERT_TRUE(envelope->timestamp_ms.has_value());
  EXPECT_EQ(*envelope->timestamp_ms, 1796004944123);
  EXPECT_EQ(envelope->columns[envelope->timestamp_column].value, "1796004944123");
  // The builder is reused: a record without a timestamp has no number either.
  meta.timestamp_ms = -1;
  envelope = builder->Build(KafkaRecord{0, 2, "{}"}, meta, &error);
  ASSERT_NE(envelope, nullptr) << error;
  EXPECT_FALSE(envelope->timestamp_ms.has_value());
  EXPECT_FALSE(envelope->columns[envelope->timestamp_column].present);
}

// For a parser that reads the Kafka timestamp as the row time only: the
// number without its text, the column still present.
TEST(RecordEnvelopeBuilder, TheKafkaTimestampTextOnlyWhenAsked) {
  v1::InputFormat format;
  format.set_type("kafka");
  format.set_timestamp_column_name("ts");
  auto builder = RecordEnvelopeBuilder::Create(format);
  ASSERT_TRUE(builder.ok()) << builder.status();
  EXPECT_EQ(builder->timestamp_column(), "ts");
  builder->set_timestamp_text(false);
  std::string error;
  const segment::RecordEnvelope* envelope = builder->Build(KafkaRecord{0, 1, "{}"}, Meta(), &error);
  ASSERT_NE(envelope, nullptr) << error;
  ASSERT_TRUE(envelope->timestamp_ms.has_value());
  EXPECT_EQ(*envelope->timestamp_ms, 1796004944123);
  EXPECT_EQ(envelope->columns[envelope->timestamp_column].name, "ts");
  EXPECT_TRUE(envelope->columns[envelope->timestamp_column].present);
  EXPECT_EQ(envelope->columns[envelope->timestamp_column].value, "");
  builder->set_timestamp_text(true);
  envelope = builder->Build(KafkaRecord{0, 2, "{}"}, Meta(), &error);
  ASSERT_NE(envelope, nullptr) << error;
  EXPECT_EQ(envelope->columns[envelope->timestamp_column].value, "1796004944123");
}

TEST(RecordEnvelopeBuilder, InvalidUtf8IsABadHeader) {
  v1::InputFormat format;
  format.set_type("kafka");
  auto builder = RecordEnvelopeBuilder::Create(format);
  ASSERT_TRUE(builder.ok());
  KafkaEnvelope meta = Meta();
  meta.headers = {{"source", "caf\xe9", true}};
  std::string error;
  EXPECT_EQ(builder->Build(KafkaRecord{0, 0, "{}"}, meta, &error), nullptr);
  EXPECT_NE(error.find("\"kafka.header.source\" is not valid UTF-8"), std::string::npos) << error;
  meta.headers = {{"bad\xff", "v", true}};
  EXPECT_EQ(builder->Build(KafkaRecord{0, 0, "{}"}, meta, &error), nullptr);
  EXPECT_NE(error.find("name"), std::string::npos) << error;
  // ISO-8859-1 takes any byte.
  format.mutable_header_format()->set_encoding("ISO-8859-1");
  builder = RecordEnvelopeBuilder::Create(format);
  ASSERT_TRUE(builder.ok());
  meta.headers = {{"source", "caf\xe9", true}};
  const segment::RecordEnvelope* envelope = builder->Build(KafkaRecord{0, 0, "{}"}, meta, &error);
  ASSERT_NE(envelope, nullptr);
  EXPECT_EQ(Columns(*envelope).at("kafka.header.source"), "caf\xc3\xa9");
  // An unknown encoding does not make a builder.
  format.mutable_header_format()->set_encoding("UTF-7");
  auto bad = RecordEnvelopeBuilder::Create(format);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("ioConfig.inputFormat.headerFormat.encoding"),
            absl::string_view::npos);
}

}  // namespace
}  // namespace sluice::task
