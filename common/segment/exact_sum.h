// An exact, order-independent sum of doubles (for doubleSum metrics).
//
// Floating-point addition is not associative, so two replicas that add the
// same values in different orders (different spill points, partition
// interleavings) would get different doubles. ExactSum keeps the sum as an
// exact fixed-point integer in units of 2^-1074 (the smallest subnormal),
// stored sparsely: only the 32-bit limbs between the lowest and highest bit
// in use are allocated (values of similar magnitude need 2-4 limbs). It is
// rounded once, to the nearest double with ties to even, by Round().
//
// Non-finite inputs: any NaN, or both +inf and -inf, give NaN; otherwise an
// infinity wins. The sum of only -0.0 inputs is -0.0 (as in IEEE addition);
// an empty sum is +0.0.
//
// Copyable value type; not thread-safe.
#ifndef SLUICE_COMMON_SEGMENT_EXACT_SUM_H_
#define SLUICE_COMMON_SEGMENT_EXACT_SUM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "common/segment/byte_io.h"

namespace sluice {
namespace segment {

class ExactSum {
 public:
  ExactSum() = default;
  explicit ExactSum(double x) { Add(x); }

  void Add(double x);
  void Add(const ExactSum& other);
  void Clear() { *this = ExactSum(); }

  // The exact sum rounded to the nearest double (ties to even); +-inf when it
  // exceeds the double range.
  double Round() const;

  // Bytes allocated on the heap beyond sizeof(ExactSum).
  size_t HeapBytes() const {
    return limbs_.size() > kInlineLimbs ? limbs_.capacity() * sizeof(int64_t) : 0;
  }

  // Canonical encoding: equal sums encode to equal bytes.
  void AppendTo(std::string* out) const;
  // Reads what AppendTo wrote; false on malformed or truncated input.
  static bool ReadFrom(ByteReader* in, ExactSum* out);

  friend bool operator==(const ExactSum& a, const ExactSum& b);

 private:
  static constexpr size_t kInlineLimbs = 3;
  // Limbs may absorb this many additions of < 2^32 each before carries must
  // be propagated (|limb| stays below 2^62).
  static constexpr uint32_t kMaxPendingAdds = 1u << 29;

  enum Flags : uint8_t {
    kNaN = 1,
    kPosInf = 2,
    kNegInf = 4,
    kAnyInput = 8,
    kNonNegZeroInput = 16,  // an input other than -0.0 was seen
  };

  // Makes limbs [lo, hi] (absolute limb indexes) addressable.
  void Cover(int32_t lo, int32_t hi);
  // Propagates carries: every limb but the top one in [0, 2^32).
  void Normalize();
  // Sign and magnitude: `mag` holds 32-bit words, the first of absolute
  // limb index `*base`, trimmed of zero words at both ends (empty for zero).
  using Words = absl::InlinedVector<uint32_t, 8>;  // no allocation for typical sums
  void SignMagnitude(bool* negative, int32_t* base, Words* mag) const;

  uint8_t flags_ = 0;
  uint32_t pending_adds_ = 0;
  int32_t base_ = 0;  // absolute index of limbs_[0]; limb k weighs 2^(32k - 1074)
  absl::InlinedVector<int64_t, kInlineLimbs> limbs_;
};

// IEEE 754 totalOrder key: a < b in totalOrder iff key(a) < key(b).
inline int64_t TotalOrderKey(double x) {
  int64_t bits;
  static_assert(sizeof(bits) == sizeof(x), "double is not 64-bit");
  std::memcpy(&bits, &x, sizeof(bits));
  return bits < 0 ? bits ^ INT64_MAX : bits;
}

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_EXACT_SUM_H_
