//! `basis-lab`: no arguments opens the desktop app; subcommands run experiments headless. Built
//! for wasm32, the same binary is the web page's app (see `basis_lab::web`).
// Printing goes through `basis_lab::console`, which reports a full or closed output.
#![deny(clippy::print_stdout, clippy::print_stderr)]

#[cfg(not(target_arch = "wasm32"))]
mod cli;

#[cfg(not(target_arch = "wasm32"))]
use std::process::ExitCode;

/// The web build's entry (wasm32): the app in the page, no command line.
#[cfg(target_arch = "wasm32")]
fn main() {
    basis_lab::web::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> ExitCode {
    // Rust ignores SIGPIPE, so printing into a closed pipe (`basis-lab presets | head`) would
    // panic; the default action ends the process quietly, as other command-line tools do.
    #[cfg(unix)]
    // SAFETY: called first thing, before any other thread exists; SIG_DFL is a valid action.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    #[cfg(unix)]
    if let Err(e) = basis_lab::output::remove_temporaries_on_signals() {
        basis_lab::console::errln(&format!(
            "warning: Ctrl-C will not remove temporary files: {e}"
        ));
    }
    match cli::Cli::parse_args().run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            basis_lab::console::errln(&format!("error: {e:#}"));
            ExitCode::FAILURE
        }
    }
}
