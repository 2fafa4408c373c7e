//! The error every module returns; lib.rs turns it into a status code and
//! a message for the C caller.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// A malformed request, schema, column or metadata document.
    InvalidArgument = 1,
    /// A documented size limit is exceeded.
    LimitExceeded = 2,
    /// The metadata moved on since the caller planned its append.
    Conflict = 3,
    /// A library failed (Parquet or Avro encoding) or a panic was caught.
    Internal = 4,
}

#[derive(Debug)]
pub struct Error {
    pub code: Code,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn invalid(message: impl Into<String>) -> Error {
        Error { code: Code::InvalidArgument, message: message.into() }
    }
    pub fn limit(message: impl Into<String>) -> Error {
        Error { code: Code::LimitExceeded, message: message.into() }
    }
    pub fn conflict(message: impl Into<String>) -> Error {
        Error { code: Code::Conflict, message: message.into() }
    }
    pub fn internal(message: impl Into<String>) -> Error {
        Error { code: Code::Internal, message: message.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<parquet::errors::ParquetError> for Error {
    fn from(e: parquet::errors::ParquetError) -> Error {
        Error::internal(format!("parquet: {e}"))
    }
}

impl From<apache_avro::Error> for Error {
    fn from(e: apache_avro::Error) -> Error {
        Error::internal(format!("avro: {e}"))
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Error {
        Error::invalid(format!("json: {e}"))
    }
}
