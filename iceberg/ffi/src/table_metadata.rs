//! Iceberg v2 table metadata JSON (table spec, "Table Metadata"): a new
//! table's first document, the plan of an append (schema evolution by
//! column name, the next sequence number, the parent snapshot), and the
//! document with the appended snapshot. Existing documents are edited as
//! JSON, so fields and snapshots other writers put there are kept.

use serde::Deserialize;
use serde_json::{json, Map, Value as Json};

use crate::avro_files::PartitionSpec;
use crate::bounds::TimeTransform;
use crate::error::{Error, Result};
use crate::limits;
use crate::schema::{Field, FieldType, Schema};

/// The partition field id of the first (only) partition field.
const FIRST_PARTITION_FIELD_ID: i32 = 1000;
/// metadata-log entries kept (Iceberg's write.metadata.previous-versions-max).
const MAX_METADATA_LOG: usize = 100;

#[derive(Deserialize)]
pub struct FieldRequest {
    pub name: String,
    #[serde(rename = "type")]
    pub field_type: String,
    #[serde(default)]
    pub required: bool,
}

#[derive(Deserialize)]
pub struct NewTableRequest {
    pub table_uuid: String,
    pub location: String,
    pub last_updated_ms: i64,
    pub fields: Vec<FieldRequest>,
    /// The timestamptz field the table is partitioned by.
    pub time_column: String,
    /// hour, day, month or year.
    pub partition_transform: String,
    #[serde(default)]
    pub properties: std::collections::BTreeMap<String, String>,
}

#[derive(Deserialize)]
pub struct AppendRequest {
    /// The schema from the plan (`plan_append`), with field ids.
    pub schema: Json,
    pub snapshot_id: i64,
    pub sequence_number: i64,
    pub timestamp_ms: i64,
    pub manifest_list: String,
    pub added_data_files: i64,
    pub added_records: i64,
    pub added_files_size: i64,
    /// Extra snapshot summary entries (e.g. the Kafka offsets covered).
    #[serde(default)]
    pub summary: std::collections::BTreeMap<String, String>,
    /// Where the document being replaced is stored (for metadata-log).
    #[serde(default)]
    pub previous_metadata_location: Option<String>,
    /// "append" (default) or "replace" (a rewrite of data files: the
    /// deleted_* counts are what it removed).
    #[serde(default)]
    pub operation: Option<String>,
    #[serde(default)]
    pub deleted_data_files: i64,
    #[serde(default)]
    pub deleted_records: i64,
    #[serde(default)]
    pub removed_files_size: i64,
}

fn check_uuid(s: &str) -> Result<()> {
    let ok = s.len() == 36
        && s.char_indices().all(|(i, c)| {
            if [8, 13, 18, 23].contains(&i) {
                c == '-'
            } else {
                c.is_ascii_hexdigit() && !c.is_ascii_uppercase()
            }
        });
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!("table uuid \"{s}\" is not a lowercase 8-4-4-4-12 hex uuid")))
    }
}

/// Gives each requested field the id it has in `current` (same name) or a
/// new one above `last_column_id`; fields of `current` the request lacks
/// stay (a data file without them reads as null there).
fn evolve(current: Option<&Schema>, last_column_id: i32, request: &[FieldRequest]) -> Result<Schema> {
    if request.len() > limits::MAX_FIELDS {
        return Err(Error::limit(format!(
            "{} fields, more than the limit of {}",
            request.len(),
            limits::MAX_FIELDS
        )));
    }
    let mut fields: Vec<Field> = current.map(|s| s.fields.clone()).unwrap_or_default();
    let mut next_id = last_column_id;
    for r in request {
        let wanted = FieldType::parse_name(&r.field_type)?;
        if let Some(existing) = fields.iter().find(|f| f.name == r.name) {
            if existing.field_type.name() != wanted.name() {
                return Err(Error::invalid(format!(
                    "field \"{}\" is {} in the table and {} in the request: types cannot change",
                    r.name,
                    existing.field_type.name(),
                    wanted.name()
                )));
            }
            continue;
        }
        if current.is_some() && r.required {
            return Err(Error::invalid(format!(
                "new field \"{}\" must be optional: earlier data files have no values for it",
                r.name
            )));
        }
        next_id += 1;
        let id = next_id;
        let field_type = match wanted {
            FieldType::StringList { .. } => {
                next_id += 1;
                FieldType::StringList { element_id: next_id }
            }
            t => t,
        };
        fields.push(Field { id, name: r.name.clone(), required: r.required, field_type });
    }
    let schema_id = current.map_or(0, |c| c.schema_id);
    let schema = Schema { schema_id, fields };
    schema.validate()?;
    Ok(schema)
}

pub fn new_table(req: &NewTableRequest) -> Result<Json> {
    check_uuid(&req.table_uuid)?;
    if req.location.is_empty() {
        return Err(Error::invalid("a table needs a location"));
    }
    let schema = evolve(None, 0, &req.fields)?;
    let time = schema
        .fields
        .iter()
        .find(|f| f.name == req.time_column)
        .ok_or_else(|| Error::invalid(format!("time column \"{}\" is not among the fields", req.time_column)))?;
    if time.field_type != FieldType::Timestamptz || !time.required {
        return Err(Error::invalid(format!(
            "time column \"{}\" must be a required timestamptz",
            req.time_column
        )));
    }
    let transform = TimeTransform::parse(&req.partition_transform)?;
    let spec = PartitionSpec {
        spec_id: 0,
        source_id: time.id,
        field_id: FIRST_PARTITION_FIELD_ID,
        name: format!("{}_{}", time.name, transform.name()),
        transform,
    };
    check_properties(&req.properties)?;
    Ok(json!({
        "format-version": 2,
        "table-uuid": req.table_uuid,
        "location": req.location.trim_end_matches('/'),
        "last-sequence-number": 0,
        "last-updated-ms": req.last_updated_ms,
        "last-column-id": schema.highest_field_id(),
        "current-schema-id": schema.schema_id,
        "schemas": [schema.to_json()],
        "default-spec-id": spec.spec_id,
        "partition-specs": [spec.to_json()],
        "last-partition-id": FIRST_PARTITION_FIELD_ID,
        "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "properties": req.properties,
        // -1: no snapshot yet, as Java's writer puts it (readers take -1,
        // null or no field alike).
        "current-snapshot-id": -1,
        "snapshots": [],
        "snapshot-log": [],
        "metadata-log": [],
        "refs": {},
    }))
}

fn check_properties(props: &std::collections::BTreeMap<String, String>) -> Result<()> {
    if props.len() > limits::MAX_SUMMARY_PROPERTIES {
        return Err(Error::limit(format!(
            "{} properties, more than the limit of {}",
            props.len(),
            limits::MAX_SUMMARY_PROPERTIES
        )));
    }
    for (k, v) in props {
        if k.len() > limits::MAX_PROPERTY_BYTES || v.len() > limits::MAX_PROPERTY_BYTES {
            return Err(Error::limit(format!(
                "property \"{}\" is longer than the limit of {} bytes",
                crate::bounds::truncate_chars(k, 64),
                limits::MAX_PROPERTY_BYTES
            )));
        }
    }
    Ok(())
}

fn get_i64(m: &Json, key: &str) -> Result<i64> {
    m.get(key)
        .and_then(Json::as_i64)
        .ok_or_else(|| Error::invalid(format!("table metadata has no integer \"{key}\"")))
}

/// The current snapshot id (None for a table without snapshots; -1 and
/// null mean none too).
fn current_snapshot_id(m: &Json) -> Option<i64> {
    m.get("current-snapshot-id").and_then(Json::as_i64).filter(|&id| id >= 0)
}

fn schema_by_id(m: &Json, id: i64) -> Result<Schema> {
    let schemas = m
        .get("schemas")
        .and_then(Json::as_array)
        .ok_or_else(|| Error::invalid("table metadata has no \"schemas\""))?;
    let s = schemas
        .iter()
        .find(|s| s.get("schema-id").and_then(Json::as_i64) == Some(id))
        .ok_or_else(|| Error::invalid(format!("table metadata has no schema {id}")))?;
    Schema::from_json(s)
}

fn default_spec(m: &Json) -> Result<PartitionSpec> {
    let id = get_i64(m, "default-spec-id")?;
    let specs = m
        .get("partition-specs")
        .and_then(Json::as_array)
        .ok_or_else(|| Error::invalid("table metadata has no \"partition-specs\""))?;
    let s = specs
        .iter()
        .find(|s| s.get("spec-id").and_then(Json::as_i64) == Some(id))
        .ok_or_else(|| Error::invalid(format!("table metadata has no partition spec {id}")))?;
    PartitionSpec::from_json(s)
}

pub fn parse_metadata(text: &str) -> Result<Json> {
    if text.len() > limits::MAX_JSON_BYTES {
        return Err(Error::limit(format!(
            "table metadata of {} bytes, more than the limit of {}",
            text.len(),
            limits::MAX_JSON_BYTES
        )));
    }
    let m: Json = serde_json::from_str(text)?;
    if m.get("format-version").and_then(Json::as_i64) != Some(2) {
        return Err(Error::invalid("only format-version 2 table metadata is supported"));
    }
    Ok(m)
}

/// What the caller needs to write an append's files: the (possibly
/// evolved) schema with field ids, the partition spec, the parent snapshot
/// and its manifest list, and the sequence number of the new snapshot.
pub fn plan_append(metadata: &Json, fields: &[FieldRequest]) -> Result<Json> {
    let current = schema_by_id(metadata, get_i64(metadata, "current-schema-id")?)?;
    let last_column_id = get_i64(metadata, "last-column-id")? as i32;
    let mut schema = evolve(Some(&current), last_column_id, fields)?;
    let changed = !schema.same_fields(&current);
    if changed {
        let max_id = metadata["schemas"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.get("schema-id").and_then(Json::as_i64))
            .max()
            .unwrap_or(0);
        schema.schema_id = max_id as i32 + 1;
    }
    let spec = default_spec(metadata)?;
    let parent = current_snapshot_id(metadata);
    let parent_manifest_list = parent.and_then(|id| {
        metadata["snapshots"]
            .as_array()?
            .iter()
            .find(|s| s.get("snapshot-id").and_then(Json::as_i64) == Some(id))?
            .get("manifest-list")?
            .as_str()
            .map(str::to_string)
    });
    if parent.is_some() && parent_manifest_list.is_none() {
        return Err(Error::invalid("the current snapshot has no manifest-list"));
    }
    Ok(json!({
        "schema": schema.to_json(),
        "schema_changed": changed,
        "partition_spec": spec.to_json(),
        "parent_snapshot_id": parent,
        "parent_manifest_list": parent_manifest_list,
        "sequence_number": get_i64(metadata, "last-sequence-number")? + 1,
        "location": metadata.get("location").and_then(Json::as_str).unwrap_or_default(),
        "table_uuid": metadata.get("table-uuid").and_then(Json::as_str).unwrap_or_default(),
    }))
}

/// Summary keys this library sets; callers cannot override them.
const SUMMARY_KEYS: &[&str] = &[
    "operation",
    "added-data-files",
    "added-records",
    "added-files-size",
    "deleted-data-files",
    "deleted-records",
    "removed-files-size",
    "total-data-files",
    "total-records",
    "total-files-size",
    "total-delete-files",
    "total-position-deletes",
    "total-equality-deletes",
];

fn parent_total(parent_summary: Option<&Json>, key: &str) -> Option<i64> {
    parent_summary?.get(key)?.as_str()?.parse().ok()
}

/// The metadata with a new append snapshot as the current one (and `main`).
pub fn append_snapshot(metadata: &Json, req: &AppendRequest) -> Result<Json> {
    let mut m = metadata.clone();
    let expected_sequence = get_i64(&m, "last-sequence-number")? + 1;
    if req.sequence_number != expected_sequence {
        return Err(Error::conflict(format!(
            "the append was planned for sequence number {} but the table is at {}: plan again",
            req.sequence_number,
            expected_sequence - 1
        )));
    }
    if req.snapshot_id < 0 {
        return Err(Error::invalid("snapshot ids are not negative"));
    }
    let parent = current_snapshot_id(&m);
    let snapshots_json = m
        .get("snapshots")
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default();
    if snapshots_json.iter().any(|s| s.get("snapshot-id").and_then(Json::as_i64) == Some(req.snapshot_id)) {
        return Err(Error::invalid(format!("snapshot id {} is already in the table", req.snapshot_id)));
    }
    let operation = req.operation.as_deref().unwrap_or("append");
    let replace = match operation {
        "append" => false,
        "replace" => true,
        other => return Err(Error::invalid(format!("operation \"{other}\" is not append or replace"))),
    };
    if !replace && (req.deleted_data_files != 0 || req.deleted_records != 0 || req.removed_files_size != 0) {
        return Err(Error::invalid("an append deletes no data files"));
    }
    if replace && parent.is_none() {
        return Err(Error::invalid("a replace needs a current snapshot"));
    }
    check_properties(&req.summary)?;
    for k in req.summary.keys() {
        if SUMMARY_KEYS.contains(&k.as_str()) {
            return Err(Error::invalid(format!("summary key \"{k}\" is set by the library")));
        }
    }

    // Schema: reuse an equal one, else add it (no field may disappear or
    // change).
    let schema = Schema::from_json(&req.schema)?;
    let current = schema_by_id(&m, get_i64(&m, "current-schema-id")?)?;
    for f in &current.fields {
        if !schema.fields.contains(f) {
            return Err(Error::invalid(format!(
                "the append's schema drops or changes field \"{}\" (id {}): plan again",
                f.name, f.id
            )));
        }
    }
    let last_column_id = get_i64(&m, "last-column-id")? as i32;
    let mut schema_id = current.schema_id;
    if !schema.same_fields(&current) {
        let schemas = m["schemas"].as_array().cloned().unwrap_or_default();
        let mut found = None;
        for s in &schemas {
            if let Ok(other) = Schema::from_json(s) {
                if other.same_fields(&schema) {
                    found = Some(other.schema_id);
                }
            }
        }
        schema_id = match found {
            Some(id) => id,
            None => {
                if schemas.iter().any(|s| s.get("schema-id").and_then(Json::as_i64) == Some(schema.schema_id as i64)) {
                    return Err(Error::conflict(format!(
                        "schema id {} is taken by another schema: plan again",
                        schema.schema_id
                    )));
                }
                m["schemas"].as_array_mut().unwrap().push(schema.to_json());
                schema.schema_id
            }
        };
        m["current-schema-id"] = json!(schema_id);
        m["last-column-id"] = json!(last_column_id.max(schema.highest_field_id()));
    }

    let parent_summary = parent.and_then(|p| {
        snapshots_json
            .iter()
            .find(|s| s.get("snapshot-id").and_then(Json::as_i64) == Some(p))
            .and_then(|s| s.get("summary"))
    });
    let mut summary = Map::new();
    for (k, v) in &req.summary {
        summary.insert(k.clone(), json!(v));
    }
    summary.insert("operation".into(), json!(operation));
    summary.insert("added-data-files".into(), json!(req.added_data_files.to_string()));
    summary.insert("added-records".into(), json!(req.added_records.to_string()));
    summary.insert("added-files-size".into(), json!(req.added_files_size.to_string()));
    if replace {
        summary.insert("deleted-data-files".into(), json!(req.deleted_data_files.to_string()));
        summary.insert("deleted-records".into(), json!(req.deleted_records.to_string()));
        summary.insert("removed-files-size".into(), json!(req.removed_files_size.to_string()));
    }
    let totals = [
        ("total-data-files", req.added_data_files - req.deleted_data_files),
        ("total-records", req.added_records - req.deleted_records),
        ("total-files-size", req.added_files_size - req.removed_files_size),
        ("total-delete-files", 0),
        ("total-position-deletes", 0),
        ("total-equality-deletes", 0),
    ];
    for (key, added) in totals {
        let total = match parent {
            None => Some(added),
            Some(_) => parent_total(parent_summary, key).map(|t| t + added),
        };
        if let Some(t) = total {
            summary.insert(key.into(), json!(t.to_string()));
        }
    }

    let mut snapshot = json!({
        "snapshot-id": req.snapshot_id,
        "sequence-number": req.sequence_number,
        "timestamp-ms": req.timestamp_ms,
        "manifest-list": req.manifest_list,
        "summary": summary,
        "schema-id": schema_id,
    });
    if let Some(p) = parent {
        snapshot["parent-snapshot-id"] = json!(p);
    }

    let obj = m.as_object_mut().ok_or_else(|| Error::invalid("table metadata is not an object"))?;
    let previous_updated = obj.get("last-updated-ms").and_then(Json::as_i64).unwrap_or(0);
    obj.entry("snapshots").or_insert_with(|| json!([])).as_array_mut().unwrap().push(snapshot);
    obj.entry("snapshot-log")
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or_else(|| Error::invalid("snapshot-log is not a list"))?
        .push(json!({"timestamp-ms": req.timestamp_ms, "snapshot-id": req.snapshot_id}));
    if let Some(loc) = &req.previous_metadata_location {
        let log = obj
            .entry("metadata-log")
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .ok_or_else(|| Error::invalid("metadata-log is not a list"))?;
        log.push(json!({"timestamp-ms": previous_updated, "metadata-file": loc}));
        if log.len() > MAX_METADATA_LOG {
            let excess = log.len() - MAX_METADATA_LOG;
            log.drain(..excess);
        }
    }
    obj.insert("current-snapshot-id".into(), json!(req.snapshot_id));
    obj.insert("last-sequence-number".into(), json!(req.sequence_number));
    obj.insert("last-updated-ms".into(), json!(req.timestamp_ms.max(previous_updated)));
    obj.entry("refs")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| Error::invalid("refs is not an object"))?
        .insert("main".into(), json!({"snapshot-id": req.snapshot_id, "type": "branch"}));
    Ok(m)
}
