#include "common/segment/file_run.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace sluice {
namespace segment {
namespace {

class FileRunImpl : public SortedRun {
 public:
  FileRunImpl(std::unique_ptr<SegmentReader> reader, std::string description)
      : reader_(std::move(reader)), description_(std::move(description)) {
    const FileHeader& h = reader_->header();
    ids_.resize(h.dimensions.size());
    cells_.resize(h.schema.metrics.size());
    row_.ids = ids_.data();
    row_.cells = cells_.data();
  }

  std::string Describe() const override { return description_; }
  const Schema& schema() const override { return reader_->header().schema; }
  Interval interval() const override { return reader_->header().metadata.interval; }
  const std::vector<std::string>& dimensions() const override {
    return reader_->header().dimensions;
  }
  const std::vector<absl::string_view>& dictionary(size_t d) const override {
    return reader_->dictionary(d);
  }
  absl::Status LoadDictionary(size_t d) override {
    if (absl::Status s = reader_->LoadDictionary(d); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(description_, ": ", s.message()));
    }
    return absl::OkStatus();
  }
  void ReleaseDictionary(size_t d) override { reader_->ReleaseDictionary(d); }
  const std::vector<PartitionStats>& partitions() const override {
    return reader_->header().partitions;
  }
  uint64_t input_records() const override { return reader_->header().input_records; }
  uint64_t rows() const override { return reader_->num_rows(); }
  int64_t min_time() const override { return reader_->header().min_time; }
  int64_t max_time() const override { return reader_->header().max_time; }

  absl::StatusOr<bool> Next() override {
    if (!started_ || index_ + 1 >= block_.rows) {
      // The merge reads each run once: the pages of a block read are given
      // back, so the runs' files do not all end up resident.
      if (started_) reader_->ReleaseBlockPages(next_block_ - 1);
      if (next_block_ >= reader_->num_blocks()) return false;
      if (absl::Status s = reader_->ReadBlock(next_block_++, &block_); !s.ok()) {
        return absl::Status(s.code(), absl::StrCat(description_, ": ", s.message()));
      }
      started_ = true;
      index_ = 0;
    } else {
      ++index_;
    }
    const size_t i = index_;
    row_.time = block_.times[i];
    for (size_t d = 0; d < ids_.size(); ++d) ids_[d] = block_.ids[d][i];
    for (size_t m = 0; m < cells_.size(); ++m) {
      MetricCell& cell = cells_[m];
      cell.exact = nullptr;
      if (!block_.longs[m].empty()) {
        cell.bits = static_cast<uint64_t>(block_.longs[m][i]);
      } else if (!block_.doubles[m].empty()) {
        std::memcpy(&cell.bits, &block_.doubles[m][i], sizeof(double));
      } else {
        cell.bits = 0;
        cell.exact = &block_.exact[m][i];
      }
    }
    if (!block_.partitions.empty()) {
      row_.partition = static_cast<int32_t>(block_.partitions[i]);
      row_.offset = block_.offsets[i];
    }
    return true;
  }

  const RunRow& row() const override { return row_; }

 private:
  std::unique_ptr<SegmentReader> reader_;
  std::string description_;
  DecodedBlock block_;
  size_t next_block_ = 0;
  size_t index_ = 0;
  bool started_ = false;
  std::vector<uint32_t> ids_;
  std::vector<MetricCell> cells_;
  RunRow row_;
};

}  // namespace

std::unique_ptr<SortedRun> FileRun(std::unique_ptr<SegmentReader> reader, std::string description) {
  return std::make_unique<FileRunImpl>(std::move(reader), std::move(description));
}

absl::StatusOr<std::unique_ptr<SortedRun>> OpenFileRun(const std::string& path) {
  SegmentReader::Options options;
  options.load_dictionaries = false;  // the merge loads one dimension at a time
  absl::StatusOr<std::unique_ptr<SegmentReader>> reader = SegmentReader::Open(path, options);
  if (!reader.ok()) return reader.status();
  const char* kind = (*reader)->header().kind == FileKind::kSpill ? "spill " : "segment ";
  return FileRun(std::move(*reader), absl::StrCat(kind, path));
}

}  // namespace segment
}  // namespace sluice
