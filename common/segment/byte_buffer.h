// A growable byte buffer whose new bytes are not zeroed: the scratch of the
// segment writer's encoders, compressor and bitmaps, which always write every
// byte they reserve. std::string::resize fills what it adds (libstdc++ under
// C++17 has no resize without it), which was a sizeable share of a segment
// build: the encoders reserve a bound, write, then give back what was unused.
//
//   ByteBuffer b;
//   char* p = b.Extend(10);            // 10 more bytes, uninitialized
//   b.Truncate(b.size() - 10 + EncodeVarint64(p, v) - p);
//
// Not thread-safe; move-only.
#ifndef SLUICE_COMMON_SEGMENT_BYTE_BUFFER_H_
#define SLUICE_COMMON_SEGMENT_BYTE_BUFFER_H_

#include <cstddef>
#include <cstring>
#include <memory>

#include "absl/strings/string_view.h"

namespace sluice {
namespace segment {

class ByteBuffer {
 public:
  ByteBuffer() = default;
  ByteBuffer(ByteBuffer&&) noexcept = default;
  ByteBuffer& operator=(ByteBuffer&&) noexcept = default;
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  char* data() { return data_.get(); }
  const char* data() const { return data_.get(); }
  absl::string_view view() const { return absl::string_view(data_.get(), size_); }

  // Appends `n` bytes left as they are (the caller writes them) and returns
  // the first; earlier bytes are kept, but earlier pointers may be invalid.
  char* Extend(size_t n) {
    if (n > capacity_ - size_) Grow(size_ + n);
    char* p = data_.get() + size_;
    size_ += n;
    return p;
  }
  // Keeps the first `size` bytes (size <= size()).
  void Truncate(size_t size) { size_ = size; }
  void clear() { size_ = 0; }
  void Reserve(size_t capacity) {
    if (capacity > capacity_) Grow(capacity);
  }
  void Append(absl::string_view bytes) {
    if (!bytes.empty()) std::memcpy(Extend(bytes.size()), bytes.data(), bytes.size());
  }
  // Frees the memory.
  void Release() {
    data_.reset();
    size_ = capacity_ = 0;
  }

 private:
  void Grow(size_t at_least) {
    size_t capacity = capacity_ < 64 ? 64 : capacity_ * 2;
    if (capacity < at_least) capacity = at_least;
    std::unique_ptr<char[]> grown(new char[capacity]);  // not zeroed
    if (size_ > 0) std::memcpy(grown.get(), data_.get(), size_);
    data_ = std::move(grown);
    capacity_ = capacity;
  }

  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_BYTE_BUFFER_H_
