//! Column names and Arrow schemas of the three tables every check reads.
//!
//! - **traces**: one row per trace (`TRACE_*`).
//! - **spans**: one row per span, grouped by trace (`SPAN_*`).
//! - **steps**: one row per tool step, grouped by trace (`STEP_*`).
//!
//! Rows of one trace are contiguous in the span and step tables; `TraceBatch` keeps the offsets. The schema
//! version changes whenever a column changes meaning.

use std::sync::{Arc, LazyLock};

use arrow_schema::{DataType, Field, Schema, SchemaRef};

pub const SCHEMA_VERSION: u32 = 1;

pub const TRACE_ID: &str = "trace_id";
pub const TRACE_AGENT: &str = "agent";
pub const TRACE_SCENARIO: &str = "scenario";
pub const TRACE_PROMPT: &str = "prompt";
pub const TRACE_ANSWER: &str = "answer";
pub const TRACE_TERMINATION: &str = "termination";
pub const TRACE_ROOT: &str = "root_span";
pub const TRACE_ROOT_ATTRIBUTES: &str = "root_attributes";
pub const TRACE_INPUT_TOKENS: &str = "input_tokens";
pub const TRACE_OUTPUT_TOKENS: &str = "output_tokens";
pub const TRACE_LATENCY_MS: &str = "latency_ms";
pub const TRACE_COST_USD: &str = "cost_usd";
pub const TRACE_HAS_CONTENT: &str = "has_content";
pub const TRACE_TOOL_EVIDENCE: &str = "unread_tool_evidence";

pub const SPAN_ID: &str = "span_id";
pub const SPAN_PARENT: &str = "parent_id";
pub const SPAN_NAME: &str = "name";
pub const SPAN_START: &str = "start_ns";
pub const SPAN_END: &str = "end_ns";
pub const SPAN_STATUS_CODE: &str = "status_code";
pub const SPAN_STATUS_MESSAGE: &str = "status_message";
pub const SPAN_ERROR_TYPE: &str = "error_type";
pub const SPAN_ERROR: &str = "span_error";
pub const SPAN_FINISH_REASONS: &str = "finish_reasons";
pub const SPAN_IS_TOOL: &str = "is_tool_span";
pub const SPAN_HAS_OPERATION: &str = "has_operation_name";
pub const SPAN_CONFIRMED: &str = "confirmed";
pub const SPAN_BACKS_STEP: &str = "backs_step";
pub const SPAN_TOOL_ATTRIBUTES: &str = "has_tool_attributes";
pub const SPAN_OPENINFERENCE_KIND: &str = "has_openinference_kind";
pub const SPAN_AGENT_NAME: &str = "agent_name";
pub const SPAN_OPERATION: &str = "operation";
pub const SPAN_CHECKPOINT: &str = "checkpoint";
pub const SPAN_CONFIRMED_BY: &str = "confirmed_by";
pub const SPAN_HANDOFF_FROM: &str = "handoff_from";
pub const SPAN_HANDOFF_TO: &str = "handoff_to";
pub const SPAN_HANDOFF_PAYLOAD: &str = "handoff_payload";

pub const STEP_TOOL: &str = "tool";
pub const STEP_ARGUMENTS: &str = "arguments";
pub const STEP_RESULT: &str = "result";
pub const STEP_SPAN_ID: &str = "span_id";
pub const STEP_SPAN: &str = "span";
pub const STEP_STRUCTURAL_ERROR: &str = "structural_error";
pub const STEP_EMPTY_RESULT: &str = "empty_result";

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
    ]))
});

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
