//! The MAT-file reader: files written by scipy (every numeric class, compressed and not, with
//! structs, cells, chars, sparse arrays, objects, logical and complex arrays beside them), files
//! written here byte by byte (big-endian, MATLAB's compact storage types, damage, MATLAB 7.3),
//! the choice of the cube when no variable is named, and mutated files.
//!
//! The scipy files need Python 3 with scipy: `$BASIS_LAB_PYTHON` if set, else the first of
//! `/usr/bin/python3` (Debian's python3-scipy, which .ci/run installs) and `python3` on PATH
//! that imports it. Without one these tests fail and say what to install.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use basis_lab::matv5::{MatError, MatFile, read_array, read_cube};
use common::mat::{
    D, LE, MI_DOUBLE, MI_INT16, MI_UINT8, MI_UINT16, MI_UTF8, MX_DOUBLE, MX_INT16, MX_UINT16, Mat,
    small_cube, write_mat,
};
use common::{fails, ok, s};
use rand::{RngExt, SeedableRng};

/// A Python with scipy, found as the module doc says; panics with what to install otherwise.
fn python() -> PathBuf {
    let candidates: Vec<PathBuf> = match std::env::var_os("BASIS_LAB_PYTHON") {
        Some(p) => vec![p.into()],
        None => vec!["/usr/bin/python3".into(), "python3".into()],
    };
    for c in &candidates {
        let probe = Command::new(c)
            .args(["-c", "import scipy.io, numpy"])
            .output();
        if probe.is_ok_and(|o| o.status.success()) {
            return c.clone();
        }
    }
    panic!(
        "the MAT-file tests write their files with scipy, and none of {candidates:?} can import \
         it. Install Debian's python3-scipy (`apt-get install python3-scipy`, as .ci/run does) \
         or `pip install scipy`, or set BASIS_LAB_PYTHON to a Python that has scipy."
    );
}

/// Writes the scipy test files into the folder given as the first argument.
const SCIPY_WRITER: &str = r#"
import sys
import numpy as np
import scipy.io as sio
import scipy.sparse as sp
from scipy.io.matlab import MatlabObject

out = sys.argv[1]
i, j, k = np.meshgrid(np.arange(4), np.arange(3), np.arange(5), indexing="ij")
lin = i + 4 * j + 12 * k  # MATLAB's column-major index of A(i+1, j+1, k+1)

def cube(c):
    t = np.dtype(c)
    if t.kind == "f":
        a = (lin * 0.1 - 1.5).astype(t)
        info = np.finfo(t)
    else:
        info = np.iinfo(t)
        a = (lin - 30 if info.min < 0 else lin + 190).astype(t)
    a[0, 0, 0] = info.min
    a[3, 2, 4] = info.max
    return a

classes = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
           "float32", "float64"]
cubes = {"cube_" + c: cube(c) for c in classes}
cell = np.empty((1, 3), dtype=object)
cell[0, 0] = 1.0
cell[0, 1] = "text"
cell[0, 2] = np.zeros((2, 2))
others = {
    "labels": (lin[:, :, 0] % 7).astype("int32"),
    "s": {"a": 1.0, "b": np.arange(3.0)},
    "c": cell,
    "txt": "hyperspectral",
    "sp": sp.csc_matrix(np.array([[0.0, 2.0], [3.0, 0.0]])),
    "obj": MatlabObject(np.array([(np.array([[1.0]]),)], dtype=[("field", object)]), "thing"),
    "mask": np.array([[True, False, True]]),
    "z": np.arange(6.0).reshape(2, 3) * (1 + 2j),
}
sio.savemat(out + "/all_z.mat", {**cubes, **others}, do_compression=True)
sio.savemat(out + "/all_u.mat", {**cubes, **others}, do_compression=False)
sio.savemat(out + "/one_cube.mat", {"scene": cubes["cube_uint16"], **others}, do_compression=True)
sio.savemat(out + "/no_cube.mat", others, do_compression=True)
sio.savemat(out + "/level4.mat", {"m": np.eye(3)}, format="4")

# The shape of the reported cases: a 12 x 10 x 8 scene whose maximum is 9604 with three
# all-zero pixels, in several classes, and a uint16 scene with an int32 label map beside it.
i, j, k = np.meshgrid(np.arange(12), np.arange(10), np.arange(8), indexing="ij")
p = i + 12 * j
scene = 1000 + (p * 37 + k * 211) % 8000
scene[(p == 7) | (p == 40) | (p == 99)] = 0
scene[3, 4, 5] = 9604
for c in ["int16", "int32", "int64", "uint32"]:
    sio.savemat(out + "/case_" + c + ".mat", {"indian_pines_corrected": scene.astype(c)})
sio.savemat(out + "/case_labels.mat", {
    "indian_pines_corrected": scene.astype("uint16"),
    "indian_pines_gt": (p[:, :, 0] % 17).astype("int32"),
})
"#;

/// A temporary folder holding the files of [`SCIPY_WRITER`].
fn scipy_files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(python())
        .args(["-c", SCIPY_WRITER])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the scipy writer failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// The values the scipy writer stores in `cube_<class>` at column-major index `lin`, as f64.
fn expected(class: &str, lin: usize) -> f64 {
    let last = 4 * 3 * 5 - 1;
    let x = lin as f64;
    macro_rules! int {
        ($t:ty, $offset:expr) => {
            match lin {
                0 => <$t>::MIN as f64,
                l if l == last => <$t>::MAX as f64,
                _ => x + $offset,
            }
        };
    }
    match class {
        "int8" => int!(i8, -30.0),
        "uint8" => int!(u8, 190.0),
        "int16" => int!(i16, -30.0),
        "uint16" => int!(u16, 190.0),
        "int32" => int!(i32, -30.0),
        "uint32" => int!(u32, 190.0),
        "int64" => int!(i64, -30.0),
        "uint64" => int!(u64, 190.0),
        "float32" => match lin {
            0 => f64::from(f32::MIN),
            l if l == last => f64::from(f32::MAX),
            _ => f64::from((x * 0.1 - 1.5) as f32),
        },
        "float64" => match lin {
            0 => f64::MIN,
            l if l == last => f64::MAX,
            _ => x * 0.1 - 1.5,
        },
        other => unreachable!("{other}"),
    }
}

const CLASSES: [(&str, &str); 10] = [
    ("int8", "int8"),
    ("uint8", "uint8"),
    ("int16", "int16"),
    ("uint16", "uint16"),
    ("int32", "int32"),
    ("uint32", "uint32"),
    ("int64", "int64"),
    ("uint64", "uint64"),
    ("float32", "single"),
    ("float64", "double"),
];

#[test]
fn scipy_files_of_every_numeric_class_read_back_exactly() {
    let dir = scipy_files();
    for file in ["all_z.mat", "all_u.mat"] {
        let mat = MatFile::open(&dir.path().join(file)).unwrap();
        for (numpy, matlab) in CLASSES {
            let a = mat.read(&format!("cube_{numpy}")).unwrap();
            assert_eq!(a.class, matlab, "{file}");
            assert_eq!(a.dims, vec![4, 3, 5], "{file} {numpy}");
            // Entry (i, j, k) of the 4 × 3 × 5 array sits at i + 4(j + 3k).
            for (lin, &got) in a.data.iter().enumerate() {
                let want = expected(numpy, lin);
                assert_eq!(got.to_bits(), want.to_bits(), "{file} {numpy}[{lin}]");
            }
        }
        let labels = mat.read("labels").unwrap();
        assert_eq!((labels.class, labels.dims.clone()), ("int32", vec![4, 3]));
        let want: Vec<f64> = (0..12)
            .map(|lin| ((lin % 4) + 4 * (lin / 4)) % 7)
            .map(f64::from)
            .collect();
        assert_eq!(labels.data, want, "{file}");
    }
}

#[test]
fn structs_cells_chars_sparse_objects_are_listed_and_never_block_the_rest() {
    let dir = scipy_files();
    for file in ["all_z.mat", "all_u.mat"] {
        let path = dir.path().join(file);
        let mat = MatFile::open(&path).unwrap();
        let listed: Vec<(String, &str, Vec<usize>, bool)> = mat
            .vars()
            .iter()
            .filter(|v| !v.name.starts_with("cube_"))
            .map(|v| (v.name.clone(), v.class, v.dims.clone(), v.complex))
            .collect();
        let want: Vec<(String, &str, Vec<usize>, bool)> = [
            ("labels", "int32", vec![4, 3], false),
            ("s", "struct", vec![1, 1], false),
            ("c", "cell", vec![1, 3], false),
            ("txt", "char", vec![1, 13], false),
            ("sp", "sparse", vec![2, 2], false),
            ("obj", "object", vec![1, 1], false),
            ("mask", "logical", vec![1, 3], false),
            ("z", "double", vec![2, 3], true),
        ]
        .into_iter()
        .map(|(n, c, d, z)| (n.to_string(), c, d, z))
        .collect();
        assert_eq!(listed, want, "{file}");
        assert_eq!(mat.vars().len(), 10 + want.len(), "{file}");

        for (name, class) in [
            ("s", "struct"),
            ("c", "cell"),
            ("txt", "char"),
            ("sp", "sparse"),
            ("obj", "object"),
        ] {
            let e = mat.read(name).unwrap_err();
            assert!(matches!(e, MatError::NotNumeric { .. }), "{e}");
            let text = e.to_string();
            assert!(
                text.contains(&format!("variable `{name}` is a {class} array"))
                    && text.contains(file),
                "{text}"
            );
        }
        let e = mat.read("z").unwrap_err();
        assert!(matches!(e, MatError::Complex { .. }), "{e}");
        assert!(e.to_string().contains("`z` is complex"), "{e}");
        let mask = mat.read("mask").unwrap();
        assert_eq!((mask.class, mask.data), ("logical", vec![1.0, 0.0, 1.0]));

        let e = read_array(&path, "nope").unwrap_err();
        assert!(matches!(e, MatError::MissingVariable { .. }), "{e}");
        assert!(
            e.to_string().contains(
                "s (struct, 1 × 1), c (cell, 1 × 3), txt (char, 1 × 13), sp (sparse, 2 × 2), \
                 obj (object, 1 × 1), mask (logical, 1 × 3), z (double complex, 2 × 3)"
            ),
            "{e}"
        );
    }
}

#[test]
fn without_a_variable_name_the_only_cube_is_taken_or_the_candidates_listed() {
    let dir = scipy_files();
    let one = dir.path().join("one_cube.mat");
    let a = read_cube(&one, None).unwrap();
    assert_eq!((a.name.as_str(), a.class), ("scene", "uint16"));
    assert_eq!(a.data[59], f64::from(u16::MAX));

    let e = read_cube(&dir.path().join("no_cube.mat"), None).unwrap_err();
    assert!(matches!(e, MatError::NoSingleCube { cubes: 0, .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("has no 3-D numeric array")
            && text.contains("labels (int32, 4 × 3), s (struct, 1 × 1)"),
        "{text}"
    );

    let e = read_cube(&dir.path().join("all_u.mat"), None).unwrap_err();
    assert!(matches!(e, MatError::NoSingleCube { cubes: 10, .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("has 10 3-D numeric arrays: name the cube's variable (`--var`)")
            && text.contains("cube_int8 (int8, 4 × 3 × 5), cube_uint8 (uint8, 4 × 3 × 5)"),
        "{text}"
    );

    let out = dir.path().join("out");
    let stdout = ok(&[
        "hsi",
        s(&one),
        "--density",
        "0.5",
        "--steps",
        "3",
        "--rules",
        "gd",
        "--quiet",
        "--out",
        s(&out),
    ]);
    assert!(stdout.contains("(`scene`, 4 × 3 × 5 uint16)"), "{stdout}");
    let err = fails(&[
        "hsi",
        s(&dir.path().join("all_z.mat")),
        "--density",
        "0.5",
        "--out",
        s(&out),
    ]);
    assert!(
        err.contains("has 10 3-D numeric arrays") && !err.contains("panicked"),
        "{err}"
    );
}

#[test]
fn the_reported_int32_and_label_map_scenes_read_like_their_copies() {
    let dir = scipy_files();
    let run = |file: &str| {
        let out = dir.path().join(format!("out-{file}"));
        ok(&[
            "hsi",
            s(&dir.path().join(file)),
            "--density",
            "0.3",
            "--steps",
            "5",
            "--rules",
            "gd",
            "--lr",
            "gd=1",
            "--quiet",
            "--out",
            s(&out),
        ])
    };
    let int32 = run("case_int32.mat");
    assert!(
        int32.contains(
            "12 × 10 × 8 int32): divided by its maximum 9604, 117 of 120 pixels non-zero"
        ),
        "{int32}"
    );
    // Every class gives the same numbers; only the file and class names differ.
    let same = |text: &str, class: &str| {
        text.replace(&format!("case_{class}.mat"), "F")
            .replace(&format!(" {class})"), " C)")
    };
    for class in ["int16", "int64", "uint32"] {
        assert_eq!(
            same(&run(&format!("case_{class}.mat")), class),
            same(&int32, "int32")
        );
    }
    let labels = run("case_labels.mat");
    assert!(
        labels.contains("(`indian_pines_corrected`, 12 × 10 × 8 uint16)"),
        "{labels}"
    );
    let gt = read_array(&dir.path().join("case_labels.mat"), "indian_pines_gt").unwrap();
    assert_eq!((gt.class, gt.dims), ("int32", vec![12, 10]));
    assert_eq!(gt.data[119], f64::from(119 % 17));
}

#[test]
fn a_level_4_file_is_refused_clearly() {
    let dir = scipy_files();
    let e = read_cube(&dir.path().join("level4.mat"), None).unwrap_err();
    assert!(matches!(e, MatError::NotV5 { .. }), "{e}");
    assert!(e.to_string().contains("level-4"), "{e}");
}

#[test]
fn the_loader_reads_back_what_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scene.mat");
    let cube = small_cube();
    write_mat(&path, "hyperspectral_cube", [2, 3, 4], &cube, &D);

    let a = read_cube(&path, Some("hyperspectral_cube")).unwrap();
    assert_eq!(a.dims, vec![2, 3, 4]);
    assert_eq!(a.class, "uint16");
    let want: Vec<f64> = cube.iter().map(|&x| f64::from(x)).collect();
    assert_eq!(a.data, want);
    // Column-major: (i, j, k) = data[i + 2(j + 3k)].
    assert_eq!(a.data[1 + 2 * (2 + 3 * 3)], f64::from(cube[23]));
    assert_eq!(read_cube(&path, None).unwrap(), a);

    let d = read_array(&path, "d").unwrap();
    assert_eq!(d.dims, vec![3, 2]);
    assert_eq!(d.class, "double");
    assert_eq!(
        d.data.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        D.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
}

#[test]
fn loader_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scene.mat");
    write_mat(&path, "cube", [2, 3, 4], &small_cube(), &D);

    let e = read_cube(&path, Some("nope")).unwrap_err();
    assert!(matches!(e, MatError::MissingVariable { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("`nope`") && text.contains("cube (uint16, 2 × 3 × 4), d (double, 3 × 2)"),
        "{text}"
    );

    let e = read_cube(&path, Some("d")).unwrap_err();
    assert!(matches!(e, MatError::WrongDims { .. }), "{e}");
    assert!(e.to_string().contains("[3, 2]"), "{e}");

    let text_file = dir.path().join("notes.mat");
    std::fs::write(&text_file, "just some text, not a MAT-file at all").unwrap();
    let e = read_cube(&text_file, Some("cube")).unwrap_err();
    assert!(matches!(e, MatError::NotV5 { .. }), "{e}");

    let truncated = dir.path().join("truncated.mat");
    let full = std::fs::read(&path).unwrap();
    for cut in [8, 20, 60] {
        std::fs::write(&truncated, &full[..128 + cut]).unwrap();
        let e = read_cube(&truncated, Some("cube")).unwrap_err();
        assert!(
            matches!(
                e,
                MatError::Unreadable { .. } | MatError::MissingVariable { .. }
            ),
            "cut at {cut}: {e}"
        );
        assert!(e.to_string().contains("truncated.mat"), "{e}");
    }

    let e = read_cube(&dir.path().join("missing.mat"), Some("cube")).unwrap_err();
    assert!(matches!(e, MatError::Io { .. }), "{e}");
}

#[test]
fn matlab_7_3_and_other_hdf5_files_get_a_resave_hint() {
    let dir = tempfile::tempdir().unwrap();
    // MATLAB 7.3: the MAT header fills the first 128 bytes of a 512-byte HDF5 user block.
    let mut v73 = LE.header_text(
        "MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Mon Nov 30 20:30:10 2026 HDF5 \
         schema 1.00 .",
        0x0200,
    );
    v73.resize(512, 0);
    v73.extend(b"\x89HDF\r\n\x1a\n");
    v73.resize(2048, 0);
    let scene = dir.path().join("pavia.mat");
    std::fs::write(&scene, &v73).unwrap();
    let e = read_cube(&scene, None).unwrap_err();
    assert!(matches!(e, MatError::Hdf5 { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("is a MATLAB 7.3 MAT-file (HDF5)")
            && text.contains("load('pavia.mat'); save('pavia_v7.mat', '-v7')")
            && text.contains("save -v7 pavia_v7.mat"),
        "{text}"
    );
    let err = fails(&[
        "hsi",
        s(&scene),
        "--density",
        "0.2",
        "--out",
        s(&dir.path().join("o")),
    ]);
    assert!(err.contains("'-v7'") && !err.contains("panicked"), "{err}");

    let h5 = dir.path().join("scene.h5");
    let mut plain = b"\x89HDF\r\n\x1a\n".to_vec();
    plain.resize(1024, 0);
    std::fs::write(&h5, plain).unwrap();
    let e = read_cube(&h5, None).unwrap_err();
    assert!(e.to_string().contains("is an HDF5 file"), "{e}");
}

/// A file in byte order `m` holding a uint16 cube, doubles stored as uint8 and as int16 (as
/// MATLAB stores small integers), and an int16 array.
fn compact_file(m: Mat) -> Vec<u8> {
    let mut bytes = m.header(0x0100);
    let cube: Vec<u16> = (0..24).map(|i| 1000 + 37 * i).collect();
    bytes.extend(m.compressed(&m.matrix("cube", MX_UINT16, &[2, 3, 4], MI_UINT16, &m.u16s(&cube))));
    bytes.extend(m.matrix("small", MX_DOUBLE, &[1, 4], MI_UINT8, &[0, 1, 200, 255]));
    let neg = m.i16s(&[-300, 7, 32767]);
    bytes.extend(m.compressed(&m.matrix("neg", MX_DOUBLE, &[3, 1], MI_INT16, &neg)));
    bytes.extend(m.matrix("i16", MX_INT16, &[1, 3], MI_INT16, &neg));
    bytes
}

#[test]
fn big_endian_files_and_compact_storage_types_read_back() {
    let dir = tempfile::tempdir().unwrap();
    for m in [LE, Mat { big: true }] {
        let path = dir.path().join(format!("compact-{}.mat", m.big));
        std::fs::write(&path, compact_file(m)).unwrap();
        let mat = MatFile::open(&path).unwrap();
        let cube = mat.read_cube(None).unwrap();
        assert_eq!(cube.dims, vec![2, 3, 4]);
        assert_eq!(cube.data[23], f64::from(1000 + 37 * 23), "big {}", m.big);
        let small = mat.read("small").unwrap();
        assert_eq!(
            (small.class, small.data),
            ("double", vec![0.0, 1.0, 200.0, 255.0])
        );
        let neg = mat.read("neg").unwrap();
        assert_eq!(
            (neg.class, neg.data),
            ("double", vec![-300.0, 7.0, 32767.0])
        );
        let i16 = mat.read("i16").unwrap();
        assert_eq!((i16.class, i16.data), ("int16", vec![-300.0, 7.0, 32767.0]));
    }
}

#[test]
fn one_damaged_variable_leaves_the_others_readable_and_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let m = LE;
    let mut bytes = m.header(0x0100);
    bytes.extend(m.compressed(&m.matrix(
        "first",
        MX_DOUBLE,
        &[1, 2],
        MI_DOUBLE,
        &m.f64s(&[1.0, 2.0]),
    )));
    // Compressed values damaged after the header: listed, unreadable.
    let mut damaged = m.compressed(
        &m.matrix(
            "broken",
            MX_UINT16,
            &[20, 20, 20],
            MI_UINT16,
            &m.u16s(
                &(0..8000)
                    .map(|i| (i * 7919 % 65536) as u16)
                    .collect::<Vec<_>>(),
            ),
        ),
    );
    let len = damaged.len();
    for b in &mut damaged[len - 40..len - 8] {
        *b ^= 0x5a;
    }
    bytes.extend(damaged);
    // Fewer values than the dimensions need.
    bytes.extend(m.matrix("short", MX_INT16, &[2, 2], MI_INT16, &[1, 0, 2, 0]));
    // Values stored as text.
    bytes.extend(m.matrix("texty", MX_DOUBLE, &[1, 2], MI_UTF8, b"ab"));
    // Not a variable at all: a stray element at the top level.
    bytes.extend(m.element(MI_DOUBLE, &m.f64s(&[9.0])));
    bytes.extend(m.compressed(&m.matrix(
        "last",
        MX_UINT16,
        &[2, 3, 4],
        MI_UINT16,
        &m.u16s(&small_cube()),
    )));
    let path = dir.path().join("mixed.mat");
    std::fs::write(&path, &bytes).unwrap();

    let mat = MatFile::open(&path).unwrap();
    assert_eq!(mat.read("first").unwrap().data, vec![1.0, 2.0]);
    assert_eq!(mat.read("last").unwrap().dims, vec![2, 3, 4]);
    for (name, class, why) in [
        ("broken", "uint16", "compressed data are damaged"),
        (
            "short",
            "int16",
            "need 4 values but 4 bytes of 2-byte numbers",
        ),
        ("texty", "double", "stored as type 16, not numbers"),
    ] {
        let e = mat.read(name).unwrap_err();
        assert!(matches!(e, MatError::Unreadable { .. }), "{e}");
        let text = e.to_string();
        assert!(
            text.contains(&format!(
                "mixed.mat: variable `{name}` ({class}) cannot be read"
            )) && text.contains(why),
            "{text}"
        );
    }
    // Two 3-D numeric arrays, one of them damaged: the candidates are listed.
    let e = mat.read_cube(None).unwrap_err();
    assert!(
        e.to_string()
            .contains("broken (uint16, 20 × 20 × 20; damaged:"),
        "{e}"
    );
    let e = mat.read("nope").unwrap_err();
    assert!(
        e.to_string()
            .contains("elements that are not readable variables: the element at byte"),
        "{e}"
    );

    // Cut inside `last`: everything before it still reads.
    std::fs::write(&path, &bytes[..bytes.len() - 10]).unwrap();
    let mat = MatFile::open(&path).unwrap();
    assert_eq!(mat.read("first").unwrap().data, vec![1.0, 2.0]);
    let e = mat.read("last").unwrap_err();
    assert!(e.to_string().contains("the file ends"), "{e}");
}

/// Damaged copies of a real file: every outcome is an error or an array whose values fill its
/// dimensions, never a panic.
#[test]
fn mutated_files_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scene.mat");
    write_mat(&path, "cube", [2, 3, 4], &small_cube(), &D);
    let mut clean = std::fs::read(&path).unwrap();
    clean.extend(compact_file(LE).split_off(128));
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
    let mut read = 0;
    for _ in 0..3000 {
        let mut bytes = clean.clone();
        for _ in 0..rng.random_range(1..4) {
            let at = rng.random_range(0..bytes.len());
            match rng.random_range(0..4) {
                0 => bytes[at] ^= 1 << rng.random_range(0..8),
                1 => bytes[at] = rng.random(),
                2 => bytes.truncate(at.max(1)),
                _ => bytes.insert(at, rng.random()),
            }
        }
        let Ok(mat) = MatFile::parse(Path::new("m.mat"), bytes) else {
            continue;
        };
        let names: Vec<String> = mat.vars().iter().map(|v| v.name.clone()).collect();
        for name in names {
            if let Ok(a) = mat.read(&name) {
                assert_eq!(a.data.len(), a.dims.iter().product::<usize>());
                read += 1;
            }
        }
        let _ = mat.read_cube(None);
    }
    assert!(
        read > 1000,
        "most mutations leave some variable readable: {read}"
    );
}
