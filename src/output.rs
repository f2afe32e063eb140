//! Atomic file output, the plumbing every lab, command and the app share: everything written
//! goes to a temporary file in the target folder and is renamed over the destination only when
//! complete, so a crash never leaves a half-written file and never damages the previous one. The temporary files a signal
//! interrupts are removed ([`remove_temporaries_on_signals`]); those of a killed process are
//! removed by the next run writing to that folder ([`ensure_writable_dir`]).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The temporary files this process is writing. A signal's handler removes them while holding
/// the lock, so none is created after it has looked.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live() -> MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The marker between a destination's name and the writing process's id in a temporary name.
const TMP_MARK: &str = ".tmp-";

/// `e` with `path` and what was being done to it in its message (`writing out/metrics.csv: No
/// space left on device`), its kind kept: an I/O error always names its file.
pub fn named(e: io::Error, doing: &str, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{doing} {}: {e}", path.display()))
}

/// A buffered writer whose errors name the file they belong to (its destination).
pub struct NamedWriter {
    inner: BufWriter<File>,
    dest: PathBuf,
}

impl Write for NamedWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner
            .write(buf)
            .map_err(|e| named(e, "writing", &self.dest))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.inner
            .write_all(buf)
            .map_err(|e| named(e, "writing", &self.dest))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner
            .flush()
            .map_err(|e| named(e, "writing", &self.dest))
    }
}

/// A file being written; invisible under its final name until [`AtomicFile::commit`].
/// Dropping it uncommitted deletes the temporary file and leaves any old file untouched.
/// Every error names the destination.
pub struct AtomicFile {
    tmp: PathBuf,
    dest: PathBuf,
    writer: Option<NamedWriter>,
}

impl AtomicFile {
    /// Starts writing `dest` (through `.<name>.tmp-<pid>` beside it).
    /// Errors: the folder is missing or not writable; `dest` is a symbolic link to a missing
    /// target, or a file its owner made read-only (replacing either would surprise: each is
    /// refused, naming it).
    pub fn create(dest: &Path) -> io::Result<Self> {
        let name = dest
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?
            .to_string_lossy();
        check_replaceable(dest)?;
        let tmp = dest.with_file_name(format!(".{name}{TMP_MARK}{}", std::process::id()));
        let mut live = live();
        let file =
            File::create(&tmp).map_err(|e| named(e, "creating a temporary file for", dest))?;
        live.push(tmp.clone());
        Ok(Self {
            tmp,
            dest: dest.to_path_buf(),
            writer: Some(NamedWriter {
                inner: BufWriter::new(file),
                dest: dest.to_path_buf(),
            }),
        })
    }

    /// The buffered writer (its errors name the file).
    pub fn writer(&mut self) -> &mut NamedWriter {
        self.writer.as_mut().expect("not yet committed")
    }

    /// The file's final name.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Flushes, syncs to disk and renames over the destination.
    pub fn commit(mut self) -> io::Result<()> {
        self.finish()?;
        self.rename()
    }

    /// Flushes and syncs the temporary file and closes it, leaving it under its temporary name
    /// (the first half of [`AtomicFile::commit`]; [`OutputSet`] finishes every file before it
    /// renames any). Errors name the file: a full disk shows here at the latest.
    fn finish(&mut self) -> io::Result<()> {
        let Some(writer) = self.writer.take() else {
            return Ok(());
        };
        // The file is closed at the end of this block, before the rename (which Windows
        // refuses for an open file).
        let file = writer
            .inner
            .into_inner()
            .map_err(|e| named(e.into_error(), "writing", &self.dest))?;
        file.sync_all().map_err(|e| named(e, "writing", &self.dest))
    }

    /// Renames the finished temporary file over the destination.
    fn rename(mut self) -> io::Result<()> {
        let mut live = live();
        let renamed = self.rename_locked(&mut live);
        // Released before `self` drops: its Drop takes the lock.
        drop(live);
        renamed
    }

    /// [`AtomicFile::rename`] with the temporaries' lock already held (the file must be dropped
    /// only after the lock is released).
    fn rename_locked(&mut self, live: &mut Vec<PathBuf>) -> io::Result<()> {
        let renamed = std::fs::rename(&self.tmp, &self.dest);
        if renamed.is_ok() {
            live.retain(|p| *p != self.tmp);
        }
        renamed.map_err(|e| named(e, "replacing", &self.dest))
    }
}

/// Refuses `path` when it is a symbolic link whose target is missing, saying where it points.
fn check_link(path: &Path) -> io::Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
        && std::fs::metadata(path).is_err()
    {
        let target = std::fs::read_link(path).unwrap_or_default();
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "{} is a symbolic link to {}, which does not exist",
                path.display(),
                target.display()
            ),
        ));
    }
    Ok(())
}

/// Refuses to write over `dest` when it is a symbolic link whose target is missing (the error
/// says where it points), a folder, or an existing file without write permission (the user
/// protected it). Anything else, including a missing `dest`, is fine.
pub fn check_replaceable(dest: &Path) -> io::Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(dest) else {
        return Ok(());
    };
    if meta.file_type().is_symlink() {
        return check_link(dest);
    }
    if meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            format!(
                "{} is a folder; a result file cannot replace it",
                dest.display()
            ),
        ));
    }
    if meta.is_file() && meta.permissions().readonly() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is read-only; it is not replaced (make it writable or choose another --out)",
                dest.display()
            ),
        ));
    }
    Ok(())
}

/// The files one result is made of, written into one folder together: each is staged as a
/// temporary file, and only when every one is complete are they renamed into place (under the
/// temporaries' lock, so a signal cannot fall between two renames). The set's list of files is
/// kept beside them (`.basis-lab-<command>.files`), so the next set of the same command removes
/// the files of this one that it does not write itself (a trace, figures of another preset's
/// kind): a folder holds one result per command, never a mix of two runs' files, and files the
/// command did not write (the user's, another command's) are never touched.
pub struct OutputSet {
    dir: PathBuf,
    command: String,
    staged: Vec<AtomicFile>,
}

/// What [`OutputSet::commit`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Committed {
    /// Every file written, in staging order (the set's list of files last).
    pub written: Vec<PathBuf>,
    /// Files the command's previous set in this folder wrote and this one did not, removed.
    pub removed: Vec<PathBuf>,
}

impl Committed {
    /// One line per removed stale file (`removed out/trace.json (left by an earlier run)`), or
    /// nothing.
    pub fn removed_text(&self) -> String {
        self.removed
            .iter()
            .map(|p| format!("removed {} (left by an earlier run)\n", p.display()))
            .collect()
    }
}

/// The file that lists `command`'s last set in a folder.
fn manifest_name(command: &str) -> String {
    format!(".basis-lab-{command}.files")
}

/// The names `command`'s last set in `dir` wrote, as its list says; only plain names of files
/// in `dir` (a damaged or edited list never points elsewhere). Empty when there is no list.
fn previous_set(dir: &Path, command: &str) -> Vec<String> {
    const MAX_LIST_BYTES: u64 = 64 * 1024;
    let path = dir.join(manifest_name(command));
    let too_big = std::fs::metadata(&path).map_or(true, |m| m.len() > MAX_LIST_BYTES);
    let text = if too_big {
        String::new()
    } else {
        std::fs::read_to_string(&path).unwrap_or_default()
    };
    text.lines()
        .filter(|n| {
            !n.is_empty()
                && *n != "."
                && *n != ".."
                && !n.contains(['/', '\\', '\0'])
                && !n.starts_with(".basis-lab-")
        })
        .map(str::to_string)
        .collect()
}

/// Refuses before any work when one of `files` in `dir`, or a file `command`'s previous set
/// there wrote (which this run may replace or remove), is read-only or a link to nowhere
/// ([`check_replaceable`]). Errors name the file.
pub fn check_set(dir: &Path, command: &str, files: &[&str]) -> io::Result<()> {
    let previous = previous_set(dir, command);
    for name in files
        .iter()
        .copied()
        .chain(previous.iter().map(String::as_str))
    {
        check_replaceable(&dir.join(name))?;
    }
    Ok(())
}

impl OutputSet {
    /// A set that `command` (`run`, `zoo`, …) writes into `dir` (which must exist).
    pub fn new(dir: &Path, command: &str) -> Self {
        Self {
            dir: dir.to_path_buf(),
            command: command.to_string(),
            staged: Vec::new(),
        }
    }

    /// Starts writing `name` in the set's folder ([`AtomicFile::create`]); hand it back with
    /// [`OutputSet::stage`] when written.
    pub fn create(&self, name: &str) -> io::Result<AtomicFile> {
        AtomicFile::create(&self.dir.join(name))
    }

    /// Adds a written file to the set: finished now (so a full disk is found before anything
    /// is replaced), renamed at [`OutputSet::commit`].
    pub fn stage(&mut self, mut file: AtomicFile) -> io::Result<()> {
        file.finish()?;
        self.staged.push(file);
        Ok(())
    }

    /// Writes `bytes` as `name` into the set.
    pub fn write(&mut self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let mut f = self.create(name)?;
        f.writer().write_all(bytes)?;
        self.stage(f)
    }

    /// Stages the set's list of files, renames every staged file into place, then removes the
    /// files the command's previous set wrote and this one did not. Errors name the file: a
    /// stale file that is read-only (refused before anything is renamed), or a rename that
    /// fails (the folder changed under us; the files renamed before it stay).
    pub fn commit(mut self) -> io::Result<Committed> {
        let names: Vec<String> = self
            .staged
            .iter()
            .filter_map(|f| f.dest().file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        let stale: Vec<PathBuf> = previous_set(&self.dir, &self.command)
            .into_iter()
            .filter(|n| !names.contains(n))
            .map(|n| self.dir.join(n))
            .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
            .collect();
        for path in &stale {
            check_replaceable(path)?;
        }
        let list: String = names.iter().map(|n| format!("{n}\n")).collect();
        let manifest = manifest_name(&self.command);
        self.write(&manifest, list.as_bytes())?;
        let written: Vec<PathBuf> = self.staged.iter().map(|f| f.dest().to_path_buf()).collect();
        let mut staged = std::mem::take(&mut self.staged);
        let renamed = {
            let mut live = live();
            staged
                .iter_mut()
                .try_for_each(|f| f.rename_locked(&mut live))
        };
        // Dropped after the lock is released (Drop takes it).
        drop(staged);
        renamed?;
        for path in &stale {
            std::fs::remove_file(path).map_err(|e| named(e, "removing stale", path))?;
        }
        Ok(Committed {
            written,
            removed: stale,
        })
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Closed first: Windows cannot remove an open file.
        drop(self.writer.take());
        let mut live = live();
        if let Some(i) = live.iter().position(|p| *p == self.tmp) {
            live.swap_remove(i);
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Removes this process's temporary files when SIGINT (Ctrl-C), SIGTERM or SIGHUP arrives, then
/// exits with 128 + the signal's number (130 for Ctrl-C), as a shell reports a process ended by
/// it. Call once, at start. Errors: the handler cannot be installed.
#[cfg(all(unix, not(target_arch = "wasm32")))]
pub fn remove_temporaries_on_signals() -> io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                // Held until the process ends: no new temporary file can appear meanwhile.
                let live = live();
                for tmp in live.iter() {
                    let _ = std::fs::remove_file(tmp);
                }
                std::process::exit(128 + signal);
            }
        })?;
    Ok(())
}

/// Removes the temporary files in `dir` left by processes that no longer run (killed by SIGKILL
/// or a power cut): the names `.<name>.tmp-<pid>` this module writes, whose pid is not alive.
/// Another running process's files and every other file stay. Unix only; elsewhere nothing.
pub fn remove_stale_temporaries(dir: &Path) {
    #[cfg(all(unix, not(target_arch = "wasm32")))]
    {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = stale_pid(&name.to_string_lossy()) else {
                continue;
            };
            if pid != std::process::id() && !alive(pid) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    #[cfg(not(all(unix, not(target_arch = "wasm32"))))]
    let _ = dir;
}

/// The writer's pid in a temporary file's name `.<name>.tmp-<pid>`, or None for any other name.
#[cfg(all(unix, not(target_arch = "wasm32")))]
fn stale_pid(name: &str) -> Option<u32> {
    let (stem, pid) = name.rsplit_once(TMP_MARK)?;
    if !stem.starts_with('.') || stem.len() < 2 || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Whether a process with this id exists (`kill(pid, 0)` fails with ESRCH only when it does
/// not; a process of another user still counts as alive).
#[cfg(all(unix, not(target_arch = "wasm32")))]
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 sends nothing; it only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Writes `bytes` to `dest` atomically. Errors name the file.
pub fn write_atomic(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create(dest)?;
    f.writer().write_all(bytes)?;
    f.commit()
}

/// Creates `dir` if needed, removes the temporary files dead processes left in it
/// ([`remove_stale_temporaries`]) and checks that a file can be written in it (a temporary
/// file, removed again), so a long computation never ends at a folder it cannot write.
/// Errors: the folder cannot be created (a symbolic link to a missing target is named with
/// where it points), or is read-only or full.
pub fn ensure_writable_dir(dir: &Path) -> io::Result<()> {
    check_link(dir)?;
    std::fs::create_dir_all(dir)?;
    remove_stale_temporaries(dir);
    let mut probe = AtomicFile::create(&dir.join(".basis-lab-write-check"))?;
    probe.writer().write_all(b"ok")?;
    probe.writer().flush()
}

/// Formats a number for CSV: the shortest decimal that reads back to the same f64, in
/// scientific notation outside [1e-4, 1e15), empty for NaN.
pub fn csv_num(x: f64) -> String {
    if x.is_nan() {
        String::new()
    } else {
        crate::validate::real(x)
    }
}
