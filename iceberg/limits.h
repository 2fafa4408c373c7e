// The size limits of the Iceberg writers, the same numbers the Rust library
// enforces (ffi/sluice_iceberg.h): the C++ wrapper refuses oversized input
// before crossing the C boundary, with the same kind of message.
#ifndef SLUICE_ICEBERG_LIMITS_H_
#define SLUICE_ICEBERG_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace sluice {
namespace iceberg {

inline constexpr size_t kMaxFields = 1000;
inline constexpr size_t kMaxNameBytes = 255;
inline constexpr size_t kMaxStringBytes = size_t{1} << 20;
inline constexpr size_t kMaxListElements = 10000;
inline constexpr uint64_t kMaxRowsPerDataFile = 50000000;
inline constexpr size_t kMaxFilesPerManifest = 100000;
// A replace snapshot (replace_snapshot.h) removes and adds at most this many
// data files each (the library: as many paths to remove per rewritten
// manifest).
inline constexpr size_t kMaxFilesPerReplace = kMaxFilesPerManifest;
inline constexpr size_t kMaxProperties = 1000;
inline constexpr size_t kMaxPropertyBytes = size_t{64} << 10;

// What the readers (table_reader.h) accept.
inline constexpr size_t kMaxMetadataJsonBytes = size_t{64} << 20;
inline constexpr size_t kMaxSnapshots = 100000;
inline constexpr size_t kMaxReadSummaryProperties = 2000;
inline constexpr size_t kMaxAvroFileBytes = size_t{256} << 20;
inline constexpr size_t kMaxManifestsPerList = 100000;
inline constexpr size_t kMaxParquetFileBytes = size_t{2} << 30;

}  // namespace iceberg
}  // namespace sluice

#endif  // SLUICE_ICEBERG_LIMITS_H_
