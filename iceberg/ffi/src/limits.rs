//! Size limits, checked on every request (the C++ wrapper checks the same
//! numbers before calling, sluice_iceberg.h documents them).

/// Columns of a schema (a list counts once).
pub const MAX_FIELDS: usize = 1000;
/// Bytes of a field name.
pub const MAX_NAME_BYTES: usize = 255;
/// Bytes of one string value (a dimension value or a list element).
pub const MAX_STRING_BYTES: usize = 1 << 20;
/// Rows of one data file.
pub const MAX_ROWS: u64 = 50_000_000;
/// Elements of one list value (a multi-value row).
pub const MAX_LIST_ELEMENTS: usize = 10_000;
/// Data files of one manifest (also: paths a replace removes from one
/// rewritten manifest).
pub const MAX_FILES_PER_MANIFEST: usize = 100_000;
/// Bytes of a JSON request or metadata document.
pub const MAX_JSON_BYTES: usize = 64 << 20;
/// Snapshot summary properties a caller adds, and bytes of each key/value.
pub const MAX_SUMMARY_PROPERTIES: usize = 1000;
pub const MAX_PROPERTY_BYTES: usize = 64 << 10;
/// Characters kept of a string bound (Iceberg's default `truncate(16)`).
pub const STRING_BOUND_CHARS: usize = 16;

// Readers (readers.rs): what a file handed to a reader may hold.
/// Snapshots of one table metadata document.
pub const MAX_SNAPSHOTS: usize = 100_000;
/// Summary properties of one snapshot read (sluice's own 1000 plus
/// Iceberg's and other writers').
pub const MAX_READ_SUMMARY_PROPERTIES: usize = 2_000;
/// Bytes of one manifest or manifest list.
pub const MAX_AVRO_BYTES: usize = 256 << 20;
/// Manifests of one manifest list.
pub const MAX_MANIFESTS_PER_LIST: usize = 100_000;
/// Bytes of one Parquet data file read.
pub const MAX_PARQUET_BYTES: usize = 2 << 30;
