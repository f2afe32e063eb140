//! Reading numeric arrays from MATLAB level-5 MAT-files (the format `save -v5`/`-v7` writes,
//! with or without zlib-compressed `miCOMPRESSED` elements). Parsing is done by the `matfile`
//! crate; this module checks the 128-byte header itself so that a MATLAB 7.3 (HDF5) or level-4
//! file gets a clear error instead of a parse failure, and converts any real numeric class to
//! f64.

use std::path::{Path, PathBuf};

use matfile::{MatFile, NumericData};
use thiserror::Error;

/// Why a MAT-file could not be read.
#[derive(Debug, Error)]
pub enum MatError {
    /// The file could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The header is not that of a level-5 MAT-file.
    #[error("{path} is not a MATLAB v5 MAT-file: {detail}")]
    NotV5 {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        detail: String,
    },
    /// The header is right but the body could not be parsed.
    #[error("{path}: malformed MAT-file body ({detail})")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        detail: String,
    },
    /// No numeric array of that name.
    #[error("{path} has no numeric variable `{name}`; it has: {available}")]
    MissingVariable {
        /// The file.
        path: PathBuf,
        /// The name asked for.
        name: String,
        /// The numeric variables present, comma-separated (or "none").
        available: String,
    },
    /// The variable is complex.
    #[error("variable `{name}` is complex; a real numeric array is needed")]
    Complex {
        /// The variable.
        name: String,
    },
    /// The variable has the wrong number of dimensions.
    #[error("variable `{name}` has dimensions {dims:?}; expected {expected}")]
    WrongDims {
        /// The variable.
        name: String,
        /// Its dimensions.
        dims: Vec<usize>,
        /// What was expected.
        expected: String,
    },
}

/// A real numeric array converted to f64: `dims` in MATLAB order and `data` in MATLAB's
/// column-major order (the first index varies fastest), so entry (i, j, k) of an a × b × c array
/// is `data[i + a·(j + b·k)]`.
#[derive(Clone, Debug, PartialEq)]
pub struct MatArray {
    /// Variable name.
    pub name: String,
    /// Dimensions (at least two).
    pub dims: Vec<usize>,
    /// MATLAB class of the array, e.g. "uint16" or "double".
    pub class: &'static str,
    /// Values, column-major, length = product of `dims`.
    pub data: Vec<f64>,
}

/// Checks the 128-byte level-5 header: version 0x0100 and an `IM`/`MI` endian indicator.
fn check_header(path: &Path, bytes: &[u8]) -> Result<(), MatError> {
    let bad = |detail: String| MatError::NotV5 {
        path: path.to_path_buf(),
        detail,
    };
    if bytes.len() < 128 {
        return Err(bad(format!(
            "{} bytes, shorter than the 128-byte header",
            bytes.len()
        )));
    }
    let endian = &bytes[126..128];
    let version = match endian {
        b"IM" => u16::from_le_bytes([bytes[124], bytes[125]]),
        b"MI" => u16::from_be_bytes([bytes[124], bytes[125]]),
        _ => {
            return Err(bad(
                "no endian indicator `IM`/`MI` at byte 126 (a level-4 file or not a MAT-file)"
                    .into(),
            ));
        }
    };
    match version {
        0x0100 => Ok(()),
        0x0200 => Err(bad(
            "this is a MATLAB 7.3 (HDF5) file; re-save it with `save(..., '-v7')`".into(),
        )),
        v => Err(bad(format!("header version {v:#06x}; expected 0x0100"))),
    }
}

/// Reads the real numeric variable `name` from the level-5 MAT-file at `path`, converting any
/// numeric class (double, single, int8…uint64) to f64. Errors: unreadable file, not level 5,
/// malformed body, no such numeric variable, complex data.
pub fn read_array(path: &Path, name: &str) -> Result<MatArray, MatError> {
    let bytes = std::fs::read(path).map_err(|source| MatError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    check_header(path, &bytes)?;
    let file = MatFile::parse(bytes.as_slice()).map_err(|e| MatError::Malformed {
        path: path.to_path_buf(),
        detail: match &e {
            matfile::Error::ParseError(inner) => format!("{e}: {inner:?}"),
            other => other.to_string(),
        },
    })?;
    let Some(array) = file.find_by_name(name) else {
        let names: Vec<&str> = file.arrays().iter().map(|a| a.name()).collect();
        return Err(MatError::MissingVariable {
            path: path.to_path_buf(),
            name: name.to_string(),
            available: if names.is_empty() {
                "none readable (the file may be truncated, or hold only non-numeric data)".into()
            } else {
                names.join(", ")
            },
        });
    };
    let complex = || MatError::Complex {
        name: name.to_string(),
    };
    macro_rules! real {
        ($real:expr, $imag:expr, $class:literal) => {{
            if $imag.is_some() {
                return Err(complex());
            }
            (
                $class,
                $real.iter().map(|&x| x as f64).collect::<Vec<f64>>(),
            )
        }};
    }
    let (class, data) = match array.data() {
        NumericData::Double { real, imag } => real!(real, imag, "double"),
        NumericData::Single { real, imag } => real!(real, imag, "single"),
        NumericData::Int8 { real, imag } => real!(real, imag, "int8"),
        NumericData::UInt8 { real, imag } => real!(real, imag, "uint8"),
        NumericData::Int16 { real, imag } => real!(real, imag, "int16"),
        NumericData::UInt16 { real, imag } => real!(real, imag, "uint16"),
        NumericData::Int32 { real, imag } => real!(real, imag, "int32"),
        NumericData::UInt32 { real, imag } => real!(real, imag, "uint32"),
        NumericData::Int64 { real, imag } => real!(real, imag, "int64"),
        NumericData::UInt64 { real, imag } => real!(real, imag, "uint64"),
    };
    let dims = array.size().clone();
    if dims.iter().product::<usize>() != data.len() {
        return Err(MatError::Malformed {
            path: path.to_path_buf(),
            detail: format!(
                "variable `{name}` has dimensions {dims:?} but {} values",
                data.len()
            ),
        });
    }
    Ok(MatArray {
        name: name.to_string(),
        dims,
        class,
        data,
    })
}

/// Reads `name` as a 3-D array (rows × columns × bands, column-major). Errors: those of
/// [`read_array`], or any other number of dimensions (a 2-D array is an image, not a cube).
pub fn read_cube(path: &Path, name: &str) -> Result<MatArray, MatError> {
    let a = read_array(path, name)?;
    if a.dims.len() != 3 {
        return Err(MatError::WrongDims {
            name: name.to_string(),
            dims: a.dims,
            expected: "3 dimensions (rows × columns × bands)".into(),
        });
    }
    Ok(a)
}
