// A scripted StreamMetadata: partitions and watermarks set by the test, and
// an error to return instead (e.g. UNAVAILABLE: Kafka unreachable).
#ifndef SLUICE_SUPERVISOR_TESTING_FAKE_STREAM_METADATA_H_
#define SLUICE_SUPERVISOR_TESTING_FAKE_STREAM_METADATA_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "supervisor/stream_metadata.h"

namespace sluice::supervisor::testing {

class FakeStream {
 public:
  void SetPartitions(int count, int64_t earliest = 0, int64_t latest = 0) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    marks_.clear();
    for (int p = 0; p < count; ++p) marks_[p] = {earliest, latest};
  }
  void SetWatermarks(int32_t partition, int64_t earliest, int64_t latest) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    marks_[partition] = {earliest, latest};
  }
  // The Kafka timestamp of a partition's newest record (for the time lag).
  void SetNewestTimestamp(int32_t partition, int64_t timestamp_ms) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    newest_[partition] = timestamp_ms;
  }
  void SetError(absl::Status error) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    error_ = std::move(error);
  }
  // A topic pattern's stream from now on: the listed (topic, partition)s
  // and their watermarks, which each view lists under the stream partition
  // ids it gives (as the Kafka one does). Replaces SetPartitions' list.
  void SetTopicPartition(const std::string& topic, int32_t partition, int64_t earliest,
                         int64_t latest) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    pattern_marks_[{topic, partition}] = {earliest, latest};
  }
  // Every query takes this long (a slow or distant cluster).
  void SetDelay(absl::Duration delay) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    delay_ = delay;
  }

  // A broker that takes this long to answer (an idle or distant one): a
  // query given a shorter deadline fails DEADLINE_EXCEEDED at once, as
  // librdkafka's does once the deadline passed (no sleep in the tests).
  void SetAnswerTime(absl::Duration answer_time) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    answer_time_ = answer_time;
  }
  // How many partition listings were asked (each query starts with one).
  int listings() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return listings_;
  }

  // Runs in the factory, for every view created (with the spec's
  // datasource), before it returns: a connection whose setup takes a while.
  void SetOnCreate(std::function<void(const std::string& datasource)> on_create)
      ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    on_create_ = std::move(on_create);
  }

  // A factory handing out views of this stream (it must outlive them).
  StreamMetadataFactory Factory() {
    return [this](const v1::SupervisorSpec& spec)
               -> absl::StatusOr<std::unique_ptr<StreamMetadata>> {
      std::function<void(const std::string&)> on_create;
      {
        absl::MutexLock lock(&mu_);
        on_create = on_create_;
      }
      if (on_create) on_create(spec.datasource());
      return std::unique_ptr<StreamMetadata>(new View(this));
    };
  }

 private:
  class View : public StreamMetadata {
   public:
    explicit View(FakeStream* stream) : stream_(stream) {}
    absl::StatusOr<std::vector<int32_t>> ListPartitions(absl::Duration timeout) override {
      stream_->Delay();
      absl::MutexLock lock(&stream_->mu_);
      stream_->listings_++;
      if (!stream_->error_.ok()) return stream_->error_;
      if (timeout < stream_->answer_time_) return stream_->TooShort("list partitions", timeout);
      if (!stream_->pattern_marks_.empty()) {
        std::vector<TopicPartition> names;
        for (const auto& [name, m] : stream_->pattern_marks_) names.push_back(name);
        return ids_.IdsOf(std::move(names));
      }
      std::vector<int32_t> out;
      for (const auto& [p, m] : stream_->marks_) out.push_back(p);
      return out;
    }
    absl::StatusOr<std::map<int32_t, PartitionWatermarks>> QueryWatermarks(
        const std::vector<int32_t>& partitions, absl::Duration timeout) override {
      stream_->Delay();
      absl::MutexLock lock(&stream_->mu_);
      if (!stream_->error_.ok()) return stream_->error_;
      if (timeout < stream_->answer_time_) return stream_->TooShort("watermarks", timeout);
      std::map<int32_t, PartitionWatermarks> out;
      for (int32_t p : partitions) {
        if (!stream_->pattern_marks_.empty()) {
          std::optional<TopicPartition> name = ids_.Find(p);
          auto it = name ? stream_->pattern_marks_.find(*name) : stream_->pattern_marks_.end();
          if (it == stream_->pattern_marks_.end()) return absl::NotFoundError("no such partition");
          out[p] = it->second;
          continue;
        }
        auto it = stream_->marks_.find(p);
        if (it == stream_->marks_.end()) return absl::NotFoundError("no such partition");
        out[p] = it->second;
      }
      return out;
    }
    absl::StatusOr<std::map<int32_t, int64_t>> QueryNewestTimestamps(
        const std::map<int32_t, int64_t>& latest_offsets, absl::Duration) override {
      absl::MutexLock lock(&stream_->mu_);
      if (!stream_->error_.ok()) return stream_->error_;
      std::map<int32_t, int64_t> out;
      for (const auto& [p, latest] : latest_offsets) {
        auto it = stream_->newest_.find(p);
        if (latest > 0 && it != stream_->newest_.end()) out[p] = it->second;
      }
      return out;
    }

    StreamPartitionIds* stream_partition_ids() override {
      absl::MutexLock lock(&stream_->mu_);
      return stream_->pattern_marks_.empty() ? nullptr : &ids_;
    }

   private:
    FakeStream* stream_;
    StreamPartitionIds ids_;
  };

  absl::Status TooShort(const char* what, absl::Duration timeout) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return absl::DeadlineExceededError(
        absl::StrCat(what, ": no answer within ", absl::FormatDuration(timeout),
                     " (the broker answers in ", absl::FormatDuration(answer_time_), ")"));
  }

  void Delay() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::Duration delay;
    {
      absl::MutexLock lock(&mu_);
      delay = delay_;
    }
    absl::SleepFor(delay);
  }

  absl::Mutex mu_;
  std::map<int32_t, PartitionWatermarks> marks_ ABSL_GUARDED_BY(mu_);
  std::map<TopicPartition, PartitionWatermarks> pattern_marks_ ABSL_GUARDED_BY(mu_);
  std::map<int32_t, int64_t> newest_ ABSL_GUARDED_BY(mu_);
  absl::Duration delay_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  absl::Duration answer_time_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  int listings_ ABSL_GUARDED_BY(mu_) = 0;
  std::function<void(const std::string&)> on_create_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice::supervisor::testing

#endif  // SLUICE_SUPERVISOR_TESTING_FAKE_STREAM_METADATA_H_
