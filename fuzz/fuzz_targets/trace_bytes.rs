#![no_main]
//! Decompression (gzip, zstd, under the bomb guard) and format detection and reading of trace bytes
//! through the public ingest entries: traces or an InputError, never a panic. Kept to two calls so it
//! is easy to repoint when the entries are renamed.

use faultgate::ingest::archive::{Limits, decompress_with};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::path::Path::new("fuzz.json");
    // Small limits keep one input fast; a 256 KiB spill size takes larger outputs through the
    // temporary-file path.
    let limits = Limits {
        max_bytes: 16 << 20,
        ratio_grace: 1 << 20,
        max_ratio: 200,
    };
    if let Ok(bytes) = decompress_with(path, data, limits, 256 << 10) {
        let _ = faultgate::ingest::read_bytes(path, &bytes, faultgate::ingest::Format::Auto);
    }
});
