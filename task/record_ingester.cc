#include "task/record_ingester.h"

#include <glog/logging.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "task/text_util.h"

namespace sluice::task {
namespace {

RecordIngester::Outcome Read() {
  RecordIngester::Outcome outcome;
  outcome.read = true;
  return outcome;
}

}  // namespace

RecordIngester::RecordIngester(RecordIngesterOptions options)
    : options_(std::move(options)),
      spec_(*options_.spec),
      settings_(*options_.settings),
      router_(*options_.router) {}

absl::Status RecordIngester::Initialize() {
  parser_ = options_.engine->NewParser();
  ahead_parser_ = options_.engine->NewParser();
  if (spec_.input_format().type() == "kafka") {
    SLUICE_ASSIGN_OR_RETURN(envelope_builder_, RecordEnvelopeBuilder::Create(spec_.input_format()));
    // The Kafka timestamp as text only for a spec that reads it as text.
    envelope_builder_->set_timestamp_text(
        parser_->ReadsEnvelopeColumnText(envelope_builder_->timestamp_column()));
  }
  if (spec_.has_header_based_filter_config()) {
    SLUICE_ASSIGN_OR_RETURN(header_filter_, HeaderFilter::Create(spec_.header_based_filter_config()));
  }
  return absl::OkStatus();
}

void RecordIngester::RestoreCounters(const state::Counters& saved) {
  counters_.processed = saved.processed();
  counters_.processed_bytes = saved.processed_bytes();
  counters_.unparseable = saved.unparseable();
  counters_.thrown_away = saved.thrown_away();
}

void RecordIngester::ClearInMemory() {
  counters_.rows_in_memory = 0;
  counters_.bytes_in_memory = 0;
}

RecordIngester::Outcome RecordIngester::ThrowAway(state::PartitionCounts& counts,
                                                  int64_t& current, int64_t offset) {
  counts.set_thrown_away(counts.thrown_away() + 1);
  ++counters_.thrown_away;
  current = offset + 1;
  return Read();
}

absl::Status RecordIngester::Unparseable(const KafkaRecord& record, const RowParseError& error,
                                         state::PartitionCounts& counts, int64_t& current) {
  // Counted and sampled as unparseable; reading goes on past it.
  counts.set_unparseable(counts.unparseable() + 1);
  ++counters_.unparseable;
  current = record.offset + 1;
  LOG_EVERY_N(WARNING, 100) << options_.log_prefix << " unparseable record at partition "
                            << record.partition << " offset " << record.offset << ": "
                            << error.kind << ": " << error.message << " (" << google::COUNTER
                            << " so far)";
  v1::ParseErrorSample sample;
  sample.set_partition(record.partition);
  sample.set_offset(record.offset);
  sample.set_kind(error.kind);
  sample.set_message(SanitizeUtf8(error.message, 512));
  sample.set_time_ms(NowMillis());
  sample.set_snippet(SanitizeUtf8(record.value, 256));
  options_.control->AddParseError(sample, settings_.tuning.max_saved_parse_exceptions(),
                                  counters_.unparseable);
  if (settings_.tuning.has_max_parse_exceptions() &&
      counters_.unparseable > settings_.tuning.max_parse_exceptions()) {
    return absl::FailedPreconditionError(absl::StrCat(
        counters_.unparseable, " unparseable records exceed tuningConfig.maxParseExceptions = ",
        settings_.tuning.max_parse_exceptions(), "; the last one, at partition ", record.partition,
        " offset ", record.offset, ": ", error.kind, ": ", sample.message()));
  }
  return absl::OkStatus();
}

void RecordIngester::ReadAhead(const KafkaBatch& batch, size_t i, SegmentIndex& index) {
  // ahead_error_ is written (and read) only when the parse fails.
  ahead_row_ = ahead_parser_->Parse(batch[i].value, &ahead_error_);
  // The index of this record: most often the next one's too.
  if (ahead_row_ != nullptr && !ahead_row_->thrown_away()) index.Prefetch(*ahead_row_);
  ahead_ready_ = true;
  ahead_serial_ = batch.serial();
  ahead_record_ = i;
}

absl::StatusOr<RecordIngester::Outcome> RecordIngester::Ingest(const KafkaBatch& batch,
                                                               size_t i) {
  const KafkaRecord record = batch[i];
  const int32_t p = record.partition;
  const int slot = router_.SlotOf(p);
  if (slot < 0) {
    return absl::InternalError(
        absl::StrCat("got a record of partition ", p, ", which this task does not read"));
  }
  int64_t& current = options_.reader->current(slot);
  const int64_t offset = record.offset;
  if (offset < current) {
    return absl::DataLossError(absl::StrCat("offset went backwards on partition ", p, ": got ",
                                            offset, " after reading up to ", current - 1));
  }
  if (offset >= router_.task_end(slot)) return Outcome{};  // past the final end: skip
  const int route = router_.Route(slot, offset);
  if (route < 0) {
    return absl::InternalError(
        absl::StrCat("no sequence takes offset ", offset, " of partition ", p));
  }
  state::PartitionCounts& counts = router_.counts(route, slot);

  RowParseError error;
  const ParsedRow* row;
  const bool plain = !envelope_builder_ && !header_filter_;
  if (plain) {
    if (ahead_ready_ && ahead_record_ == i && ahead_serial_ == batch.serial()) {
      std::swap(parser_, ahead_parser_);
      row = ahead_row_;
      if (row == nullptr) error = std::move(ahead_error_);
    } else {
      row = parser_->Parse(record.value, &error);
    }
    ahead_ready_ = false;
  } else {
    // The kafka input format or the header filter: the record's envelope.
    batch.ReadEnvelope(i, &envelope_meta_);
    const segment::RecordEnvelope* envelope = nullptr;
    if (header_filter_) {
      const HeaderFilter::Outcome outcome = header_filter_->Evaluate(envelope_meta_, &error.message);
      // Filtered out before parsing: thrown away, like a row outside the
      // message time window.
      if (outcome == HeaderFilter::Outcome::kSkip) return ThrowAway(counts, current, offset);
      if (outcome == HeaderFilter::Outcome::kBadHeader) error.kind = "BAD_HEADER";
    }
    if (error.kind.empty() && envelope_builder_) {
      envelope = envelope_builder_->Build(record, envelope_meta_, &error.message);
      if (envelope == nullptr) error.kind = "BAD_HEADER";
    }
    row = !error.kind.empty() ? nullptr
          : envelope != nullptr ? parser_->Parse(record.value, *envelope, &error)
                                : parser_->Parse(record.value, &error);
  }
  if (row == nullptr) {
    SLUICE_RETURN_IF_ERROR(Unparseable(record, error, counts, current));
    return Read();
  }
  const int64_t time = row->timestamp_ms();
  // Thrown away: filtered out by the transformSpec, or outside the message
  // time window (Druid's lateMessageRejection / earlyMessageRejection).
  if (row->thrown_away() ||
      (spec_.minimum_message_time_ms() != 0 && time < spec_.minimum_message_time_ms()) ||
      (spec_.maximum_message_time_ms() != 0 && time > spec_.maximum_message_time_ms())) {
    return ThrowAway(counts, current, offset);
  }
  SLUICE_ASSIGN_OR_RETURN(SegmentBuild * build,
                          options_.segments->For(router_.routes()[route], time));
  SegmentIndex& index = *build->index;
  if (plain && i + 1 < batch.size()) ReadAhead(batch, i + 1, index);
  const int64_t rows_before = index.rows();
  const int64_t bytes_before = index.estimated_bytes();
  if (absl::Status added = index.Add(*row, p, offset); !added.ok()) {
    if (!absl::IsOutOfRange(added)) return added;
    // The record would bring its segment past a bound (the discovered
    // dimensions): unparseable, like a value beyond the value limit.
    error.kind = "VALUE_TOO_LARGE";
    error.message = std::string(added.message());
    SLUICE_RETURN_IF_ERROR(Unparseable(record, error, counts, current));
    return Read();
  }
  const int64_t rows_added = index.rows() - rows_before;
  build->rows_total += rows_added;
  ++build->records_per_slot[slot];
  counts.set_rows(counts.rows() + 1);
  ++counters_.processed;
  counters_.processed_bytes += static_cast<int64_t>(record.value.size());
  counters_.rows_in_memory += rows_added;
  counters_.bytes_in_memory += index.estimated_bytes() - bytes_before;
  int64_t& sequence_rows = router_.rows(route);
  sequence_rows += rows_added;
  current = offset + 1;
  Outcome outcome = Read();
  outcome.route = route;
  outcome.segment_rows = build->rows_total;
  outcome.sequence_rows = sequence_rows;
  return outcome;
}

}  // namespace sluice::task
