//! Atomic file output: everything the app writes goes to a temporary file in the target folder
//! and is renamed over the destination only when complete, so a crash never leaves a
//! half-written file and never damages the previous one.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// A file being written; invisible under its final name until [`AtomicFile::commit`].
/// Dropping it uncommitted deletes the temporary file and leaves any old file untouched.
pub struct AtomicFile {
    tmp: PathBuf,
    dest: PathBuf,
    writer: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Starts writing `dest` (through `.<name>.tmp-<pid>` beside it).
    /// Errors: the folder is missing or not writable.
    pub fn create(dest: &Path) -> io::Result<Self> {
        let name = dest
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?
            .to_string_lossy();
        let tmp = dest.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
        let file = File::create(&tmp)?;
        Ok(Self {
            tmp,
            dest: dest.to_path_buf(),
            writer: Some(BufWriter::new(file)),
        })
    }

    /// The buffered writer.
    pub fn writer(&mut self) -> &mut BufWriter<File> {
        self.writer.as_mut().expect("not yet committed")
    }

    /// Flushes, syncs to disk and renames over the destination.
    pub fn commit(mut self) -> io::Result<()> {
        let writer = self.writer.take().expect("commit once");
        // The file is closed at the end of this block, before the rename (which Windows
        // refuses for an open file).
        {
            let file = writer.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
        }
        std::fs::rename(&self.tmp, &self.dest)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.writer.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` to `dest` atomically.
pub fn write_atomic(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create(dest)?;
    f.writer().write_all(bytes)?;
    f.commit()
}

/// Creates `dir` if needed and checks that a file can be written in it (a temporary file,
/// removed again), so a long computation never ends at a folder it cannot write.
/// Errors: the folder cannot be created, or is read-only or full.
pub fn ensure_writable_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut probe = AtomicFile::create(&dir.join(".basis-lab-write-check"))?;
    probe.writer().write_all(b"ok")?;
    probe.writer().flush()
}

/// Formats a number for CSV: the shortest decimal that reads back to the same f64, in
/// scientific notation outside [1e-4, 1e15), empty for NaN.
pub fn csv_num(x: f64) -> String {
    if x.is_nan() {
        String::new()
    } else if x == 0.0 || (1e-4..1e15).contains(&x.abs()) || x.is_infinite() {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}
