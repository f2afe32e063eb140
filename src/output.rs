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
        let tmp = dest.with_file_name(format!(".{name}{TMP_MARK}{}", std::process::id()));
        let mut live = live();
        let file = File::create(&tmp)?;
        live.push(tmp.clone());
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
        let mut live = live();
        let renamed = std::fs::rename(&self.tmp, &self.dest);
        if renamed.is_ok() {
            live.retain(|p| *p != self.tmp);
        }
        renamed
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

/// Writes `bytes` to `dest` atomically.
pub fn write_atomic(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create(dest)?;
    f.writer().write_all(bytes)?;
    f.commit()
}

/// Creates `dir` if needed, removes the temporary files dead processes left in it
/// ([`remove_stale_temporaries`]) and checks that a file can be written in it (a temporary
/// file, removed again), so a long computation never ends at a folder it cannot write.
/// Errors: the folder cannot be created, or is read-only or full.
pub fn ensure_writable_dir(dir: &Path) -> io::Result<()> {
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
    } else if x == 0.0 || (1e-4..1e15).contains(&x.abs()) || x.is_infinite() {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}
