// Turns a Kafka record's envelope (KafkaBatch::ReadEnvelope) into the columns
// the row parser takes beside the value (segment::RecordEnvelope), per the
// task's kafka input format (sluice.v1.InputFormat): the key as
// key_column_name (null for a null key), each header h as
// header_column_prefix + h decoded per header_format.encoding (a repeated
// name: the last one counts), the Kafka timestamp as timestamp_column_name
// (epoch millis; absent when the record has none), the topic as
// topic_column_name, and the partition and offset when their columns are
// named.
//
//   SLUICE_ASSIGN_OR_RETURN(auto builder, RecordEnvelopeBuilder::Create(spec.input_format()));
//   std::string error;
//   const segment::RecordEnvelope* envelope = builder.Build(record, meta, &error);
//   if (envelope == nullptr) { BAD_HEADER parse error, `error` says why }
//
// Reuses its buffers: no allocation per record once they have grown. One per
// thread (the read loop); the envelope is valid until the next Build.
#ifndef SLUICE_TASK_RECORD_ENVELOPE_BUILDER_H_
#define SLUICE_TASK_RECORD_ENVELOPE_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/segment/header_decoding.h"
#include "common/segment/record_envelope.h"
#include "sluice/v1/spec.pb.h"
#include "task/kafka_consumer.h"

namespace sluice::task {

class RecordEnvelopeBuilder {
 public:
  // `format` of type "kafka"; empty names take the proto's defaults.
  // INVALID_ARGUMENT for an unknown header encoding.
  static absl::StatusOr<RecordEnvelopeBuilder> Create(const v1::InputFormat& format);

  // The envelope of `record`, or nullptr with *error set when a header name
  // or value does not decode (invalid UTF-8).
  const segment::RecordEnvelope* Build(const KafkaRecord& record, const KafkaEnvelope& meta,
                                       std::string* error);

  // The name of the Kafka timestamp column.
  const std::string& timestamp_column() const { return timestamp_column_; }
  // Whether the Kafka timestamp column carries its text (default) or only
  // the number (RecordEnvelope::timestamp_ms; the column present with an
  // empty value): for a parser that reads the column as the row time only
  // (RowParser::ReadsEnvelopeColumnText false), which then costs no
  // formatting per record.
  void set_timestamp_text(bool write) { timestamp_text_ = write; }

 private:
  RecordEnvelopeBuilder() = default;

  std::string key_column_;
  std::string header_prefix_;
  std::string timestamp_column_;
  std::string topic_column_;
  std::string partition_column_;
  std::string offset_column_;
  segment::HeaderEncoding encoding_ = segment::HeaderEncoding::kUtf8;

  // Reused per record.
  segment::RecordEnvelope envelope_;
  std::vector<uint32_t> order_;              // header indexes, sorted by name
  std::vector<std::string> header_names_;    // prefix + name, per kept header
  std::vector<std::string> header_scratch_;  // decoded values, per kept header
  bool timestamp_text_ = true;
  char timestamp_digits_[24];
  char partition_text_[24];
  char offset_text_[24];
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_RECORD_ENVELOPE_BUILDER_H_
