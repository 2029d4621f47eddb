#![no_main]
//! The workflow spec reader: any bytes give a workflow or a WorkflowError, never a panic.

#[path = "scratch.rs"]
mod scratch;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = scratch::file("spec.json", data);
    if let Ok(workflow) = faultgate::workflow::Workflow::load(&path) {
        let _ = workflow.mandatory_checkpoint_count();
    }
});
