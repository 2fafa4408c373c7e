#include "task/record_envelope_builder.h"

#include <algorithm>
#include <charconv>

#include "absl/strings/str_cat.h"
#include "common/spec.h"
#include "common/status_macros.h"

namespace sluice::task {
namespace {

absl::string_view Decimal(int64_t n, char (&buffer)[24]) {
  const std::to_chars_result end = std::to_chars(buffer, buffer + sizeof(buffer), n);
  return absl::string_view(buffer, static_cast<size_t>(end.ptr - buffer));
}

}  // namespace

absl::StatusOr<RecordEnvelopeBuilder> RecordEnvelopeBuilder::Create(
    const v1::InputFormat& format) {
  v1::InputFormat filled = format;
  ApplyInputFormatDefaults(&filled);
  RecordEnvelopeBuilder builder;
  builder.key_column_ = filled.key_column_name();
  builder.header_prefix_ = filled.header_column_prefix();
  builder.timestamp_column_ = filled.timestamp_column_name();
  builder.topic_column_ = filled.topic_column_name();
  builder.partition_column_ = filled.partition_column_name();
  builder.offset_column_ = filled.offset_column_name();
  absl::StatusOr<segment::HeaderEncoding> encoding =
      segment::ParseHeaderEncoding(filled.header_format().encoding());
  if (!encoding.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ioConfig.inputFormat.headerFormat.encoding: ", encoding.status().message()));
  }
  builder.encoding_ = *encoding;
  return builder;
}

const segment::RecordEnvelope* RecordEnvelopeBuilder::Build(const KafkaRecord& record,
                                                            const KafkaEnvelope& meta,
                                                            std::string* error) {
  // Headers: sorted by name (stable, so that of a repeated name the last one
  // ends its run and is the one kept).
  const std::vector<KafkaHeader>& headers = meta.headers;
  order_.resize(headers.size());
  for (uint32_t i = 0; i < order_.size(); ++i) order_[i] = i;
  std::stable_sort(order_.begin(), order_.end(), [&headers](uint32_t a, uint32_t b) {
    return headers[a].name < headers[b].name;
  });
  size_t kept = 0;
  for (size_t i = 0; i < order_.size(); ++i) {
    if (i + 1 < order_.size() && headers[order_[i]].name == headers[order_[i + 1]].name) continue;
    order_[kept++] = order_[i];
  }
  order_.resize(kept);
  // The strings first, the views after: growing a vector of strings moves
  // them.
  if (header_names_.size() < kept) {
    header_names_.resize(kept);
    header_scratch_.resize(kept);
  }
  std::vector<segment::EnvelopeColumn>& columns = envelope_.columns;
  columns.clear();
  columns.push_back({key_column_, meta.key, meta.has_key});
  envelope_.timestamp_column = static_cast<int32_t>(columns.size());
  envelope_.timestamp_ms =
      meta.timestamp_ms >= 0 ? std::optional<int64_t>(meta.timestamp_ms) : std::nullopt;
  columns.push_back({timestamp_column_,
                     meta.timestamp_ms >= 0 && timestamp_text_
                         ? Decimal(meta.timestamp_ms, timestamp_digits_)
                         : absl::string_view(),
                     meta.timestamp_ms >= 0});
  columns.push_back({topic_column_, meta.topic, true});
  if (!partition_column_.empty()) {
    columns.push_back({partition_column_, Decimal(meta.partition, partition_text_), true});
  }
  if (!offset_column_.empty()) {
    columns.push_back({offset_column_, Decimal(record.offset, offset_text_), true});
  }
  std::string unused;
  for (size_t k = 0; k < kept; ++k) {
    const KafkaHeader& header = headers[order_[k]];
    absl::string_view checked;
    if (!segment::DecodeHeader(segment::HeaderEncoding::kUtf8, header.name, &unused, &checked)) {
      *error = "a header name is not valid UTF-8";
      return nullptr;
    }
    header_names_[k].assign(header_prefix_);
    header_names_[k].append(header.name.data(), header.name.size());
  }
  for (size_t k = 0; k < kept; ++k) {
    const KafkaHeader& header = headers[order_[k]];
    absl::string_view value;
    if (header.has_value &&
        !segment::DecodeHeader(encoding_, header.value, &header_scratch_[k], &value)) {
      *error = absl::StrCat("header \"", header_names_[k].substr(0, 64), "\" is not valid ",
                            segment::HeaderEncodingName(encoding_));
      return nullptr;
    }
    columns.push_back({header_names_[k], value, header.has_value});
  }
  return &envelope_;
}

}  // namespace sluice::task
