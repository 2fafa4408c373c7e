#include "common/stream_partitions.h"

#include <algorithm>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace sluice {

std::string FormatTopicPartition(const TopicPartition& tp) {
  return absl::StrCat(tp.topic, "[", tp.partition, "]");
}

std::string StreamNameOf(const v1::IoConfig& io) {
  return io.topic_pattern().empty() ? io.topic() : kTopicPatternPrefix + io.topic_pattern();
}

std::string StreamNameOf(const v1::Provenance& provenance) {
  return provenance.topic_pattern().empty() ? provenance.topic()
                                            : kTopicPatternPrefix + provenance.topic_pattern();
}

std::optional<std::string> TopicPatternOf(const std::string& stream_name) {
  if (!absl::StartsWith(stream_name, kTopicPatternPrefix)) return std::nullopt;
  return stream_name.substr(sizeof(kTopicPatternPrefix) - 1);
}

absl::Status StreamPartitionIds::Restore(const std::vector<v1::StreamPartition>& known) {
  absl::MutexLock lock(&mu_);
  std::vector<TopicPartition> by_id = by_id_;
  std::map<TopicPartition, int32_t> by_name = by_name_;
  std::vector<bool> present(by_id.size(), true);
  for (const v1::StreamPartition& entry : known) {
    if (entry.id() < 0 || entry.partition() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("stream partition ", entry.id(), " (", entry.topic(), "[",
                       entry.partition(), "]) is negative"));
    }
    TopicPartition name{entry.topic(), entry.partition()};
    auto named = by_name.find(name);
    if (named != by_name.end() && named->second != entry.id()) {
      return absl::InvalidArgumentError(
          absl::StrCat(FormatTopicPartition(name), " is stream partition ", named->second,
                       ", not ", entry.id()));
    }
    const size_t index = static_cast<size_t>(entry.id());
    if (index < present.size() && present[index] && !(by_id[index] == name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("stream partition ", entry.id(), " is ",
                       FormatTopicPartition(by_id[index]), ", not ",
                       FormatTopicPartition(name)));
    }
    if (index >= by_id.size()) {
      by_id.resize(index + 1);
      present.resize(index + 1, false);
    }
    by_id[index] = name;
    present[index] = true;
    by_name[name] = entry.id();
  }
  if (std::find(present.begin(), present.end(), false) != present.end()) {
    return absl::InvalidArgumentError("the stored stream partition ids have a gap");
  }
  by_id_ = std::move(by_id);
  by_name_ = std::move(by_name);
  return absl::OkStatus();
}

std::vector<int32_t> StreamPartitionIds::IdsOf(std::vector<TopicPartition> found) {
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  std::vector<int32_t> ids;
  ids.reserve(found.size());
  absl::MutexLock lock(&mu_);
  for (TopicPartition& name : found) {
    auto it = by_name_.find(name);
    if (it == by_name_.end()) {
      const int32_t id = static_cast<int32_t>(by_id_.size());
      by_id_.push_back(name);
      it = by_name_.emplace(std::move(name), id).first;
    }
    ids.push_back(it->second);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::optional<TopicPartition> StreamPartitionIds::Find(int32_t id) const {
  absl::MutexLock lock(&mu_);
  if (id < 0 || static_cast<size_t>(id) >= by_id_.size()) return std::nullopt;
  return by_id_[static_cast<size_t>(id)];
}

std::vector<v1::StreamPartition> StreamPartitionIds::From(int32_t first_id) const {
  absl::MutexLock lock(&mu_);
  std::vector<v1::StreamPartition> out;
  for (size_t id = static_cast<size_t>(std::max(first_id, 0)); id < by_id_.size(); ++id) {
    v1::StreamPartition& entry = out.emplace_back();
    entry.set_id(static_cast<int32_t>(id));
    entry.set_topic(by_id_[id].topic);
    entry.set_partition(by_id_[id].partition);
  }
  return out;
}

int32_t StreamPartitionIds::next_id() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int32_t>(by_id_.size());
}

absl::StatusOr<StreamPartitionMap> StreamPartitionMap::Create(
    const google::protobuf::RepeatedPtrField<v1::StreamPartition>& entries) {
  StreamPartitionMap map;
  for (const v1::StreamPartition& entry : entries) {
    if (entry.id() < 0 || entry.partition() < 0 || entry.topic().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "stream partition ", entry.id(), " (", entry.topic(), "[", entry.partition(),
          "]) needs an id and a partition >= 0 and a topic"));
    }
    TopicPartition name{entry.topic(), entry.partition()};
    if (!map.by_id_.emplace(entry.id(), name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("stream partition ", entry.id(), " is listed twice"));
    }
    if (!map.by_topic_[entry.topic()].emplace(entry.partition(), entry.id()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(FormatTopicPartition(name), " is listed twice"));
    }
  }
  return map;
}

const TopicPartition* StreamPartitionMap::Find(int32_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &it->second;
}

int32_t StreamPartitionMap::IdOf(const std::string& topic, int32_t partition) const {
  const std::map<int32_t, int32_t>* ids = Topic(topic);
  if (ids == nullptr) return -1;
  auto it = ids->find(partition);
  return it == ids->end() ? -1 : it->second;
}

const std::map<int32_t, int32_t>* StreamPartitionMap::Topic(const std::string& topic) const {
  auto it = by_topic_.find(topic);
  return it == by_topic_.end() ? nullptr : &it->second;
}

}  // namespace sluice
