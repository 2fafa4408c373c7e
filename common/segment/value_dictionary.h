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
// Find is inline (the read loop calls it for every value of every record):
// the hash is XXH3 inlined, the head compared with a few word loads instead
// of a call to memcmp. A table is zeroed by calloc, which on large tables
// takes fresh zero pages from the system instead of writing every byte.
//
// Values are not copied: Insert takes a view the caller keeps valid (the
// index's arena) for the dictionary's life.
#ifndef SLUICE_COMMON_SEGMENT_VALUE_DICTIONARY_H_
#define SLUICE_COMMON_SEGMENT_VALUE_DICTIONARY_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/strings/string_view.h"

#define XXH_INLINE_ALL
#include <xxhash.h>
#undef XXH_INLINE_ALL

namespace sluice {
namespace segment {

class ValueDictionary {
 public:
  ValueDictionary() = default;
  // A moved-from dictionary is empty.
  ValueDictionary(ValueDictionary&& other) noexcept { *this = std::move(other); }
  ValueDictionary& operator=(ValueDictionary&& other) noexcept {
    if (this == &other) return *this;
    slots_ = std::move(other.slots_);
    table_ = slots_ != nullptr ? slots_.get() : &kEmptyTable;
    mask_ = other.mask_;
    values_ = std::move(other.values_);
    other.table_ = &kEmptyTable;
    other.mask_ = 0;
    other.values_.clear();
    return *this;
  }

  // The hash Find and Insert take (XXH3, 64 bits).
  static uint64_t Hash(absl::string_view value) {
    return XXH3_64bits(value.data(), value.size());
  }

  // The id of `value`, or 0 if it is not in the dictionary. `hash` is
  // Hash(value).
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Find(absl::string_view value, uint64_t hash) const {
    const uint32_t low = static_cast<uint32_t>(hash);
    for (size_t i = low & mask_;; i = (i + 1) & mask_) {
      const Slot& slot = table_[i];
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
    __builtin_prefetch(&table_[hash & mask_]);
  }
  // Adds a value that Find did not find; returns its id (size() after the
  // call). `stored` must stay valid while the dictionary lives.
  uint32_t Insert(absl::string_view stored, uint64_t hash);

  size_t size() const { return values_.size(); }
  // id - 1 -> value.
  const std::vector<absl::string_view>& values() const { return values_; }
  // Bytes the table and the id -> value list hold (not the values' bytes).
  // Inline: the index asks before and after every new value.
  int64_t capacity_bytes() const {
    return static_cast<int64_t>(slot_count() * sizeof(Slot) +
                                values_.capacity() * sizeof(absl::string_view));
  }

  static constexpr size_t kInlineBytes = 23;

  // memcpy(to, from, n) for the index's arena, inline for n <= 32.
  static void Copy(char* to, const char* from, size_t n) { CopyShort(to, from, n); }

 private:
  struct Slot {
    uint32_t id;    // 0: empty
    uint32_t hash;  // the hash's low half: the slot's place, and a filter
    uint8_t length;  // the value's length, 255 for 255 bytes or more
    char head[kInlineBytes];  // the value's first bytes
  };
  static_assert(sizeof(Slot) == 32, "two slots to a cache line");
  static_assert(std::is_trivial<Slot>::value, "a calloc'ed table holds empty slots");

  static uint8_t Length(size_t size) { return size >= 255 ? 255 : static_cast<uint8_t>(size); }
  // The value's first bytes equal the slot's head (an empty value's data
  // may be null: no memcmp then).
  // Compared by overlapping word loads, all inside both the head and the
  // value's first n bytes.
  static bool HeadMatches(const Slot& slot, absl::string_view value) {
    const size_t n = std::min(value.size(), kInlineBytes);
    const char* a = slot.head;
    const char* b = value.data();
    if (n >= 8) {
      uint64_t x = Load64(a) ^ Load64(b);
      x |= Load64(a + n - 8) ^ Load64(b + n - 8);
      if (n > 16) x |= Load64(a + 8) ^ Load64(b + 8);
      return x == 0;
    }
    if (n >= 4) return ((Load32(a) ^ Load32(b)) | (Load32(a + n - 4) ^ Load32(b + n - 4))) == 0;
    if (n == 0) return true;  // an empty value's data may be null
    return a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1];
  }
  // memcpy of a short value (most are) without a call: overlapping word
  // loads and stores, all within the n bytes.
  static void CopyShort(char* to, const char* from, size_t n) {
    if (n >= 8 && n <= 16) {
      const uint64_t a = Load64(from), b = Load64(from + n - 8);
      std::memcpy(to, &a, 8);
      std::memcpy(to + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
      const uint32_t a = Load32(from), b = Load32(from + n - 4);
      std::memcpy(to, &a, 4);
      std::memcpy(to + n - 4, &b, 4);
    } else if (n > 0 && n < 4) {
      const char a = from[0], b = from[n / 2], c = from[n - 1];
      to[0] = a;
      to[n / 2] = b;
      to[n - 1] = c;
    } else if (n > 16 && n <= 32) {
      const uint64_t a = Load64(from), b = Load64(from + 8);
      const uint64_t c = Load64(from + n - 16), d = Load64(from + n - 8);
      std::memcpy(to, &a, 8);
      std::memcpy(to + 8, &b, 8);
      std::memcpy(to + n - 16, &c, 8);
      std::memcpy(to + n - 8, &d, 8);
    } else if (n > 32) {
      std::memcpy(to, from, n);
    }
  }
  static uint64_t Load64(const char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  static uint32_t Load32(const char* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  // For a value longer than the head: the rest equals the stored copy's.
  bool TailMatches(const Slot& slot, absl::string_view value) const;
  size_t slot_count() const { return mask_ == 0 ? 0 : mask_ + 1; }
  Slot& FreeSlot(uint32_t hash);
  void Grow();

  struct FreeSlots {
    void operator()(Slot* slots) const { std::free(slots); }
  };
  std::unique_ptr<Slot[], FreeSlots> slots_;  // calloc'ed; none while empty
  // What Find reads: slots_, or while there is none kEmptyTable (one empty
  // slot, mask_ 0), so that Find needs no check for a missing table.
  static const Slot kEmptyTable;
  const Slot* table_ = &kEmptyTable;
  size_t mask_ = 0;  // slots - 1; 0 while there is no table
  std::vector<absl::string_view> values_;
};

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_VALUE_DICTIONARY_H_
