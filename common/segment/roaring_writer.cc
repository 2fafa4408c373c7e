#include "common/segment/roaring_writer.h"

#include <cstring>
#include <vector>

#include "common/segment/byte_io.h"

namespace sluice {
namespace segment {
namespace {

constexpr uint32_t kCookieNoRuns = 12346;
constexpr uint32_t kCookieRuns = 12347;
constexpr uint32_t kNoOffsetThreshold = 4;
constexpr uint32_t kMaxArrayCardinality = 4096;
constexpr size_t kBitsetBytes = 8192;

void PutU16(std::string* out, uint32_t v) {
  out->push_back(static_cast<char>(v & 0xff));
  out->push_back(static_cast<char>((v >> 8) & 0xff));
}

struct Container {
  uint16_t key;
  size_t begin, end;  // values[begin, end) share the key
  uint32_t runs;
  bool is_run;
  size_t bytes;
};

}  // namespace

void AppendPortableRoaring(const uint32_t* values, size_t n, std::string* out) {
  std::vector<Container> containers;
  for (size_t i = 0; i < n;) {
    Container c;
    c.key = static_cast<uint16_t>(values[i] >> 16);
    c.begin = i;
    uint32_t runs = 1;
    size_t j = i + 1;
    while (j < n && (values[j] >> 16) == c.key) {
      if (values[j] != values[j - 1] + 1) ++runs;
      ++j;
    }
    c.end = j;
    c.runs = runs;
    const size_t cardinality = j - i;
    const size_t plain = cardinality <= kMaxArrayCardinality ? 2 * cardinality : kBitsetBytes;
    const size_t run_bytes = 2 + 4 * size_t{runs};
    c.is_run = run_bytes < plain;
    c.bytes = c.is_run ? run_bytes : plain;
    containers.push_back(c);
    i = j;
  }
  const uint32_t size = static_cast<uint32_t>(containers.size());
  bool any_run = false;
  for (const Container& c : containers) any_run |= c.is_run;
  const size_t start = out->size();
  if (any_run) {
    PutFixed32(out, kCookieRuns | ((size - 1) << 16));
    std::string flags((size + 7) / 8, '\0');
    for (uint32_t k = 0; k < size; ++k) {
      if (containers[k].is_run) flags[k / 8] |= static_cast<char>(1 << (k % 8));
    }
    out->append(flags);
  } else {
    PutFixed32(out, kCookieNoRuns);
    PutFixed32(out, size);
  }
  for (const Container& c : containers) {
    PutU16(out, c.key);
    PutU16(out, static_cast<uint32_t>(c.end - c.begin - 1));
  }
  if (!any_run || size >= kNoOffsetThreshold) {
    // Offsets of each container from the start of the bitmap.
    uint64_t offset = out->size() - start + 4 * size_t{size};
    for (const Container& c : containers) {
      PutFixed32(out, static_cast<uint32_t>(offset));
      offset += c.bytes;
    }
  }
  for (const Container& c : containers) {
    if (c.is_run) {
      PutU16(out, c.runs);
      size_t k = c.begin;
      while (k < c.end) {
        size_t e = k + 1;
        while (e < c.end && values[e] == values[e - 1] + 1) ++e;
        PutU16(out, values[k] & 0xffff);
        PutU16(out, static_cast<uint32_t>(e - k - 1));
        k = e;
      }
    } else if (c.end - c.begin <= kMaxArrayCardinality) {
      for (size_t k = c.begin; k < c.end; ++k) PutU16(out, values[k] & 0xffff);
    } else {
      const size_t at = out->size();
      out->resize(at + kBitsetBytes, '\0');
      char* bits = &(*out)[at];
      for (size_t k = c.begin; k < c.end; ++k) {
        const uint32_t low = values[k] & 0xffff;
        bits[low / 8] = static_cast<char>(static_cast<uint8_t>(bits[low / 8]) | (1u << (low % 8)));
      }
    }
  }
}

}  // namespace segment
}  // namespace sluice
