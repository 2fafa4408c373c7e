#include "common/segment/exact_sum.h"

#include "absl/types/span.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace sluice {
namespace segment {
namespace {

constexpr int64_t kLimbBase = int64_t{1} << 32;
constexpr uint64_t kLimbMask = 0xffffffffu;
// Limb indexes a finite double can touch: bits [0, 2098) in units of 2^-1074,
// plus room for carries of up to 2^64 additions.
constexpr int32_t kMaxLimb = 2098 / 32 + 3;

uint64_t DoubleBits(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits;
}

// Bits [lo, lo + n) (n <= 64) of the magnitude words `mag` whose first word
// has absolute limb index `base`; positions in units of 2^-1074.
uint64_t BitsAt(absl::Span<const uint32_t> mag, int32_t base, int64_t lo, int n) {
  uint64_t result = 0;
  for (int i = 0; i < n;) {
    const int64_t pos = lo + i;
    const int64_t word = (pos >> 5) - base;
    const int bit = static_cast<int>(pos & 31);
    const int take = std::min(32 - bit, n - i);
    if (word >= 0 && word < static_cast<int64_t>(mag.size())) {
      const uint64_t chunk =
          (static_cast<uint64_t>(mag[word]) >> bit) & ((uint64_t{1} << take) - 1);
      result |= chunk << i;
    }
    i += take;
  }
  return result;
}

// Whether any bit below absolute position `pos` is set.
bool AnyBitBelow(absl::Span<const uint32_t> mag, int32_t base, int64_t pos) {
  const int64_t word = (pos >> 5) - base;
  const int bit = static_cast<int>(pos & 31);
  for (int64_t w = 0; w < static_cast<int64_t>(mag.size()) && w <= word; ++w) {
    uint32_t v = mag[w];
    if (w == word) v &= bit == 0 ? 0u : static_cast<uint32_t>((uint64_t{1} << bit) - 1);
    if (v != 0) return true;
  }
  return false;
}

}  // namespace

void ExactSum::Cover(int32_t lo, int32_t hi) {
  if (limbs_.empty()) {
    base_ = lo;
    limbs_.assign(hi - lo + 1, 0);
    return;
  }
  if (lo < base_) {
    limbs_.insert(limbs_.begin(), base_ - lo, 0);
    base_ = lo;
  }
  const int32_t top = base_ + static_cast<int32_t>(limbs_.size()) - 1;
  if (hi > top) limbs_.resize(limbs_.size() + (hi - top), 0);
}

void ExactSum::Add(double x) {
  const uint64_t bits = DoubleBits(x);
  const bool negative = bits >> 63;
  const int exponent = static_cast<int>((bits >> 52) & 0x7ff);
  const uint64_t fraction = bits & ((uint64_t{1} << 52) - 1);
  flags_ |= kAnyInput;
  if (exponent == 0x7ff) {
    flags_ |= kNonNegZeroInput;
    if (fraction != 0) {
      flags_ |= kNaN;
    } else {
      flags_ |= negative ? kNegInf : kPosInf;
    }
    return;
  }
  if (!(negative && exponent == 0 && fraction == 0)) flags_ |= kNonNegZeroInput;
  const uint64_t mantissa = exponent == 0 ? fraction : (fraction | (uint64_t{1} << 52));
  if (mantissa == 0) return;
  // x = mantissa * 2^(pos - 1074), pos >= 0.
  const int32_t pos = exponent == 0 ? 0 : exponent - 1;
  const int32_t limb = pos >> 5;
  const unsigned __int128 shifted = static_cast<unsigned __int128>(mantissa) << (pos & 31);
  const int64_t parts[3] = {
      static_cast<int64_t>(static_cast<uint64_t>(shifted) & kLimbMask),
      static_cast<int64_t>(static_cast<uint64_t>(shifted >> 32) & kLimbMask),
      static_cast<int64_t>(static_cast<uint64_t>(shifted >> 64)),
  };
  const int32_t hi = parts[2] != 0 ? limb + 2 : limb + 1;
  Cover(limb, hi);
  int64_t* l = limbs_.data() + (limb - base_);
  for (int i = 0; i <= hi - limb; ++i) l[i] += negative ? -parts[i] : parts[i];
  if (++pending_adds_ >= kMaxPendingAdds) Normalize();
}

void ExactSum::Add(const ExactSum& other) {
  flags_ |= other.flags_;
  if (other.limbs_.empty()) return;
  if (pending_adds_ + other.pending_adds_ >= kMaxPendingAdds) {
    Normalize();
    if (other.pending_adds_ >= kMaxPendingAdds / 2) {
      ExactSum copy = other;
      copy.Normalize();
      Add(copy);
      return;
    }
  }
  const int32_t other_top = other.base_ + static_cast<int32_t>(other.limbs_.size()) - 1;
  Cover(other.base_, other_top);
  int64_t* l = limbs_.data() + (other.base_ - base_);
  for (size_t i = 0; i < other.limbs_.size(); ++i) l[i] += other.limbs_[i];
  pending_adds_ += other.pending_adds_ + 1;
  if (pending_adds_ >= kMaxPendingAdds) Normalize();
}

void ExactSum::Normalize() {
  pending_adds_ = 0;
  if (limbs_.empty()) return;
  for (size_t i = 0; i + 1 < limbs_.size(); ++i) {
    const int64_t carry = limbs_[i] >> 32;  // floor division by 2^32
    limbs_[i] -= carry * kLimbBase;
    limbs_[i + 1] += carry;
  }
  // Keep the top limb within (-2^32, 2^32) by growing.
  while (limbs_.back() >= kLimbBase || limbs_.back() <= -kLimbBase) {
    const int64_t carry = limbs_.back() >> 32;
    limbs_.back() -= carry * kLimbBase;
    limbs_.push_back(carry);
  }
  // Drop leading zero limbs at the top and trailing ones at the bottom.
  while (!limbs_.empty() && limbs_.back() == 0) limbs_.pop_back();
  size_t low = 0;
  while (low < limbs_.size() && limbs_[low] == 0) ++low;
  if (low > 0) {
    limbs_.erase(limbs_.begin(), limbs_.begin() + low);
    base_ += static_cast<int32_t>(low);
  }
  if (limbs_.empty()) base_ = 0;
}

void ExactSum::SignMagnitude(bool* negative, int32_t* base, Words* mag) const {
  ExactSum n = *this;
  n.Normalize();
  *negative = !n.limbs_.empty() && n.limbs_.back() < 0;
  if (*negative) {
    for (int64_t& l : n.limbs_) l = -l;
    n.Normalize();
  }
  mag->clear();
  for (int64_t l : n.limbs_) mag->push_back(static_cast<uint32_t>(l));
  // After normalizing a non-negative value the top limb is in [0, 2^32) too.
  *base = n.base_;
}

double ExactSum::Round() const {
  if ((flags_ & kNaN) || ((flags_ & kPosInf) && (flags_ & kNegInf))) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (flags_ & kPosInf) return std::numeric_limits<double>::infinity();
  if (flags_ & kNegInf) return -std::numeric_limits<double>::infinity();
  bool negative;
  int32_t base;
  Words mag;
  SignMagnitude(&negative, &base, &mag);
  if (mag.empty()) {
    return (flags_ & kAnyInput) && !(flags_ & kNonNegZeroInput) ? -0.0 : 0.0;
  }
  const int64_t top_word = base + static_cast<int64_t>(mag.size()) - 1;
  const int top_bit = 31 - __builtin_clz(mag.back());
  const int64_t p = top_word * 32 + top_bit;  // highest set bit, units of 2^-1074
  double result;
  if (p < 53) {
    result = std::ldexp(static_cast<double>(BitsAt(mag, base, 0, 53)), -1074);
  } else {
    uint64_t mantissa = BitsAt(mag, base, p - 52, 53);
    const bool round_bit = BitsAt(mag, base, p - 53, 1) != 0;
    const bool sticky = AnyBitBelow(mag, base, p - 53);
    int64_t exponent = p - 52 - 1074;
    if (round_bit && (sticky || (mantissa & 1))) {
      ++mantissa;
      if (mantissa == (uint64_t{1} << 53)) {
        mantissa >>= 1;
        ++exponent;
      }
    }
    // ldexp is exact here (53 significant bits, normal range) and gives
    // infinity past the largest double.
    result = std::ldexp(static_cast<double>(mantissa), static_cast<int>(exponent));
  }
  return negative ? -result : result;
}

void ExactSum::AppendTo(std::string* out) const {
  bool negative;
  int32_t base;
  Words mag;
  SignMagnitude(&negative, &base, &mag);
  out->push_back(static_cast<char>(flags_ | (negative ? 0x80 : 0)));
  PutVarint64(out, mag.size());
  if (mag.empty()) return;
  PutVarint64(out, static_cast<uint64_t>(base));
  for (uint32_t w : mag) PutVarint64(out, w);
}

bool ExactSum::ReadFrom(ByteReader* in, ExactSum* out) {
  uint8_t flags;
  uint64_t n;
  if (!in->Byte(&flags) || (flags & 0x60) != 0) return false;
  if (!in->Count(kMaxLimb + 1, &n)) return false;
  ExactSum sum;
  sum.flags_ = flags & 0x1f;
  if (n > 0) {
    uint64_t base;
    if (!in->Count(kMaxLimb, &base) || base + n > kMaxLimb + 1) return false;
    const bool negative = flags & 0x80;
    sum.base_ = static_cast<int32_t>(base);
    sum.pending_adds_ = 1;  // every limb below 2^32 in magnitude
    sum.limbs_.resize(n);
    for (uint64_t i = 0; i < n; ++i) {
      uint32_t w;
      if (!in->Varint32(&w)) return false;
      sum.limbs_[i] = negative ? -static_cast<int64_t>(w) : static_cast<int64_t>(w);
    }
    // Canonical form only: no zero words at either end.
    if (sum.limbs_.front() == 0 || sum.limbs_.back() == 0) return false;
  } else if (flags & 0x80) {
    return false;
  }
  *out = std::move(sum);
  return true;
}

bool operator==(const ExactSum& a, const ExactSum& b) {
  std::string ea, eb;
  a.AppendTo(&ea);
  b.AppendTo(&eb);
  return ea == eb;
}

}  // namespace segment
}  // namespace sluice
