//! Column names and Arrow schemas of the three tables every check reads.
//!
//! - **traces**: one row per trace (`TRACE_*`).
//! - **spans**: one row per span, grouped by trace (`SPAN_*`).
//! - **steps**: one row per step (a tool call, a retrieval or a memory operation), grouped by trace
//!   (`STEP_*`).
//!
//! Rows of one trace are contiguous in the span and step tables; `TraceBatch` keeps the offsets. The schema
//! version changes whenever a column changes meaning.

use std::sync::{Arc, LazyLock};

use arrow_schema::{DataType, Field, Schema, SchemaRef};

/// Version of these three schemas; raised whenever a column is added, removed or changes meaning.
pub const SCHEMA_VERSION: u32 = 5;

/// Trace id as the input spells it; text, never null.
pub const TRACE_ID: &str = "trace_id";
/// Agent name: the root's `gen_ai.agent.name`, else the last one seen, else `agent`; text.
pub const TRACE_AGENT: &str = "agent";
/// Scenario key (before redaction): `faultgate.scenario`, else `gen_ai.agent.id`, else a hash of the prompt.
pub const TRACE_SCENARIO: &str = "scenario";
/// The prompt: the root's user messages (or `gen_ai.prompt`), else the first span's; empty when none.
pub const TRACE_PROMPT: &str = "prompt";
/// The final answer: the root's assistant messages (or `gen_ai.completion`), else the last span's; empty when none.
pub const TRACE_ANSWER: &str = "answer";
/// `str()` of the root's `faultgate.termination`; empty when absent.
pub const TRACE_TERMINATION: &str = "termination";
/// Position of the root span (the first `invoke_agent` or parentless span) within the trace's spans (UInt32); null when none qualifies.
pub const TRACE_ROOT: &str = "root_span";
/// The root span's attributes as compact JSON; null unless the run keeps them (policy identity rules).
pub const TRACE_ROOT_ATTRIBUTES: &str = "root_attributes";
/// Sum of the spans' `gen_ai.usage.input_tokens` (Int64); null when no span recorded it.
pub const TRACE_INPUT_TOKENS: &str = "input_tokens";
/// Sum of the spans' `gen_ai.usage.output_tokens` (Int64); null when no span recorded it.
pub const TRACE_OUTPUT_TOKENS: &str = "output_tokens";
/// Root span's duration in milliseconds (else the span of all known times; Float64); null when no time is known.
pub const TRACE_LATENCY_MS: &str = "latency_ms";
/// Sum of the spans' `faultgate.cost_usd` in US dollars (Float64); null when no span recorded it.
pub const TRACE_COST_USD: &str = "cost_usd";
/// True when the trace has a prompt, an answer, or a tool step with arguments or a result.
pub const TRACE_HAS_CONTENT: &str = "has_content";
/// For a trace without tool steps: what shows it used tools anyway (text); null otherwise.
pub const TRACE_TOOL_EVIDENCE: &str = "unread_tool_evidence";
/// The names of the tools any span's `gen_ai.tool.definitions` offered, sorted and unique, as a compact
/// JSON list; null when no span carries definitions.
pub const TRACE_TOOL_DEFINITIONS: &str = "tool_definitions";
/// `str()` of the root's `gen_ai.agent.version`, else of the last one seen; null when no span has one.
pub const TRACE_AGENT_VERSION: &str = "agent_version";
/// The names of the tools whose definitions carry the MCP annotation `readOnlyHint: true`, sorted and
/// unique, as a compact JSON list; null when none does.
pub const TRACE_READ_ONLY_TOOLS: &str = "read_only_tools";
/// The benchmark domain the root names (`faultgate.domain`); null when none.
pub const TRACE_DOMAIN: &str = "domain";
/// The outcome the trace's own evaluation recorded (`faultgate.recorded_outcome`: a benchmark's reward or
/// `resolved`, or the Langfuse score `--outcome-score` names); null when it records none.
pub const TRACE_RECORDED_OUTCOME: &str = "recorded_outcome";
/// The trace's slice (`--by`: `model=gpt-5.4-mini,agent=triage`); null unless the run slices.
pub const TRACE_SLICE: &str = "slice";

/// How much of the trace's content sits in external storage behind a reference instead of inline
/// (Int64): the `gen_ai.*_ref` attributes of its spans, and the `uri` and `file` parts of its messages.
pub const TRACE_CONTENT_REFS: &str = "content_refs";

/// The other traces the trace's spans link to (OTLP span links: a turn continued in another trace), as
/// a compact JSON list in the order first linked; null when none does.
pub const TRACE_LINKED_TRACES: &str = "linked_traces";

/// Span id as the input spells it; text, never null (ids may repeat within a trace).
pub const SPAN_ID: &str = "span_id";
/// Parent span id; null for a span without a parent.
pub const SPAN_PARENT: &str = "parent_id";
/// Span name; text, never null.
pub const SPAN_NAME: &str = "name";
/// Start time in nanoseconds since the Unix epoch (Int64).
pub const SPAN_START: &str = "start_ns";
/// End time in nanoseconds since the Unix epoch (Int64).
pub const SPAN_END: &str = "end_ns";
/// Status code in OTLP numbering (Int64): 0 unset, 1 ok, 2 error.
pub const SPAN_STATUS_CODE: &str = "status_code";
/// OTLP status message; empty when none.
pub const SPAN_STATUS_MESSAGE: &str = "status_message";
/// `str()` of a truthy `error.type` attribute; null otherwise.
pub const SPAN_ERROR_TYPE: &str = "error_type";
/// What makes the span an error for `unrecovered_tool_error` (status or `error.type`); null when it is not one.
pub const SPAN_ERROR: &str = "span_error";
/// `str()` of each element of `gen_ai.response.finish_reasons` (a list of text, empty when absent).
pub const SPAN_FINISH_REASONS: &str = "finish_reasons";
/// True for a tool span: `gen_ai.operation.name` is `execute_tool`, or without it the name starts with `execute_tool`.
pub const SPAN_IS_TOOL: &str = "is_tool_span";
/// True when the span carries `gen_ai.operation.name`.
pub const SPAN_HAS_OPERATION: &str = "has_operation_name";
/// True when `faultgate.confirmed` is `true` (boolean or the text `true`/`True`).
pub const SPAN_CONFIRMED: &str = "confirmed";
/// True when a tool step was read from this span (or from a span with the same id).
pub const SPAN_BACKS_STEP: &str = "backs_step";
/// True when the span carries a GenAI tool attribute (`gen_ai.tool.*`) or the legacy `tool.name`.
pub const SPAN_TOOL_ATTRIBUTES: &str = "has_tool_attributes";
/// True when the span carries `openinference.span.kind`.
pub const SPAN_OPENINFERENCE_KIND: &str = "has_openinference_kind";
/// `str()` of `gen_ai.agent.name`; null when absent.
pub const SPAN_AGENT_NAME: &str = "agent_name";
/// `str()` of `gen_ai.operation.name`; null when absent.
pub const SPAN_OPERATION: &str = "operation";
/// `str()` of `faultgate.checkpoint`: the checkpoint the span marks; null when absent.
pub const SPAN_CHECKPOINT: &str = "checkpoint";
/// `str()` of `faultgate.confirmed_by`: who confirmed the span's checkpoint; null when absent.
pub const SPAN_CONFIRMED_BY: &str = "confirmed_by";
/// `str()` of `from_agent` on a handoff span carrying both ends; null otherwise.
pub const SPAN_HANDOFF_FROM: &str = "handoff_from";
/// `str()` of `to_agent` on a handoff span carrying both ends; null otherwise.
pub const SPAN_HANDOFF_TO: &str = "handoff_to";
/// `faultgate.handoff.payload` as compact JSON (JSON text decoded first); null when absent.
pub const SPAN_HANDOFF_PAYLOAD: &str = "handoff_payload";
/// str() of the span's `gen_ai.response.id`, else null: what an evaluation event about the span
/// carries.
pub const SPAN_RESPONSE_ID: &str = "response_id";

/// Name of the tool the step called; text, never null.
pub const STEP_TOOL: &str = "tool";
/// The call's arguments as text (JSON re-serialised); empty when none.
pub const STEP_ARGUMENTS: &str = "arguments";
/// The call's result as text (JSON re-serialised, text parts unwrapped); empty when none.
pub const STEP_RESULT: &str = "result";
/// Id of the span the step was read from.
pub const STEP_SPAN_ID: &str = "span_id";
/// Position within the trace's spans of the first span with the step's span id (UInt32); null when unknown.
pub const STEP_SPAN: &str = "span";
/// What makes the result an error for `unrecovered_tool_error`; null when it is not one.
pub const STEP_STRUCTURAL_ERROR: &str = "structural_error";
/// True when the result holds nothing: empty text, `[]`, `{}`, `null`, an empty list or a zero count.
pub const STEP_EMPTY_RESULT: &str = "empty_result";
/// Who made the call: `agent`, `user` or `system` (`record::Actor`); text, never null.
pub const STEP_ACTOR: &str = "actor";
/// What the step did: `tool`, `retrieval` or `memory` (`record::StepKind`); text, never null.
pub const STEP_KIND: &str = "kind";

fn utf8(name: &str) -> Field {
    Field::new(name, DataType::LargeUtf8, false)
}

fn nullable(name: &str, ty: DataType) -> Field {
    Field::new(name, ty, true)
}

/// One row per trace.
pub static TRACES: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        utf8(TRACE_ID),
        utf8(TRACE_AGENT),
        utf8(TRACE_SCENARIO),
        utf8(TRACE_PROMPT),
        utf8(TRACE_ANSWER),
        utf8(TRACE_TERMINATION),
        // Position of the root within the trace's spans; null when the trace has none.
        nullable(TRACE_ROOT, DataType::UInt32),
        // The root span's decoded attributes as compact JSON; read only by rules that need arbitrary keys.
        nullable(TRACE_ROOT_ATTRIBUTES, DataType::LargeUtf8),
        nullable(TRACE_INPUT_TOKENS, DataType::Int64),
        nullable(TRACE_OUTPUT_TOKENS, DataType::Int64),
        nullable(TRACE_LATENCY_MS, DataType::Float64),
        nullable(TRACE_COST_USD, DataType::Float64),
        Field::new(TRACE_HAS_CONTENT, DataType::Boolean, false),
        // For a trace no tool step is read from: what shows it used tools anyway
        // (`derive::tool_evidence`); else null.
        nullable(TRACE_TOOL_EVIDENCE, DataType::LargeUtf8),
        nullable(TRACE_TOOL_DEFINITIONS, DataType::LargeUtf8),
        nullable(TRACE_AGENT_VERSION, DataType::LargeUtf8),
        nullable(TRACE_READ_ONLY_TOOLS, DataType::LargeUtf8),
        nullable(TRACE_DOMAIN, DataType::LargeUtf8),
        nullable(TRACE_RECORDED_OUTCOME, DataType::Boolean),
        nullable(TRACE_SLICE, DataType::LargeUtf8),
        Field::new(TRACE_CONTENT_REFS, DataType::Int64, false),
        nullable(TRACE_LINKED_TRACES, DataType::LargeUtf8),
    ]))
});

/// One row per span.
pub static SPANS: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        utf8(SPAN_ID),
        nullable(SPAN_PARENT, DataType::LargeUtf8),
        utf8(SPAN_NAME),
        Field::new(SPAN_START, DataType::Int64, false),
        Field::new(SPAN_END, DataType::Int64, false),
        Field::new(SPAN_STATUS_CODE, DataType::Int64, false),
        utf8(SPAN_STATUS_MESSAGE),
        // str() of a truthy `error.type`, else null.
        nullable(SPAN_ERROR_TYPE, DataType::LargeUtf8),
        // The span-error description of unrecovered_tool_error, else null.
        nullable(SPAN_ERROR, DataType::LargeUtf8),
        // str() of each `gen_ai.response.finish_reasons` element.
        Field::new(
            SPAN_FINISH_REASONS,
            DataType::List(Arc::new(Field::new("item", DataType::LargeUtf8, true))),
            false,
        ),
        Field::new(SPAN_IS_TOOL, DataType::Boolean, false),
        Field::new(SPAN_HAS_OPERATION, DataType::Boolean, false),
        Field::new(SPAN_CONFIRMED, DataType::Boolean, false),
        Field::new(SPAN_BACKS_STEP, DataType::Boolean, false),
        Field::new(SPAN_TOOL_ATTRIBUTES, DataType::Boolean, false),
        Field::new(SPAN_OPENINFERENCE_KIND, DataType::Boolean, false),
        nullable(SPAN_AGENT_NAME, DataType::LargeUtf8),
        nullable(SPAN_OPERATION, DataType::LargeUtf8),
        nullable(SPAN_CHECKPOINT, DataType::LargeUtf8),
        // str() of `faultgate.confirmed_by`: who confirmed the span's checkpoint.
        nullable(SPAN_CONFIRMED_BY, DataType::LargeUtf8),
        // str() of `from_agent` / `to_agent`, set only when the span carries both (an agent-to-agent
        // handoff span in the OpenAI Agents SDK style).
        nullable(SPAN_HANDOFF_FROM, DataType::LargeUtf8),
        nullable(SPAN_HANDOFF_TO, DataType::LargeUtf8),
        // `faultgate.handoff.payload` as compact JSON (a JSON-text attribute is decoded first).
        nullable(SPAN_HANDOFF_PAYLOAD, DataType::LargeUtf8),
        Field::new(SPAN_COMPACTED, DataType::Boolean, false),
        nullable(SPAN_RESPONSE_ID, DataType::LargeUtf8),
    ]))
});

/// True when the context was compacted at the span: its messages hold a `compaction` part (the
/// compacted conversation sent to or received from the model), or a finish reason is `compaction`.
pub const SPAN_COMPACTED: &str = "compacted";

/// One row per tool step.
pub static STEPS: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        utf8(STEP_TOOL),
        utf8(STEP_ARGUMENTS),
        utf8(STEP_RESULT),
        utf8(STEP_SPAN_ID),
        // Position (within the trace) of the first span with the step's span id; null when unknown.
        nullable(STEP_SPAN, DataType::UInt32),
        // The structural-error description of the result (unrecovered_tool_error), else null.
        nullable(STEP_STRUCTURAL_ERROR, DataType::LargeUtf8),
        Field::new(STEP_EMPTY_RESULT, DataType::Boolean, false),
        utf8(STEP_ACTOR),
        utf8(STEP_KIND),
    ]))
});

/// Position of a column of [`TRACES`]; names come from this module, so a miss is a bug.
pub fn trace_column_index(name: &str) -> usize {
    match name {
        TRACE_ID => 0,
        TRACE_AGENT => 1,
        TRACE_SCENARIO => 2,
        TRACE_PROMPT => 3,
        TRACE_ANSWER => 4,
        TRACE_TERMINATION => 5,
        TRACE_ROOT => 6,
        TRACE_ROOT_ATTRIBUTES => 7,
        TRACE_INPUT_TOKENS => 8,
        TRACE_OUTPUT_TOKENS => 9,
        TRACE_LATENCY_MS => 10,
        TRACE_COST_USD => 11,
        TRACE_HAS_CONTENT => 12,
        TRACE_TOOL_EVIDENCE => 13,
        TRACE_TOOL_DEFINITIONS => 14,
        TRACE_AGENT_VERSION => 15,
        TRACE_READ_ONLY_TOOLS => 16,
        TRACE_DOMAIN => 17,
        TRACE_RECORDED_OUTCOME => 18,
        TRACE_SLICE => 19,
        TRACE_CONTENT_REFS => 20,
        TRACE_LINKED_TRACES => 21,
        other => unreachable!("no column {other} in TRACES"),
    }
}

/// Position of a column of [`SPANS`]; names come from this module, so a miss is a bug.
pub fn span_column_index(name: &str) -> usize {
    match name {
        SPAN_ID => 0,
        SPAN_PARENT => 1,
        SPAN_NAME => 2,
        SPAN_START => 3,
        SPAN_END => 4,
        SPAN_STATUS_CODE => 5,
        SPAN_STATUS_MESSAGE => 6,
        SPAN_ERROR_TYPE => 7,
        SPAN_ERROR => 8,
        SPAN_FINISH_REASONS => 9,
        SPAN_IS_TOOL => 10,
        SPAN_HAS_OPERATION => 11,
        SPAN_CONFIRMED => 12,
        SPAN_BACKS_STEP => 13,
        SPAN_TOOL_ATTRIBUTES => 14,
        SPAN_OPENINFERENCE_KIND => 15,
        SPAN_AGENT_NAME => 16,
        SPAN_OPERATION => 17,
        SPAN_CHECKPOINT => 18,
        SPAN_CONFIRMED_BY => 19,
        SPAN_HANDOFF_FROM => 20,
        SPAN_HANDOFF_TO => 21,
        SPAN_HANDOFF_PAYLOAD => 22,
        SPAN_COMPACTED => 23,
        SPAN_RESPONSE_ID => 24,
        other => unreachable!("no column {other} in SPANS"),
    }
}

/// Position of a column of [`STEPS`]; names come from this module, so a miss is a bug.
pub fn step_column_index(name: &str) -> usize {
    match name {
        STEP_TOOL => 0,
        STEP_ARGUMENTS => 1,
        STEP_RESULT => 2,
        STEP_SPAN_ID => 3,
        STEP_SPAN => 4,
        STEP_STRUCTURAL_ERROR => 5,
        STEP_EMPTY_RESULT => 6,
        STEP_ACTOR => 7,
        STEP_KIND => 8,
        other => unreachable!("no column {other} in STEPS"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_positions_match_the_schemas() {
        for (schema, index) in [
            (&*TRACES, trace_column_index as fn(&str) -> usize),
            (&*SPANS, span_column_index),
            (&*STEPS, step_column_index),
        ] {
            for (i, field) in schema.fields().iter().enumerate() {
                assert_eq!(index(field.name()), i, "{}", field.name());
            }
        }
    }
}
