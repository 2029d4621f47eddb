#![no_main]
//! The band reader: any bytes give a band or an exit-2 error, never a panic.

#[path = "scratch.rs"]
mod scratch;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = scratch::file("band.json", data);
    if let Ok(band) = faultgate::gate::BandFile::read(&path) {
        let _ = band.runs_text();
    }
});
