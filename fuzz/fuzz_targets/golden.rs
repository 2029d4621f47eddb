#![no_main]
//! The golden-answers reader: any bytes give a map or an InputError, never a panic.

#[path = "scratch.rs"]
mod scratch;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = scratch::file("golden.json", data);
    if let Ok(golden) = faultgate::golden::Golden::from_path(&path) {
        let _ = golden.expected("key", "prompt");
    }
});
