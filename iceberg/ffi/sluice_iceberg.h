/* The C ABI of libsluice_iceberg.a (the Rust crate in this folder):
 * Parquet data files and Apache Iceberg v2 metadata files, written into
 * memory. The library does no I/O: the caller stores the bytes it returns
 * (local disk, S3) and reads back the files it passes in.
 *
 * Contract of every function:
 *   - returns SLUICE_ICEBERG_OK (0) or one of the error codes below, with a
 *     UTF-8 message (not NUL-terminated) in *error_out;
 *   - every SluiceIcebergBytes it fills (also on error: then {NULL, 0}) is
 *     owned by the caller and freed with sluice_iceberg_bytes_free;
 *   - never unwinds into the caller: a panic inside becomes
 *     SLUICE_ICEBERG_INTERNAL;
 *   - requests and results are JSON (UTF-8, NUL-terminated in, sized out);
 *     the shapes are documented in iceberg/README.md and used by the C++
 *     wrapper in iceberg/;
 *   - equal input gives byte-identical output (no clocks, no randomness:
 *     uuids, snapshot ids and timestamps come from the caller).
 *   - thread-safe: no global state.
 *
 * Limits (SLUICE_ICEBERG_LIMIT_EXCEEDED when passed): 1000 fields per
 * schema, 255-byte field names, 1 MiB per string value, 10000 elements per
 * list value, 50 million rows per data file, 100000 data files per
 * manifest, 64 MiB per JSON document, 1000 summary/table properties of at
 * most 64 KiB each.
 */
#ifndef SLUICE_ICEBERG_FFI_SLUICE_ICEBERG_H_
#define SLUICE_ICEBERG_FFI_SLUICE_ICEBERG_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLUICE_ICEBERG_OK 0
#define SLUICE_ICEBERG_INVALID_ARGUMENT 1
#define SLUICE_ICEBERG_LIMIT_EXCEEDED 2
/* The table metadata moved on since the append was planned. */
#define SLUICE_ICEBERG_CONFLICT 3
#define SLUICE_ICEBERG_INTERNAL 4

typedef struct SluiceIcebergBytes {
  uint8_t* data;
  size_t len;
} SluiceIcebergBytes;

void sluice_iceberg_bytes_free(SluiceIcebergBytes bytes);

/* One column of a data file, for the schema field at the same position.
 * With R = row_count:
 *   timestamptz, long: int64_values[R] (timestamps in microseconds, UTC)
 *   double:            double_values[R]
 *   string:            string_offsets[R + 1] into string_bytes (UTF-8);
 *                      or, with dictionary_ids set, a dictionary:
 *                      string_offsets[D + 1] into string_bytes holds D
 *                      strings and row r's value is entry dictionary_ids[r]
 *   list<string>:      list_offsets[R + 1] into the elements, element e
 *                      being string_bytes[string_offsets[e] ..
 *                      string_offsets[e + 1]]
 *   validity:          NULL (no nulls) or R bytes, 0 = the row is null
 *                      (its value slot is ignored).
 * Unused pointers are NULL. */
typedef struct SluiceIcebergColumn {
  const int64_t* int64_values;
  const double* double_values;
  const uint64_t* list_offsets;
  const uint64_t* string_offsets;
  size_t string_offset_count;
  const uint8_t* string_bytes;
  size_t string_byte_count;
  const uint8_t* validity;
  const uint32_t* dictionary_ids;
} SluiceIcebergColumn;

/* A Parquet file (one row group, zstd, dictionary-encoded strings, column
 * statistics, Parquet field ids = Iceberg field ids) in *file_out, and its
 * metrics for the manifest in *metrics_json_out. request_json:
 *   {"schema": <Iceberg schema JSON, the columns' fields in order>,
 *    "partition_spec": <optional Iceberg partition spec JSON: then every
 *                       row must fall in one partition>} */
int32_t sluice_iceberg_write_parquet(const char* request_json,
                                     const SluiceIcebergColumn* columns,
                                     size_t column_count, uint64_t row_count,
                                     SluiceIcebergBytes* file_out,
                                     SluiceIcebergBytes* metrics_json_out,
                                     SluiceIcebergBytes* error_out);

/* A manifest (Avro) of added data files in *manifest_out and its entry for
 * the manifest list in *manifest_file_json_out. */
int32_t sluice_iceberg_write_manifest(const char* request_json,
                                      SluiceIcebergBytes* manifest_out,
                                      SluiceIcebergBytes* manifest_file_json_out,
                                      SluiceIcebergBytes* error_out);

/* A manifest list (Avro): the parent snapshot's manifest list entries (any
 * writer's; NULL for the first snapshot) but those named in the request's
 * optional "drop_parent_manifests" (a replace's rewritten manifests),
 * followed by the new manifests. */
int32_t sluice_iceberg_write_manifest_list(const char* request_json,
                                           const uint8_t* parent_manifest_list,
                                           size_t parent_manifest_list_len,
                                           SluiceIcebergBytes* manifest_list_out,
                                           SluiceIcebergBytes* error_out);

/* A replace snapshot's rewrite of one manifest (the bytes of a manifest of
 * the current snapshot, any writer's): live entries whose file_path is in
 * "remove_paths" become DELETED with "snapshot_id", the other live entries
 * EXISTING, both with explicit snapshot ids and sequence numbers
 * ("inherited_snapshot_id"/"inherited_sequence_number": the manifest list
 * entry's, for entries that inherit them); entries already DELETED are
 * dropped. *result_json_out: {"manifest_file": <its manifest list record>,
 * "removed": [{"file_path", "record_count", "file_size_in_bytes"}]}.
 * request_json: {"schema", "partition_spec", "snapshot_id",
 * "manifest_path", "inherited_snapshot_id", "inherited_sequence_number",
 * "remove_paths": [...]} (at most 100000 paths; 256 MiB of manifest). */
int32_t sluice_iceberg_rewrite_manifest(const char* request_json, const uint8_t* manifest,
                                        size_t manifest_len, SluiceIcebergBytes* manifest_out,
                                        SluiceIcebergBytes* result_json_out,
                                        SluiceIcebergBytes* error_out);

/* A rewrite-manifests snapshot's merge of manifests of the current snapshot
 * (any writer's, of the partition spec given), their bytes concatenated in
 * "sources" order ({"length", "inherited_snapshot_id",
 * "inherited_sequence_number"} each): every live entry of every source, as
 * EXISTING with its snapshot id and sequence numbers made explicit, in one
 * manifest at "manifest_path" added by "snapshot_id"; DELETED entries are
 * dropped. result_json: {"manifest_file": <manifest list record>}. */
int32_t sluice_iceberg_merge_manifests(const char* request_json, const uint8_t* manifests,
                                       size_t manifests_len, SluiceIcebergBytes* manifest_out,
                                       SluiceIcebergBytes* result_json_out,
                                       SluiceIcebergBytes* error_out);

/* A new table's first metadata JSON (no snapshots). */
int32_t sluice_iceberg_new_table_metadata(const char* request_json,
                                          SluiceIcebergBytes* metadata_json_out,
                                          SluiceIcebergBytes* error_out);

/* Plans an append on a table metadata JSON: the schema with field ids
 * (new columns get new ids), the partition spec, the parent snapshot, its
 * manifest list and the next sequence number. */
int32_t sluice_iceberg_plan_append(const char* metadata_json,
                                   const char* request_json,
                                   SluiceIcebergBytes* plan_json_out,
                                   SluiceIcebergBytes* error_out);

/* The table metadata JSON with an append snapshot added as current (and
 * as branch main); SLUICE_ICEBERG_CONFLICT when the metadata is not the one
 * the append was planned on. With "operation": "replace" and the
 * "deleted_data_files", "deleted_records", "removed_files_size" of the
 * rewrite, a replace snapshot (summary deleted-* and totals net of them). */
int32_t sluice_iceberg_append_snapshot(const char* metadata_json,
                                       const char* request_json,
                                       SluiceIcebergBytes* metadata_json_out,
                                       SluiceIcebergBytes* error_out);

/* Readers, for audits: each reads one file the caller loaded and fills
 * *summary_json_out with what it says (shapes in iceberg/table_reader.h).
 * Files of any writer are read; limits: 64 MiB of table metadata, 100000
 * snapshots, 2000 summary properties per snapshot, 256 MiB per manifest or
 * manifest list, 100000 manifests per list, 100000 entries per manifest,
 * 2 GiB and 50 million rows per Parquet file. */
int32_t sluice_iceberg_read_table_metadata(const uint8_t* metadata, size_t metadata_len,
                                           SluiceIcebergBytes* summary_json_out,
                                           SluiceIcebergBytes* error_out);
int32_t sluice_iceberg_read_manifest_list(const uint8_t* list, size_t list_len,
                                          SluiceIcebergBytes* summary_json_out,
                                          SluiceIcebergBytes* error_out);
int32_t sluice_iceberg_read_manifest(const uint8_t* manifest, size_t manifest_len,
                                     SluiceIcebergBytes* summary_json_out,
                                     SluiceIcebergBytes* error_out);
/* Decodes every row of a Parquet file; request_json: {"sum_column": <an
 * optional top-level integer column whose non-null values are summed>}. */
int32_t sluice_iceberg_read_parquet(const char* request_json, const uint8_t* file,
                                    size_t file_len, SluiceIcebergBytes* summary_json_out,
                                    SluiceIcebergBytes* error_out);

/* Panics inside the library's guard (tests of the boundary). */
int32_t sluice_iceberg_test_panic(SluiceIcebergBytes* error_out);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* SLUICE_ICEBERG_FFI_SLUICE_ICEBERG_H_ */
