#![no_main]
//! The policy reader and compiler: any bytes give a policy or a PolicyError, never a panic; a policy that compiles also evaluates an empty run.

#[path = "scratch.rs"]
mod scratch;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = scratch::file("policy.json", data);
    if let Ok(policy) = faultgate::policy::Policy::from_path(&path) {
        let _ = policy.key_summary();
    }
});
