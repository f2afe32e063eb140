//! Level-5 MAT-files written byte by byte (MathWorks, "MAT-File Format", level 5), in either
//! byte order, for the reader's tests: the exact bytes MATLAB writes for cases scipy cannot
//! produce (big-endian files, compact storage types, damage).

use std::io::Write;
use std::path::Path;

// Data types and array classes.
pub const MI_INT8: u32 = 1;
pub const MI_UINT8: u32 = 2;
pub const MI_INT16: u32 = 3;
pub const MI_UINT16: u32 = 4;
pub const MI_INT32: u32 = 5;
pub const MI_UINT32: u32 = 6;
pub const MI_DOUBLE: u32 = 9;
pub const MI_UTF8: u32 = 16;
pub const MI_MATRIX: u32 = 14;
pub const MI_COMPRESSED: u32 = 15;
pub const MX_DOUBLE: u8 = 6;
pub const MX_INT16: u8 = 10;
pub const MX_UINT16: u8 = 11;

/// A writer of one byte order.
#[derive(Clone, Copy)]
pub struct Mat {
    /// Big-endian (`MI`) instead of little-endian (`IM`).
    pub big: bool,
}

/// Little-endian, as MATLAB, Octave and scipy write on x86 and ARM.
pub const LE: Mat = Mat { big: false };

impl Mat {
    pub fn u32(self, x: u32) -> [u8; 4] {
        if self.big {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        }
    }

    /// The 128-byte header: `text` padded with spaces to 116 bytes, 8 bytes of subsystem offset,
    /// the version and the endian indicator.
    pub fn header_text(self, text: &str, version: u16) -> Vec<u8> {
        let mut h = text.as_bytes().to_vec();
        h.resize(116, b' ');
        h.extend([0u8; 8]);
        if self.big {
            h.extend(version.to_be_bytes());
            h.extend(b"MI");
        } else {
            h.extend(version.to_le_bytes());
            h.extend(b"IM");
        }
        h
    }

    /// The header MATLAB 5 to 7 write.
    pub fn header(self, version: u16) -> Vec<u8> {
        self.header_text(
            "MATLAB 5.0 MAT-file, written by the basis-lab tests",
            version,
        )
    }

    /// A data element: 8-byte tag (type, byte count), the data, zero padding to 8 bytes.
    pub fn element(self, ty: u32, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(self.u32(ty));
        out.extend(self.u32(data.len() as u32));
        out.extend(data);
        out.resize(out.len().next_multiple_of(8), 0);
        out
    }

    /// A small data element (at most 4 bytes): byte count and type packed in the first 4 bytes.
    pub fn small_element(self, ty: u32, data: &[u8]) -> Vec<u8> {
        assert!(data.len() <= 4);
        let mut out = Vec::new();
        out.extend(self.u32((data.len() as u32) << 16 | ty));
        out.extend(data);
        out.resize(8, 0);
        out
    }

    /// An miMATRIX element of a real numeric array: array flags, dimensions, name, real part
    /// (`data` already in this byte order, stored as `data_type`).
    pub fn matrix(
        self,
        name: &str,
        class: u8,
        dims: &[i32],
        data_type: u32,
        data: &[u8],
    ) -> Vec<u8> {
        let mut flags = self.u32(u32::from(class)).to_vec();
        flags.extend([0u8; 4]);
        let mut body = self.element(MI_UINT32, &flags);
        let dims: Vec<u8> = dims.iter().flat_map(|&d| self.u32(d as u32)).collect();
        body.extend(self.element(MI_INT32, &dims));
        body.extend(if name.len() <= 4 {
            self.small_element(MI_INT8, name.as_bytes())
        } else {
            self.element(MI_INT8, name.as_bytes())
        });
        body.extend(self.element(data_type, data));
        self.element(MI_MATRIX, &body)
    }

    /// The element zlib-compressed inside an miCOMPRESSED element (not padded, as MATLAB
    /// writes it).
    pub fn compressed(self, el: &[u8]) -> Vec<u8> {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(el).unwrap();
        let z = z.finish().unwrap();
        let mut out = Vec::new();
        out.extend(self.u32(MI_COMPRESSED));
        out.extend(self.u32(z.len() as u32));
        out.extend(z);
        out
    }
}

/// Methods writing a slice of numbers as bytes in the writer's byte order.
macro_rules! in_order {
    ($($name:ident: $t:ty),*) => {
        impl Mat {
            $(pub fn $name(self, v: &[$t]) -> Vec<u8> {
                v.iter()
                    .flat_map(|x| if self.big { x.to_be_bytes() } else { x.to_le_bytes() })
                    .collect()
            })*
        }
    };
}

in_order!(u16s: u16, i16s: i16, f64s: f64);

/// A little-endian v5 file with a compressed `rows × cols × bands` uint16 variable `name`
/// (values given column-major) and a compressed 3 × 2 double `d`.
pub fn write_mat(path: &Path, name: &str, dims: [usize; 3], cube: &[u16], d: &[f64]) {
    let mut bytes = LE.header(0x0100);
    let dims32 = dims.map(|x| x as i32);
    bytes.extend(LE.compressed(&LE.matrix(name, MX_UINT16, &dims32, MI_UINT16, &LE.u16s(cube))));
    bytes.extend(LE.compressed(&LE.matrix("d", MX_DOUBLE, &[3, 2], MI_DOUBLE, &LE.f64s(d))));
    std::fs::write(path, bytes).unwrap();
}

/// Values of a 3 × 2 double `d` that round-trip only if every bit is kept.
pub const D: [f64; 6] = [1.5, -2.25, 1e-300, 3.0e10, -0.0, std::f64::consts::PI];

/// A 2 × 3 × 4 uint16 cube, column-major.
pub fn small_cube() -> Vec<u16> {
    (0..2 * 3 * 4).map(|i| (i * 2731 + 7) as u16).collect()
}

/// A 6 × 5 × 8 cube of rank 2 plus an offset, stored as uint16 in `dir`/tiny.mat as `tiny`.
pub fn tiny_scene_file(dir: &Path) -> std::path::PathBuf {
    let scene = dir.join("tiny.mat");
    let cube: Vec<u16> = (0..6 * 5 * 8)
        .map(|n| {
            let (p, b) = (n % 30, n / 30);
            let v = 3000.0
                + 800.0 * (p as f64 * 0.4).sin() * (b as f64 * 0.3).cos()
                + 500.0 * (p as f64 * 0.9).cos() * (b as f64 * 0.7).sin();
            v as u16
        })
        .collect();
    write_mat(&scene, "tiny", [6, 5, 8], &cube, &D);
    scene
}
