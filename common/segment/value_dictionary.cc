#include "common/segment/value_dictionary.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace sluice {
namespace segment {
namespace {

constexpr size_t kMinSlots = 16;

}  // namespace

bool ValueDictionary::TailMatches(const Slot& slot, absl::string_view value) const {
  const absl::string_view stored = values_[slot.id - 1];
  return stored.size() == value.size() &&
         std::memcmp(stored.data() + kInlineBytes, value.data() + kInlineBytes,
                     value.size() - kInlineBytes) == 0;
}

const ValueDictionary::Slot ValueDictionary::kEmptyTable = {};

ValueDictionary::Slot& ValueDictionary::FreeSlot(uint32_t hash) {
  size_t i = hash & mask_;
  while (slots_[i].id != 0) i = (i + 1) & mask_;
  return slots_[i];
}

void ValueDictionary::Grow() {
  // Ids are 32 bits, so a table never needs more than 2^32 slots and the
  // kept low half of the hash places every slot.
  const size_t old_slots = slot_count();
  std::unique_ptr<Slot[], FreeSlots> old = std::move(slots_);
  const size_t slots = old_slots == 0 ? kMinSlots : 2 * old_slots;
  // Zeroed: every slot empty (a Slot is trivial, all zero bits its empty state).
  slots_.reset(static_cast<Slot*>(std::calloc(slots, sizeof(Slot))));
  if (slots_ == nullptr) throw std::bad_alloc();
  table_ = slots_.get();
  mask_ = slots - 1;
  for (size_t i = 0; i < old_slots; ++i) {
    if (old[i].id != 0) FreeSlot(old[i].hash) = old[i];
  }
}

uint32_t ValueDictionary::Insert(absl::string_view stored, uint64_t hash) {
  // At most 3/4 full, so probe runs stay short.
  if (4 * (values_.size() + 1) > 3 * slot_count()) Grow();
  values_.push_back(stored);
  const uint32_t id = static_cast<uint32_t>(values_.size());
  Slot& slot = FreeSlot(static_cast<uint32_t>(hash));
  slot.id = id;
  slot.hash = static_cast<uint32_t>(hash);
  slot.length = Length(stored.size());
  CopyShort(slot.head, stored.data(), std::min(stored.size(), kInlineBytes));
  return id;
}

}  // namespace segment
}  // namespace sluice
