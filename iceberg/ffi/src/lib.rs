//! sluice_iceberg: Parquet data files and Iceberg v2 metadata (manifests,
//! manifest lists, table metadata JSON) behind a C ABI. The contract is in
//! sluice_iceberg.h; every exported function catches panics and reports
//! errors as a status code and a message, never by unwinding into C.

mod avro_files;
mod bounds;
mod error;
mod limits;
mod parquet_writer;
mod readers;
mod schema;
mod table_metadata;

use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use serde::Deserialize;
use serde_json::Value as Json;

use crate::avro_files::{ManifestDataFile, ManifestFileInfo, PartitionSpec};
use crate::error::{Error, Result};
use crate::parquet_writer::{ColumnValues, DataFileMetrics, PartitionRequest};
use crate::schema::{FieldType, Schema};

/// Bytes the library allocated; the caller frees them with
/// `sluice_iceberg_bytes_free`.
#[repr(C)]
pub struct SluiceIcebergBytes {
    pub data: *mut u8,
    pub len: usize,
}

/// One column of a data file (see sluice_iceberg.h).
#[repr(C)]
pub struct SluiceIcebergColumn {
    pub int64_values: *const i64,
    pub double_values: *const f64,
    pub list_offsets: *const u64,
    pub string_offsets: *const u64,
    pub string_offset_count: usize,
    pub string_bytes: *const u8,
    pub string_byte_count: usize,
    pub validity: *const u8,
    pub dictionary_ids: *const u32,
}

pub const SLUICE_ICEBERG_OK: i32 = 0;

fn give(out: *mut SluiceIcebergBytes, bytes: Vec<u8>) {
    if out.is_null() {
        return;
    }
    let mut boxed = bytes.into_boxed_slice();
    let len = boxed.len();
    let data = boxed.as_mut_ptr();
    std::mem::forget(boxed);
    // SAFETY: the caller passes a valid out pointer (checked non-null).
    unsafe {
        *out = SluiceIcebergBytes { data, len };
    }
}

fn clear(out: *mut SluiceIcebergBytes) {
    if !out.is_null() {
        // SAFETY: as in give().
        unsafe {
            *out = SluiceIcebergBytes { data: std::ptr::null_mut(), len: 0 };
        }
    }
}

/// Runs `body`, turning an error or a panic into a status code and a
/// message in `error_out`.
fn guarded(error_out: *mut SluiceIcebergBytes, body: impl FnOnce() -> Result<()>) -> i32 {
    clear(error_out);
    let result = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(Error::internal(format!("panic in sluice_iceberg: {what}")))
        }
    };
    match result {
        Ok(()) => SLUICE_ICEBERG_OK,
        Err(e) => {
            give(error_out, e.message.into_bytes());
            e.code as i32
        }
    }
}

fn c_str<'a>(p: *const c_char, what: &str) -> Result<&'a str> {
    if p.is_null() {
        return Err(Error::invalid(format!("{what} is null")));
    }
    // SAFETY: the caller passes a NUL-terminated string.
    let s = unsafe { CStr::from_ptr(p) };
    if s.to_bytes().len() > limits::MAX_JSON_BYTES {
        return Err(Error::limit(format!(
            "{what} of {} bytes, more than the limit of {}",
            s.to_bytes().len(),
            limits::MAX_JSON_BYTES
        )));
    }
    s.to_str().map_err(|_| Error::invalid(format!("{what} is not UTF-8")))
}

unsafe fn slice<'a, T>(p: *const T, len: usize, what: &str) -> Result<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Error::invalid(format!("{what} is null")));
    }
    Ok(std::slice::from_raw_parts(p, len))
}

unsafe fn optional_slice<'a, T>(p: *const T, len: usize) -> Option<&'a [T]> {
    if p.is_null() {
        None
    } else {
        Some(std::slice::from_raw_parts(p, len))
    }
}

#[derive(Deserialize)]
struct ParquetRequest {
    schema: Json,
    #[serde(default)]
    partition_spec: Option<Json>,
}

/// Frees bytes the library returned (null data is fine).
#[no_mangle]
pub extern "C" fn sluice_iceberg_bytes_free(bytes: SluiceIcebergBytes) {
    if !bytes.data.is_null() {
        // SAFETY: data/len came from give().
        unsafe {
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(bytes.data, bytes.len)));
        }
    }
}

#[no_mangle]
pub extern "C" fn sluice_iceberg_write_parquet(
    request_json: *const c_char,
    columns: *const SluiceIcebergColumn,
    column_count: usize,
    row_count: u64,
    file_out: *mut SluiceIcebergBytes,
    metrics_json_out: *mut SluiceIcebergBytes,
    error_out: *mut SluiceIcebergBytes,
) -> i32 {
    clear(file_out);
    clear(metrics_json_out);
    guarded(error_out, || {
        let req: ParquetRequest = serde_json::from_str(c_str(request_json, "request")?)?;
        let schema = Schema::from_json(&req.schema)?;
        let partition = match &req.partition_spec {
            Some(spec) => {
                let spec = PartitionSpec::from_json(spec)?;
                Some(PartitionRequest { source_id: spec.source_id, transform: spec.transform })
            }
            None => None,
        };
        if row_count > limits::MAX_ROWS {
            return Err(Error::limit(format!(
                "{row_count} rows, more than the limit of {} per data file",
                limits::MAX_ROWS
            )));
        }
        let rows = row_count as usize;
        // SAFETY: the caller passes column_count columns.
        let cols = unsafe { slice(columns, column_count, "columns")? };
        if cols.len() != schema.fields.len() {
            return Err(Error::invalid(format!(
                "{} columns for a schema of {} fields",
                cols.len(),
                schema.fields.len()
            )));
        }
        let mut values = Vec::with_capacity(cols.len());
        for (field, c) in schema.fields.iter().zip(cols) {
            let what = |part: &str| format!("column \"{}\" {part}", field.name);
            // SAFETY: the header documents each array's length.
            let v = unsafe {
                let valid = optional_slice(c.validity, rows);
                match field.field_type {
                    FieldType::Timestamptz | FieldType::Long => ColumnValues::Int64 {
                        values: slice(c.int64_values, rows, &what("int64_values"))?,
                        valid,
                    },
                    FieldType::Double => ColumnValues::Double {
                        values: slice(c.double_values, rows, &what("double_values"))?,
                        valid,
                    },
                    FieldType::String if !c.dictionary_ids.is_null() => ColumnValues::DictionaryString {
                        offsets: slice(c.string_offsets, c.string_offset_count, &what("string_offsets"))?,
                        bytes: slice(c.string_bytes, c.string_byte_count, &what("string_bytes"))?,
                        ids: slice(c.dictionary_ids, rows, &what("dictionary_ids"))?,
                        valid,
                    },
                    FieldType::String => ColumnValues::String {
                        offsets: slice(c.string_offsets, c.string_offset_count, &what("string_offsets"))?,
                        bytes: slice(c.string_bytes, c.string_byte_count, &what("string_bytes"))?,
                        valid,
                    },
                    FieldType::StringList { .. } => ColumnValues::StringList {
                        list_offsets: slice(c.list_offsets, rows + 1, &what("list_offsets"))?,
                        element_offsets: slice(c.string_offsets, c.string_offset_count, &what("string_offsets"))?,
                        bytes: slice(c.string_bytes, c.string_byte_count, &what("string_bytes"))?,
                        valid,
                    },
                }
            };
            values.push(v);
        }
        let (bytes, metrics) = parquet_writer::write_data_file(&schema, &values, row_count, partition.as_ref())?;
        give(metrics_json_out, serde_json::to_vec(&metrics)?);
        give(file_out, bytes);
        Ok(())
    })
}

#[derive(Deserialize)]
struct ManifestRequest {
    schema: Json,
    partition_spec: Json,
    snapshot_id: i64,
    manifest_path: String,
    data_files: Vec<ManifestDataFileRequest>,
}

#[derive(Deserialize)]
struct ManifestDataFileRequest {
    file_path: String,
    metrics: DataFileMetrics,
}

#[no_mangle]
pub extern "C" fn sluice_iceberg_write_manifest(
    request_json: *const c_char,
    manifest_out: *mut SluiceIcebergBytes,
    manifest_file_json_out: *mut SluiceIcebergBytes,
    error_out: *mut SluiceIcebergBytes,
) -> i32 {
    clear(manifest_out);
    clear(manifest_file_json_out);
    guarded(error_out, || {
        let req: ManifestRequest = serde_json::from_str(c_str(request_json, "request")?)?;
        let schema = Schema::from_json(&req.schema)?;
        let spec = PartitionSpec::from_json(&req.partition_spec)?;
        let files: Vec<ManifestDataFile> = req
            .data_files
            .into_iter()
            .map(|f| ManifestDataFile { file_path: f.file_path, metrics: f.metrics })
            .collect();
        let (bytes, info) = avro_files::write_manifest(&schema, &spec, req.snapshot_id, &req.manifest_path, &files)?;
        give(manifest_file_json_out, serde_json::to_vec(&info)?);
        give(manifest_out, bytes);
        Ok(())
    })
}

#[derive(Deserialize)]
struct ManifestListRequest {
    snapshot_id: i64,
    #[serde(default)]
    parent_snapshot_id: Option<i64>,
    sequence_number: i64,
    manifest_list_path: String,
    manifests: Vec<ManifestFileInfo>,
    /// Parent manifests not carried over (a replace's rewritten ones).
    #[serde(default)]
    drop_parent_manifests: Vec<String>,
}

#[no_mangle]
pub extern "C" fn sluice_iceberg_write_manifest_list(
    request_json: *const c_char,
    parent_manifest_list: *const u8,
    parent_manifest_list_len: usize,
    manifest_list_out: *mut SluiceIcebergBytes,
    error_out: *mut SluiceIcebergBytes,
) -> i32 {
    clear(manifest_list_out);
    guarded(error_out, || {
        let req: ManifestListRequest = serde_json::from_str(c_str(request_json, "request")?)?;
        // SAFETY: the caller passes parent_manifest_list_len bytes (or null).
        let parent = unsafe { optional_slice(parent_manifest_list, parent_manifest_list_len) };
        if parent.is_some() != req.parent_snapshot_id.is_some() {
            return Err(Error::invalid(
                "the parent manifest list and parent_snapshot_id go together (both or neither)",
            ));
        }
        let bytes = avro_files::write_manifest_list(
            req.snapshot_id,
            req.parent_snapshot_id,
            req.sequence_number,
            &req.manifest_list_path,
            parent,
            &req.manifests,
            &req.drop_parent_manifests,
        )?;
        give(manifest_list_out, bytes);
        Ok(())
    })
}

#[derive(Deserialize)]
struct RewriteManifestRequest {
    schema: Json,
    partition_spec: Json,
    snapshot_id: i64,
    manifest_path: String,
    inherited_snapshot_id: i64,
    inherited_sequence_number: i64,
    remove_paths: Vec<String>,
}

#[no_mangle]
pub extern "C" fn sluice_iceberg_rewrite_manifest(
    request_json: *const c_char,
    manifest: *const u8,
    manifest_len: usize,
    manifest_out: *mut SluiceIcebergBytes,
    result_json_out: *mut SluiceIcebergBytes,
    error_out: *mut SluiceIcebergBytes,
) -> i32 {
    clear(manifest_out);
    clear(result_json_out);
    guarded(error_out, || {
        let req: RewriteManifestRequest = serde_json::from_str(c_str(request_json, "request")?)?;
        if req.remove_paths.len() > limits::MAX_FILES_PER_MANIFEST {
            return Err(Error::limit(format!(
                "{} files to remove, more than the limit of {}",
                req.remove_paths.len(),
                limits::MAX_FILES_PER_MANIFEST
            )));
        }
        let schema = Schema::from_json(&req.schema)?;
        let spec = PartitionSpec::from_json(&req.partition_spec)?;
        // SAFETY: the caller passes manifest_len bytes.
        let source = unsafe { slice(manifest, manifest_len, "manifest")? };
        let remove: std::collections::BTreeSet<String> = req.remove_paths.into_iter().collect();
        let (bytes, info, removed) = avro_files::rewrite_manifest(
            &schema,
            &spec,
            source,
            req.snapshot_id,
            &req.manifest_path,
            req.inherited_snapshot_id,
            req.inherited_sequence_number,
            &remove,
        )?;
        give(
            result_json_out,
            serde_json::to_vec(&serde_json::json!({"manifest_file": info, "removed": removed}))?,
        );
        give(manifest_out, bytes);
        Ok(())
    })
}

#[derive(Deserialize)]
struct MergeSource {
    length: usize,
    inherited_snapshot_id: i64,
    inherited_sequence_number: i64,
}

#[derive(Deserialize)]
struct MergeManifestsRequest {
    schema: Json,
    partition_spec: Json,
    snapshot_id: i64,
    manifest_path: String,
    sources: Vec<MergeSource>,
}

#[no_mangle]
pub extern "C" fn sluice_iceberg_merge_manifests(
    request_json: *const c_char,
    manifests: *const u8,
    manifests_len: usize,
    manifest_out: *mut SluiceIcebergBytes,
    result_json_out: *mut SluiceIcebergBytes,
    error_out: *mut SluiceIcebergBytes,
) -> i32 {
    clear(manifest_out);
    clear(result_json_out);
    guarded(error_out, || {
        let req: MergeManifestsRequest = serde_json::from_str(c_str(request_json, "request")?)?;
        if req.sources.len() > limits::MAX_MANIFESTS_PER_LIST {
            return Err(Error::limit(format!(
                "{} manifests to merge, more than the limit of {}",
                req.sources.len(),
                limits::MAX_MANIFESTS_PER_LIST
            )));
        }
        let schema = Schema::from_json(&req.schema)?;
        let spec = PartitionSpec::from_json(&req.partition_spec)?;
        // SAFETY: the caller passes manifests_len bytes.
        let all = unsafe { slice(manifests, manifests_len, "manifests")? };
        let mut sources = Vec::with_capacity(req.sources.len());
        let mut at = 0usize;
        for s in &req.sources {
            let end = at
                .checked_add(s.length)
                .filter(|e| *e <= all.len())
                .ok_or_else(|| Error::invalid("the sources' lengths exceed the bytes given"))?;
            sources.push(avro_files::ManifestSource {
                bytes: &all[at..end],
                inherited_snapshot_id: s.inherited_snapshot_id,
                inherited_sequence_number: s.inherited_sequence_number,
            });
            at = end;
        }
        if at != all.len() {
            return Err(Error::invalid("the sources' lengths do not add up to the bytes given"));
        }
        let (bytes, info) =
            avro_files::merge_manifests(&schema, &spec, &sources, req.snapshot_id, &req.manifest_path)?;
        give(result_json_out, serde_json::to_vec(&serde_json::json!({"manifest_file": info}))?);
        give(manifest_out, bytes);
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn sluice_iceberg_new_table_metadata(
    request_json: *const c_char,
    metadata_json_out: *mut SluiceIcebergBytes,
    error_out: *mut SluiceIcebergBytes,
) -> i32 {
    clear(metadata_json_out);
    guarded(error_out, || {
        let req: table_metadata::NewTableRequest = serde_json::from_str(c_str(request_json, "request")?)?;
        let m = table_metadata::new_table(&req)?;
        give(metadata_json_out, serde_json::to_vec_pretty(&m)?);
        Ok(())
    })
}

#[derive(Deserialize)]
struct PlanRequest {
    fields: Vec<table_metadata::FieldRequest>,
}

#[no_mangle]
pub extern "C" fn sluice_iceberg_plan_append(
    metadata_json: *const c_char,
    request_json: *const c_char,
    plan_json_out: *mut SluiceIcebergBytes,
    error_out: *mut SluiceIcebergBytes,
) -> i32 {
    clear(plan_json_out);
    guarded(error_out, || {
        let m = table_metadata::parse_metadata(c_str(metadata_json, "table metadata")?)?;
        let req: PlanRequest = serde_json::from_str(c_str(request_json, "request")?)?;
        let plan = table_metadata::plan_append(&m, &req.fields)?;
        give(plan_json_out, serde_json::to_vec(&plan)?);
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn sluice_iceberg_append_snapshot(
    metadata_json: *const c_char,
    request_json: *const c_char,
    metadata_json_out: *mut SluiceIcebergBytes,
    error_out: *mut SluiceIcebergBytes,
) -> i32 {
    clear(metadata_json_out);
    guarded(error_out, || {
        let m = table_metadata::parse_metadata(c_str(metadata_json, "table metadata")?)?;
        let req: table_metadata::AppendRequest = serde_json::from_str(c_str(request_json, "request")?)?;
        let out = table_metadata::append_snapshot(&m, &req)?;
        give(metadata_json_out, serde_json::to_vec_pretty(&out)?);
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn sluice_iceberg_read_table_metadata(
    metadata: *const u8,
    metadata_len: usize,
    summary_json_out: *mut SluiceIcebergBytes,
    error_out: *mut SluiceIcebergBytes,
) -> i32 {
    clear(summary_json_out);
    guarded(error_out, || {
        // SAFETY: the caller passes metadata_len bytes.
        let bytes = unsafe { slice(metadata, metadata_len, "table metadata")? };
        let text = std::str::from_utf8(bytes).map_err(|_| Error::invalid("table metadata is not UTF-8"))?;
        give(summary_json_out, serde_json::to_vec(&readers::read_table_metadata(text)?)?);
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn sluice_iceberg_read_manifest_list(
    list: *const u8,
    list_len: usize,
    summary_json_out: *mut SluiceIcebergBytes,
    error_out: *mut SluiceIcebergBytes,
) -> i32 {
    clear(summary_json_out);
    guarded(error_out, || {
        // SAFETY: the caller passes list_len bytes.
        let bytes = unsafe { slice(list, list_len, "manifest list")? };
        give(summary_json_out, serde_json::to_vec(&readers::read_manifest_list(bytes)?)?);
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn sluice_iceberg_read_manifest(
    manifest: *const u8,
    manifest_len: usize,
    summary_json_out: *mut SluiceIcebergBytes,
    error_out: *mut SluiceIcebergBytes,
) -> i32 {
    clear(summary_json_out);
    guarded(error_out, || {
        // SAFETY: the caller passes manifest_len bytes.
        let bytes = unsafe { slice(manifest, manifest_len, "manifest")? };
        give(summary_json_out, serde_json::to_vec(&readers::read_manifest(bytes)?)?);
        Ok(())
    })
}

#[derive(Deserialize)]
struct ReadParquetRequest {
    #[serde(default)]
    sum_column: Option<String>,
}

#[no_mangle]
pub extern "C" fn sluice_iceberg_read_parquet(
    request_json: *const c_char,
    file: *const u8,
    file_len: usize,
    summary_json_out: *mut SluiceIcebergBytes,
    error_out: *mut SluiceIcebergBytes,
) -> i32 {
    clear(summary_json_out);
    guarded(error_out, || {
        let req: ReadParquetRequest = serde_json::from_str(c_str(request_json, "request")?)?;
        if file_len > limits::MAX_PARQUET_BYTES {
            return Err(Error::limit(format!(
                "Parquet file of {file_len} bytes, more than the limit of {}",
                limits::MAX_PARQUET_BYTES
            )));
        }
        // SAFETY: the caller passes file_len bytes.
        let bytes = unsafe { slice(file, file_len, "Parquet file")? };
        let summary = readers::read_parquet(bytes.to_vec(), req.sum_column.as_deref())?;
        give(summary_json_out, serde_json::to_vec(&summary)?);
        Ok(())
    })
}

/// For tests of the C boundary: panics inside the guard.
#[no_mangle]
pub extern "C" fn sluice_iceberg_test_panic(error_out: *mut SluiceIcebergBytes) -> i32 {
    guarded(error_out, || panic!("test panic"))
}
