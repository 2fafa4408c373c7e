// The envelope of a Kafka record as columns of the row (the "kafka" input
// format, sluice.v1.InputFormat): key, headers, Kafka timestamp, topic and
// optionally partition and offset, each already named (e.g. "kafka.key",
// "kafka.header.source") and decoded to text. RowParser::Parse takes it beside
// the record value; the value's fields win over envelope columns of the same
// name (as in Druid's KafkaInputReader, which merges the value's map over the
// envelope's): an envelope column only fills what the value leaves absent or
// null.
//
// The views point into storage the caller keeps until the row has been added
// to the index (task/record_envelope_builder.h reuses its buffers per record).
#ifndef SLUICE_COMMON_SEGMENT_RECORD_ENVELOPE_H_
#define SLUICE_COMMON_SEGMENT_RECORD_ENVELOPE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"

namespace sluice {
namespace segment {

struct EnvelopeColumn {
  absl::string_view name;
  // Absent (a null key, a header without a value): the column is null.
  absl::string_view value;
  bool present = false;
};

struct RecordEnvelope {
  std::vector<EnvelopeColumn> columns;
  // Index in `columns` of the Kafka timestamp column (its value the epoch
  // millis as decimal text, or empty when no parse reads the text:
  // RowParser::ReadsColumnText, timestamp_ms then carries it), or -1. When
  // it is the schema's timestamp column it is read as a number per the
  // timestamp format.
  int32_t timestamp_column = -1;
  // The same Kafka timestamp as a number, when the one who built the
  // envelope has it: the row time is then taken from it (as from its text,
  // value and errors alike) without reading the text back.
  std::optional<int64_t> timestamp_ms;
};

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_RECORD_ENVELOPE_H_
