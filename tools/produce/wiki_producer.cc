#include "tools/produce/wiki_producer.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/kafka/metadata_client.h"
#include "common/kafka/producer.h"
#include "common/status_macros.h"

namespace sluice {
namespace produce {
namespace {

// The properties a metadata (consumer-side) client needs: where the cluster
// is and how to reach it securely, none of the producer's tuning.
kafka::KafkaProperties ConnectionProperties(const kafka::KafkaProperties& properties) {
  kafka::KafkaProperties out;
  for (const auto& [name, value] : properties) {
    if (name == "bootstrap.servers" || name == "client.id" || absl::StartsWith(name, "security.") ||
        absl::StartsWith(name, "ssl.") || absl::StartsWith(name, "sasl.")) {
      out[name] = value;
    }
  }
  return out;
}

absl::Status Validate(const ProduceOptions& options) {
  if (options.properties.count("bootstrap.servers") == 0) {
    return absl::InvalidArgumentError("producer properties need bootstrap.servers");
  }
  if (options.topic.empty()) return absl::InvalidArgumentError("no topic given");
  if (options.records < 0) return absl::InvalidArgumentError("records must be >= 0");
  if (options.rate < 0) return absl::InvalidArgumentError("rate must be >= 0");
  if (options.duration < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("duration must be >= 0");
  }
  if (options.records == 0 && options.duration == absl::ZeroDuration() && !options.should_stop) {
    return absl::InvalidArgumentError(
        "give a number of records, a duration, or both (otherwise it never stops)");
  }
  if (options.rows.malformed_fraction < 0 || options.rows.malformed_fraction > 1) {
    return absl::InvalidArgumentError("malformed fraction must be in [0, 1]");
  }
  return absl::OkStatus();
}

}  // namespace

kafka::KafkaProperties DefaultProducerProperties() {
  return {
      {"linger.ms", "20"},
      {"batch.size", "1000000"},
      {"batch.num.messages", "20000"},
      {"enable.idempotence", "true"},
      {"acks", "all"},
      {"queue.buffering.max.messages", "500000"},
  };
}

absl::StatusOr<kafka::KafkaProperties> ParseProperties(absl::string_view text) {
  kafka::KafkaProperties out;
  for (absl::string_view pair : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    const size_t eq = pair.find('=');
    if (eq == absl::string_view::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", pair, "\" is not NAME=VALUE (e.g. linger.ms=5)"));
    }
    out[std::string(absl::StripAsciiWhitespace(pair.substr(0, eq)))] =
        std::string(absl::StripAsciiWhitespace(pair.substr(eq + 1)));
  }
  return out;
}

std::string ProduceResult::ToString() const {
  std::string out;
  for (const auto& [partition, count] : partitions) {
    absl::StrAppend(&out, "partition ", partition, ": ", count.records, " records (",
                    count.malformed, " malformed), offsets [", count.start_offset, ", ",
                    count.end_offset, ")\n");
  }
  const double seconds = absl::ToDoubleSeconds(elapsed);
  absl::StrAppend(&out, "total: ", records, " records (", malformed, " malformed) to ", topic,
                  " in ", absl::StrFormat("%.1fs", seconds), " (",
                  seconds > 0 ? static_cast<int64_t>(records / seconds) : 0, " records/s)\n");
  return out;
}

std::string ProduceResult::ToJson() const {
  std::vector<std::string> parts;
  for (const auto& [partition, count] : partitions) {
    parts.push_back(absl::StrCat(
        "\"", partition, "\":{\"records\":", count.records, ",\"malformed\":", count.malformed,
        ",\"start_offset\":", count.start_offset, ",\"end_offset\":", count.end_offset, "}"));
  }
  // Topic names are [A-Za-z0-9._-] in Kafka: no escaping needed.
  return absl::StrCat("{\"topic\":\"", topic, "\",\"records\":", records,
                      ",\"malformed\":", malformed,
                      ",\"elapsed_ms\":", absl::ToInt64Milliseconds(elapsed), ",\"partitions\":{",
                      absl::StrJoin(parts, ","), "}}");
}

absl::StatusOr<ProduceResult> ProduceWikiRecords(const ProduceOptions& options) {
  SLUICE_RETURN_IF_ERROR(Validate(options));
  SLUICE_ASSIGN_OR_RETURN(auto metadata,
                          kafka::MetadataClient::Create(ConnectionProperties(options.properties)));
  SLUICE_ASSIGN_OR_RETURN(std::vector<int32_t> partitions,
                          metadata->ListPartitions(options.topic, options.metadata_timeout));
  if (partitions.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("topic ", options.topic, " has no partitions"));
  }
  SLUICE_ASSIGN_OR_RETURN(
      auto before, metadata->QueryWatermarks(options.topic, partitions, options.metadata_timeout));

  kafka::KafkaProperties properties = options.properties;
  for (const auto& [name, value] : DefaultProducerProperties()) properties.emplace(name, value);
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<kafka::Producer> producer,
                          kafka::Producer::Create(properties));

  ProduceResult result;
  result.topic = options.topic;
  for (int32_t p : partitions) result.partitions[p].start_offset = before[p].latest;
  bench::WikiRowGenerator generator(options.rows);
  std::string record;
  const absl::Time start = absl::Now();
  absl::Time next_progress = start + options.progress_interval;
  auto progress = [&](absl::Time now) {
    if (!options.on_progress) return;
    ProduceProgress p;
    p.produced = result.records;
    p.delivered = producer->stats().delivered;
    p.malformed = result.malformed;
    p.elapsed = now - start;
    options.on_progress(p);
  };

  absl::Status status;
  for (int64_t i = 0; options.records == 0 || i < options.records; ++i) {
    absl::Time now = absl::Now();
    if (options.duration > absl::ZeroDuration() && now - start >= options.duration) break;
    if (options.should_stop && options.should_stop()) break;
    if (options.rate > 0) {
      // Record i is due at start + i / rate.
      const absl::Time due = start + absl::Seconds(static_cast<double>(i) / options.rate);
      if (due > now) {
        absl::SleepFor(std::min(due - now, absl::Milliseconds(50)));
        --i;  // Check the stop conditions again before producing it.
        continue;
      }
    }
    if (now >= next_progress) {
      progress(now);
      next_progress = now + options.progress_interval;
    }
    const int32_t partition = partitions[static_cast<size_t>(i) % partitions.size()];
    record.clear();
    const uint64_t malformed_before = generator.malformed();
    generator.AppendNext(&record);
    const bool malformed = generator.malformed() != malformed_before;
    status = producer->Produce(options.topic, partition, record);
    if (!status.ok()) break;
    PartitionCount& count = result.partitions[partition];
    ++count.records;
    ++result.records;
    if (malformed) {
      ++count.malformed;
      ++result.malformed;
    }
  }
  // Flush even after an error: what was enqueued is delivered or failed, and
  // a delivery failure is the more useful message.
  const absl::Status flushed = producer->Flush(options.flush_timeout);
  result.elapsed = absl::Now() - start;
  progress(absl::Now());
  SLUICE_RETURN_IF_ERROR(flushed);
  SLUICE_RETURN_IF_ERROR(status);
  const kafka::Producer::Stats stats = producer->stats();
  if (stats.failed != 0 || stats.delivered != result.records) {
    return absl::InternalError(absl::StrCat("produced ", result.records, " records but ",
                                            stats.delivered, " were delivered and ", stats.failed,
                                            " failed"));
  }
  for (const auto& [key, end] : producer->delivered_end_offsets()) {
    if (key.first == options.topic) result.partitions[key.second].end_offset = end;
  }
  for (auto& [p, count] : result.partitions) {
    if (count.records == 0) count.end_offset = count.start_offset;
  }
  return result;
}

}  // namespace produce
}  // namespace sluice
