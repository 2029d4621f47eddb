//! The workflow spec file: serde config, then `compile` into a validated [`Workflow`].
//!
//! The config is the declarative document users write (or draft with `conform --draft`); `compile` checks
//! it once and names the offending entry (`handoff_contracts[1].required_fields[0]: empty name`), so the
//! rules in `rules` are infallible afterwards.
//!
//! ```json
//! {
//!   "mandatory_checkpoints": [
//!     {"checkpoint_id": "confirm_with_user", "must_precede": "send_report",
//!      "every": true, "confirmed_by": ["owner"]}
//!   ],
//!   "handoff_contracts": [
//!     {"from_agent": "scanner", "to_agent": "aggregator",
//!      "required_fields": ["row_count"], "require_verified": false}
//!   ],
//!   "precedence": [{"action": "refund", "preceded_by": "lookup_order", "same_args": ["order_id"]}],
//!   "response": [{"action": "open_ticket", "followed_by": "close_ticket", "same_args": ["ticket_id"]}]
//! }
//! ```
//!
//! `every`, `confirmed_by`, `precedence` and `response` are opt-in extensions; a spec without them behaves
//! exactly as the simple form. A spec that declares no rule at all is unusable.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::WorkflowError;

/// The spec document as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SpecConfig {
    /// Checkpoints that must precede a guarded action (`mandatory_checkpoints`).
    #[serde(default)]
    pub mandatory_checkpoints: Vec<CheckpointRuleConfig>,
    /// Fields each handoff between two agents must carry (`handoff_contracts`).
    #[serde(default)]
    pub handoff_contracts: Vec<HandoffContractConfig>,
    /// Extension: actions that must follow another action (`precedence`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub precedence: Vec<PrecedenceConfig>,
    /// Extension: actions that must be answered by another (`response`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub response: Vec<ResponseConfig>,
}

/// A checkpoint that must come before an action type.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointRuleConfig {
    pub checkpoint_id: String,
    pub must_precede: String,
    /// A fresh checkpoint before each occurrence of the action, not only the first.
    #[serde(default, skip_serializing_if = "is_false")]
    pub every: bool,
    /// Only a checkpoint naming one of these confirmers counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed_by: Option<Vec<String>>,
}

/// What a `from_agent -> to_agent` handoff must deliver.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HandoffContractConfig {
    pub from_agent: String,
    pub to_agent: String,
    #[serde(default)]
    pub required_fields: Vec<String>,
    #[serde(default)]
    pub require_verified: bool,
}

/// Declare's precedence over arguments: every `action` needs an earlier `preceded_by` with equal
/// `same_args`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PrecedenceConfig {
    pub action: String,
    pub preceded_by: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub same_args: Vec<String>,
}

/// Declare's response over arguments: every `action` needs a later `followed_by` with equal `same_args`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ResponseConfig {
    pub action: String,
    pub followed_by: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub same_args: Vec<String>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_false(b: &bool) -> bool {
    !*b
}

/// A compiled, validated spec; [`Workflow::evaluate`](crate::workflow::Workflow::evaluate) runs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Workflow {
    pub(crate) checkpoints: Vec<CheckpointRuleConfig>,
    pub(crate) contracts: Vec<HandoffContractConfig>,
    pub(crate) precedence: Vec<PrecedenceConfig>,
    pub(crate) response: Vec<ResponseConfig>,
}

/// A spec problem and where it sits in the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecIssue {
    pub location: String,
    pub message: String,
}

impl std::fmt::Display for SpecIssue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.location.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.location, self.message)
        }
    }
}

fn issue(location: String, message: &str) -> SpecIssue {
    SpecIssue {
        location,
        message: message.to_string(),
    }
}

fn require_name(location: String, name: &str) -> Result<(), SpecIssue> {
    if name.trim().is_empty() {
        Err(issue(location, "empty name"))
    } else {
        Ok(())
    }
}

fn require_names(location: &str, names: &[String]) -> Result<(), SpecIssue> {
    for (i, name) in names.iter().enumerate() {
        require_name(format!("{location}[{i}]"), name)?;
        if names[..i].contains(name) {
            return Err(issue(format!("{location}[{i}]"), "listed twice"));
        }
    }
    Ok(())
}

impl Workflow {
    /// Validates a spec document once; the first problem found is returned with its location.
    pub fn compile(config: SpecConfig) -> Result<Workflow, SpecIssue> {
        let SpecConfig {
            mandatory_checkpoints,
            handoff_contracts,
            precedence,
            response,
        } = config;
        if mandatory_checkpoints.is_empty()
            && handoff_contracts.is_empty()
            && precedence.is_empty()
            && response.is_empty()
        {
            return Err(issue(
                String::new(),
                "unusable spec: no mandatory_checkpoints and no handoff_contracts",
            ));
        }
        for (i, rule) in mandatory_checkpoints.iter().enumerate() {
            let at = format!("mandatory_checkpoints[{i}]");
            require_name(format!("{at}.checkpoint_id"), &rule.checkpoint_id)?;
            require_name(format!("{at}.must_precede"), &rule.must_precede)?;
            if let Some(confirmers) = &rule.confirmed_by {
                if confirmers.is_empty() {
                    return Err(issue(
                        format!("{at}.confirmed_by"),
                        "empty list would accept no confirmer",
                    ));
                }
                require_names(&format!("{at}.confirmed_by"), confirmers)?;
            }
        }
        for (i, contract) in handoff_contracts.iter().enumerate() {
            let at = format!("handoff_contracts[{i}]");
            require_name(format!("{at}.from_agent"), &contract.from_agent)?;
            require_name(format!("{at}.to_agent"), &contract.to_agent)?;
            require_names(&format!("{at}.required_fields"), &contract.required_fields)?;
        }
        for (i, rule) in precedence.iter().enumerate() {
            let at = format!("precedence[{i}]");
            require_name(format!("{at}.action"), &rule.action)?;
            require_name(format!("{at}.preceded_by"), &rule.preceded_by)?;
            require_names(&format!("{at}.same_args"), &rule.same_args)?;
        }
        for (i, rule) in response.iter().enumerate() {
            let at = format!("response[{i}]");
            require_name(format!("{at}.action"), &rule.action)?;
            require_name(format!("{at}.followed_by"), &rule.followed_by)?;
            require_names(&format!("{at}.same_args"), &rule.same_args)?;
        }
        Ok(Workflow {
            checkpoints: mandatory_checkpoints,
            contracts: handoff_contracts,
            precedence,
            response,
        })
    }

    /// Parses and compiles spec text; errors name `path` and the problem's location.
    pub fn from_json(path: &Path, text: &str) -> Result<Workflow, WorkflowError> {
        let config: SpecConfig = serde_json::from_str(text).map_err(|e| WorkflowError::Spec {
            path: path.to_path_buf(),
            message: format!("invalid spec: {e}"),
        })?;
        Workflow::compile(config).map_err(|issue| WorkflowError::Spec {
            path: path.to_path_buf(),
            message: issue.to_string(),
        })
    }

    /// Reads, parses and compiles a spec file.
    pub fn load(path: &Path) -> Result<Workflow, WorkflowError> {
        let text = crate::sidefile::read_to_string(path).map_err(|source| WorkflowError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Workflow::from_json(path, &text)
    }

    /// Returns true if and only if some mandatory checkpoint guards this action type, which is what makes
    /// an action irreversible for the report's counts.
    pub fn is_guarded(&self, action_type: &str) -> bool {
        self.checkpoints
            .iter()
            .any(|c| c.must_precede == action_type)
    }

    /// Number of `mandatory_checkpoints` rules.
    pub fn mandatory_checkpoint_count(&self) -> usize {
        self.checkpoints.len()
    }

    /// Number of `handoff_contracts`.
    pub fn handoff_contract_count(&self) -> usize {
        self.contracts.len()
    }

    /// Number of `precedence` rules (extension).
    pub fn precedence_count(&self) -> usize {
        self.precedence.len()
    }

    /// Number of `response` rules (extension).
    pub fn response_count(&self) -> usize {
        self.response.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compile_text(text: &str) -> Result<Workflow, String> {
        Workflow::from_json(Path::new("spec.json"), text).map_err(|e| e.to_string())
    }

    #[test]
    fn simple_spec_compiles() {
        let w = compile_text(
            r#"{"mandatory_checkpoints": [{"checkpoint_id": "c", "must_precede": "send"}],
                "handoff_contracts": [{"from_agent": "a", "to_agent": "b", "required_fields": ["x"]}]}"#,
        )
        .unwrap();
        assert_eq!(w.mandatory_checkpoint_count(), 1);
        assert_eq!(w.handoff_contract_count(), 1);
        assert!(w.is_guarded("send"));
        assert!(!w.is_guarded("c"));
    }

    #[test]
    fn spec_without_rules_is_unusable() {
        let err =
            compile_text(r#"{"mandatory_checkpoints": [], "handoff_contracts": []}"#).unwrap_err();
        assert_eq!(
            err,
            "spec.json: unusable spec: no mandatory_checkpoints and no handoff_contracts"
        );
        assert!(compile_text("{}").is_err());
    }

    #[test]
    fn errors_name_the_entry() {
        let err = compile_text(
            r#"{"handoff_contracts": [{"from_agent": "a", "to_agent": "b", "required_fields": ["x"]},
                                      {"from_agent": "a", "to_agent": "c", "required_fields": ["x", "x"]}]}"#,
        )
        .unwrap_err();
        assert_eq!(
            err,
            "spec.json: handoff_contracts[1].required_fields[1]: listed twice"
        );
        let err = compile_text(
            r#"{"mandatory_checkpoints": [{"checkpoint_id": "c", "must_precede": "s", "confirmed_by": []}]}"#,
        )
        .unwrap_err();
        assert_eq!(
            err,
            "spec.json: mandatory_checkpoints[0].confirmed_by: empty list would accept no confirmer"
        );
    }

    #[test]
    fn unknown_and_missing_keys_are_located() {
        let err = compile_text(r#"{"mandatory_checkpoint": []}"#).unwrap_err();
        assert!(
            err.starts_with("spec.json: invalid spec: unknown field `mandatory_checkpoint`"),
            "{err}"
        );
        assert!(err.contains("line 1 column"), "{err}");
        let err =
            compile_text(r#"{"mandatory_checkpoints": [{"checkpoint_id": "c"}]}"#).unwrap_err();
        assert!(err.contains("missing field `must_precede`"), "{err}");
    }
}
