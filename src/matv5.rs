//! Reading numeric arrays from MATLAB level-5 MAT-files: what MATLAB's `save -v6`/`-v7`,
//! Octave's `save -v7` and scipy's `savemat` write, little- or big-endian, with or without
//! zlib-compressed (`miCOMPRESSED`) elements.
//!
//! The layout (MathWorks, "MAT-File Format", level 5): a 128-byte header (text, subsystem
//! offset, version 0x0100, endian indicator `IM`/`MI`), then one element per variable. An
//! element is an 8-byte tag (data type, byte count; or, for at most 4 bytes, both packed in 4
//! bytes with the data in the next 4) and its data padded to 8 bytes. A variable is an
//! `miMATRIX` element whose data are sub-elements: array flags (class, complex and logical
//! bits), dimensions, name, then the class's contents; for a numeric class the real part, in any
//! numeric storage type (MATLAB stores e.g. a double array of small integers as `miUINT8`).
//!
//! Each variable is parsed on its own: one that is damaged or of a class this reader does not
//! convert (struct, cell, char, sparse, object, …) is listed with its class and never makes the
//! others unreadable. MATLAB 7.3 files (HDF5 inside) get an error that says how to re-save them.

use std::path::{Path, PathBuf};

use thiserror::Error;

/// Most values one array may hold (2 GiB as f64): a larger claim is a damaged file.
pub const MAX_VALUES: usize = 1 << 28;
/// Largest file read (it is read whole): a v7 file holds variables of up to 2 GB each.
pub const MAX_FILE_BYTES: u64 = 4 << 30;
/// Bytes of a compressed variable decompressed to read its flags, dimensions and name.
const HEADER_PREFIX: usize = 64 << 10;

// Data types of elements (MathWorks, "MAT-File Format", table 1-1).
const MI_INT8: u32 = 1;
const MI_UINT8: u32 = 2;
const MI_INT16: u32 = 3;
const MI_UINT16: u32 = 4;
const MI_INT32: u32 = 5;
const MI_UINT32: u32 = 6;
const MI_SINGLE: u32 = 7;
const MI_DOUBLE: u32 = 9;
const MI_INT64: u32 = 12;
const MI_UINT64: u32 = 13;
const MI_MATRIX: u32 = 14;
const MI_COMPRESSED: u32 = 15;

// Bits of the array-flags byte.
const FLAG_COMPLEX: u32 = 0x08;
const FLAG_LOGICAL: u32 = 0x02;

/// Why a MAT-file or one of its variables could not be read. Every error names the file.
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
    /// A MATLAB 7.3 MAT-file or another HDF5 file.
    #[error(
        "{path} is {what}, which basis-lab does not read; re-save it as a version 7 MAT-file, \
         e.g. in MATLAB `load('{file}'); save('{stem}_v7.mat', '-v7')` or in Octave \
         `load {file}; save -v7 {stem}_v7.mat` (version 7 holds variables up to 2 GB)"
    )]
    Hdf5 {
        /// The file.
        path: PathBuf,
        /// "a MATLAB 7.3 MAT-file (HDF5)" or "an HDF5 file".
        what: &'static str,
        /// Its file name.
        file: String,
        /// Its file name without extension.
        stem: String,
    },
    /// No variable of that name.
    #[error("{path} has no variable `{name}`; it holds: {available}")]
    MissingVariable {
        /// The file.
        path: PathBuf,
        /// The name asked for.
        name: String,
        /// Every variable found, with class and dimensions (and any damage).
        available: String,
    },
    /// The variable exists but is not a numeric array (struct, cell, char, sparse, …).
    #[error("{path}: variable `{name}` is a {class} array; a real numeric array is needed")]
    NotNumeric {
        /// The file.
        path: PathBuf,
        /// The variable.
        name: String,
        /// Its class.
        class: String,
    },
    /// The variable is damaged or stored in a way this reader does not handle.
    #[error("{path}: variable `{name}` ({class}) cannot be read: {detail}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The variable.
        name: String,
        /// Its class.
        class: String,
        /// What is wrong.
        detail: String,
    },
    /// The variable is complex.
    #[error("{path}: variable `{name}` is complex; a real numeric array is needed")]
    Complex {
        /// The file.
        path: PathBuf,
        /// The variable.
        name: String,
    },
    /// The variable has the wrong number of dimensions.
    #[error("{path}: variable `{name}` has dimensions {dims:?}; expected {expected}")]
    WrongDims {
        /// The file.
        path: PathBuf,
        /// The variable.
        name: String,
        /// Its dimensions.
        dims: Vec<usize>,
        /// What was expected.
        expected: String,
    },
    /// No variable name was given and the file does not hold exactly one 3-D numeric array.
    #[error("{path} {}; it holds: {available}", if *cubes == 0 {
        "has no 3-D numeric array (rows × columns × bands)".to_string()
    } else {
        format!("has {cubes} 3-D numeric arrays: name the cube's variable (`--var`)")
    })]
    NoSingleCube {
        /// The file.
        path: PathBuf,
        /// How many 3-D numeric arrays it has (0 or more than 1).
        cubes: usize,
        /// Every variable found, with class and dimensions.
        available: String,
    },
}

/// A real numeric array converted to f64: `dims` in MATLAB order and `data` in MATLAB's
/// column-major order (the first index varies fastest), so entry (i, j, k) of an a × b × c array
/// is `data[i + a·(j + b·k)]`. int64 and uint64 values beyond 2⁵³ are rounded to the nearest f64.
#[derive(Clone, Debug, PartialEq)]
pub struct MatArray {
    /// Variable name.
    pub name: String,
    /// Dimensions as stored (MATLAB writes at least two; a damaged file may hold fewer).
    pub dims: Vec<usize>,
    /// MATLAB class of the array, e.g. "uint16" or "double".
    pub class: &'static str,
    /// Values, column-major, length = product of `dims`.
    pub data: Vec<f64>,
}

/// One variable of a MAT-file as listed by [`MatFile::open`]: enough to choose it and to name
/// it in errors; its values are read by [`MatFile::read`].
#[derive(Clone, Debug, PartialEq)]
pub struct MatVar {
    /// Variable name.
    pub name: String,
    /// MATLAB class: "double", "single", "int8" … "uint64", "logical", "char", "cell", "struct",
    /// "object", "sparse", "function_handle", "opaque" or "unknown".
    pub class: &'static str,
    /// Dimensions (empty when the class stores none, e.g. opaque objects).
    pub dims: Vec<usize>,
    /// Complex values.
    pub complex: bool,
    /// Why it cannot be read, when its element is damaged.
    pub damage: Option<String>,
    /// Where its element starts in the file and whether it is compressed.
    at: usize,
    compressed: bool,
}

impl MatVar {
    /// A real or complex array of class double, single or int8…uint64 (not logical, not char).
    pub fn numeric(&self) -> bool {
        NUMERIC_CLASSES.contains(&self.class)
    }
}

impl std::fmt::Display for MatVar {
    /// `name (class, a × b × c)`, with "complex" and any damage.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dims: Vec<String> = self.dims.iter().map(usize::to_string).collect();
        write!(f, "{} ({}", self.name, self.class)?;
        if self.complex {
            write!(f, " complex")?;
        }
        if !dims.is_empty() {
            write!(f, ", {}", dims.join(" × "))?;
        }
        if let Some(d) = &self.damage {
            write!(f, "; damaged: {d}")?;
        }
        write!(f, ")")
    }
}

const NUMERIC_CLASSES: [&str; 10] = [
    "double", "single", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
];

/// The class name of an `mxCLASS` code (the low byte of the array flags).
fn class_name(code: u32) -> &'static str {
    match code {
        1 => "cell",
        2 => "struct",
        3 => "object",
        4 => "char",
        5 => "sparse",
        6 => "double",
        7 => "single",
        8 => "int8",
        9 => "uint8",
        10 => "int16",
        11 => "uint16",
        12 => "int32",
        13 => "uint32",
        14 => "int64",
        15 => "uint64",
        16 => "function_handle",
        17 => "opaque",
        _ => "unknown",
    }
}

/// Byte order of the file, from its endian indicator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
    Little,
    Big,
}

impl Order {
    fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Order::Little => u32::from_le_bytes(b),
            Order::Big => u32::from_be_bytes(b),
        }
    }

    fn i32(self, b: [u8; 4]) -> i32 {
        match self {
            Order::Little => i32::from_le_bytes(b),
            Order::Big => i32::from_be_bytes(b),
        }
    }
}

/// Sub-elements of one element's data, read in order.
struct Elements<'a> {
    buf: &'a [u8],
    pos: usize,
    order: Order,
}

impl<'a> Elements<'a> {
    fn u32_at(&self, at: usize) -> Option<u32> {
        let b = self.buf.get(at..at.checked_add(4)?)?;
        Some(self.order.u32([b[0], b[1], b[2], b[3]]))
    }

    /// The next element's type and data (padding skipped). Errors say what is missing.
    fn next(&mut self) -> Result<(u32, &'a [u8]), String> {
        let first = self
            .u32_at(self.pos)
            .ok_or_else(|| format!("it ends inside an element tag (byte {})", self.pos))?;
        if first >> 16 != 0 {
            // Small data element: byte count in the upper half, data in the next 4 bytes.
            let (ty, n) = (first & 0xffff, (first >> 16) as usize);
            if n > 4 {
                return Err(format!("a small element claims {n} bytes (at most 4)"));
            }
            let data = self
                .buf
                .get(self.pos + 4..self.pos + 4 + n)
                .ok_or("it ends inside a small element")?;
            self.pos += 8;
            return Ok((ty, data));
        }
        let n = self
            .u32_at(self.pos + 4)
            .ok_or("it ends inside an element tag")? as usize;
        let start = self.pos + 8;
        let data = self.buf.get(start..start + n).ok_or_else(|| {
            format!(
                "an element of {n} bytes at byte {start} runs past the end ({} bytes)",
                self.buf.len()
            )
        })?;
        self.pos = start + n.next_multiple_of(8);
        Ok((first, data))
    }
}

/// The flags, dimensions and name of an `miMATRIX` element's data (`body`), and the
/// sub-elements after them.
struct Header<'a> {
    class: &'static str,
    complex: bool,
    dims: Vec<usize>,
    name: String,
    rest: Elements<'a>,
}

impl Header<'_> {
    /// Name, class, dimensions, complex.
    fn info(self) -> (String, &'static str, Vec<usize>, bool) {
        (self.name, self.class, self.dims, self.complex)
    }
}

fn parse_header(body: &[u8], order: Order) -> Result<Header<'_>, String> {
    let mut el = Elements {
        buf: body,
        pos: 0,
        order,
    };
    let (ty, flags) = el.next()?;
    if ty != MI_UINT32 || flags.len() < 4 {
        return Err(format!(
            "its first sub-element is of type {ty} with {} bytes, not the array flags",
            flags.len()
        ));
    }
    let word = order.u32([flags[0], flags[1], flags[2], flags[3]]);
    let code = word & 0xff;
    let bits = (word >> 8) & 0xff;
    let mut class = class_name(code);
    if class == "uint8" && bits & FLAG_LOGICAL != 0 {
        class = "logical";
    }
    let (ty, data) = el.next()?;
    // Opaque objects store no dimensions: the name comes right after the flags.
    let (dims, name) = if ty == MI_INT8 {
        (Vec::new(), data)
    } else if ty == MI_INT32 && data.len().is_multiple_of(4) {
        let dims = data
            .chunks_exact(4)
            .map(|c| order.i32([c[0], c[1], c[2], c[3]]))
            .map(|d| usize::try_from(d).map_err(|_| format!("a negative dimension {d}")))
            .collect::<Result<Vec<usize>, String>>()?;
        let (ty, name) = el.next()?;
        if ty != MI_INT8 {
            return Err(format!("its name is stored as type {ty}, not text"));
        }
        (dims, name)
    } else {
        return Err(format!("its dimensions are stored as type {ty}"));
    };
    Ok(Header {
        class,
        complex: bits & FLAG_COMPLEX != 0,
        dims,
        name: String::from_utf8_lossy(name).into_owned(),
        rest: el,
    })
}

/// Converts stored numbers of data type `ty` to f64. `None` for a type that is not a number.
fn to_f64(ty: u32, raw: &[u8], order: Order) -> Option<Vec<f64>> {
    macro_rules! convert {
        ($t:ty) => {{
            const N: usize = std::mem::size_of::<$t>();
            raw.chunks_exact(N)
                .map(|c| {
                    let mut b = [0u8; N];
                    b.copy_from_slice(c);
                    (match order {
                        Order::Little => <$t>::from_le_bytes(b),
                        Order::Big => <$t>::from_be_bytes(b),
                    }) as f64
                })
                .collect()
        }};
    }
    Some(match ty {
        MI_INT8 => convert!(i8),
        MI_UINT8 => convert!(u8),
        MI_INT16 => convert!(i16),
        MI_UINT16 => convert!(u16),
        MI_INT32 => convert!(i32),
        MI_UINT32 => convert!(u32),
        MI_SINGLE => convert!(f32),
        MI_DOUBLE => convert!(f64),
        MI_INT64 => convert!(i64),
        MI_UINT64 => convert!(u64),
        _ => return None,
    })
}

/// Bytes per stored number of data type `ty`, for the numeric types.
fn width(ty: u32) -> Option<usize> {
    Some(match ty {
        MI_INT8 | MI_UINT8 => 1,
        MI_INT16 | MI_UINT16 => 2,
        MI_INT32 | MI_UINT32 | MI_SINGLE => 4,
        MI_DOUBLE | MI_INT64 | MI_UINT64 => 8,
        _ => return None,
    })
}

/// Decompresses up to `limit` bytes of a zlib stream, feeding it in small pieces so that a
/// stream damaged or cut short still yields what came before the damage; also returns why it
/// stopped early, if it did.
fn inflate(z: &[u8], limit: usize) -> (Vec<u8>, Option<String>) {
    use flate2::{Decompress, FlushDecompress, Status};
    let mut d = Decompress::new(true);
    let mut out = Vec::new();
    let stop = loop {
        if out.len() >= limit {
            break None;
        }
        out.reserve((limit - out.len()).min(64 << 10));
        let (at, before) = (d.total_in() as usize, out.len());
        let input = &z[at.min(z.len())..(at + 4096).min(z.len())];
        match d.decompress_vec(input, &mut out, FlushDecompress::None) {
            Ok(Status::StreamEnd) => break None,
            Ok(_) if d.total_in() as usize == at && out.len() == before => {
                break Some("its compressed data end early".to_string());
            }
            Ok(_) => {}
            Err(e) => break Some(format!("its compressed data are damaged ({e})")),
        }
    };
    out.truncate(limit);
    (out, stop)
}

/// An `miMATRIX` element's data from a decompressed `miCOMPRESSED` element.
fn matrix_body(inner: &[u8], order: Order) -> Result<&[u8], String> {
    let mut el = Elements {
        buf: inner,
        pos: 0,
        order,
    };
    let (ty, body) = match el.next() {
        Ok(x) => x,
        // A prefix or a truncated stream: the element runs past what was decompressed.
        Err(_) if inner.len() >= 8 => {
            let ty = el.u32_at(0).unwrap_or(0);
            (ty, &inner[8..])
        }
        Err(e) => return Err(e),
    };
    if ty != MI_MATRIX {
        return Err(format!("it holds an element of type {ty}, not a matrix"));
    }
    Ok(body)
}

/// A level-5 MAT-file read into memory with its variables listed.
#[derive(Debug)]
pub struct MatFile {
    path: PathBuf,
    bytes: Vec<u8>,
    order: Order,
    vars: Vec<MatVar>,
    /// Top-level elements that are not readable variables (damaged headers, other types).
    skipped: Vec<String>,
    /// Why the list of variables stops before the end of the file, when it does.
    stopped: Option<String>,
}

impl MatFile {
    /// Reads the file at `path`, checks its header and lists its variables (decompressing only
    /// each variable's flags, dimensions and name). Errors: unreadable file, larger than
    /// [`MAX_FILE_BYTES`], HDF5 (MATLAB 7.3), not level 5. A damaged variable is listed with its
    /// damage; a damaged element tag ends the list there (the variables before it stay
    /// readable).
    pub fn open(path: &Path) -> Result<MatFile, MatError> {
        let io = |source| MatError::Io {
            path: path.to_path_buf(),
            source,
        };
        let len = std::fs::metadata(path).map_err(io)?.len();
        if len > MAX_FILE_BYTES {
            return Err(io(std::io::Error::other(format!(
                "{len} bytes; at most {MAX_FILE_BYTES} are read"
            ))));
        }
        let bytes = std::fs::read(path).map_err(io)?;
        Self::parse(path, bytes)
    }

    /// As [`MatFile::open`] on the contents `bytes` of the file `path` (named in errors).
    pub fn parse(path: &Path, bytes: Vec<u8>) -> Result<MatFile, MatError> {
        let order = check_header(path, &bytes)?;
        let mut file = MatFile {
            path: path.to_path_buf(),
            bytes,
            order,
            vars: Vec::new(),
            skipped: Vec::new(),
            stopped: None,
        };
        file.list();
        Ok(file)
    }

    /// The variables, in file order.
    pub fn vars(&self) -> &[MatVar] {
        &self.vars
    }

    fn list(&mut self) {
        let len = self.bytes.len();
        let mut pos = 128;
        while pos < len {
            let tag = Elements {
                buf: &self.bytes,
                pos,
                order: self.order,
            };
            let (Some(ty), Some(n)) = (tag.u32_at(pos), tag.u32_at(pos + 4)) else {
                self.stopped = Some(format!("{} stray bytes at byte {pos}", len - pos));
                return;
            };
            let n = n as usize;
            let start = pos + 8;
            // Compressed elements are not padded; the others are, to 8 bytes.
            let end = if ty == MI_COMPRESSED {
                start + n
            } else {
                start + n.next_multiple_of(8)
            };
            let available = &self.bytes[start..(start + n).min(len)];
            let truncated = (start + n > len).then(|| {
                format!(
                    "the file ends {} bytes into its {n}-byte element",
                    available.len()
                )
            });
            let header = match ty {
                MI_COMPRESSED => {
                    let (inner, err) = inflate(available, HEADER_PREFIX);
                    match matrix_body(&inner, self.order)
                        .and_then(|b| parse_header(b, self.order).map(|h| h.info()))
                    {
                        Ok(h) => Ok((h, truncated.or(err))),
                        Err(e) => Err(err.unwrap_or(e)),
                    }
                }
                MI_MATRIX => parse_header(available, self.order).map(|h| (h.info(), truncated)),
                // Not a variable: MATLAB writes only those two kinds at the top level.
                _ => Err(format!("an element of type {ty}, not a variable")),
            };
            match header {
                // The subsystem data of MATLAB's objects is an unnamed variable.
                Ok(((name, _, _, _), _)) if name.is_empty() => {}
                Ok(((name, class, dims, complex), damage)) => self.vars.push(MatVar {
                    name,
                    class,
                    dims,
                    complex,
                    damage,
                    at: pos,
                    compressed: ty == MI_COMPRESSED,
                }),
                Err(e) => self.skipped.push(format!("the element at byte {pos}: {e}")),
            }
            if end > len {
                if self.vars.last().is_none_or(|v| v.at != pos) {
                    self.stopped = Some(format!(
                        "the element at byte {pos} claims {n} bytes, past the end of the file"
                    ));
                }
                return;
            }
            pos = end;
        }
    }

    /// Every variable with class and dimensions, comma-separated, then the elements that
    /// could not be parsed and where the list stops early.
    fn inventory(&self) -> String {
        let mut s: Vec<String> = self.vars.iter().map(MatVar::to_string).collect();
        if s.is_empty() {
            s.push("no variables".into());
        }
        let mut out = s.join(", ");
        if !self.skipped.is_empty() {
            out.push_str(&format!(
                "; elements that are not readable variables: {}",
                self.skipped.join("; ")
            ));
        }
        if let Some(d) = &self.stopped {
            out.push_str(&format!(
                "; the file is damaged ({d}), so nothing after that can be listed"
            ));
        }
        out
    }

    /// Reads the real numeric variable `name` (any numeric class and storage type) as f64.
    /// Errors: no such variable, not numeric, complex, damaged.
    pub fn read(&self, name: &str) -> Result<MatArray, MatError> {
        let Some(var) = self.vars.iter().find(|v| v.name == name) else {
            return Err(MatError::MissingVariable {
                path: self.path.clone(),
                name: name.to_string(),
                available: self.inventory(),
            });
        };
        let unreadable = |detail: String| MatError::Unreadable {
            path: self.path.clone(),
            name: name.to_string(),
            class: var.class.to_string(),
            detail,
        };
        if let Some(d) = &var.damage {
            return Err(unreadable(d.clone()));
        }
        if !var.numeric() && var.class != "logical" {
            return Err(MatError::NotNumeric {
                path: self.path.clone(),
                name: name.to_string(),
                class: var.class.to_string(),
            });
        }
        if var.complex {
            return Err(MatError::Complex {
                path: self.path.clone(),
                name: name.to_string(),
            });
        }
        let values = var
            .dims
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .filter(|&v| v <= MAX_VALUES)
            .ok_or_else(|| {
                unreadable(format!(
                    "dimensions {:?} exceed {MAX_VALUES} values",
                    var.dims
                ))
            })?;
        let el = Elements {
            buf: &self.bytes,
            pos: var.at,
            order: self.order,
        };
        let n = el.u32_at(var.at + 4).unwrap_or(0) as usize;
        let stored = self
            .bytes
            .get(var.at + 8..var.at + 8 + n)
            .ok_or_else(|| unreadable("the file ends inside it".into()))?;
        let inner;
        let body = if var.compressed {
            // Flags, dimensions and name fit in the prefix; the values need at most 8 bytes
            // each plus their tag.
            let limit = HEADER_PREFIX + 16 + 8 * values;
            let (bytes, err) = inflate(stored, limit);
            if let Some(e) = err {
                return Err(unreadable(e));
            }
            inner = bytes;
            matrix_body(&inner, self.order).map_err(unreadable)?
        } else {
            stored
        };
        let mut header = parse_header(body, self.order).map_err(unreadable)?;
        let (ty, raw) = header.rest.next().map_err(unreadable)?;
        let w = width(ty).ok_or_else(|| {
            unreadable(format!("its values are stored as type {ty}, not numbers"))
        })?;
        if raw.len() != values * w {
            return Err(unreadable(format!(
                "dimensions {:?} need {values} values but {} bytes of {w}-byte numbers are stored",
                header.dims,
                raw.len()
            )));
        }
        let data = to_f64(ty, raw, self.order).expect("a numeric type has a width");
        Ok(MatArray {
            name: name.to_string(),
            dims: std::mem::take(&mut header.dims),
            class: var.class,
            data,
        })
    }

    /// Reads `name` as a 3-D array (rows × columns × bands, column-major), or with `None` the
    /// file's only 3-D numeric array. Errors: those of [`MatFile::read`]; another number of
    /// dimensions; with `None`, no or several 3-D numeric arrays (listing every variable).
    pub fn read_cube(&self, name: Option<&str>) -> Result<MatArray, MatError> {
        let name = match name {
            Some(n) => n,
            None => {
                let cubes: Vec<&MatVar> = self
                    .vars
                    .iter()
                    .filter(|v| v.numeric() && v.dims.len() == 3)
                    .collect();
                match cubes[..] {
                    [one] => one.name.as_str(),
                    _ => {
                        return Err(MatError::NoSingleCube {
                            path: self.path.clone(),
                            cubes: cubes.len(),
                            available: self.inventory(),
                        });
                    }
                }
            }
        };
        let a = self.read(name)?;
        if a.dims.len() != 3 {
            return Err(MatError::WrongDims {
                path: self.path.clone(),
                name: name.to_string(),
                dims: a.dims,
                expected: "3 dimensions (rows × columns × bands)".into(),
            });
        }
        Ok(a)
    }
}

/// Checks the 128-byte level-5 header and returns the byte order. HDF5 files (MATLAB 7.3
/// writes its MAT header into the first 128 bytes of an HDF5 user block) get [`MatError::Hdf5`].
fn check_header(path: &Path, bytes: &[u8]) -> Result<Order, MatError> {
    const HDF5: &[u8; 8] = b"\x89HDF\r\n\x1a\n";
    let hdf5 = |what| {
        let name = |p: Option<&std::ffi::OsStr>| {
            p.map_or("scene".into(), |s| s.to_string_lossy().into_owned())
        };
        MatError::Hdf5 {
            path: path.to_path_buf(),
            what,
            file: name(path.file_name()),
            stem: name(path.file_stem()),
        }
    };
    if bytes.starts_with(HDF5) {
        return Err(hdf5("an HDF5 file"));
    }
    let bad = |detail: String| MatError::NotV5 {
        path: path.to_path_buf(),
        detail,
    };
    if bytes.len() < 128 {
        return Err(bad(format!(
            "{} bytes, shorter than the 128-byte header (a level-4 file or not a MAT-file)",
            bytes.len()
        )));
    }
    let text_says_73 = bytes.starts_with(b"MATLAB 7.3 MAT-file");
    let hdf5_block = bytes.get(512..520) == Some(HDF5.as_slice());
    let (order, version) = match &bytes[126..128] {
        b"IM" => (Order::Little, u16::from_le_bytes([bytes[124], bytes[125]])),
        b"MI" => (Order::Big, u16::from_be_bytes([bytes[124], bytes[125]])),
        _ if text_says_73 || hdf5_block => return Err(hdf5("a MATLAB 7.3 MAT-file (HDF5)")),
        _ => {
            return Err(bad(
                "no endian indicator `IM`/`MI` at byte 126 (a level-4 file or not a MAT-file)"
                    .into(),
            ));
        }
    };
    if version == 0x0200 || text_says_73 || hdf5_block {
        return Err(hdf5("a MATLAB 7.3 MAT-file (HDF5)"));
    }
    if version != 0x0100 {
        return Err(bad(format!(
            "header version {version:#06x}; expected 0x0100"
        )));
    }
    Ok(order)
}

/// Reads the real numeric variable `name` from the level-5 MAT-file at `path`, converting any
/// numeric class (double, single, int8…uint64, and logical) to f64. Errors: those of
/// [`MatFile::open`] and [`MatFile::read`].
pub fn read_array(path: &Path, name: &str) -> Result<MatArray, MatError> {
    MatFile::open(path)?.read(name)
}

/// Reads the 3-D variable `name`, or with `None` the file's only 3-D numeric array (rows ×
/// columns × bands, column-major). Errors: those of [`MatFile::open`] and
/// [`MatFile::read_cube`].
pub fn read_cube(path: &Path, name: Option<&str>) -> Result<MatArray, MatError> {
    MatFile::open(path)?.read_cube(name)
}
