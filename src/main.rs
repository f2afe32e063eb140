//! `basis-lab`: no arguments opens the desktop app; subcommands run experiments headless.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, so printing into a closed pipe (`basis-lab presets | head`) would
    // panic; the default action ends the process quietly, as other command-line tools do.
    #[cfg(unix)]
    // SAFETY: called first thing, before any other thread exists; SIG_DFL is a valid action.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    match cli::Cli::parse().run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
