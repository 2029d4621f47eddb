//! The readers under test take a path, as the command line gives them; each input is written to one
//! scratch file per fuzzing process (with the extension the reader keys on), then read back.

use std::path::PathBuf;

/// Writes `data` to this process's scratch file named `name` and returns its path.
pub fn file(name: &str, data: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("faultgate-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(name);
    std::fs::write(&path, data).expect("scratch file");
    path
}
