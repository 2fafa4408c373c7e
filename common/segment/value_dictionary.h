// One dimension's dictionary while a segment's rows are indexed: value ->
// dense id (1-based, in first-seen order), looked up once per record per
// dimension on the task's read loop.
//
// An open-addressing table with linear probing whose 32-byte slots hold the
// id, half the value's hash, its length and its first 23 bytes. A lookup of
// a value of at most 23 bytes (most dimension values) touches one
// slot's cache line and nothing else; absl::flat_hash_map<string_view, id>
// touched its control bytes, the slot and the value's bytes in the arena:
// three cache misses on a dictionary of 100k+ values (the profile of
// bench:ingest_kernel put the arena compare alone at a fifth of the index's
// time). Longer values compare their first 23 bytes in the slot and the
// rest in the stored copy only when everything else matched. Growing moves
// slots by their kept hash, without reading or hashing the values again.
//
// Values are not copied: Insert takes a view the caller keeps valid (the
// index's arena) for the dictionary's life.
#ifndef SLUICE_COMMON_SEGMENT_VALUE_DICTIONARY_H_
#define SLUICE_COMMON_SEGMENT_VALUE_DICTIONARY_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/string_view.h"

namespace sluice {
namespace segment {

class ValueDictionary {
 public:
  ValueDictionary() = default;
  ValueDictionary(ValueDictionary&&) = default;
  ValueDictionary& operator=(ValueDictionary&&) = default;

  // The hash Find and Insert take (XXH3, 64 bits).
  static uint64_t Hash(absl::string_view value);

  // The id of `value`, or 0 if it is not in the dictionary. `hash` is
  // Hash(value).
  uint32_t Find(absl::string_view value, uint64_t hash) const {
    if (mask_ == 0) return 0;
    const uint32_t low = static_cast<uint32_t>(hash);
    for (size_t i = low & mask_;; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.id == 0) return 0;
      if (slot.hash == low && slot.length == Length(value.size()) &&
          HeadMatches(slot, value) &&
          (value.size() <= kInlineBytes || TailMatches(slot, value))) {
        return slot.id;
      }
    }
  }
  // Starts loading the slot a Find of a value with this hash looks at first.
  void Prefetch(uint64_t hash) const {
    if (mask_ != 0) __builtin_prefetch(&slots_[hash & mask_]);
  }
  // Adds a value that Find did not find; returns its id (size() after the
  // call). `stored` must stay valid while the dictionary lives.
  uint32_t Insert(absl::string_view stored, uint64_t hash);

  size_t size() const { return values_.size(); }
  // id - 1 -> value.
  const std::vector<absl::string_view>& values() const { return values_; }
  // Bytes the table and the id -> value list hold (not the values' bytes).
  int64_t capacity_bytes() const;

  static constexpr size_t kInlineBytes = 23;

 private:
  struct Slot {
    uint32_t id;    // 0: empty
    uint32_t hash;  // the hash's low half: the slot's place, and a filter
    uint8_t length;  // the value's length, 255 for 255 bytes or more
    char head[kInlineBytes];  // the value's first bytes
  };
  static_assert(sizeof(Slot) == 32, "two slots to a cache line");

  static uint8_t Length(size_t size) { return size >= 255 ? 255 : static_cast<uint8_t>(size); }
  // The value's first bytes equal the slot's head (an empty value's data
  // may be null: no memcmp then).
  static bool HeadMatches(const Slot& slot, absl::string_view value) {
    const size_t n = std::min(value.size(), kInlineBytes);
    return n == 0 || std::memcmp(slot.head, value.data(), n) == 0;
  }
  // For a value longer than the head: the rest equals the stored copy's.
  bool TailMatches(const Slot& slot, absl::string_view value) const;
  size_t slot_count() const { return mask_ == 0 ? 0 : mask_ + 1; }
  Slot& FreeSlot(uint32_t hash);
  void Grow();

  std::unique_ptr<Slot[]> slots_;
  size_t mask_ = 0;  // slots - 1; no table while empty
  std::vector<absl::string_view> values_;
};

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_VALUE_DICTIONARY_H_
