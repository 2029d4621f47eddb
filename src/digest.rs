//! SHA-256 and lowercase hex, the one place the crate computes them.
//!
//! Digests name things across runs and machines: input files and lists in partials and the audit
//! folder, raw scenario keys a partial must not hold, judge replies in the cache, the `conform` report,
//! and the short tags of scenario keys (a prompt's hash, a masked key's suffix). Every one is the
//! lowercase hex of SHA-256 bytes, so they all come from here.

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

/// The SHA-256 of some bytes.
pub(crate) fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// Lowercase hex SHA-256 of some bytes.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    lower_hex(&sha256(bytes))
}

/// Lowercase hex SHA-256 of a file's bytes, read in blocks.
pub(crate) fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Hasher::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finish_hex())
}

/// The start of a scenario key derived from a prompt, before the hex digits of its SHA-256.
const PROMPT_KEY_PREFIX: &str = "p-";

/// The bytes of the prompt's SHA-256 a derived key holds, as two hex digits each.
const PROMPT_KEY_BYTES: usize = 6;

/// The scenario key of a trace that names none: `p-` and 12 hex digits of its prompt's SHA-256.
pub(crate) fn prompt_key(prompt: &str) -> String {
    let digest = sha256(prompt.as_bytes());
    let mut key = String::with_capacity(PROMPT_KEY_PREFIX.len() + 2 * PROMPT_KEY_BYTES);
    key.push_str(PROMPT_KEY_PREFIX);
    key.push_str(&lower_hex(&digest[..PROMPT_KEY_BYTES]));
    key
}

/// Returns true if and only if `key` has the form [`prompt_key`] gives: `p-` and 12 lowercase hex
/// digits. Such a key holds nothing from the trace but a hash, so redaction leaves it alone even when
/// its digits happen to look like a phone number.
pub(crate) fn is_prompt_key(key: &str) -> bool {
    key.strip_prefix(PROMPT_KEY_PREFIX).is_some_and(|hex| {
        hex.len() == 2 * PROMPT_KEY_BYTES
            && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// Lowercase hex of some bytes, two digits each.
pub(crate) fn lower_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

/// A SHA-256 fed in pieces (a file in blocks, a key made of several parts).
pub(crate) struct Hasher(Sha256);

impl Hasher {
    pub(crate) fn new() -> Hasher {
        Hasher(Sha256::new())
    }

    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The digest of everything fed so far, as lowercase hex.
    pub(crate) fn finish_hex(self) -> String {
        lower_hex(&self.0.finalize())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_lowercase_hex_of_sha256() {
        // The SHA-256 of "abc" (FIPS 180-2, appendix B.1).
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha256_hex(b"abc"), abc);
        let mut pieces = Hasher::new();
        pieces.update(b"a");
        pieces.update(b"bc");
        assert_eq!(pieces.finish_hex(), abc);
        assert_eq!(lower_hex(&[0x00, 0x0f, 0xa0, 0xff]), "000fa0ff");
        assert_eq!(lower_hex(&sha256(b"abc")[..2]), "ba78");
    }

    #[test]
    fn a_file_hashes_as_its_bytes() {
        let path = std::env::temp_dir().join(format!("fg-digest-{}", std::process::id()));
        // More than one read block, so the loop joins blocks.
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(sha256_file(&path).unwrap(), sha256_hex(&bytes));
        std::fs::remove_file(&path).unwrap();
        assert!(sha256_file(&path).is_err());
    }
}
