//! What a format decoder hands the table builder: one trace's spans, borrowing from the parsed bytes.
//!
//! A decoder parses a piece of a file (one trace's span objects, or one vendor document) and describes each
//! span as a [`SpanRecord`] whose strings point into the parser's buffer. Only the attributes some check can
//! read are kept ([`wanted`]); the rest are counted. Records live only while their trace is appended to the
//! Arrow builders, so nothing here outlives one trace.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::compat::value::{py_str, py_truthy};

/// Attribute keys of the GenAI semantic conventions and of faultgate itself.
pub mod attr {
    /// The GenAI operation a span performs (`invoke_agent`, `execute_tool`, `chat`, ...).
    pub const OPERATION_NAME: &str = "gen_ai.operation.name";
    /// Name of the agent a span belongs to; names the trace's agent.
    pub const AGENT_NAME: &str = "gen_ai.agent.name";
    /// Agent id; the scenario key when `faultgate.scenario` is absent.
    pub const AGENT_ID: &str = "gen_ai.agent.id";
    /// Version of the agent a span belongs to; carried to the verdicts next to the agent's name.
    pub const AGENT_VERSION: &str = "gen_ai.agent.version";
    /// The resource attribute that versions the service a span was exported from: an in-process
    /// agent's version where no span carries [`AGENT_VERSION`] (the GenAI conventions dropped it from
    /// internal agent spans).
    pub const SERVICE_VERSION: &str = "service.version";
    /// The resource attribute that names the service a span was exported from (`--by service`).
    pub const SERVICE_NAME: &str = "service.name";
    /// Input chat messages (a JSON list or JSON text); the prompt is read from its user messages.
    pub const INPUT_MESSAGES: &str = "gen_ai.input.messages";
    /// Output chat messages (a JSON list or JSON text); the answer is read from its assistant messages.
    pub const OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
    /// The instructions a model was given apart from its chat history (a JSON list of parts, or its
    /// text); read as a `system` message of the span's input messages is.
    pub const SYSTEM_INSTRUCTIONS: &str = "gen_ai.system_instructions";
    /// The older single-text prompt attribute, read when there are no input messages.
    pub const PROMPT: &str = "gen_ai.prompt";
    /// The older single-text completion attribute, read when there are no output messages.
    pub const COMPLETION: &str = "gen_ai.completion";
    /// Name of the tool a tool span ran.
    pub const TOOL_NAME: &str = "gen_ai.tool.name";
    /// Id of a tool call, linking a call in the messages to its result.
    pub const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
    /// A tool call's arguments (JSON or text).
    pub const TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
    /// A tool call's result (JSON or text).
    pub const TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";
    /// The tools a model call offered the agent: a JSON list (or its text) of definitions, each naming
    /// its tool by `name` (the GenAI conventions' form) or `function.name` (OpenAI's request form).
    pub const TOOL_DEFINITIONS: &str = "gen_ai.tool.definitions";
    /// Input tokens a span used; summed over the trace.
    pub const INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
    /// Output tokens a span produced; summed over the trace.
    pub const OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
    /// Why the model stopped (a list such as `["length"]`).
    pub const FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
    /// The id the model's provider gave its response: what an evaluation event about the span
    /// repeats, so a backend can join the verdict to the response.
    pub const RESPONSE_ID: &str = "gen_ai.response.id";
    /// Where [`INPUT_MESSAGES`], [`OUTPUT_MESSAGES`] and [`SYSTEM_INSTRUCTIONS`] were stored when an
    /// instrumentation uploads content instead of recording it inline (a URI or storage key).
    pub const CONTENT_REFS: [&str; 3] = [
        "gen_ai.input.messages_ref",
        "gen_ai.output.messages_ref",
        "gen_ai.system_instructions_ref",
    ];
    /// The other traces a span links to (OTLP span links), a JSON list of trace ids: set by the OTLP
    /// readers, never by an input.
    pub const LINKED_TRACES: &str = "faultgate.linked_traces";
    /// The deprecated name of [`INPUT_TOKENS`]; read when a span lacks the new one.
    pub const LEGACY_INPUT_TOKENS: &str = "gen_ai.usage.prompt_tokens";
    /// The deprecated name of [`OUTPUT_TOKENS`]; read when a span lacks the new one.
    pub const LEGACY_OUTPUT_TOKENS: &str = "gen_ai.usage.completion_tokens";
    /// The error class of a failed span (OpenTelemetry's general convention).
    pub const ERROR_TYPE: &str = "error.type";
    /// The scenario a trace exercises, set by the user; the key traces are grouped by.
    pub const SCENARIO: &str = "faultgate.scenario";
    /// The benchmark domain a trace's task belongs to (tau2's `airline`, `retail`, `telecom`): task
    /// ids repeat across domains, so a run of several domains qualifies its scenario keys with it.
    pub const DOMAIN: &str = "faultgate.domain";
    /// The outcome a trace's own evaluator recorded (a benchmark's reward or `resolved`), set on the
    /// root by the formats 0.4.1 did not read that record one: `--outcomes recorded` gates on it, and
    /// the summary counts its failures.
    pub const RECORDED_OUTCOME: &str = "faultgate.recorded_outcome";
    /// A trajectory's final `task_success`, kept on the root apart from [`RECORDED_OUTCOME`]: 0.4.1
    /// read trajectories, so its summary stays 0.4.1's unless `--outcomes recorded` asks for it.
    pub const TASK_SUCCESS: &str = "faultgate.task_success";
    /// A Langfuse trace's scores as a JSON object of name to value; `--outcome-score` names the one
    /// that is the trace's recorded outcome.
    pub const SCORES: &str = "faultgate.scores";
    /// Why the run ended (`max_steps`, `token limit reached`, ...), set on the root span.
    pub const TERMINATION: &str = "faultgate.termination";
    /// What a span cost, in US dollars; summed over the trace.
    pub const COST_USD: &str = "faultgate.cost_usd";
    /// Marks a span whose action the user confirmed (boolean or `true`/`True`).
    pub const CONFIRMED: &str = "faultgate.confirmed";
    /// The checkpoint (a step of a workflow spec) a span marks.
    pub const CHECKPOINT: &str = "faultgate.checkpoint";
    /// Who confirmed the span's checkpoint.
    pub const CONFIRMED_BY: &str = "faultgate.confirmed_by";
    /// What one agent handed to another (JSON, or JSON text).
    pub const HANDOFF_PAYLOAD: &str = "faultgate.handoff.payload";
    /// The agent handing off (OpenAI Agents SDK handoff spans name both ends).
    pub const HANDOFF_FROM: &str = "from_agent";
    /// The agent receiving the handoff (OpenAI Agents SDK handoff spans).
    pub const HANDOFF_TO: &str = "to_agent";
    /// The end user a trace served (OpenTelemetry's general convention); read by the policy's identity rule.
    pub const ENDUSER_ID: &str = "enduser.id";
    /// A tool name written by instrumentations that predate the GenAI conventions.
    pub const LEGACY_TOOL_NAME: &str = "tool.name";
    /// The attribute that marks an OpenInference span.
    pub const OPENINFERENCE_KIND: &str = "openinference.span.kind";
    /// Who made a tool span's call (`agent`, `user` or `system`): a simulated user's own tools are not
    /// the agent's steps. Read as [`super::Actor::read`] reads it; absent means the agent.
    pub const ACTOR: &str = "faultgate.actor";

    /// The conversation a trace is a turn of (the GenAI conventions); `--unit session` groups the
    /// traces that share one.
    pub const CONVERSATION_ID: &str = "gen_ai.conversation.id";
    /// The session a Langfuse trace belongs to (its `sessionId`), set on the root by the decoder.
    pub const LANGFUSE_SESSION_ID: &str = "faultgate.langfuse.session_id";
    /// The thread a LangSmith run belongs to (its metadata's `session_id`, `thread_id` or
    /// `conversation_id`), set on the root by the decoder.
    pub const LANGSMITH_THREAD_ID: &str = "faultgate.langsmith.thread_id";
    /// The session an OpenInference span belongs to.
    pub const OPENINFERENCE_SESSION_ID: &str = "session.id";

    /// Operation name of an agent invocation span; such a span is a trace's root.
    pub const OP_INVOKE_AGENT: &str = "invoke_agent";
    /// Operation name of a tool execution span.
    pub const OP_EXECUTE_TOOL: &str = "execute_tool";
    /// Operation name of a workflow span (several agents run under one); such a span is a trace's root
    /// as an agent invocation is, never a tool step.
    pub const OP_INVOKE_WORKFLOW: &str = "invoke_workflow";
    /// Operation name a framework's runner gives the span of one conversation turn, over the agent
    /// invocations of that turn; a root as a workflow is.
    pub const OP_HANDLE_CONVERSATION_TURN: &str = "handle_conversation_turn";
    /// The in-process invocation that replaced the internal `invoke_agent` and `invoke_workflow`
    /// span types; a root as those were.
    pub const OP_INVOCATION_INTERNAL: &str = "gen_ai.invocation.internal";
    /// Operation name of a retrieval from a vector store or search system: a step of its own kind.
    pub const OP_RETRIEVAL: &str = "retrieval";
    /// Operation names of the memory operations, on memory records and on stores: steps of their own
    /// kind.
    pub const OP_MEMORY: [&str; 7] = [
        "search_memory",
        "create_memory",
        "update_memory",
        "upsert_memory",
        "delete_memory",
        "create_memory_store",
        "delete_memory_store",
    ];
    /// Operation name of an agent's planning phase: the model call that plans, never a tool step.
    pub const OP_PLAN: &str = "plan";
    /// The query a retrieval ran (opt-in content); the step's `query` argument.
    pub const RETRIEVAL_QUERY: &str = "gen_ai.retrieval.query.text";
    /// The documents a retrieval returned (opt-in content); the step's result.
    pub const RETRIEVAL_DOCUMENTS: &str = "gen_ai.retrieval.documents";
    /// The data source a retrieval read; the step's `data_source_id` argument.
    pub const DATA_SOURCE_ID: &str = "gen_ai.data_source.id";
    /// The query a memory search ran (opt-in content); the step's `query` argument.
    pub const MEMORY_QUERY: &str = "gen_ai.memory.query.text";
    /// The memory records an operation read or wrote (opt-in content); the step's result.
    pub const MEMORY_RECORDS: &str = "gen_ai.memory.records";
    /// The memory store an operation used; the step's `store_id` argument.
    pub const MEMORY_STORE_ID: &str = "gen_ai.memory.store.id";
    /// The memory record an operation applies to; the step's `record_id` argument.
    pub const MEMORY_RECORD_ID: &str = "gen_ai.memory.record.id";
    /// Marks an invocation made inside another one (an agent called as a sub-agent): it is part of
    /// the outer invocation's trace, not a root of its own.
    pub const INVOCATION_IS_NESTED: &str = "gen_ai.invocation.is_nested";
}

/// What a step did: ran a tool, retrieved documents, or used the agent's memory. Every kind is a step
/// the checks count and judge as a tool call is; the kind says which the table's row was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub(crate) enum StepKind {
    /// A tool call (`execute_tool`, or a `tool_call` message part).
    #[default]
    Tool,
    /// A `retrieval` span.
    Retrieval,
    /// A memory operation span (`search_memory`, `create_memory`, ...).
    Memory,
}

impl StepKind {
    /// The name the step table uses.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            StepKind::Tool => "tool",
            StepKind::Retrieval => "retrieval",
            StepKind::Memory => "memory",
        }
    }

    /// The kind of step a span with this `gen_ai.operation.name` is, apart from tool calls; `None`
    /// for any other operation.
    pub(crate) fn of_operation(operation: Option<&str>) -> Option<StepKind> {
        match operation? {
            attr::OP_RETRIEVAL => Some(StepKind::Retrieval),
            op if attr::OP_MEMORY.contains(&op) => Some(StepKind::Memory),
            _ => None,
        }
    }
}

/// Who made a tool step. The rule checks judge the agent's steps only: in a simulated conversation the
/// user's own tool calls (a customer running a speed test on their phone) are not the agent's doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Actor {
    /// The agent under test; every step whose format says nothing else.
    #[default]
    Agent,
    /// The (often simulated) user.
    User,
    /// The environment or harness.
    System,
}

impl Actor {
    /// The name the step table and the reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::Agent => "agent",
            Actor::User => "user",
            Actor::System => "system",
        }
    }

    /// The actor a recording names: `user`, `human` or `customer` is the user, `system` or
    /// `environment` the system, anything else (`assistant`, an agent's name) the agent. Case is
    /// ignored.
    pub fn read(text: &str) -> Actor {
        let text = text.trim();
        let is = |names: &[&str]| names.iter().any(|n| text.eq_ignore_ascii_case(n));
        if is(&["user", "human", "customer"]) {
            Actor::User
        } else if is(&["system", "environment"]) {
            Actor::System
        } else {
            Actor::Agent
        }
    }
}

/// Returns true if and only if some check or table column reads the attribute `key`. Decoders keep only
/// these (unless asked for every attribute) and count the rest.
pub(crate) fn wanted(key: &str) -> bool {
    use attr::*;
    CONTENT_REFS.contains(&key)
        || matches!(
            key,
            OPERATION_NAME
                | AGENT_NAME
                | AGENT_ID
                | AGENT_VERSION
                | INPUT_MESSAGES
                | OUTPUT_MESSAGES
                | SYSTEM_INSTRUCTIONS
                | PROMPT
                | COMPLETION
                | TOOL_NAME
                | TOOL_CALL_ID
                | TOOL_CALL_ARGUMENTS
                | TOOL_CALL_RESULT
                | TOOL_DEFINITIONS
                | INPUT_TOKENS
                | OUTPUT_TOKENS
                | LEGACY_INPUT_TOKENS
                | LEGACY_OUTPUT_TOKENS
                | FINISH_REASONS
                | RESPONSE_ID
                | ERROR_TYPE
                | SCENARIO
                | TERMINATION
                | COST_USD
                | CONFIRMED
                | CHECKPOINT
                | CONFIRMED_BY
                | HANDOFF_PAYLOAD
                | HANDOFF_FROM
                | HANDOFF_TO
                | ENDUSER_ID
                | LEGACY_TOOL_NAME
                | OPENINFERENCE_KIND
                | ACTOR
                | INVOCATION_IS_NESTED
                | RETRIEVAL_QUERY
                | RETRIEVAL_DOCUMENTS
                | DATA_SOURCE_ID
                | MEMORY_QUERY
                | MEMORY_RECORDS
                | MEMORY_STORE_ID
                | MEMORY_RECORD_ID
                | CONVERSATION_ID
                | LANGFUSE_SESSION_ID
                | LANGSMITH_THREAD_ID
                | OPENINFERENCE_SESSION_ID
        )
}

/// An attribute key that outlives its parsed bytes: one of the keys the checks read, borrowed from its
/// constant (no copy), else copied.
fn owned_key(key: Cow<'_, str>) -> Cow<'static, str> {
    match known_key(&key) {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(key.into_owned()),
    }
}

/// The constant of an attribute key the checks read.
fn known_key(key: &str) -> Option<&'static str> {
    use attr::*;
    const KNOWN: &[&str] = &[
        OPERATION_NAME,
        AGENT_NAME,
        AGENT_ID,
        INPUT_MESSAGES,
        OUTPUT_MESSAGES,
        SYSTEM_INSTRUCTIONS,
        PROMPT,
        COMPLETION,
        TOOL_NAME,
        TOOL_CALL_ID,
        TOOL_CALL_ARGUMENTS,
        TOOL_CALL_RESULT,
        INPUT_TOKENS,
        OUTPUT_TOKENS,
        FINISH_REASONS,
        RESPONSE_ID,
        ERROR_TYPE,
        SCENARIO,
        TERMINATION,
        COST_USD,
        CONFIRMED,
        CHECKPOINT,
        CONFIRMED_BY,
        HANDOFF_PAYLOAD,
        HANDOFF_FROM,
        HANDOFF_TO,
        ENDUSER_ID,
        LEGACY_TOOL_NAME,
        OPENINFERENCE_KIND,
        ACTOR,
        INVOCATION_IS_NESTED,
        RETRIEVAL_QUERY,
        RETRIEVAL_DOCUMENTS,
        DATA_SOURCE_ID,
        MEMORY_QUERY,
        MEMORY_RECORDS,
        MEMORY_STORE_ID,
        MEMORY_RECORD_ID,
    ];
    KNOWN.iter().find(|k| **k == key).copied()
}

/// The bytes a span was parsed from, for records that outlive the parse buffer. simd-json leaves each
/// string without escapes where it found it in the buffer, so such a string is also found at the same
/// offset of the original bytes (a memory-mapped file, in page cache rather than on the heap): a record
/// borrows it from there instead of copying it. A string that is not found there (it had escapes) is
/// copied.
pub struct ParsedFrom<'b> {
    /// Address of the parse buffer's first byte.
    buffer: usize,
    /// The bytes that were copied into the parse buffer.
    original: &'b [u8],
}

impl<'b> ParsedFrom<'b> {
    /// `buffer` is where the parse buffer starts (taken before the parser borrows it), `original` the
    /// bytes copied there.
    pub fn new(buffer: *const u8, original: &'b [u8]) -> ParsedFrom<'b> {
        ParsedFrom {
            buffer: buffer as usize,
            original,
        }
    }

    /// The string, borrowed from the original bytes when they hold it at its offset, else copied.
    fn text(&self, s: Cow<'_, str>) -> Cow<'b, str> {
        if let Cow::Borrowed(parsed) = &s {
            let at = (parsed.as_ptr() as usize).wrapping_sub(self.buffer);
            let same = at
                .checked_add(parsed.len())
                .and_then(|end| self.original.get(at..end))
                .filter(|same| *same == parsed.as_bytes())
                .and_then(|same| std::str::from_utf8(same).ok());
            if let Some(same) = same {
                return Cow::Borrowed(same);
            }
        }
        Cow::Owned(s.into_owned())
    }
}

/// An attribute value: a string borrowed from the parsed bytes, or any other JSON value. The value is
/// boxed: most attributes are strings, and a `Value` inline would triple the size of every attribute
/// (a trace of a million spans holds millions of them).
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue<'a> {
    Str(Cow<'a, str>),
    Json(Box<Value>),
}

impl<'a> AttrValue<'a> {
    /// A JSON value as it is, strings included (see `From<Value>` for one that turns strings into
    /// [`AttrValue::Str`]).
    pub fn json(value: Value) -> AttrValue<'a> {
        AttrValue::Json(Box::new(value))
    }

    /// The JSON value, unless the value is a string read as such.
    pub fn as_json(&self) -> Option<&Value> {
        match self {
            AttrValue::Str(_) => None,
            AttrValue::Json(v) => Some(v),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            AttrValue::Str(s) => Some(s),
            AttrValue::Json(v) => v.as_str(),
        }
    }

    /// Python `str()` of the value.
    pub fn py_str(&self) -> Cow<'_, str> {
        match self {
            AttrValue::Str(s) => Cow::Borrowed(s),
            AttrValue::Json(v) => match v.as_ref() {
                Value::String(s) => Cow::Borrowed(s),
                v => Cow::Owned(py_str(v)),
            },
        }
    }

    /// Python truthiness of the value.
    pub fn truthy(&self) -> bool {
        match self {
            AttrValue::Str(s) => !s.is_empty(),
            AttrValue::Json(v) => py_truthy(v),
        }
    }

    /// The value as JSON (a string is copied).
    pub fn to_json(&self) -> Cow<'_, Value> {
        match self {
            AttrValue::Str(s) => Cow::Owned(Value::String(s.to_string())),
            AttrValue::Json(v) => Cow::Borrowed(v),
        }
    }

    pub fn into_owned(self) -> AttrValue<'static> {
        match self {
            AttrValue::Str(s) => AttrValue::Str(Cow::Owned(s.into_owned())),
            AttrValue::Json(v) => AttrValue::Json(v),
        }
    }

    /// The value, its string borrowed from `from`'s original bytes where possible.
    pub fn rebase<'b>(self, from: &ParsedFrom<'b>) -> AttrValue<'b> {
        match self {
            AttrValue::Str(s) => AttrValue::Str(from.text(s)),
            AttrValue::Json(v) => AttrValue::Json(v),
        }
    }
}

impl From<Value> for AttrValue<'_> {
    fn from(v: Value) -> Self {
        match v {
            Value::String(s) => AttrValue::Str(Cow::Owned(s)),
            other => AttrValue::json(other),
        }
    }
}

impl<'a> From<&'a str> for AttrValue<'a> {
    fn from(s: &'a str) -> Self {
        AttrValue::Str(Cow::Borrowed(s))
    }
}

/// A span's kept attributes in file order. A repeated key keeps its first position and its last value, as
/// Python's `json` does for repeated object keys.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Attrs<'a> {
    entries: Vec<(Cow<'a, str>, AttrValue<'a>)>,
}

impl<'a> Attrs<'a> {
    /// The value under `key` (the last one when the key repeats).
    pub fn get(&self, key: &str) -> Option<&AttrValue<'a>> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(AttrValue::as_str)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| k == key)
    }

    /// Room for exactly `additional` more attributes (`Vec::reserve` would make room for at least four,
    /// which a span of one attribute, held a million times over, pays for).
    pub fn reserve(&mut self, additional: usize) {
        self.entries.reserve_exact(additional);
    }

    /// The keys and values, in file order (a repeated key as often as it was written).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &AttrValue<'a>)> {
        self.entries.iter().map(|(k, v)| (k.as_ref(), v))
    }

    /// The keys, in file order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_ref())
    }

    /// The entries, in file order.
    pub fn into_entries(self) -> impl Iterator<Item = (Cow<'a, str>, AttrValue<'a>)> {
        self.entries.into_iter()
    }

    /// Appends an attribute as a decoder reads it (repeats are resolved on lookup).
    pub fn push(&mut self, key: impl Into<Cow<'a, str>>, value: AttrValue<'a>) {
        self.entries.push((key.into(), value));
    }

    /// Sets `key`, replacing its value in place when present.
    pub fn insert(&mut self, key: String, value: impl Into<AttrValue<'a>>) {
        let key = Cow::Owned(key);
        let value = value.into();
        match self.entries.iter_mut().rev().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.entries.push((key, value)),
        }
    }

    /// Adds each attribute of `other` whose key this one lacks: the first resource a trace's spans
    /// were exported under keeps its values.
    /// A key `other` repeats is added as often as it is written, so its last value is the one read.
    pub fn add_missing(&mut self, other: &Attrs<'a>) {
        let before = self.entries.len();
        for (key, value) in &other.entries {
            if !self.entries[..before].iter().any(|(k, _)| k == key) {
                self.entries.push((key.clone(), value.clone()));
            }
        }
    }

    pub fn remove(&mut self, key: &str) {
        self.entries.retain(|(k, _)| k != key);
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The attributes as a JSON object (first position, last value for repeated keys).
    pub fn to_map(&self) -> Map<String, Value> {
        let mut map = Map::with_capacity(self.entries.len());
        for (k, v) in &self.entries {
            map.insert(k.to_string(), v.to_json().into_owned());
        }
        map
    }

    pub fn into_owned(self) -> Attrs<'static> {
        Attrs {
            entries: self
                .entries
                .into_iter()
                .map(|(k, v)| (owned_key(k), v.into_owned()))
                .collect(),
        }
    }

    /// The attributes, their strings borrowed from `from`'s original bytes where possible.
    pub fn rebase<'b>(self, from: &ParsedFrom<'b>) -> Attrs<'b> {
        let mut entries: Vec<_> = self
            .entries
            .into_iter()
            .map(|(k, v)| {
                let key = match known_key(&k) {
                    Some(known) => Cow::Borrowed(known),
                    None => from.text(k),
                };
                (key, v.rebase(from))
            })
            .collect();
        // The decoder reserved room for every attribute of the span, kept or not; a record that is
        // held for the whole trace gives the rest back.
        entries.shrink_to_fit();
        Attrs { entries }
    }

    /// The attributes of a JSON object, taken over.
    pub fn from_map(map: Map<String, Value>) -> Attrs<'static> {
        Attrs {
            entries: map
                .into_iter()
                .map(|(k, v)| (Cow::Owned(k), AttrValue::from(v)))
                .collect(),
        }
    }
}

/// One span as the table builder reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpanRecord<'a> {
    pub span_id: Cow<'a, str>,
    /// `None` for a root. An empty `parentSpanId` is read as a root too (many exporters write `""`).
    pub parent_id: Option<Cow<'a, str>>,
    pub name: Cow<'a, str>,
    pub start_ns: i64,
    /// 0 means unknown.
    pub end_ns: i64,
    pub attrs: Attrs<'a>,
    /// OTLP status code: 0 unset, 1 ok, 2 error.
    pub status_code: i64,
    pub status_message: Cow<'a, str>,
}

impl<'a> SpanRecord<'a> {
    pub fn attr(&self, key: &str) -> Option<&AttrValue<'a>> {
        self.attrs.get(key)
    }

    pub fn attr_str(&self, key: &str) -> Option<&str> {
        self.attrs.get_str(key)
    }

    pub fn into_owned(self) -> SpanRecord<'static> {
        SpanRecord {
            span_id: Cow::Owned(self.span_id.into_owned()),
            parent_id: self.parent_id.map(|p| Cow::Owned(p.into_owned())),
            name: Cow::Owned(self.name.into_owned()),
            start_ns: self.start_ns,
            end_ns: self.end_ns,
            attrs: self.attrs.into_owned(),
            status_code: self.status_code,
            status_message: Cow::Owned(self.status_message.into_owned()),
        }
    }

    /// The span, its strings borrowed from `from`'s original bytes where possible (see
    /// [`ParsedFrom`]).
    pub fn rebase<'b>(self, from: &ParsedFrom<'b>) -> SpanRecord<'b> {
        SpanRecord {
            span_id: from.text(self.span_id),
            parent_id: self.parent_id.map(|p| from.text(p)),
            name: from.text(self.name),
            start_ns: self.start_ns,
            end_ns: self.end_ns,
            attrs: self.attrs.rebase(from),
            status_code: self.status_code,
            status_message: from.text(self.status_message),
        }
    }
}

/// One trace's spans in trace order (already sorted by the format's rule) and its agent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TraceRecord<'a> {
    pub trace_id: Cow<'a, str>,
    pub agent: String,
    pub spans: Vec<SpanRecord<'a>>,
    /// Attributes the decoder saw but did not keep (no check reads them).
    pub skipped_attributes: usize,
    /// The attributes of the OTLP resource the trace's spans were exported under (`service.version`,
    /// and every one when the decoder keeps every attribute); empty for formats without resources.
    /// Spans exported under several resources give the first one's value of each key, in file order.
    /// Read only where no span carries the attribute (see `derive::agent_version` and `--by`).
    pub resource: Attrs<'a>,
}

/// The conversation a trace is a turn of: the first span's `gen_ai.conversation.id`, else its
/// Langfuse session, else its LangSmith thread, else its OpenInference `session.id` (each looked for
/// over every span before the next is). An empty id is none: it would join unrelated traces.
pub(crate) fn conversation_id(spans: &[SpanRecord<'_>]) -> Option<String> {
    [
        attr::CONVERSATION_ID,
        attr::LANGFUSE_SESSION_ID,
        attr::LANGSMITH_THREAD_ID,
        attr::OPENINFERENCE_SESSION_ID,
    ]
    .iter()
    .find_map(|key| {
        spans
            .iter()
            .find_map(|s| s.attr(key).map(|v| v.py_str().into_owned()))
            .filter(|id| !id.trim().is_empty())
    })
}

/// The name of a span record that is no span: the GenAI content a log record gave for the span its
/// `span_id` names, waiting to be joined to that span ([`join_content`]). It travels with its trace as
/// spans do (held, merged across files) and never becomes a row itself. No span can have this name.
pub(crate) const CONTENT_RECORD: &str = "\u{0}content of a span";

/// Returns true if and only if the record is a content record ([`CONTENT_RECORD`]), not a span.
pub(crate) fn is_content_record(span: &SpanRecord<'_>) -> bool {
    span.name == CONTENT_RECORD
}

/// Joins a trace's content records to their spans: each attribute a span does not have itself is
/// added, records in order. Returns the records whose span the trace does not hold (dropped), each
/// with its span id.
pub(crate) fn join_content(trace: &mut TraceRecord<'_>) -> Vec<String> {
    if !trace.spans.iter().any(is_content_record) {
        return Vec::new();
    }
    let (content, spans): (Vec<_>, Vec<_>) = std::mem::take(&mut trace.spans)
        .into_iter()
        .partition(is_content_record);
    trace.spans = spans;
    let mut unjoined = Vec::new();
    for record in content {
        let span = trace.spans.iter_mut().find(|s| s.span_id == record.span_id);
        let Some(span) = span else {
            unjoined.push(record.span_id.into_owned());
            continue;
        };
        for (key, value) in record.attrs.into_entries() {
            if !span.attrs.contains_key(&key) {
                span.attrs.push(key, value);
            }
        }
    }
    unjoined
}

/// Returns true if and only if the span ran a tool (`execute_tool`, by operation or by span name).
pub(crate) fn is_tool_span(span: &SpanRecord<'_>) -> bool {
    runs_a_tool(&span.name, span.attr(attr::OPERATION_NAME))
}

/// [`is_tool_span`] from a span's name and its `gen_ai.operation.name`, for a caller that has read
/// the attribute already.
pub(crate) fn runs_a_tool(name: &str, operation: Option<&AttrValue<'_>>) -> bool {
    match operation {
        Some(op) => op.as_str() == Some(attr::OP_EXECUTE_TOOL),
        None => name == attr::OP_EXECUTE_TOOL || name.starts_with("execute_tool "),
    }
}

/// Returns true if and only if `operation` starts a run: an agent invocation (client or internal,
/// both `invoke_agent`), a workflow, a conversation turn, or an internal invocation. Such a span is
/// never a tool step, whatever its name.
pub(crate) fn is_root_operation(operation: Option<&str>) -> bool {
    matches!(
        operation,
        Some(
            attr::OP_INVOKE_AGENT
                | attr::OP_INVOKE_WORKFLOW
                | attr::OP_HANDLE_CONVERSATION_TURN
                | attr::OP_INVOCATION_INTERNAL
        )
    )
}

/// Returns true if and only if the span says it is an invocation nested in another
/// (`gen_ai.invocation.is_nested`, a boolean or its text).
fn is_nested(span: &SpanRecord<'_>) -> bool {
    span.attr(attr::INVOCATION_IS_NESTED)
        .is_some_and(|v| match v.as_json() {
            Some(Value::Bool(b)) => *b,
            _ => v
                .as_str()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("true")),
        })
}

/// The root of a trace in trace order: the first span without a parent or that starts a run
/// ([`is_root_operation`]) and is not nested in another invocation. A workflow or a turn starts
/// before the agents it runs, so its span, which carries the run's input and final output, is the
/// root even when its own parent was not exported; a nested invocation, which may share its outer
/// invocation's start, never takes the outer's place.
pub(crate) fn root_position(spans: &[SpanRecord<'_>]) -> Option<usize> {
    spans.iter().position(|s| {
        s.parent_id.is_none()
            || (is_root_operation(s.attr_str(attr::OPERATION_NAME)) && !is_nested(s))
    })
}

/// Puts an OTLP trace's spans in trace order (by start, ties in file order) and names its agent: the
/// root's `gen_ai.agent.name`, else the last one seen in file order, else `agent`.
pub(crate) fn order_otlp(trace: &mut TraceRecord<'_>) {
    fn last_name(spans: &[SpanRecord<'_>]) -> Option<String> {
        spans
            .iter()
            .rev()
            .find_map(|s| s.attr(attr::AGENT_NAME))
            .map(|v| v.py_str().into_owned())
    }
    // Spans mostly come in start order already; a stable sort would still take a scratch copy of
    // half the spans.
    let sorted = trace.spans.is_sorted_by_key(|s| s.start_ns);
    // The fallback is the last name in file order, so it is taken before sorting moves the spans, and
    // only then: most traces are in order and name their root's agent.
    let moved_fallback = if sorted {
        None
    } else {
        let fallback = last_name(&trace.spans);
        trace.spans.sort_by_key(|s| s.start_ns);
        fallback
    };
    let root_agent = root_position(&trace.spans)
        .and_then(|i| trace.spans[i].attr(attr::AGENT_NAME))
        .map(|v| v.py_str().into_owned());
    trace.agent = root_agent
        .or_else(|| {
            if sorted {
                last_name(&trace.spans)
            } else {
                moved_fallback
            }
        })
        .unwrap_or_else(|| "agent".into());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_later_resource_adds_only_the_keys_the_first_lacks() {
        let mut first = Attrs::default();
        first.push("service.name", AttrValue::from("shop"));
        let mut second = Attrs::default();
        second.push("service.name", AttrValue::from("desk"));
        second.push("service.version", AttrValue::from("1.0"));
        second.push("service.version", AttrValue::from("2.0"));
        first.add_missing(&second);
        assert_eq!(first.get_str("service.name"), Some("shop"));
        // A repeated key reads its last value, as in the resource it came from.
        assert_eq!(first.get_str("service.version"), Some("2.0"));
    }

    #[test]
    fn an_attribute_takes_two_string_slots_whatever_its_value() {
        // A huge trace holds a few attributes per span, each as one entry: a boxed JSON value keeps an
        // entry at a key and a string, where an inline `Value` made it twice that.
        assert_eq!(
            std::mem::size_of::<(Cow<'_, str>, AttrValue<'_>)>(),
            2 * std::mem::size_of::<String>()
        );
    }

    #[test]
    fn json_values_read_as_before_boxing() {
        let number = AttrValue::from(serde_json::json!(3));
        assert_eq!(number.as_json(), Some(&serde_json::json!(3)));
        assert_eq!(number.py_str(), "3");
        assert!(number.truthy());
        let text = AttrValue::json(Value::String("x".into()));
        assert_eq!(text.as_str(), Some("x"));
        assert_eq!(text.py_str(), "x");
        assert_eq!(AttrValue::from(Value::String("x".into())).as_json(), None);
        assert!(!AttrValue::json(Value::Null).truthy());
        assert_eq!(AttrValue::json(Value::Null).py_str(), "None");
    }

    #[test]
    fn the_agent_is_the_root_s_name_else_the_last_in_file_order_else_agent() {
        let span =
            |id: &'static str, parent: Option<&'static str>, start: i64, name: Option<&str>| {
                let mut attrs = Attrs::default();
                if let Some(name) = name {
                    attrs.push(
                        attr::AGENT_NAME,
                        AttrValue::Str(Cow::Owned(name.to_string())),
                    );
                }
                SpanRecord {
                    span_id: Cow::Borrowed(id),
                    parent_id: parent.map(Cow::Borrowed),
                    name: Cow::Borrowed("s"),
                    start_ns: start,
                    end_ns: 0,
                    attrs,
                    status_code: 0,
                    status_message: Cow::Borrowed(""),
                }
            };
        let agent = |spans: Vec<SpanRecord<'static>>| {
            let mut trace = TraceRecord {
                spans,
                ..TraceRecord::default()
            };
            order_otlp(&mut trace);
            let starts: Vec<i64> = trace.spans.iter().map(|s| s.start_ns).collect();
            (trace.agent, starts)
        };
        // Out of order: the last name in file order is "late", though "early" sorts last.
        let unsorted = vec![
            span("r", None, 1, None),
            span("b", Some("r"), 9, Some("early")),
            span("c", Some("r"), 5, Some("late")),
        ];
        assert_eq!(agent(unsorted), ("late".to_string(), vec![1, 5, 9]));
        let sorted = vec![
            span("r", None, 1, None),
            span("b", Some("r"), 5, Some("first")),
            span("c", Some("r"), 9, Some("second")),
        ];
        assert_eq!(agent(sorted), ("second".to_string(), vec![1, 5, 9]));
        let named_root = vec![
            span("b", Some("r"), 5, Some("child")),
            span("r", None, 1, Some("root")),
        ];
        assert_eq!(agent(named_root), ("root".to_string(), vec![1, 5]));
        let unnamed = vec![span("r", None, 1, None)];
        assert_eq!(agent(unnamed), ("agent".to_string(), vec![1]));
    }
}
