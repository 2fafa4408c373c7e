#include "task/sequence_store.h"

#include "common/status_macros.h"

namespace sluice::task {

SequenceStore::SequenceStore(std::string path, std::string base_name,
                             std::vector<int32_t> partitions)
    : path_(std::move(path)),
      base_name_(std::move(base_name)),
      partitions_(std::move(partitions)) {}

absl::StatusOr<bool> SequenceStore::Load(
    const std::vector<std::pair<int32_t, OffsetMap>>& checkpoints) {
  absl::StatusOr<SequenceList> list = SequenceList::Load(path_, base_name_, partitions_);
  bool from_disk = true;
  if (list.status().code() == absl::StatusCode::kNotFound) {
    from_disk = false;
    list = SequenceList::FromCheckpoints(base_name_, checkpoints, partitions_);
    if (list.ok()) SLUICE_RETURN_IF_ERROR(list->Save(path_));
  }
  if (!list.ok()) return list.status();
  absl::MutexLock lock(&mu_);
  list_ = *std::move(list);
  loaded_ = true;
  last_published_id_.store(list_.last_published_id());
  return from_disk;
}

bool SequenceStore::loaded() const {
  absl::MutexLock lock(&mu_);
  return loaded_;
}

SequenceList SequenceStore::Snapshot() const {
  absl::MutexLock lock(&mu_);
  return list_;
}

std::optional<Sequence> SequenceStore::Latest() const {
  absl::MutexLock lock(&mu_);
  if (!loaded_ || list_.empty()) return std::nullopt;
  return list_.latest();
}

std::optional<OffsetMap> SequenceStore::TaskEnd() const {
  absl::MutexLock lock(&mu_);
  if (!loaded_) return std::nullopt;
  return list_.task_end();
}

absl::StatusOr<SequenceList::SetEndOutcome> SequenceStore::SetEndOffsets(const OffsetMap& offsets,
                                                                         bool finish,
                                                                         const OffsetMap& current,
                                                                         bool fenced) {
  absl::MutexLock lock(&mu_);
  if (!loaded_) return absl::FailedPreconditionError("the sequence list is not loaded yet");
  SequenceList updated = list_;
  SLUICE_ASSIGN_OR_RETURN(SequenceList::SetEndOutcome outcome,
                          updated.SetEndOffsets(offsets, finish, current, fenced));
  if (!outcome.duplicate) {
    SLUICE_RETURN_IF_ERROR(Annotate(updated.Save(path_), "persisting the sequence list"));
    list_ = std::move(updated);
  }
  return outcome;
}

absl::Status SequenceStore::OnPublished(int32_t sequence_id) {
  absl::MutexLock lock(&mu_);
  SequenceList updated = list_;
  SLUICE_RETURN_IF_ERROR(updated.RemovePublished(sequence_id));
  SLUICE_RETURN_IF_ERROR(
      Annotate(updated.Save(path_), "persisting the sequence list after a publish"));
  list_ = std::move(updated);
  last_published_id_.store(sequence_id);
  return absl::OkStatus();
}

void SequenceStore::FillStatus(const OffsetMap& spec_start, v1::TaskStatus* status) const {
  absl::MutexLock lock(&mu_);
  if (!loaded_) {
    ToProto(spec_start, status->mutable_start_offsets());
    return;
  }
  ToProto(list_.empty() ? list_.task_end() : list_.sequences().front().start,
             status->mutable_start_offsets());
  ToProto(list_.task_end(), status->mutable_end_offsets());
  for (const Sequence& s : list_.sequences()) {
    v1::Checkpoint* checkpoint = status->add_checkpoints();
    checkpoint->set_sequence_id(s.id);
    ToProto(s.start, checkpoint->mutable_offsets());
  }
  status->set_latest_sequence_id(list_.empty() ? list_.last_published_id() : list_.latest().id);
}

bool SequenceStore::AllReadIsPublished(const OffsetMap& current) const {
  absl::MutexLock lock(&mu_);
  if (list_.empty()) return true;
  if (list_.sequences().size() > 1) return false;
  const Sequence& latest = list_.latest();
  for (const auto& [p, start] : latest.start) {
    const auto it = current.find(p);
    if (it != current.end() && it->second > start) return false;
  }
  return true;
}

}  // namespace sluice::task
