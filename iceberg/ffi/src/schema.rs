//! The Iceberg table schema as sluice uses it: a flat struct of primitive
//! columns (the time column, long and double metrics, string dimensions)
//! plus `list<string>` for multi-value dimensions. Parsed from and written
//! as the Iceberg JSON form (table spec, "Schemas and Data Types").

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::limits;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// Microseconds since the epoch, UTC.
    Timestamptz,
    Long,
    Double,
    String,
    /// A list of non-null strings; `element_id` is the element's field id.
    StringList { element_id: i32 },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub id: i32,
    pub name: String,
    pub required: bool,
    pub field_type: FieldType,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Schema {
    pub schema_id: i32,
    pub fields: Vec<Field>,
}

impl FieldType {
    /// The type's name in a caller's field list ("list<string>" for lists).
    pub fn parse_name(name: &str) -> Result<FieldType> {
        match name {
            "timestamptz" => Ok(FieldType::Timestamptz),
            "long" => Ok(FieldType::Long),
            "double" => Ok(FieldType::Double),
            "string" => Ok(FieldType::String),
            "list<string>" => Ok(FieldType::StringList { element_id: 0 }),
            other => Err(Error::invalid(format!(
                "unsupported field type \"{other}\" (timestamptz, long, double, string, list<string>)"
            ))),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            FieldType::Timestamptz => "timestamptz",
            FieldType::Long => "long",
            FieldType::Double => "double",
            FieldType::String => "string",
            FieldType::StringList { .. } => "list<string>",
        }
    }

    fn to_json(self) -> Value {
        match self {
            FieldType::StringList { element_id } => json!({
                "type": "list",
                "element-id": element_id,
                "element": "string",
                "element-required": true,
            }),
            other => Value::String(other.name().to_string()),
        }
    }

    fn from_json(value: &Value, field_name: &str) -> Result<FieldType> {
        match value {
            Value::String(name) if name != "list<string>" => FieldType::parse_name(name),
            Value::Object(obj) if obj.get("type").and_then(Value::as_str) == Some("list") => {
                let element_id = obj
                    .get("element-id")
                    .and_then(Value::as_i64)
                    .ok_or_else(|| Error::invalid(format!("list field \"{field_name}\" has no element-id")))?;
                if obj.get("element").and_then(Value::as_str) != Some("string") {
                    return Err(Error::invalid(format!(
                        "list field \"{field_name}\": only list<string> is supported"
                    )));
                }
                Ok(FieldType::StringList { element_id: to_i32(element_id, "element-id")? })
            }
            other => Err(Error::invalid(format!(
                "field \"{field_name}\": unsupported type {other}"
            ))),
        }
    }
}

pub fn to_i32(value: i64, what: &str) -> Result<i32> {
    i32::try_from(value).map_err(|_| Error::invalid(format!("{what} {value} is out of range")))
}

impl Schema {
    pub fn to_json(&self) -> Value {
        let fields: Vec<Value> = self
            .fields
            .iter()
            .map(|f| {
                json!({
                    "id": f.id,
                    "name": f.name,
                    "required": f.required,
                    "type": f.field_type.to_json(),
                })
            })
            .collect();
        json!({"type": "struct", "schema-id": self.schema_id, "fields": fields})
    }

    pub fn from_json(value: &Value) -> Result<Schema> {
        let schema_id = value.get("schema-id").and_then(Value::as_i64).unwrap_or(0);
        let fields_json = value
            .get("fields")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::invalid("schema has no \"fields\" array"))?;
        if fields_json.len() > limits::MAX_FIELDS {
            return Err(Error::limit(format!(
                "schema has {} fields, more than the limit of {}",
                fields_json.len(),
                limits::MAX_FIELDS
            )));
        }
        let mut fields = Vec::with_capacity(fields_json.len());
        for f in fields_json {
            let name = f
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| Error::invalid("schema field without a name"))?
                .to_string();
            let id = f
                .get("id")
                .and_then(Value::as_i64)
                .ok_or_else(|| Error::invalid(format!("field \"{name}\" has no id")))?;
            let required = f.get("required").and_then(Value::as_bool).unwrap_or(false);
            let field_type = FieldType::from_json(
                f.get("type").ok_or_else(|| Error::invalid(format!("field \"{name}\" has no type")))?,
                &name,
            )?;
            fields.push(Field { id: to_i32(id, "field id")?, name, required, field_type });
        }
        let schema = Schema { schema_id: to_i32(schema_id, "schema-id")?, fields };
        schema.validate()?;
        Ok(schema)
    }

    /// Names and ids unique and positive, names within the limit.
    pub fn validate(&self) -> Result<()> {
        let mut ids = std::collections::BTreeSet::new();
        let mut names = std::collections::BTreeSet::new();
        for f in &self.fields {
            if f.name.is_empty() {
                return Err(Error::invalid("a field has an empty name"));
            }
            if f.name.len() > limits::MAX_NAME_BYTES {
                return Err(Error::limit(format!(
                    "field name \"{}...\" is {} bytes, more than the limit of {}",
                    crate::bounds::truncate_chars(&f.name, 32),
                    f.name.len(),
                    limits::MAX_NAME_BYTES
                )));
            }
            if !names.insert(f.name.as_str()) {
                return Err(Error::invalid(format!("duplicate field name \"{}\"", f.name)));
            }
            let mut field_ids = vec![f.id];
            if let FieldType::StringList { element_id } = f.field_type {
                field_ids.push(element_id);
            }
            for id in field_ids {
                if id <= 0 {
                    return Err(Error::invalid(format!("field \"{}\" has id {id}: ids are positive", f.name)));
                }
                if !ids.insert(id) {
                    return Err(Error::invalid(format!("duplicate field id {id} (field \"{}\")", f.name)));
                }
            }
        }
        Ok(())
    }

    pub fn field_by_id(&self, id: i32) -> Option<&Field> {
        self.fields.iter().find(|f| f.id == id)
    }

    /// The highest field id, element ids included (0 for no fields).
    pub fn highest_field_id(&self) -> i32 {
        self.fields
            .iter()
            .map(|f| match f.field_type {
                FieldType::StringList { element_id } => f.id.max(element_id),
                _ => f.id,
            })
            .max()
            .unwrap_or(0)
    }

    /// Same fields (ids, names, types, requiredness), schema ids aside.
    pub fn same_fields(&self, other: &Schema) -> bool {
        self.fields == other.fields
    }
}
