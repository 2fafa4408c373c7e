//! Readers of the files an Iceberg table is made of, for audits: table
//! metadata JSON, manifest lists and manifests (Avro), and Parquet data
//! files. Each returns a small JSON summary of what the file says (shapes in
//! sluice_iceberg.h and iceberg/table_reader.h). Files of any writer are
//! read (fields by name, as the v2 spec names them); every reader is
//! bounded (limits.rs: bytes in, entries out) so a hostile or damaged file
//! costs at most that much.

use std::collections::BTreeMap;

use apache_avro::types::Value;
use apache_avro::Reader;
use bytes::Bytes;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field as ParquetField;
use serde_json::{json, Map, Value as Json};

use crate::error::{Error, Result};
use crate::limits;

fn check_bytes(what: &str, len: usize, max: usize) -> Result<()> {
    if len > max {
        return Err(Error::limit(format!("{what} of {len} bytes, more than the limit of {max}")));
    }
    Ok(())
}

fn opt_i64(v: &Json, key: &str) -> Json {
    v.get(key).and_then(Json::as_i64).map_or(Json::Null, Json::from)
}

/// The parts of a table metadata document an audit needs: the snapshots
/// (id, parent, sequence number, timestamp, manifest list, summary), the
/// current snapshot, the schemas, the partition specs and the metadata log.
pub fn read_table_metadata(text: &str) -> Result<Json> {
    check_bytes("table metadata", text.len(), limits::MAX_JSON_BYTES)?;
    let m: Json = serde_json::from_str(text)?;
    if !m.is_object() {
        return Err(Error::invalid("table metadata is not a JSON object"));
    }
    let empty = Vec::new();
    let snapshots_in = m.get("snapshots").and_then(Json::as_array).unwrap_or(&empty);
    if snapshots_in.len() > limits::MAX_SNAPSHOTS {
        return Err(Error::limit(format!(
            "{} snapshots, more than the limit of {}",
            snapshots_in.len(),
            limits::MAX_SNAPSHOTS
        )));
    }
    let mut snapshots = Vec::with_capacity(snapshots_in.len());
    for s in snapshots_in {
        let id = s
            .get("snapshot-id")
            .and_then(Json::as_i64)
            .ok_or_else(|| Error::invalid("a snapshot has no \"snapshot-id\""))?;
        let manifest_list = s
            .get("manifest-list")
            .and_then(Json::as_str)
            .ok_or_else(|| Error::invalid(format!("snapshot {id} has no \"manifest-list\"")))?;
        let mut summary = Map::new();
        if let Some(map) = s.get("summary").and_then(Json::as_object) {
            if map.len() > limits::MAX_READ_SUMMARY_PROPERTIES {
                return Err(Error::limit(format!(
                    "snapshot {id} has {} summary properties, more than the limit of {}",
                    map.len(),
                    limits::MAX_READ_SUMMARY_PROPERTIES
                )));
            }
            for (k, v) in map {
                let text = match v {
                    Json::String(s) => s.clone(),
                    other => other.to_string(),
                };
                summary.insert(k.clone(), Json::String(text));
            }
        }
        snapshots.push(json!({
            "snapshot_id": id,
            "parent_snapshot_id": opt_i64(s, "parent-snapshot-id"),
            "sequence_number": s.get("sequence-number").and_then(Json::as_i64).unwrap_or(0),
            "timestamp_ms": s.get("timestamp-ms").and_then(Json::as_i64).unwrap_or(0),
            "manifest_list": manifest_list,
            "summary": Json::Object(summary),
        }));
    }
    // -1 is how v1 writers said "none".
    let current = match m.get("current-snapshot-id").and_then(Json::as_i64) {
        Some(id) if id >= 0 => Json::from(id),
        _ => Json::Null,
    };
    let schemas: Vec<Json> = m
        .get("schemas")
        .and_then(Json::as_array)
        .unwrap_or(&empty)
        .iter()
        .map(|s| {
            let fields: Vec<Json> = s
                .get("fields")
                .and_then(Json::as_array)
                .unwrap_or(&empty)
                .iter()
                .map(|f| {
                    json!({
                        "id": opt_i64(f, "id"),
                        "name": f.get("name").and_then(Json::as_str).unwrap_or_default(),
                        "type": match f.get("type") {
                            Some(Json::String(t)) => t.clone(),
                            Some(other) => other.to_string(),
                            None => String::new(),
                        },
                        "required": f.get("required").and_then(Json::as_bool).unwrap_or(false),
                    })
                })
                .collect();
            json!({"schema_id": opt_i64(s, "schema-id"), "fields": fields})
        })
        .collect();
    let specs: Vec<Json> = m
        .get("partition-specs")
        .and_then(Json::as_array)
        .unwrap_or(&empty)
        .iter()
        .map(|s| {
            let fields: Vec<Json> = s
                .get("fields")
                .and_then(Json::as_array)
                .unwrap_or(&empty)
                .iter()
                .map(|f| {
                    json!({
                        "source_id": opt_i64(f, "source-id"),
                        "field_id": opt_i64(f, "field-id"),
                        "name": f.get("name").and_then(Json::as_str).unwrap_or_default(),
                        "transform": f.get("transform").and_then(Json::as_str).unwrap_or_default(),
                    })
                })
                .collect();
            json!({"spec_id": opt_i64(s, "spec-id"), "fields": fields})
        })
        .collect();
    let metadata_log: Vec<Json> = m
        .get("metadata-log")
        .and_then(Json::as_array)
        .unwrap_or(&empty)
        .iter()
        .filter_map(|e| {
            e.get("metadata-file").and_then(Json::as_str).map(|f| {
                json!({"metadata_file": f, "timestamp_ms": opt_i64(e, "timestamp-ms")})
            })
        })
        .collect();
    Ok(json!({
        "format_version": opt_i64(&m, "format-version"),
        "table_uuid": m.get("table-uuid").and_then(Json::as_str).unwrap_or_default(),
        "location": m.get("location").and_then(Json::as_str).unwrap_or_default(),
        "current_snapshot_id": current,
        "current_schema_id": opt_i64(&m, "current-schema-id"),
        "default_spec_id": opt_i64(&m, "default-spec-id"),
        "snapshots": snapshots,
        "schemas": schemas,
        "partition_specs": specs,
        "metadata_log": metadata_log,
    }))
}

/// A record's fields by name; unions unwrapped (null stays null).
fn fields(v: Value, what: &str) -> Result<BTreeMap<String, Value>> {
    match unwrap(v) {
        Value::Record(fs) => Ok(fs.into_iter().map(|(k, v)| (k, unwrap(v))).collect()),
        _ => Err(Error::invalid(format!("{what} is not an Avro record"))),
    }
}

fn unwrap(v: Value) -> Value {
    match v {
        Value::Union(_, inner) => unwrap(*inner),
        other => other,
    }
}

fn as_i64(v: Option<&Value>) -> Option<i64> {
    match v {
        Some(Value::Long(x)) => Some(*x),
        Some(Value::Int(x)) | Some(Value::Date(x)) => Some(*x as i64),
        _ => None,
    }
}

fn avro_json(v: &Value) -> Json {
    match v {
        Value::Null => Json::Null,
        Value::Boolean(b) => Json::from(*b),
        Value::Int(x) | Value::Date(x) => Json::from(*x),
        Value::Long(x) => Json::from(*x),
        Value::Float(x) => Json::from(*x as f64),
        Value::Double(x) => Json::from(*x),
        Value::String(s) | Value::Enum(_, s) => Json::from(s.clone()),
        Value::Union(_, inner) => avro_json(inner),
        other => Json::from(format!("{other:?}")),
    }
}

fn required_i64(f: &BTreeMap<String, Value>, name: &str, what: &str) -> Result<i64> {
    as_i64(f.get(name)).ok_or_else(|| Error::invalid(format!("{what} has no {name}")))
}

fn required_str(f: &BTreeMap<String, Value>, name: &str, what: &str) -> Result<String> {
    match f.get(name) {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(Error::invalid(format!("{what} has no {name}"))),
    }
}

/// Reads an Avro container's records, at most `max` of them.
fn avro_records(bytes: &[u8], max: usize, what: &str) -> Result<Vec<Value>> {
    check_bytes(what, bytes.len(), limits::MAX_AVRO_BYTES)?;
    let reader = Reader::new(bytes)?;
    let mut out = Vec::new();
    for v in reader {
        if out.len() == max {
            return Err(Error::limit(format!("{what} has more than {max} entries, the limit")));
        }
        out.push(v?);
    }
    Ok(out)
}

/// A manifest list's entries: manifest path and length, partition spec,
/// content, sequence numbers, the snapshot that added it and its counts.
pub fn read_manifest_list(bytes: &[u8]) -> Result<Json> {
    let records = avro_records(bytes, limits::MAX_MANIFESTS_PER_LIST, "manifest list")?;
    let mut manifests = Vec::with_capacity(records.len());
    for r in records {
        let f = fields(r, "manifest list entry")?;
        let what = "a manifest list entry";
        let count = |name: &str, old: &str| {
            as_i64(f.get(name)).or_else(|| as_i64(f.get(old))).map_or(Json::Null, Json::from)
        };
        manifests.push(json!({
            "manifest_path": required_str(&f, "manifest_path", what)?,
            "manifest_length": required_i64(&f, "manifest_length", what)?,
            "partition_spec_id": as_i64(f.get("partition_spec_id")).unwrap_or(0),
            "content": as_i64(f.get("content")).unwrap_or(0),
            "sequence_number": as_i64(f.get("sequence_number")).unwrap_or(0),
            "min_sequence_number": as_i64(f.get("min_sequence_number")).unwrap_or(0),
            "added_snapshot_id": required_i64(&f, "added_snapshot_id", what)?,
            // v1 writers named the file counts added_data_files_count etc.
            "added_files_count": count("added_files_count", "added_data_files_count"),
            "existing_files_count": count("existing_files_count", "existing_data_files_count"),
            "deleted_files_count": count("deleted_files_count", "deleted_data_files_count"),
            "added_rows_count": count("added_rows_count", "added_rows_count"),
            "existing_rows_count": count("existing_rows_count", "existing_rows_count"),
            "deleted_rows_count": count("deleted_rows_count", "deleted_rows_count"),
        }));
    }
    Ok(json!({ "manifests": manifests }))
}

/// A manifest's entries: status (0 existing, 1 added, 2 deleted), the
/// snapshot id and sequence numbers (null: inherited from the manifest
/// list), and the data file's content, path, format, partition, record
/// count and size.
pub fn read_manifest(bytes: &[u8]) -> Result<Json> {
    let records = avro_records(bytes, limits::MAX_FILES_PER_MANIFEST, "manifest")?;
    let mut entries = Vec::with_capacity(records.len());
    for r in records {
        let f = fields(r, "manifest entry")?;
        let what = "a manifest entry";
        let status = required_i64(&f, "status", what)?;
        let data_file = fields(
            f.get("data_file").cloned().ok_or_else(|| Error::invalid("a manifest entry has no data_file"))?,
            "data_file",
        )?;
        let what = "a manifest entry's data_file";
        let mut partition = Map::new();
        if let Some(p) = data_file.get("partition") {
            if let Value::Record(pf) = p {
                for (k, v) in pf {
                    partition.insert(k.clone(), avro_json(v));
                }
            }
        }
        entries.push(json!({
            "status": status,
            "snapshot_id": as_i64(f.get("snapshot_id")).map_or(Json::Null, Json::from),
            "sequence_number": as_i64(f.get("sequence_number")).map_or(Json::Null, Json::from),
            "file_sequence_number": as_i64(f.get("file_sequence_number")).map_or(Json::Null, Json::from),
            "content": as_i64(data_file.get("content")).unwrap_or(0),
            "file_path": required_str(&data_file, "file_path", what)?,
            "file_format": match data_file.get("file_format") {
                Some(Value::String(s)) => s.clone(),
                _ => String::new(),
            },
            "partition": Json::Object(partition),
            "record_count": required_i64(&data_file, "record_count", what)?,
            "file_size_in_bytes": required_i64(&data_file, "file_size_in_bytes", what)?,
        }));
    }
    Ok(json!({ "entries": entries }))
}

/// A Parquet file read through: the footer's row count and row groups, then
/// every row decoded (so a damaged page fails here), counted, and, when
/// `sum_column` names a top-level integer column, its non-null values summed.
pub fn read_parquet(bytes: Vec<u8>, sum_column: Option<&str>) -> Result<Json> {
    check_bytes("Parquet file", bytes.len(), limits::MAX_PARQUET_BYTES)?;
    let reader = SerializedFileReader::new(Bytes::from(bytes))
        .map_err(|e| Error::invalid(format!("not a readable Parquet file: {e}")))?;
    let meta = reader.metadata();
    let footer_rows = meta.file_metadata().num_rows();
    if footer_rows < 0 || footer_rows as u64 > limits::MAX_ROWS {
        return Err(Error::limit(format!(
            "a Parquet file of {footer_rows} rows, more than the limit of {}",
            limits::MAX_ROWS
        )));
    }
    let columns: Vec<String> =
        meta.file_metadata().schema().get_fields().iter().map(|f| f.name().to_string()).collect();
    let sum_index = match sum_column {
        Some(name) => Some(
            columns
                .iter()
                .position(|c| c == name)
                .ok_or_else(|| Error::invalid(format!("the Parquet file has no column \"{name}\"")))?,
        ),
        None => None,
    };
    let mut decoded: i64 = 0;
    let mut sum: i64 = 0;
    let rows = reader
        .get_row_iter(None)
        .map_err(|e| Error::invalid(format!("Parquet file: {e}")))?;
    for row in rows {
        let row = row.map_err(|e| Error::invalid(format!("Parquet row {decoded}: {e}")))?;
        if let Some(i) = sum_index {
            let v = match row.get_column_iter().nth(i).map(|(_, f)| f) {
                Some(ParquetField::Long(x)) => *x,
                Some(ParquetField::Int(x)) => *x as i64,
                Some(ParquetField::Null) | None => 0,
                Some(other) => {
                    return Err(Error::invalid(format!(
                        "column \"{}\" holds {other:?}, not an integer",
                        columns[i]
                    )))
                }
            };
            sum = sum.wrapping_add(v);
        }
        decoded += 1;
    }
    if decoded != footer_rows {
        return Err(Error::invalid(format!(
            "the Parquet footer says {footer_rows} rows, {decoded} were decoded"
        )));
    }
    Ok(json!({
        "rows": footer_rows,
        "row_groups": meta.num_row_groups(),
        "columns": columns,
        "sum": if sum_index.is_some() { Json::from(sum) } else { Json::Null },
    }))
}
