//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

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
