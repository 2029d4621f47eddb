//! The tool-use policy (placeholder until the policy engine lands).

pub struct PolicyStep<'a> {
    pub index: usize,
    pub tool: &'a str,
    pub arguments: &'a str,
    pub result: &'a str,
    pub structural_error: bool,
    pub succeeded: bool,
    pub confirmed: bool,
}
pub struct PolicyRun<'a> {
    pub steps: &'a [PolicyStep<'a>],
    pub root: Option<PolicyRoot<'a>>,
    pub answer: &'a str,
    pub termination: &'a str,
}
pub struct PolicyRoot<'a> {
    pub attrs: &'a serde_json::Map<String, serde_json::Value>,
    pub span_error: Option<&'a str>,
    pub end_ns: u64,
}

#[derive(Default)]
pub struct Policy;

impl Policy {
    pub fn evaluate(&self, run: &PolicyRun) -> (bool, String) {
        (false, format!("{} calls within policy", run.steps.len()))
    }
}

impl Policy {
    pub fn from_path(_path: &std::path::Path) -> Result<Policy, String> {
        Ok(Policy)
    }
}
