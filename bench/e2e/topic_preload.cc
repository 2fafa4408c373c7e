#include "bench/e2e/topic_preload.h"

#include "absl/strings/str_cat.h"
#include "common/kafka/producer.h"
#include "common/status_macros.h"

namespace sluice {
namespace bench {

absl::StatusOr<PreloadResult> PreloadTopic(const PreloadOptions& options) {
  if (options.partitions <= 0 || options.records <= 0) {
    return absl::InvalidArgumentError("preload needs partitions > 0 and records > 0");
  }
  // ~1 MB batches (about 4,800 records of 214 B), filled before they leave.
  SLUICE_ASSIGN_OR_RETURN(auto producer,
                          kafka::Producer::Create({{"bootstrap.servers", options.bootstrap},
                                                   // Live: small batches, as a
                                                   // producer keeping up would send.
                                                   {"linger.ms", options.records_per_second > 0
                                                                     ? "5"
                                                                     : "100"},
                                                   {"batch.size", "1000000"},
                                                   {"batch.num.messages", "100000"},
                                                   {"queue.buffering.max.messages", "2000000"},
                                                   {"queue.buffering.max.kbytes", "1048576"},
                                                   {"compression.type", "none"},
                                                   {"acks", "1"}}));
  WikiRowGenerator generator(options.rows);
  PreloadResult result;
  const absl::Time start = absl::Now();
  std::string record;
  for (int64_t i = 0; i < options.records; ++i) {
    if (options.records_per_second > 0 && i % 500 == 0) {
      const absl::Time due = start + absl::Seconds(i / options.records_per_second);
      if (const absl::Time now = absl::Now(); due > now) absl::SleepFor(due - now);
    }
    record.clear();
    generator.AppendNext(&record);
    result.bytes += static_cast<int64_t>(record.size());
    SLUICE_RETURN_IF_ERROR(
        producer->Produce(options.topic, static_cast<int32_t>(i % options.partitions), record));
  }
  SLUICE_RETURN_IF_ERROR(producer->Flush(absl::Minutes(5)));
  result.elapsed = absl::Now() - start;
  const kafka::Producer::Stats stats = producer->stats();
  if (stats.delivered != options.records || stats.failed != 0) {
    return absl::InternalError(absl::StrCat("preload delivered ", stats.delivered, " of ",
                                            options.records, " records (", stats.failed,
                                            " failed)"));
  }
  result.records = stats.delivered;
  result.malformed = static_cast<int64_t>(generator.malformed());
  for (const auto& [key, end] : producer->delivered_end_offsets()) {
    if (key.first == options.topic) result.end_offsets[key.second] = end;
  }
  return result;
}

}  // namespace bench
}  // namespace sluice
