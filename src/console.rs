//! Printing to the terminal without panicking: std's `print!` panics when standard output is
//! full or closed (`basis-lab presets > /dev/full`), after the command's files were written.
//! Every command prints through these functions and turns a failed write into its one-line
//! error; the lints `clippy::print_stdout` and `clippy::print_stderr` keep `print!` out.

use std::io::{self, Write};

/// Writes `text` to standard output and flushes it, so a full disk or a closed descriptor is
/// seen here and not lost at exit. Errors: the write's or the flush's, naming standard output.
pub fn out(text: &str) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| io::Error::new(e.kind(), format!("cannot write to standard output: {e}")))
}

/// [`out`] with a newline after `text`.
pub fn outln(text: &str) -> io::Result<()> {
    out(&format!("{text}\n"))
}

/// Writes `text` and a newline to standard error. A failure there has nowhere left to be
/// reported, so it is ignored rather than panicking.
pub fn errln(text: &str) {
    let mut stderr = io::stderr().lock();
    let _ = writeln!(stderr, "{text}").and_then(|()| stderr.flush());
}
