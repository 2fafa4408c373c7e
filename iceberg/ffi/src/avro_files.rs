//! Iceberg v2 manifests and manifest lists as Avro object container files
//! (table spec, "Manifests" and "Manifest Lists"), with the field ids and
//! file metadata the spec requires.
//!
//! Deterministic output: the Avro library keeps file metadata in a hash map
//! (random order) and draws a random sync marker, so the file header is
//! encoded here as the Avro datum the Avro spec defines for it (magic, a
//! metadata map written as one block of sorted entries, sync marker), and the
//! data blocks by the library's writer appending to that header with a sync
//! marker derived from the file's path.

use std::collections::BTreeMap;

use apache_avro::schema::Schema as AvroSchema;
use apache_avro::types::Value;
use apache_avro::{Reader, Writer};
use serde_json::{json, Value as Json};

use crate::bounds::{self, TimeTransform};
use crate::error::{Error, Result};
use crate::limits;
use crate::parquet_writer::{hex, unhex, DataFileMetrics};
use crate::schema::Schema;

/// The table's partitioning: one time transform of the time column.
#[derive(Clone, Debug, PartialEq)]
pub struct PartitionSpec {
    pub spec_id: i32,
    pub source_id: i32,
    pub field_id: i32,
    pub name: String,
    pub transform: TimeTransform,
}

impl PartitionSpec {
    pub fn to_json(&self) -> Json {
        json!({
            "spec-id": self.spec_id,
            "fields": [{
                "source-id": self.source_id,
                "field-id": self.field_id,
                "name": self.name,
                "transform": self.transform.name(),
            }],
        })
    }

    pub fn from_json(v: &Json) -> Result<PartitionSpec> {
        let spec_id = v.get("spec-id").and_then(Json::as_i64).unwrap_or(0);
        let fields = v
            .get("fields")
            .and_then(Json::as_array)
            .ok_or_else(|| Error::invalid("partition spec has no \"fields\""))?;
        if fields.len() != 1 {
            return Err(Error::invalid(format!(
                "partition spec {spec_id} has {} fields; only one time transform is supported",
                fields.len()
            )));
        }
        let f = &fields[0];
        let get_i = |k: &str| {
            f.get(k)
                .and_then(Json::as_i64)
                .ok_or_else(|| Error::invalid(format!("partition field has no \"{k}\"")))
        };
        Ok(PartitionSpec {
            spec_id: spec_id as i32,
            source_id: get_i("source-id")? as i32,
            field_id: get_i("field-id")? as i32,
            name: f.get("name").and_then(Json::as_str).unwrap_or_default().to_string(),
            transform: TimeTransform::parse(f.get("transform").and_then(Json::as_str).unwrap_or_default())?,
        })
    }

    /// The Avro type of the partition value: `date` for days, else `int`.
    fn avro_type(&self) -> Json {
        match self.transform {
            TimeTransform::Day => json!({"type": "int", "logicalType": "date"}),
            _ => json!("int"),
        }
    }

    fn avro_value(&self, v: i32) -> Value {
        match self.transform {
            TimeTransform::Day => Value::Date(v),
            _ => Value::Int(v),
        }
    }
}

fn optional(name: &str, field_id: i32, t: Json) -> Json {
    json!({"name": name, "type": ["null", t], "default": null, "field-id": field_id})
}

fn required(name: &str, field_id: i32, t: Json) -> Json {
    json!({"name": name, "type": t, "field-id": field_id})
}

/// An Iceberg map with int keys: an Avro array of key/value records.
fn int_map(name: &str, field_id: i32, key_id: i32, value_id: i32, value_type: &str) -> Json {
    optional(
        name,
        field_id,
        json!({
            "type": "array",
            "logicalType": "map",
            "items": {
                "type": "record",
                "name": format!("k{key_id}_v{value_id}"),
                "fields": [
                    {"name": "key", "type": "int", "field-id": key_id},
                    {"name": "value", "type": value_type, "field-id": value_id},
                ],
            },
        }),
    )
}

fn manifest_schema_json(spec: &PartitionSpec) -> Json {
    let partition = json!({
        "type": "record",
        "name": "r102",
        "fields": [optional(&spec.name, spec.field_id, spec.avro_type())],
    });
    let data_file = json!({
        "type": "record",
        "name": "r2",
        "fields": [
            required("content", 134, json!("int")),
            required("file_path", 100, json!("string")),
            required("file_format", 101, json!("string")),
            required("partition", 102, partition),
            required("record_count", 103, json!("long")),
            required("file_size_in_bytes", 104, json!("long")),
            int_map("column_sizes", 108, 117, 118, "long"),
            int_map("value_counts", 109, 119, 120, "long"),
            int_map("null_value_counts", 110, 121, 122, "long"),
            int_map("nan_value_counts", 137, 138, 139, "long"),
            int_map("lower_bounds", 125, 126, 127, "bytes"),
            int_map("upper_bounds", 128, 129, 130, "bytes"),
            optional("key_metadata", 131, json!("bytes")),
            optional("split_offsets", 132, json!({"type": "array", "items": "long", "element-id": 133})),
            optional("equality_ids", 135, json!({"type": "array", "items": "int", "element-id": 136})),
            optional("sort_order_id", 140, json!("int")),
        ],
    });
    json!({
        "type": "record",
        "name": "manifest_entry",
        "fields": [
            required("status", 0, json!("int")),
            optional("snapshot_id", 1, json!("long")),
            optional("sequence_number", 3, json!("long")),
            optional("file_sequence_number", 4, json!("long")),
            required("data_file", 2, data_file),
        ],
    })
}

fn manifest_list_schema_json() -> Json {
    let summary = json!({
        "type": "record",
        "name": "r508",
        "fields": [
            required("contains_null", 509, json!("boolean")),
            optional("contains_nan", 518, json!("boolean")),
            optional("lower_bound", 510, json!("bytes")),
            optional("upper_bound", 511, json!("bytes")),
        ],
    });
    json!({
        "type": "record",
        "name": "manifest_file",
        "fields": [
            required("manifest_path", 500, json!("string")),
            required("manifest_length", 501, json!("long")),
            required("partition_spec_id", 502, json!("int")),
            required("content", 517, json!("int")),
            required("sequence_number", 515, json!("long")),
            required("min_sequence_number", 516, json!("long")),
            required("added_snapshot_id", 503, json!("long")),
            required("added_files_count", 504, json!("int")),
            required("existing_files_count", 505, json!("int")),
            required("deleted_files_count", 506, json!("int")),
            required("added_rows_count", 512, json!("long")),
            required("existing_rows_count", 513, json!("long")),
            required("deleted_rows_count", 514, json!("long")),
            optional("partitions", 507, json!({"type": "array", "items": summary, "element-id": 508})),
            optional("key_metadata", 519, json!("bytes")),
        ],
    })
}

/// 16 bytes from the file's path (FNV-1a, two seeds): a stable sync marker.
fn sync_marker(path: &str) -> [u8; 16] {
    let fnv = |seed: u64| {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
        for b in path.as_bytes() {
            h ^= *b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    };
    let mut marker = [0u8; 16];
    marker[..8].copy_from_slice(&fnv(0).to_le_bytes());
    marker[8..].copy_from_slice(&fnv(0x5a5a_5a5a).to_le_bytes());
    marker
}

/// An Avro object container file of `records`, metadata keys sorted.
fn write_container(
    schema_json: &Json,
    metadata: BTreeMap<String, Vec<u8>>,
    marker: [u8; 16],
    records: Vec<Value>,
) -> Result<Vec<u8>> {
    let schema_text = schema_json.to_string();
    let schema = AvroSchema::parse_str(&schema_text)?;
    let header_schema = AvroSchema::parse_str(
        r#"{"type": "record", "name": "org.apache.avro.file.Header", "fields": [
             {"name": "magic", "type": {"type": "fixed", "name": "Magic", "size": 4}},
             {"name": "meta", "type": {"type": "array", "items": {"type": "record", "name": "MetaEntry",
               "fields": [{"name": "key", "type": "string"}, {"name": "value", "type": "bytes"}]}}},
             {"name": "sync", "type": {"type": "fixed", "name": "Sync", "size": 16}}]}"#,
    )?;
    let mut meta = metadata;
    meta.insert("avro.schema".to_string(), schema_text.clone().into_bytes());
    meta.insert("avro.codec".to_string(), b"null".to_vec());
    // An array of {key, value} records encodes exactly as a map written in
    // one block: count, then key and value of each entry, then 0.
    let entries: Vec<Value> = meta
        .into_iter()
        .map(|(k, v)| Value::Record(vec![("key".into(), Value::String(k)), ("value".into(), Value::Bytes(v))]))
        .collect();
    let header = Value::Record(vec![
        ("magic".into(), Value::Fixed(4, b"Obj\x01".to_vec())),
        ("meta".into(), Value::Array(entries)),
        ("sync".into(), Value::Fixed(16, marker.to_vec())),
    ]);
    let mut out = apache_avro::to_avro_datum(&header_schema, header)?;
    {
        let mut writer = Writer::append_to(&schema, &mut out, marker);
        for r in records {
            writer.append(r)?;
        }
        writer.flush()?;
    }
    Ok(out)
}

fn some(v: Value) -> Value {
    Value::Union(1, Box::new(v))
}

fn none() -> Value {
    Value::Union(0, Box::new(Value::Null))
}

fn map_value(entries: Vec<(i32, Value)>) -> Value {
    some(Value::Array(
        entries
            .into_iter()
            .map(|(k, v)| Value::Record(vec![("key".into(), Value::Int(k)), ("value".into(), v)]))
            .collect(),
    ))
}

/// A data file to list in a manifest: where it is and what the Parquet
/// writer measured.
pub struct ManifestDataFile {
    pub file_path: String,
    pub metrics: DataFileMetrics,
}

/// What the manifest list needs about a written manifest (also the C
/// caller's record of it).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct ManifestFileInfo {
    pub manifest_path: String,
    pub manifest_length: i64,
    pub partition_spec_id: i32,
    pub added_snapshot_id: i64,
    pub added_files_count: i32,
    pub added_rows_count: i64,
    pub contains_null: bool,
    /// Hex of the lowest and highest partition value (4-byte int).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub partition_lower_bound: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub partition_upper_bound: Option<String>,
    /// A rewritten manifest's (rewrite_manifest) EXISTING and DELETED
    /// entries and the lowest data sequence number of its live entries;
    /// absent for a manifest of added files only.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub existing_files_count: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub existing_rows_count: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub deleted_files_count: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub deleted_rows_count: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub min_sequence_number: Option<i64>,
}

/// A manifest of newly added data files (status ADDED, sequence numbers
/// left null to be inherited from the manifest list).
pub fn write_manifest(
    schema: &Schema,
    spec: &PartitionSpec,
    snapshot_id: i64,
    manifest_path: &str,
    files: &[ManifestDataFile],
) -> Result<(Vec<u8>, ManifestFileInfo)> {
    if files.is_empty() {
        return Err(Error::invalid("a manifest needs at least one data file"));
    }
    if files.len() > limits::MAX_FILES_PER_MANIFEST {
        return Err(Error::limit(format!(
            "{} data files in one manifest, more than the limit of {}",
            files.len(),
            limits::MAX_FILES_PER_MANIFEST
        )));
    }
    let mut records = Vec::with_capacity(files.len());
    let mut info = ManifestFileInfo {
        manifest_path: manifest_path.to_string(),
        manifest_length: 0,
        partition_spec_id: spec.spec_id,
        added_snapshot_id: snapshot_id,
        added_files_count: files.len() as i32,
        added_rows_count: 0,
        contains_null: false,
        partition_lower_bound: None,
        partition_upper_bound: None,
        existing_files_count: None,
        existing_rows_count: None,
        deleted_files_count: None,
        deleted_rows_count: None,
        min_sequence_number: None,
    };
    let (mut lo, mut hi): (Option<i32>, Option<i32>) = (None, None);
    for f in files {
        let m = &f.metrics;
        if f.file_path.is_empty() {
            return Err(Error::invalid("a data file without a path"));
        }
        for id in m.columns.keys() {
            let known = schema.field_by_id(*id).is_some()
                || schema.fields.iter().any(|x| matches!(x.field_type, crate::schema::FieldType::StringList { element_id } if element_id == *id));
            if !known {
                return Err(Error::invalid(format!(
                    "data file {}: metrics for field id {id}, which the schema does not have",
                    f.file_path
                )));
            }
        }
        let partition_value = match m.partition_value {
            Some(v) => {
                lo = Some(lo.map_or(v, |l| l.min(v)));
                hi = Some(hi.map_or(v, |h| h.max(v)));
                some(spec.avro_value(v))
            }
            None => {
                info.contains_null = true;
                none()
            }
        };
        info.added_rows_count += m.record_count;
        let counts = |get: &dyn Fn(&crate::parquet_writer::ColumnMetrics) -> Option<i64>| {
            map_value(m.columns.iter().filter_map(|(id, c)| get(c).map(|v| (*id, Value::Long(v)))).collect())
        };
        let bound_map = |get: &dyn Fn(&crate::parquet_writer::ColumnMetrics) -> Option<&String>| -> Result<Value> {
            let mut entries = Vec::new();
            for (id, c) in &m.columns {
                if let Some(h) = get(c) {
                    entries.push((*id, Value::Bytes(unhex(h)?)));
                }
            }
            Ok(map_value(entries))
        };
        let data_file = Value::Record(vec![
            ("content".into(), Value::Int(0)),
            ("file_path".into(), Value::String(f.file_path.clone())),
            ("file_format".into(), Value::String("PARQUET".into())),
            ("partition".into(), Value::Record(vec![(spec.name.clone(), partition_value)])),
            ("record_count".into(), Value::Long(m.record_count)),
            ("file_size_in_bytes".into(), Value::Long(m.file_size_in_bytes)),
            ("column_sizes".into(), counts(&|c| Some(c.column_size))),
            ("value_counts".into(), counts(&|c| Some(c.value_count))),
            ("null_value_counts".into(), counts(&|c| Some(c.null_value_count))),
            ("nan_value_counts".into(), counts(&|c| c.nan_value_count)),
            ("lower_bounds".into(), bound_map(&|c| c.lower_bound.as_ref())?),
            ("upper_bounds".into(), bound_map(&|c| c.upper_bound.as_ref())?),
            ("key_metadata".into(), none()),
            ("split_offsets".into(), none()),
            ("equality_ids".into(), none()),
            ("sort_order_id".into(), none()),
        ]);
        records.push(Value::Record(vec![
            ("status".into(), Value::Int(1)),
            ("snapshot_id".into(), some(Value::Long(snapshot_id))),
            ("sequence_number".into(), none()),
            ("file_sequence_number".into(), none()),
            ("data_file".into(), data_file),
        ]));
    }
    info.partition_lower_bound = lo.map(|v| hex(&bounds::int_bytes(v)));
    info.partition_upper_bound = hi.map(|v| hex(&bounds::int_bytes(v)));

    let bytes = write_container(&manifest_schema_json(spec), manifest_metadata(schema, spec), sync_marker(manifest_path), records)?;
    info.manifest_length = bytes.len() as i64;
    Ok((bytes, info))
}

/// The file metadata of a data manifest.
fn manifest_metadata(schema: &Schema, spec: &PartitionSpec) -> BTreeMap<String, Vec<u8>> {
    let mut metadata = BTreeMap::new();
    metadata.insert("schema".to_string(), schema.to_json().to_string().into_bytes());
    metadata.insert("schema-id".to_string(), schema.schema_id.to_string().into_bytes());
    metadata.insert("partition-spec".to_string(), spec.to_json()["fields"].to_string().into_bytes());
    metadata.insert("partition-spec-id".to_string(), spec.spec_id.to_string().into_bytes());
    metadata.insert("format-version".to_string(), b"2".to_vec());
    metadata.insert("content".to_string(), b"data".to_vec());
    metadata
}

/// A data file a rewritten manifest marks DELETED.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RemovedDataFile {
    pub file_path: String,
    pub record_count: i64,
    pub file_size_in_bytes: i64,
}

fn field_mut<'a>(record: &'a mut [(String, Value)], name: &str) -> Result<&'a mut Value> {
    record
        .iter_mut()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
        .ok_or_else(|| Error::internal(format!("manifest entry without {name}")))
}

fn optional_long(v: &Value) -> Option<i64> {
    match v {
        Value::Union(_, inner) => optional_long(inner),
        Value::Long(x) => Some(*x),
        Value::Int(x) => Some(*x as i64),
        _ => None,
    }
}

/// What a replace snapshot writes for a manifest that holds files it
/// removes: every entry of `source` (any writer's manifest, read by field
/// id) that was live stays, as EXISTING with its snapshot id and sequence
/// numbers made explicit (`inherited_*`: the manifest list entry's, for
/// entries that inherited them), except the files of `remove`, which become
/// DELETED with `snapshot_id` (the replace snapshot) and keep their sequence
/// numbers. Entries already DELETED are dropped (they were deleted by an
/// earlier snapshot). Returns the manifest, its manifest list record and the
/// removed files (a path of `remove` the manifest does not hold live is not
/// among them: the caller checks).
pub fn rewrite_manifest(
    schema: &Schema,
    spec: &PartitionSpec,
    source: &[u8],
    snapshot_id: i64,
    manifest_path: &str,
    inherited_snapshot_id: i64,
    inherited_sequence_number: i64,
    remove: &std::collections::BTreeSet<String>,
) -> Result<(Vec<u8>, ManifestFileInfo, Vec<RemovedDataFile>)> {
    let source = ManifestSource { bytes: source, inherited_snapshot_id, inherited_sequence_number };
    write_carried(schema, spec, &[source], snapshot_id, manifest_path, remove)
}

/// One manifest to carry entries from, with the manifest list entry's
/// snapshot id and sequence number its entries may inherit.
pub struct ManifestSource<'a> {
    pub bytes: &'a [u8],
    pub inherited_snapshot_id: i64,
    pub inherited_sequence_number: i64,
}

/// What a rewrite-manifests snapshot writes for the small manifests it
/// merges: every live entry of every source, as EXISTING with its snapshot
/// id and sequence numbers made explicit (as rewrite_manifest keeps them),
/// in one manifest added by `snapshot_id`; DELETED entries are dropped.
pub fn merge_manifests(
    schema: &Schema,
    spec: &PartitionSpec,
    sources: &[ManifestSource],
    snapshot_id: i64,
    manifest_path: &str,
) -> Result<(Vec<u8>, ManifestFileInfo)> {
    let (bytes, info, _) =
        write_carried(schema, spec, sources, snapshot_id, manifest_path, &Default::default())?;
    Ok((bytes, info))
}

fn write_carried(
    schema: &Schema,
    spec: &PartitionSpec,
    sources: &[ManifestSource],
    snapshot_id: i64,
    manifest_path: &str,
    remove: &std::collections::BTreeSet<String>,
) -> Result<(Vec<u8>, ManifestFileInfo, Vec<RemovedDataFile>)> {
    let mut total = 0usize;
    for source in sources {
        total = total.saturating_add(source.bytes.len());
        if total > limits::MAX_AVRO_BYTES {
            return Err(Error::limit(format!(
                "manifests of more than {} bytes in all, the limit",
                limits::MAX_AVRO_BYTES
            )));
        }
    }
    let target_json = manifest_schema_json(spec);
    let target = AvroSchema::parse_str(&target_json.to_string())?;
    let mut records = Vec::new();
    let mut removed = Vec::new();
    let mut info = ManifestFileInfo {
        manifest_path: manifest_path.to_string(),
        manifest_length: 0,
        partition_spec_id: spec.spec_id,
        added_snapshot_id: snapshot_id,
        added_files_count: 0,
        added_rows_count: 0,
        contains_null: false,
        partition_lower_bound: None,
        partition_upper_bound: None,
        existing_files_count: Some(0),
        existing_rows_count: Some(0),
        deleted_files_count: Some(0),
        deleted_rows_count: Some(0),
        min_sequence_number: None,
    };
    let (mut lo, mut hi): (Option<i32>, Option<i32>) = (None, None);
    for source in sources {
        let inherited_snapshot_id = source.inherited_snapshot_id;
        let inherited_sequence_number = source.inherited_sequence_number;
        let reader = Reader::new(source.bytes)?;
        let source_schema = reader.writer_schema().clone();
        for v in reader {
            if records.len() >= limits::MAX_FILES_PER_MANIFEST {
                return Err(Error::limit(format!(
                    "a manifest of more than {} entries",
                    limits::MAX_FILES_PER_MANIFEST
                )));
            }
            let entry = remap(&target, &source_schema, v?, "manifest entry")?;
            let Value::Record(mut fields) = entry else {
                return Err(Error::internal("a manifest entry is not a record"));
            };
            let status = match field_mut(&mut fields, "status")? {
                Value::Int(s) => *s,
                _ => return Err(Error::invalid("a manifest entry's status is not an int")),
            };
            if status == 2 {
                continue;
            }
            let entry_snapshot = optional_long(field_mut(&mut fields, "snapshot_id")?).unwrap_or(inherited_snapshot_id);
            let sequence = optional_long(field_mut(&mut fields, "sequence_number")?).unwrap_or(inherited_sequence_number);
            let file_sequence =
                optional_long(field_mut(&mut fields, "file_sequence_number")?).unwrap_or(inherited_sequence_number);
            let (path, record_count, size, partition) = {
                let Value::Record(df) = field_mut(&mut fields, "data_file")? else {
                    return Err(Error::invalid("a manifest entry's data_file is not a record"));
                };
                let mut path = String::new();
                let (mut rc, mut size, mut partition) = (0i64, 0i64, None);
                for (n, v) in df.iter() {
                    match (n.as_str(), v) {
                        ("content", Value::Int(c)) if *c != 0 => {
                            return Err(Error::invalid("a data manifest holds a delete file"));
                        }
                        ("file_path", Value::String(p)) => path = p.clone(),
                        ("record_count", Value::Long(x)) => rc = *x,
                        ("file_size_in_bytes", Value::Long(x)) => size = *x,
                        ("partition", Value::Record(p)) => {
                            partition = p.first().map(|(_, v)| match v {
                                Value::Union(_, inner) => match **inner {
                                    Value::Int(x) | Value::Date(x) => Some(x),
                                    _ => None,
                                },
                                Value::Int(x) | Value::Date(x) => Some(*x),
                                _ => None,
                            });
                        }
                        _ => {}
                    }
                }
                (path, rc, size, partition.flatten())
            };
            match partition {
                Some(p) => {
                    lo = Some(lo.map_or(p, |l| l.min(p)));
                    hi = Some(hi.map_or(p, |h| h.max(p)));
                }
                None => info.contains_null = true,
            }
            let deleting = remove.contains(&path);
            let (new_status, new_snapshot) = if deleting { (2, snapshot_id) } else { (0, entry_snapshot) };
            *field_mut(&mut fields, "status")? = Value::Int(new_status);
            *field_mut(&mut fields, "snapshot_id")? = some(Value::Long(new_snapshot));
            *field_mut(&mut fields, "sequence_number")? = some(Value::Long(sequence));
            *field_mut(&mut fields, "file_sequence_number")? = some(Value::Long(file_sequence));
            if deleting {
                *info.deleted_files_count.as_mut().unwrap() += 1;
                *info.deleted_rows_count.as_mut().unwrap() += record_count;
                removed.push(RemovedDataFile { file_path: path, record_count, file_size_in_bytes: size });
            } else {
                *info.existing_files_count.as_mut().unwrap() += 1;
                *info.existing_rows_count.as_mut().unwrap() += record_count;
                info.min_sequence_number = Some(info.min_sequence_number.map_or(sequence, |m| m.min(sequence)));
            }
            records.push(Value::Record(fields));
        }
    }
    info.partition_lower_bound = lo.map(|v| hex(&bounds::int_bytes(v)));
    info.partition_upper_bound = hi.map(|v| hex(&bounds::int_bytes(v)));
    let bytes = write_container(&target_json, manifest_metadata(schema, spec), sync_marker(manifest_path), records)?;
    info.manifest_length = bytes.len() as i64;
    Ok((bytes, info, removed))
}

/// Rewrites a record read with another writer's schema into `target`,
/// matching fields by Iceberg field id (names differ between writers).
fn remap(target: &AvroSchema, source: &AvroSchema, value: Value, what: &str) -> Result<Value> {
    match (target, source, value) {
        (AvroSchema::Union(tu), AvroSchema::Union(su), Value::Union(i, inner)) => {
            if matches!(*inner, Value::Null) {
                return Ok(none());
            }
            let s = su
                .variants()
                .get(i as usize)
                .ok_or_else(|| Error::invalid(format!("{what}: bad union branch")))?;
            let t = tu
                .variants()
                .iter()
                .find(|v| !matches!(v, AvroSchema::Null))
                .ok_or_else(|| Error::internal("union without a value branch"))?;
            Ok(some(remap(t, s, *inner, what)?))
        }
        (AvroSchema::Union(tu), s, v) => {
            let t = tu.variants().iter().find(|v| !matches!(v, AvroSchema::Null)).unwrap();
            Ok(some(remap(t, s, v, what)?))
        }
        // Optional in the writer's schema, required in ours.
        (t, AvroSchema::Union(su), Value::Union(i, inner)) => {
            if matches!(*inner, Value::Null) {
                return Err(Error::invalid(format!("{what}: a required value is null")));
            }
            let s = su
                .variants()
                .get(i as usize)
                .ok_or_else(|| Error::invalid(format!("{what}: bad union branch")))?;
            remap(t, s, *inner, what)
        }
        (AvroSchema::Record(t), AvroSchema::Record(s), Value::Record(fields)) => {
            let mut by_id: BTreeMap<i64, (&AvroSchema, Value)> = BTreeMap::new();
            for (sf, (_, v)) in s.fields.iter().zip(fields) {
                if let Some(id) = sf.custom_attributes.get("field-id").and_then(Json::as_i64) {
                    by_id.insert(id, (&sf.schema, v));
                }
            }
            let mut out = Vec::with_capacity(t.fields.len());
            for tf in &t.fields {
                let id = tf.custom_attributes.get("field-id").and_then(Json::as_i64).unwrap_or(-1);
                let v = match by_id.remove(&id) {
                    Some((ss, v)) => remap(&tf.schema, ss, v, &tf.name)?,
                    None if matches!(tf.schema, AvroSchema::Union(_)) => none(),
                    None => {
                        return Err(Error::invalid(format!(
                            "{what}: the parent manifest list has no field {} (id {id})",
                            tf.name
                        )))
                    }
                };
                out.push((tf.name.clone(), v));
            }
            Ok(Value::Record(out))
        }
        (AvroSchema::Array(t), AvroSchema::Array(s), Value::Array(items)) => Ok(Value::Array(
            items
                .into_iter()
                .map(|v| remap(&t.items, &s.items, v, what))
                .collect::<Result<Vec<_>>>()?,
        )),
        (AvroSchema::Int, _, Value::Int(v)) => Ok(Value::Int(v)),
        (AvroSchema::Int, _, Value::Date(v)) => Ok(Value::Int(v)),
        (AvroSchema::Date, _, Value::Int(v)) => Ok(Value::Date(v)),
        (AvroSchema::Long, _, Value::Int(v)) => Ok(Value::Long(v as i64)),
        (_, _, v) => Ok(v),
    }
}

/// Reads a manifest list's entries (written by anyone), in our schema.
fn read_manifest_list(bytes: &[u8], target: &AvroSchema) -> Result<Vec<Value>> {
    let reader = Reader::new(bytes)?;
    let source = reader.writer_schema().clone();
    let mut out = Vec::new();
    for v in reader {
        out.push(remap(target, &source, v?, "manifest list entry")?);
    }
    Ok(out)
}

/// The manifest list of a new snapshot: the parent snapshot's manifests
/// (kept as they are) then the new ones, which get `sequence_number`.
pub fn write_manifest_list(
    snapshot_id: i64,
    parent_snapshot_id: Option<i64>,
    sequence_number: i64,
    manifest_list_path: &str,
    parent_list: Option<&[u8]>,
    new_manifests: &[ManifestFileInfo],
    drop_parent_manifests: &[String],
) -> Result<Vec<u8>> {
    let schema_json = manifest_list_schema_json();
    let schema = AvroSchema::parse_str(&schema_json.to_string())?;
    let mut records = match parent_list {
        Some(bytes) => read_manifest_list(bytes, &schema)?,
        None => Vec::new(),
    };
    // As Iceberg's own writers do, a parent manifest without live files
    // (only DELETED entries: a replace's rewrite, already reported by the
    // snapshot that wrote it) is not carried into a new snapshot.
    let count = |r: &Value, name: &str| match r {
        Value::Record(f) => f.iter().find(|(n, _)| n == name).and_then(|(_, v)| optional_long(v)),
        _ => None,
    };
    records.retain(|r| count(r, "added_files_count") != Some(0) || count(r, "existing_files_count") != Some(0));
    // A replace snapshot lists its rewritten manifests instead of these.
    for dropped in drop_parent_manifests {
        let before = records.len();
        records.retain(|r| {
            !matches!(r, Value::Record(f) if f.iter().any(|(n, v)| n == "manifest_path" && matches!(v, Value::String(p) if p == dropped)))
        });
        if records.len() == before {
            return Err(Error::invalid(format!("manifest {dropped} is not in the parent manifest list")));
        }
    }
    for m in new_manifests {
        let bound = |h: &Option<String>| -> Result<Value> {
            Ok(match h {
                Some(h) => some(Value::Bytes(unhex(h)?)),
                None => none(),
            })
        };
        let summary = Value::Record(vec![
            ("contains_null".into(), Value::Boolean(m.contains_null)),
            ("contains_nan".into(), some(Value::Boolean(false))),
            ("lower_bound".into(), bound(&m.partition_lower_bound)?),
            ("upper_bound".into(), bound(&m.partition_upper_bound)?),
        ]);
        records.push(Value::Record(vec![
            ("manifest_path".into(), Value::String(m.manifest_path.clone())),
            ("manifest_length".into(), Value::Long(m.manifest_length)),
            ("partition_spec_id".into(), Value::Int(m.partition_spec_id)),
            ("content".into(), Value::Int(0)),
            ("sequence_number".into(), Value::Long(sequence_number)),
            ("min_sequence_number".into(), Value::Long(m.min_sequence_number.unwrap_or(sequence_number))),
            ("added_snapshot_id".into(), Value::Long(m.added_snapshot_id)),
            ("added_files_count".into(), Value::Int(m.added_files_count)),
            ("existing_files_count".into(), Value::Int(m.existing_files_count.unwrap_or(0))),
            ("deleted_files_count".into(), Value::Int(m.deleted_files_count.unwrap_or(0))),
            ("added_rows_count".into(), Value::Long(m.added_rows_count)),
            ("existing_rows_count".into(), Value::Long(m.existing_rows_count.unwrap_or(0))),
            ("deleted_rows_count".into(), Value::Long(m.deleted_rows_count.unwrap_or(0))),
            ("partitions".into(), some(Value::Array(vec![summary]))),
            ("key_metadata".into(), none()),
        ]));
    }
    let mut metadata = BTreeMap::new();
    metadata.insert("snapshot-id".to_string(), snapshot_id.to_string().into_bytes());
    metadata.insert(
        "parent-snapshot-id".to_string(),
        parent_snapshot_id.map_or("null".to_string(), |p| p.to_string()).into_bytes(),
    );
    metadata.insert("sequence-number".to_string(), sequence_number.to_string().into_bytes());
    metadata.insert("format-version".to_string(), b"2".to_vec());
    write_container(&schema_json, metadata, sync_marker(manifest_list_path), records)
}
