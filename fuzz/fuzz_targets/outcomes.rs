#![no_main]
//! The outcomes reader: any bytes give a map or an InputError, never a panic.

#[path = "scratch.rs"]
mod scratch;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = scratch::file("outcomes.json", data);
    if let Ok(outcomes) = faultgate::golden::Outcomes::from_path(&path) {
        let _ = outcomes.lookup("key", "prompt");
    }
});
