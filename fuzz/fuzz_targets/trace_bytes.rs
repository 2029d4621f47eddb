#![no_main]
//! Format detection and reading of trace bytes through the public ingest entry: traces or an InputError, never a panic. Kept to one call so it is easy to repoint when the entry is renamed.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = faultgate::ingest::read_bytes(
        std::path::Path::new("fuzz.json"),
        data,
        faultgate::ingest::Format::Auto,
    );
});
