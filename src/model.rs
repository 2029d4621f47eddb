//! The span model every trace format is read into before it becomes columns.
//!
//! Each export format (OTLP, OpenInference, Langfuse, LangSmith, Braintrust, trajectories) maps its records
//! onto these spans with GenAI semantic-convention attributes; from there one shared builder derives
//! prompts, answers, scenario keys and tool steps (see `table::builder`). Nothing downstream of the builder
//! sees this model.

use serde_json::{Map, Value};

/// One span with its attributes decoded to JSON values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Span {
    pub span_id: String,
    /// `None` for a root. An empty `parentSpanId` is read as a root too (many exporters write `""`).
    pub parent_id: Option<String>,
    pub name: String,
    pub start_ns: i64,
    /// 0 means unknown.
    pub end_ns: i64,
    pub attrs: Map<String, Value>,
    /// OTLP status code: 0 unset, 1 ok, 2 error.
    pub status_code: i64,
    pub status_message: String,
}

impl Span {
    /// The attribute's value, if present.
    pub fn attr(&self, key: &str) -> Option<&Value> {
        self.attrs.get(key)
    }

    /// The attribute as a string slice, when it is a JSON string.
    pub fn attr_str(&self, key: &str) -> Option<&str> {
        self.attrs.get(key).and_then(Value::as_str)
    }
}

/// The spans of one trace, in trace order (already sorted by the format's rule).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawTrace {
    pub trace_id: String,
    pub agent: String,
    pub spans: Vec<Span>,
}

/// Attribute keys of the GenAI semantic conventions and of faultgate itself.
pub mod attr {
    pub const OPERATION_NAME: &str = "gen_ai.operation.name";
    pub const AGENT_NAME: &str = "gen_ai.agent.name";
    pub const AGENT_ID: &str = "gen_ai.agent.id";
    pub const INPUT_MESSAGES: &str = "gen_ai.input.messages";
    pub const OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
    pub const PROMPT: &str = "gen_ai.prompt";
    pub const COMPLETION: &str = "gen_ai.completion";
    pub const TOOL_NAME: &str = "gen_ai.tool.name";
    pub const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
    pub const TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
    pub const TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";
    pub const INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
    pub const OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
    pub const FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
    pub const ERROR_TYPE: &str = "error.type";
    pub const SCENARIO: &str = "faultgate.scenario";
    pub const TERMINATION: &str = "faultgate.termination";
    pub const COST_USD: &str = "faultgate.cost_usd";
    pub const CONFIRMED: &str = "faultgate.confirmed";
    pub const CHECKPOINT: &str = "faultgate.checkpoint";
    pub const CONFIRMED_BY: &str = "faultgate.confirmed_by";
    pub const HANDOFF_PAYLOAD: &str = "faultgate.handoff.payload";
    /// OpenAI Agents SDK handoff spans name both ends.
    pub const HANDOFF_FROM: &str = "from_agent";
    pub const HANDOFF_TO: &str = "to_agent";
    pub const ENDUSER_ID: &str = "enduser.id";

    pub const OP_INVOKE_AGENT: &str = "invoke_agent";
    pub const OP_EXECUTE_TOOL: &str = "execute_tool";
}
