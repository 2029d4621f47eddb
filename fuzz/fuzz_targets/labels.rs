#![no_main]
//! The labels reader (JSON object, JSON lines or CSV, chosen by file extension): any bytes give a label
//! set or a LabelError, never a panic. The first byte picks the extension, so one corpus covers all three.

#[path = "scratch.rs"]
mod scratch;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let name = ["labels.json", "labels.jsonl", "labels.csv"][usize::from(pick % 3)];
    let path = scratch::file(name, rest);
    let _ = faultgate::calibrate::read_labels(&path);
});
