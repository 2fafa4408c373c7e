//! Writes one Parquet data file (one row group) from columns in memory and
//! collects what an Iceberg manifest entry says about it: record count,
//! file size, per-column sizes, value/null/NaN counts and bounds, and the
//! partition value of the time column.
//!
//! The output is a function of the input only: a fixed `created_by`, no
//! key-value metadata, no timestamps.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use parquet::basic::{Compression, LogicalType, Repetition, TimeUnit, Type as PhysicalType, ZstdLevel};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::file::writer::{SerializedColumnWriter, SerializedFileWriter};
use parquet::schema::types::{Type, TypePtr};

use crate::bounds::{self, TimeTransform};
use crate::error::{Error, Result};
use crate::limits;
use crate::schema::{Field, FieldType, Schema};

/// The writer named in every file's footer; fixed so equal input gives
/// equal bytes (the version moves only with this crate).
pub const CREATED_BY: &str = "sluice-iceberg 1 (parquet-rs 60.2.0)";
/// The parquet writer's batch size (its default, named: the chunks below
/// depend on it).
const WRITE_BATCH_SIZE: usize = 1024;
/// Rows of a dictionary string column handed to the parquet writer per
/// call: a multiple of its batch size.
const VALUE_CHUNK_ROWS: usize = 8 * WRITE_BATCH_SIZE;

const ZSTD_LEVEL: i32 = 3;

/// One column's values, borrowed from the caller. `valid[i] == false`
/// marks row i null (its slot in `values` is ignored); None = no nulls.
pub enum ColumnValues<'a> {
    Int64 { values: &'a [i64], valid: Option<&'a [u8]> },
    Double { values: &'a [f64], valid: Option<&'a [u8]> },
    /// `offsets` has row_count + 1 entries into `bytes`.
    String { offsets: &'a [u64], bytes: &'a [u8], valid: Option<&'a [u8]> },
    /// A dictionary of `offsets.len() - 1` strings in `bytes`; row i's value
    /// is entry `ids[i]`. Each entry is checked and copied once, however
    /// many rows hold it.
    DictionaryString {
        offsets: &'a [u64],
        bytes: &'a [u8],
        ids: &'a [u32],
        valid: Option<&'a [u8]>,
    },
    /// Row i's elements are `element_offsets[list_offsets[i]..list_offsets[i+1]]`
    /// (pairs of consecutive entries); a null row has `valid[i] == 0`.
    StringList {
        list_offsets: &'a [u64],
        element_offsets: &'a [u64],
        bytes: &'a [u8],
        valid: Option<&'a [u8]>,
    },
}

/// What Iceberg keeps about one column of a data file (by field id; for a
/// list the counts and sizes are the element's).
#[derive(Default, Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct ColumnMetrics {
    pub column_size: i64,
    pub value_count: i64,
    pub null_value_count: i64,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub nan_value_count: Option<i64>,
    /// Hex of the single-value serialization.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub lower_bound: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub upper_bound: Option<String>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct DataFileMetrics {
    pub record_count: i64,
    pub file_size_in_bytes: i64,
    /// The partition value (hours/days/months/years since 1970) of every
    /// row's time, when a partition transform was given.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub partition_value: Option<i32>,
    pub columns: BTreeMap<i32, ColumnMetrics>,
}

pub struct PartitionRequest {
    pub source_id: i32,
    pub transform: TimeTransform,
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn unhex(s: &str) -> Result<Vec<u8>> {
    if s.len() % 2 != 0 {
        return Err(Error::invalid(format!("odd-length hex \"{s}\"")));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&s[i..i + 2], 16).map_err(|_| Error::invalid(format!("bad hex \"{s}\"")))
        })
        .collect()
}

fn parquet_schema(schema: &Schema) -> Result<TypePtr> {
    let mut fields = Vec::with_capacity(schema.fields.len());
    for f in &schema.fields {
        let repetition = if f.required { Repetition::REQUIRED } else { Repetition::OPTIONAL };
        let t = match f.field_type {
            FieldType::Timestamptz => Type::primitive_type_builder(&f.name, PhysicalType::INT64)
                .with_logical_type(Some(LogicalType::timestamp(true, TimeUnit::MICROS)))
                .with_repetition(repetition)
                .with_id(Some(f.id))
                .build()?,
            FieldType::Long => Type::primitive_type_builder(&f.name, PhysicalType::INT64)
                .with_repetition(repetition)
                .with_id(Some(f.id))
                .build()?,
            FieldType::Double => Type::primitive_type_builder(&f.name, PhysicalType::DOUBLE)
                .with_repetition(repetition)
                .with_id(Some(f.id))
                .build()?,
            FieldType::String => Type::primitive_type_builder(&f.name, PhysicalType::BYTE_ARRAY)
                .with_logical_type(Some(LogicalType::String))
                .with_repetition(repetition)
                .with_id(Some(f.id))
                .build()?,
            FieldType::StringList { element_id } => {
                // The three-level list of the Parquet spec (LogicalTypes.md).
                let element = Type::primitive_type_builder("element", PhysicalType::BYTE_ARRAY)
                    .with_logical_type(Some(LogicalType::String))
                    .with_repetition(Repetition::REQUIRED)
                    .with_id(Some(element_id))
                    .build()?;
                let list = Type::group_type_builder("list")
                    .with_repetition(Repetition::REPEATED)
                    .with_fields(vec![Arc::new(element)])
                    .build()?;
                Type::group_type_builder(&f.name)
                    .with_logical_type(Some(LogicalType::List))
                    .with_repetition(repetition)
                    .with_id(Some(f.id))
                    .with_fields(vec![Arc::new(list)])
                    .build()?
            }
        };
        fields.push(Arc::new(t));
    }
    Ok(Arc::new(Type::group_type_builder("table").with_fields(fields).build()?))
}

fn writer_properties() -> Result<Arc<WriterProperties>> {
    Ok(Arc::new(
        WriterProperties::builder()
            .set_created_by(CREATED_BY.to_string())
            .set_writer_version(WriterVersion::PARQUET_1_0)
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(ZSTD_LEVEL)?))
            .set_dictionary_enabled(true)
            .set_statistics_enabled(EnabledStatistics::Chunk)
            .set_max_row_group_row_count(None)
            .set_write_batch_size(WRITE_BATCH_SIZE)
            .build(),
    ))
}

/// A column's non-null values (the caller's slice itself when it has no
/// nulls) and its definition levels (1 present, 0 null).
fn present_and_levels<'v, T: Copy>(values: &'v [T], valid: Option<&[u8]>) -> (Cow<'v, [T]>, Vec<i16>) {
    match valid {
        None => (Cow::Borrowed(values), vec![1i16; values.len()]),
        Some(v) => {
            let present: Vec<T> = values.iter().zip(v).filter(|(_, &b)| b != 0).map(|(&x, _)| x).collect();
            (Cow::Owned(present), v.iter().map(|&b| i16::from(b != 0)).collect())
        }
    }
}

fn is_valid(valid: Option<&[u8]>, row: usize) -> bool {
    valid.map_or(true, |v| v[row] != 0)
}

fn check_len(what: &str, name: &str, got: usize, want: usize) -> Result<()> {
    if got != want {
        return Err(Error::invalid(format!("column \"{name}\": {what} has {got} entries, expected {want}")));
    }
    Ok(())
}

fn string_at<'a>(name: &str, offsets: &[u64], bytes: &'a [u8], i: usize) -> Result<&'a str> {
    let (start, end) = (offsets[i], offsets[i + 1]);
    if start > end || end > bytes.len() as u64 {
        return Err(Error::invalid(format!(
            "column \"{name}\": string offsets {start}..{end} are outside the {} data bytes",
            bytes.len()
        )));
    }
    let len = (end - start) as usize;
    if len > limits::MAX_STRING_BYTES {
        return Err(Error::limit(format!(
            "column \"{name}\": a string of {len} bytes, more than the limit of {}",
            limits::MAX_STRING_BYTES
        )));
    }
    std::str::from_utf8(&bytes[start as usize..end as usize])
        .map_err(|_| Error::invalid(format!("column \"{name}\": a string is not valid UTF-8")))
}

/// A string of the caller's column buffers as a parquet value, without
/// copying it: a `ByteArray` over a static `Bytes` view, whose clones and
/// drops are plain copies (no allocation, no atomic reference count), where
/// an owned copy per row cost an allocation and a clone of a shared one two
/// atomic operations per row.
///
/// SAFETY of the 'static view: the caller's buffers outlive
/// `write_data_file` (the C ABI borrows them for the call), and every value
/// made here stays inside that call: in the vectors handed to the column
/// writers, the writers' dictionaries and statistics, the closed row group's
/// metadata, all dropped before `write_data_file` returns (also on an error
/// or a panic, which unwinds out of it). What leaves the call is the file's
/// bytes (a fresh `Vec<u8>`) and the metrics (hex strings): copies, never
/// views.
fn borrowed(s: &str) -> ByteArray {
    let view: &'static [u8] = unsafe { std::mem::transmute::<&[u8], &'static [u8]>(s.as_bytes()) };
    ByteArray::from(bytes::Bytes::from_static(view))
}

/// Tracks the lowest and highest string of a column.
#[derive(Default)]
struct StringRange<'a> {
    min: Option<&'a str>,
    max: Option<&'a str>,
}

impl<'a> StringRange<'a> {
    fn add(&mut self, s: &'a str) {
        if self.min.map_or(true, |m| s < m) {
            self.min = Some(s);
        }
        if self.max.map_or(true, |m| s > m) {
            self.max = Some(s);
        }
    }
    fn fill(&self, m: &mut ColumnMetrics) {
        if let Some(min) = self.min {
            m.lower_bound = Some(hex(&bounds::string_lower_bound(min, limits::STRING_BOUND_CHARS)));
        }
        if let Some(max) = self.max {
            m.upper_bound =
                bounds::string_upper_bound(max, limits::STRING_BOUND_CHARS).map(|b| hex(&b));
        }
    }
}

/// Writes a string column's values (`present`, the rows that are not null)
/// and definition levels, and records its counts and bounds.
fn write_strings(
    col: &mut SerializedColumnWriter<'_>,
    field: &Field,
    present: &[ByteArray],
    defs: &[i16],
    range: &StringRange<'_>,
    m: &mut ColumnMetrics,
) -> Result<()> {
    let w = col.typed::<ByteArrayType>();
    w.write_batch(present, if field.required { None } else { Some(defs) }, None)?;
    m.value_count = defs.len() as i64;
    m.null_value_count = (defs.len() - present.len()) as i64;
    range.fill(m);
    Ok(())
}

/// Writes the file into memory; returns its bytes and metrics.
pub fn write_data_file(
    schema: &Schema,
    columns: &[ColumnValues<'_>],
    row_count: u64,
    partition: Option<&PartitionRequest>,
) -> Result<(Vec<u8>, DataFileMetrics)> {
    schema.validate()?;
    if columns.len() != schema.fields.len() {
        return Err(Error::invalid(format!(
            "{} columns for a schema of {} fields",
            columns.len(),
            schema.fields.len()
        )));
    }
    if row_count == 0 {
        return Err(Error::invalid("a data file needs at least one row"));
    }
    if row_count > limits::MAX_ROWS {
        return Err(Error::limit(format!(
            "{row_count} rows, more than the limit of {} per data file",
            limits::MAX_ROWS
        )));
    }
    let rows = row_count as usize;
    let mut metrics = DataFileMetrics {
        record_count: row_count as i64,
        file_size_in_bytes: 0,
        partition_value: None,
        columns: BTreeMap::new(),
    };

    let mut file = SerializedFileWriter::new(Vec::new(), parquet_schema(schema)?, writer_properties()?)?;
    let mut row_group = file.next_row_group()?;
    // The field id each leaf column's metrics belong to, in leaf order.
    let mut leaf_ids = Vec::with_capacity(columns.len());

    for (field, column) in schema.fields.iter().zip(columns) {
        let name = field.name.as_str();
        let mut m = ColumnMetrics::default();
        let mut col = row_group
            .next_column()?
            .ok_or_else(|| Error::internal("parquet writer ran out of columns"))?;
        let valid_of = |valid: Option<&[u8]>| -> Result<()> {
            if let Some(v) = valid {
                check_len("validity", name, v.len(), rows)?;
                if field.required && v.iter().any(|&b| b == 0) {
                    return Err(Error::invalid(format!("column \"{name}\" is required but has a null")));
                }
            }
            Ok(())
        };
        match (field.field_type, column) {
            (FieldType::Timestamptz | FieldType::Long, ColumnValues::Int64 { values, valid }) => {
                check_len("values", name, values.len(), rows)?;
                valid_of(*valid)?;
                let (present, defs) = present_and_levels(values, *valid);
                let present: &[i64] = &present;
                let w = col.typed::<Int64Type>();
                w.write_batch(present, if field.required { None } else { Some(&defs) }, None)?;
                m.value_count = rows as i64;
                m.null_value_count = (rows - present.len()) as i64;
                if let (Some(lo), Some(hi)) = (present.iter().min(), present.iter().max()) {
                    m.lower_bound = Some(hex(&bounds::long_bytes(*lo)));
                    m.upper_bound = Some(hex(&bounds::long_bytes(*hi)));
                }
                if let Some(p) = partition.filter(|p| p.source_id == field.id) {
                    if field.field_type != FieldType::Timestamptz {
                        return Err(Error::invalid(format!(
                            "partition source \"{name}\" is not a timestamptz column"
                        )));
                    }
                    let mut value: Option<i32> = None;
                    for &t in present {
                        let pv = p.transform.apply(t);
                        match value {
                            None => value = Some(pv),
                            Some(v) if v != pv => {
                                return Err(Error::invalid(format!(
                                    "column \"{name}\": rows fall into more than one {} partition ({v} and {pv}); \
                                     write one data file per partition",
                                    p.transform.name()
                                )))
                            }
                            _ => {}
                        }
                    }
                    if m.null_value_count > 0 {
                        return Err(Error::invalid(format!(
                            "partition source column \"{name}\" has nulls"
                        )));
                    }
                    metrics.partition_value = value;
                }
            }
            (FieldType::Double, ColumnValues::Double { values, valid }) => {
                check_len("values", name, values.len(), rows)?;
                valid_of(*valid)?;
                let (present, defs) = present_and_levels(values, *valid);
                let present: &[f64] = &present;
                let mut nans = 0i64;
                let mut lo: Option<f64> = None;
                let mut hi: Option<f64> = None;
                for &v in present {
                    if v.is_nan() {
                        nans += 1;
                    } else {
                        // -0.0 sorts below +0.0 in Iceberg's bounds.
                        if lo.map_or(true, |l| v.total_cmp(&l).is_lt()) {
                            lo = Some(v);
                        }
                        if hi.map_or(true, |h| v.total_cmp(&h).is_gt()) {
                            hi = Some(v);
                        }
                    }
                }
                let w = col.typed::<DoubleType>();
                w.write_batch(present, if field.required { None } else { Some(&defs) }, None)?;
                m.value_count = rows as i64;
                m.null_value_count = (rows - present.len()) as i64;
                m.nan_value_count = Some(nans);
                m.lower_bound = lo.map(|v| hex(&bounds::double_bytes(v)));
                m.upper_bound = hi.map(|v| hex(&bounds::double_bytes(v)));
            }
            (FieldType::String, ColumnValues::DictionaryString { offsets, bytes, ids, valid }) => {
                check_len("dictionary_ids", name, ids.len(), rows)?;
                valid_of(*valid)?;
                let entries = offsets.len().saturating_sub(1);
                // Each entry a row uses, checked and bounded once, in row
                // order (the first bad one is the error); the rows share it.
                let mut used: Vec<Option<ByteArray>> = vec![None; entries];
                let mut range = StringRange::default();
                for i in 0..rows {
                    if is_valid(*valid, i) {
                        let id = ids[i] as usize;
                        if id >= entries {
                            return Err(Error::invalid(format!(
                                "column \"{name}\": dictionary id {id} of row {i} is outside the {entries} entries"
                            )));
                        }
                        if used[id].is_none() {
                            let s = string_at(name, offsets, bytes, id)?;
                            range.add(s);
                            used[id] = Some(borrowed(s));
                        }
                    }
                }
                // The rows' values go to the writer a chunk at a time: one
                // small buffer stays in cache, where a value per row of the
                // whole file was 32 bytes a row of fresh memory. Chunks are
                // a multiple of the writer's batch size, so it cuts the
                // same pages as from one call (the same file).
                let value_of = |id: u32| used[id as usize].clone().expect("entry checked above");
                let defs: Vec<i16> = match valid {
                    None => vec![1i16; rows],
                    Some(v) => v.iter().map(|&b| i16::from(b != 0)).collect(),
                };
                let w = col.typed::<ByteArrayType>();
                let mut chunk: Vec<ByteArray> = Vec::with_capacity(VALUE_CHUNK_ROWS.min(rows));
                let mut present = 0usize;
                for start in (0..rows).step_by(VALUE_CHUNK_ROWS) {
                    let end = (start + VALUE_CHUNK_ROWS).min(rows);
                    chunk.clear();
                    match valid {
                        None => chunk.extend(ids[start..end].iter().map(|&id| value_of(id))),
                        Some(v) => chunk.extend(
                            ids[start..end]
                                .iter()
                                .zip(&v[start..end])
                                .filter(|(_, &b)| b != 0)
                                .map(|(&id, _)| value_of(id)),
                        ),
                    }
                    present += chunk.len();
                    w.write_batch(&chunk, if field.required { None } else { Some(&defs[start..end]) }, None)?;
                }
                m.value_count = rows as i64;
                m.null_value_count = (rows - present) as i64;
                range.fill(&mut m);
            }
            (FieldType::String, ColumnValues::String { offsets, bytes, valid }) => {
                check_len("offsets", name, offsets.len(), rows + 1)?;
                valid_of(*valid)?;
                let mut present = Vec::with_capacity(rows);
                let mut defs = Vec::with_capacity(rows);
                let mut range = StringRange::default();
                for i in 0..rows {
                    if is_valid(*valid, i) {
                        let s = string_at(name, offsets, bytes, i)?;
                        range.add(s);
                        present.push(borrowed(s));
                        defs.push(1i16);
                    } else {
                        defs.push(0);
                    }
                }
                write_strings(&mut col, field, &present, &defs, &range, &mut m)?;
            }
            (
                FieldType::StringList { .. },
                ColumnValues::StringList { list_offsets, element_offsets, bytes, valid },
            ) => {
                check_len("list offsets", name, list_offsets.len(), rows + 1)?;
                valid_of(*valid)?;
                let elements = element_offsets.len().saturating_sub(1);
                // Definition levels: 0 null list (optional field only),
                // d-1 empty list, d an element; repetition 1 = same row.
                let d: i16 = if field.required { 1 } else { 2 };
                let mut present = Vec::new();
                let mut defs = Vec::new();
                let mut reps = Vec::new();
                let mut range = StringRange::default();
                for i in 0..rows {
                    if !is_valid(*valid, i) {
                        defs.push(0);
                        reps.push(0);
                        continue;
                    }
                    let (start, end) = (list_offsets[i], list_offsets[i + 1]);
                    if start > end || end as usize > elements {
                        return Err(Error::invalid(format!(
                            "column \"{name}\": list offsets {start}..{end} are outside the {elements} elements"
                        )));
                    }
                    if (end - start) as usize > limits::MAX_LIST_ELEMENTS {
                        return Err(Error::limit(format!(
                            "column \"{name}\": a list of {} elements, more than the limit of {}",
                            end - start,
                            limits::MAX_LIST_ELEMENTS
                        )));
                    }
                    if start == end {
                        defs.push(d - 1);
                        reps.push(0);
                    }
                    for (k, e) in (start as usize..end as usize).enumerate() {
                        let s = string_at(name, element_offsets, bytes, e)?;
                        range.add(s);
                        present.push(borrowed(s));
                        defs.push(d);
                        reps.push(if k == 0 { 0 } else { 1 });
                    }
                }
                let w = col.typed::<ByteArrayType>();
                w.write_batch(&present, Some(&defs), Some(&reps))?;
                // Iceberg counts a list's element column: values are the
                // elements plus the null and empty lists' slots.
                m.value_count = defs.len() as i64;
                m.null_value_count = defs.iter().filter(|&&x| x < d).count() as i64;
                // No bounds for repeated fields: engines do not prune on them.
            }
            (t, _) => {
                return Err(Error::invalid(format!(
                    "column \"{name}\": its values do not match its type {}",
                    t.name()
                )))
            }
        }
        col.close()?;
        leaf_ids.push(match field.field_type {
            FieldType::StringList { element_id } => element_id,
            _ => field.id,
        });
        metrics.columns.insert(*leaf_ids.last().unwrap(), m);
    }
    let rg = row_group.close()?;
    for (chunk, id) in rg.columns().iter().zip(&leaf_ids) {
        if let Some(m) = metrics.columns.get_mut(id) {
            m.column_size = chunk.compressed_size();
        }
    }
    let bytes = file.into_inner()?;
    metrics.file_size_in_bytes = bytes.len() as i64;
    Ok((bytes, metrics))
}
