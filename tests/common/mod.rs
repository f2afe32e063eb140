//! Helpers shared by the integration tests.

// Every test binary compiles this module and uses only some of it.
#![allow(dead_code)]

pub mod app;
pub mod determinism;
pub mod mat;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `basis-lab` binary of this build.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_basis-lab"))
}

/// Runs the binary with `args`, asserts it succeeded (showing its stderr if not) and returns
/// its stdout.
pub fn ok(args: &[&str]) -> String {
    let out = bin().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs the binary with `args`, asserts it failed and returns its stderr.
pub fn fails(args: &[&str]) -> String {
    let out = bin().args(args).output().unwrap();
    assert!(!out.status.success(), "{args:?} should fail");
    String::from_utf8(out.stderr).unwrap()
}

/// `p` as a command-line argument (test paths are UTF-8).
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A folder this process cannot write in: a fresh folder under `base` with mode 0o555, or,
/// where permission bits do not bind (running as root), sysfs, which refuses new files even to
/// root. Panics if neither refuses a write, so a fault test never passes without its fault.
pub fn read_only_dir(base: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let refuses = |dir: &Path| std::fs::File::create(dir.join(".probe")).is_err();
    let dir = base.join("read-only");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    if refuses(&dir) {
        return dir;
    }
    let _ = std::fs::remove_file(dir.join(".probe"));
    let sys = PathBuf::from("/sys");
    assert!(refuses(&sys), "no read-only folder available for this test");
    sys
}

/// An `app.ron` as eframe writes it: a map from the app's key to `settings` as RON.
pub fn app_ron(settings: &basis_lab::app::Settings) -> String {
    let map = std::collections::HashMap::from([(
        "app".to_string(),
        ron::ser::to_string(settings).unwrap(),
    )]);
    ron::ser::to_string_pretty(&map, ron::ser::PrettyConfig::new()).unwrap()
}
