//! The verdicts as OpenTelemetry evaluation events (`--otlp-events FILE`, `--otlp-endpoint URL`): one
//! OTLP logs export, a log record per (trace, check) verdict and one for the gate, so that a backend
//! holding the traces shows each verdict on the trace it judged.
//!
//! ## Shape
//!
//! One `ResourceLogs` whose resource names the tool (`service.name` `faultgate`, `service.version`),
//! holding one `ScopeLogs` (scope `faultgate` and its version) with the records in run order: for each
//! trace row, one record per active check in selection order, then the gate's record when a band was
//! given. Every record is the GenAI semantic conventions' event `gen_ai.evaluation.result`:
//!
//! - `traceId` is the trace's id and `spanId` the span the verdict is about, as the conventions ask
//!   ("SHOULD be parented to the operation span being evaluated"): the span of the step its reason
//!   names (`step 7: ...`), or the span it names (`span 4 (...)`), else the trace's root span. An id
//!   that is not an OTel id (32 and 16 hex digits, not all zero; a benchmark log's step ids, a format
//!   without span ids) is left out rather than invented; a trace id left out is kept as the attribute
//!   `faultgate.trace.id`, so the record still names its trace.
//! - `gen_ai.evaluation.name` is the check (a check selected twice is `<check>#2`, as in the verdict
//!   columns), `gen_ai.evaluation.score.value` 1.0 for a pass and 0.0 for a fail (higher is better,
//!   as backends that average scores read it), `gen_ai.evaluation.score.label` `fail` when it fired
//!   and `pass` otherwise, `gen_ai.evaluation.explanation` its reason (redacted as every output's
//!   reasons are), `faultgate.confidence` the check's confidence, and `faultgate.scenario` the
//!   written scenario key; last, `gen_ai.response.id`, as the conventions ask where the evaluated
//!   span has one: the `gen_ai.response.id` of the span the record sits on (the named span's, else
//!   the root's), left out where that span records none, so an export of spans without response ids
//!   is unchanged.
//! - The gate's record (no trace) is named `faultgate.gate`: score the clean rate the gate compared,
//!   label `pass`, `fail` or `inconclusive`, explanation the gate line of the JUnit report, and its
//!   numbers as `faultgate.gate.*` attributes.
//! - With budgets, one record per budget after the gate's, named `faultgate.budget.<budget>`
//!   (`faultgate.budget.latency.p95`): score 1.0 for a PASS and 0.0 for a FAIL (no score for an
//!   INCONCLUSIVE), label `pass`, `fail` or `inconclusive`, explanation the budget's line, the
//!   expression as `faultgate.budget` and its numbers as `faultgate.budget.candidate`, `.band`,
//!   `.limit`, `.p_value` (each left out when it has none) and `.scenarios`.
//!
//! `timeUnixNano` is 0 (the OTLP spelling of "unknown") on every record: a verdict is not something
//! that happened at a moment of the trace, and a clock reading would make two runs over the same input
//! differ. The collector that receives the records stamps `observedTimeUnixNano`.
//!
//! ## Encodings
//!
//! [`write_json`] writes OTLP/JSON (ids as lowercase hex, 64-bit integers as strings, one record a line)
//! and [`write_protobuf`] the binary `ExportLogsServiceRequest`. Both stream: records are made from the
//! verdict batches one row at a time and written as they are made, never the whole export in memory.
//! The protobuf form needs the length of the records before them, so it walks the verdicts twice.
//! Nothing in the export depends on the thread count or the clock, so its bytes depend only on the
//! verdicts: a `merge` of shards writes the bytes a single run writes.

pub(crate) mod pb;
pub(crate) mod send;

use std::borrow::Cow;
use std::io::{self, Write};

use prost::Message as _;

use crate::gate::{Gate, Verdict};
use crate::report::Report;
use crate::report::pass::VerdictSource;
use crate::report::verdicts::{Row, VerdictBatch};

/// The event every record is, as the GenAI semantic conventions name it.
pub(crate) const EVENT_NAME: &str = "gen_ai.evaluation.result";
/// The `gen_ai.evaluation.name` of the gate's record.
pub(crate) const GATE_EVALUATION: &str = "faultgate.gate";
const TOOL: &str = "faultgate";
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// An attribute value as an event carries it.
#[derive(Debug, Clone, PartialEq)]
enum Value<'a> {
    Str(Cow<'a, str>),
    Double(f64),
    Int(i64),
}

/// One log record before it is encoded.
#[derive(Debug, Clone, PartialEq)]
struct Event<'a> {
    trace_id: Option<[u8; 16]>,
    span_id: Option<[u8; 8]>,
    attributes: Vec<(&'static str, Value<'a>)>,
}

/// What the export is made of: the run's verdicts and, with a band, its gate.
#[derive(Clone, Copy)]
pub(crate) struct Export<'a> {
    pub report: &'a Report,
    pub gate: Option<&'a Gate>,
    /// The run's verdicts, held in `report` or spilled.
    pub source: VerdictSource<'a>,
    /// The run's counts the gate's record gives, when the run was counted (its trace ids distinct);
    /// `None` to count them from `report`.
    pub counted: Option<Counted>,
}

/// What the gate's record counts of a run.
#[derive(Clone, Copy)]
pub(crate) struct Counted {
    /// Distinct traces.
    pub traces: usize,
    /// Traces where any check fired.
    pub failed: usize,
}

#[cfg(test)]
impl<'a> Export<'a> {
    /// The export of a run held whole in `report`.
    pub(crate) fn whole(report: &'a Report, gate: Option<&'a Gate>) -> Export<'a> {
        Export {
            report,
            gate,
            source: VerdictSource::Memory(&report.batches),
            counted: None,
        }
    }
}

/// `N` bytes from `2N` hex digits (either case); `None` when `text` is not that, or is all zero (an
/// invalid id in OTel).
fn hex_id<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digits = text.as_bytes();
    if digits.len() != 2 * N {
        return None;
    }
    let nibble = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut id = [0u8; N];
    for (i, pair) in digits.chunks_exact(2).enumerate() {
        id[i] = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    id.iter().any(|&b| b != 0).then_some(id)
}

/// The names of the active checks as the events give them: a repeated check gets `#n`.
fn evaluation_names(report: &Report) -> Vec<String> {
    let mut seen: std::collections::HashMap<&str, usize> = Default::default();
    report
        .checks
        .iter()
        .map(|check| {
            let n = seen.entry(&check.name).or_default();
            *n += 1;
            if *n == 1 {
                check.name.clone()
            } else {
                format!("{}#{n}", check.name)
            }
        })
        .collect()
}

fn label(fired: bool) -> Value<'static> {
    Value::Str(Cow::Borrowed(if fired { "fail" } else { "pass" }))
}

/// One trace row's records, one per active check in selection order; `names` are
/// [`evaluation_names`].
fn row_events<'r>(row: Row<'r>, names: &'r [String]) -> impl Iterator<Item = Event<'r>> + 'r {
    let trace_id = hex_id::<16>(row.trace_id());
    let root = row.root_span_id().and_then(hex_id::<8>);
    row.verdicts()
        .zip(names)
        .enumerate()
        .map(move |(k, (verdict, name))| {
            let named = row.verdict_span(k).and_then(hex_id::<8>);
            let span_id = named.or(root);
            // The response of the span the record sits on: the named span's, else the root's.
            let response_id = row.response_id(named.map(|_| k));
            // Backends average the score as "higher is better, 1.0 a pass": a fired check scores 0.
            let score = if verdict.detected { 0.0 } else { 1.0 };
            let mut attributes = vec![
                (
                    "gen_ai.evaluation.name",
                    Value::Str(Cow::Borrowed(name.as_str())),
                ),
                ("gen_ai.evaluation.score.value", Value::Double(score)),
                ("gen_ai.evaluation.score.label", label(verdict.detected)),
            ];
            if let Some(reason) = verdict.reason {
                attributes.push((
                    "gen_ai.evaluation.explanation",
                    Value::Str(Cow::Borrowed(reason)),
                ));
            }
            attributes.push(("faultgate.confidence", Value::Double(verdict.confidence)));
            attributes.push(("faultgate.scenario", Value::Str(row.scenario().into())));
            if trace_id.is_none() {
                attributes.push(("faultgate.trace.id", Value::Str(row.trace_id().into())));
            }
            if let Some(id) = response_id {
                attributes.push(("gen_ai.response.id", Value::Str(id.into())));
            }
            Event {
                trace_id,
                span_id,
                attributes,
            }
        })
}

impl<'a> Export<'a> {
    /// Calls `each` with every record, in export order: the verdicts batch by batch (from the spill
    /// when the run was spilled, so only one batch is in memory), then the gate's.
    fn for_each_event(self, mut each: impl FnMut(&Event<'_>) -> io::Result<()>) -> io::Result<()> {
        let names = evaluation_names(self.report);
        let mut batch_events = |batch: &VerdictBatch| -> io::Result<()> {
            for row in batch.rows() {
                for event in row_events(row, &names) {
                    each(&event)?;
                }
            }
            Ok(())
        };
        self.source.for_each_batch(|batch| batch_events(batch))?;
        let Some(gate) = self.gate else {
            return Ok(());
        };
        each(&self.gate_event(gate))?;
        for budget in gate.budgets.iter().flatten() {
            each(&budget_event(budget))?;
        }
        Ok(())
    }

    /// The gate's record: its verdict as the score label, its numbers as attributes.
    fn gate_event(self, gate: &Gate) -> Event<'a> {
        let verdict = match gate.verdict {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Inconclusive => "inconclusive",
        };
        let band = |i: usize| Value::Double(gate.band[i].as_f64().unwrap_or(f64::NAN));
        let count = |n: usize| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
        let mut attributes = vec![
            (
                "gen_ai.evaluation.name",
                Value::Str(Cow::Borrowed(GATE_EVALUATION)),
            ),
            (
                "gen_ai.evaluation.score.value",
                Value::Double(gate.clean_rate),
            ),
            ("gen_ai.evaluation.score.label", Value::Str(verdict.into())),
            (
                "gen_ai.evaluation.explanation",
                Value::Str(super::junit::gate_line(self.report, Some(gate)).into()),
            ),
            ("faultgate.gate.clean_rate", Value::Double(gate.clean_rate)),
            ("faultgate.gate.band.min", band(0)),
            ("faultgate.gate.band.max", band(1)),
            (
                "faultgate.gate.pass_threshold",
                Value::Double(gate.pass_threshold),
            ),
            (
                "faultgate.gate.fail_threshold",
                Value::Double(gate.fail_threshold),
            ),
            (
                "faultgate.gate.baseline_mean",
                Value::Double(gate.stats.baseline_mean),
            ),
            ("faultgate.gate.p_value", Value::Double(gate.stats.p_value)),
            (
                "faultgate.gate.policy_violations",
                count(gate.policy_violations.len()),
            ),
            ("faultgate.gate.regressions", count(gate.regressions.len())),
            ("faultgate.gate.missing", count(gate.missing.len())),
        ];
        let (traces, failed) = match self.counted {
            Some(counted) => (counted.traces, counted.failed),
            None => (
                self.report.trace_ids().len(),
                self.report.failed_traces().len(),
            ),
        };
        attributes.push(("faultgate.traces", count(traces)));
        attributes.push(("faultgate.traces.failed", count(failed)));
        Event {
            trace_id: None,
            span_id: None,
            attributes,
        }
    }
}

/// A budget's record, after the gate's: named `faultgate.budget.<measure>.<statistic>`, score 1.0
/// for a PASS and 0.0 for a FAIL (none for an INCONCLUSIVE), label its verdict, explanation its line,
/// and its numbers as `faultgate.budget.*` attributes (those it has).
fn budget_event(outcome: &crate::gate::BudgetOutcome) -> Event<'static> {
    let (label, score) = match outcome.verdict {
        Verdict::Pass => ("pass", Some(1.0)),
        Verdict::Fail => ("fail", Some(0.0)),
        Verdict::Inconclusive => ("inconclusive", None),
    };
    let mut attributes = vec![(
        "gen_ai.evaluation.name",
        Value::Str(format!("faultgate.budget.{}", outcome.budget.name()).into()),
    )];
    if let Some(score) = score {
        attributes.push(("gen_ai.evaluation.score.value", Value::Double(score)));
    }
    attributes.push(("gen_ai.evaluation.score.label", Value::Str(label.into())));
    attributes.push((
        "gen_ai.evaluation.explanation",
        Value::Str(super::gate_lines::budget_line(outcome).into()),
    ));
    attributes.push((
        "faultgate.budget",
        Value::Str(super::gate_lines::budget_expression(&outcome.budget).into()),
    ));
    for (key, value) in [
        ("faultgate.budget.candidate", outcome.candidate),
        ("faultgate.budget.band", outcome.band),
        ("faultgate.budget.limit", outcome.limit),
        ("faultgate.budget.p_value", outcome.p_value),
    ] {
        if let Some(v) = value {
            attributes.push((key, Value::Double(v)));
        }
    }
    attributes.push((
        "faultgate.budget.scenarios",
        Value::Int(i64::try_from(outcome.scenarios).unwrap_or(i64::MAX)),
    ));
    Event {
        trace_id: None,
        span_id: None,
        attributes,
    }
}

/// The resource attributes naming the tool.
fn resource() -> [(&'static str, Value<'static>); 2] {
    [
        ("service.name", Value::Str(TOOL.into())),
        ("service.version", Value::Str(VERSION.into())),
    ]
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(2 * bytes.len()), |mut text, b| {
            let _ = write!(text, "{b:02x}");
            text
        })
}

fn json_string(out: &mut dyn Write, text: &str) -> io::Result<()> {
    serde_json::to_writer(&mut *out, text).map_err(io::Error::from)
}

/// A double as proto3's JSON mapping spells it: a number, or `"NaN"` / `"Infinity"` / `"-Infinity"`.
fn json_double(out: &mut dyn Write, x: f64) -> io::Result<()> {
    if x.is_nan() {
        out.write_all(b"\"NaN\"")
    } else if x.is_infinite() {
        out.write_all(if x > 0.0 {
            b"\"Infinity\""
        } else {
            b"\"-Infinity\""
        })
    } else {
        serde_json::to_writer(&mut *out, &x).map_err(io::Error::from)
    }
}

fn json_attributes(out: &mut dyn Write, attributes: &[(&str, Value<'_>)]) -> io::Result<()> {
    out.write_all(b"[")?;
    for (i, (key, value)) in attributes.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        out.write_all(b"{\"key\":")?;
        json_string(out, key)?;
        out.write_all(b",\"value\":{")?;
        match value {
            Value::Str(text) => {
                out.write_all(b"\"stringValue\":")?;
                json_string(out, text)?;
            }
            Value::Double(x) => {
                out.write_all(b"\"doubleValue\":")?;
                json_double(out, *x)?;
            }
            // OTLP/JSON writes 64-bit integers as strings.
            Value::Int(n) => write!(out, "\"intValue\":\"{n}\"")?,
        }
        out.write_all(b"}}")?;
    }
    out.write_all(b"]")
}

/// Writes the export as OTLP/JSON (`{"resourceLogs": [...]}`), one log record a line.
///
/// # Errors
///
/// Writing to `out` failed.
pub(crate) fn write_json(out: &mut dyn Write, export: Export<'_>) -> io::Result<()> {
    out.write_all(b"{\"resourceLogs\":[{\"resource\":{\"attributes\":")?;
    json_attributes(out, &resource())?;
    write!(
        out,
        "}},\"scopeLogs\":[{{\"scope\":{{\"name\":\"{TOOL}\",\"version\":\"{VERSION}\"}},\"logRecords\":["
    )?;
    let mut first = true;
    export.for_each_event(|event| {
        out.write_all(if first { b"\n" } else { b",\n" })?;
        first = false;
        write!(
            out,
            "{{\"timeUnixNano\":\"0\",\"eventName\":\"{EVENT_NAME}\""
        )?;
        if let Some(id) = event.trace_id {
            write!(out, ",\"traceId\":\"{}\"", hex(&id))?;
        }
        if let Some(id) = event.span_id {
            write!(out, ",\"spanId\":\"{}\"", hex(&id))?;
        }
        out.write_all(b",\"attributes\":")?;
        json_attributes(out, &event.attributes)?;
        out.write_all(b"}")
    })?;
    out.write_all(b"\n]}]}]}\n")
}

fn pb_attributes(attributes: &[(&str, Value<'_>)]) -> Vec<pb::KeyValue> {
    use pb::any_value::Value as V;
    attributes
        .iter()
        .map(|(key, value)| pb::KeyValue {
            key: (*key).to_string(),
            value: Some(pb::AnyValue {
                value: Some(match value {
                    Value::Str(text) => V::StringValue(text.to_string()),
                    Value::Double(x) => V::DoubleValue(*x),
                    Value::Int(n) => V::IntValue(*n),
                }),
            }),
            ..pb::KeyValue::default()
        })
        .collect()
}

fn pb_record(event: &Event<'_>) -> pb::LogRecord {
    pb::LogRecord {
        time_unix_nano: 0,
        attributes: pb_attributes(&event.attributes),
        trace_id: event.trace_id.map(|id| id.to_vec()).unwrap_or_default(),
        span_id: event.span_id.map(|id| id.to_vec()).unwrap_or_default(),
        event_name: EVENT_NAME.to_string(),
        ..pb::LogRecord::default()
    }
}

/// The bytes of field `tag` holding a message of `len` bytes: key, length, then the message.
fn field_len(len: usize) -> usize {
    1 + prost::encoding::encoded_len_varint(len as u64) + len
}

/// Writes the key and length of field `tag` (wire type 2) of `len` bytes.
fn field_head(out: &mut dyn Write, tag: u32, len: usize) -> io::Result<()> {
    let mut head = Vec::with_capacity(11);
    prost::encoding::encode_key(tag, prost::encoding::WireType::LengthDelimited, &mut head);
    prost::encoding::encode_varint(len as u64, &mut head);
    out.write_all(&head)
}

/// Writes the export as a protobuf `ExportLogsServiceRequest`, the records streamed between the
/// lengths that enclose them.
///
/// # Errors
///
/// Writing to `out` failed.
pub(crate) fn write_protobuf(out: &mut dyn Write, export: Export<'_>) -> io::Result<()> {
    let mut records = 0;
    export.for_each_event(|event| {
        records += field_len(pb_record(event).encoded_len());
        Ok(())
    })?;
    let resource = pb::Resource {
        attributes: pb_attributes(&resource()),
        ..pb::Resource::default()
    }
    .encode_to_vec();
    let scope = pb::InstrumentationScope {
        name: TOOL.into(),
        version: VERSION.into(),
        ..pb::InstrumentationScope::default()
    }
    .encode_to_vec();
    let scope_logs = field_len(scope.len()) + records;
    let resource_logs = field_len(resource.len()) + field_len(scope_logs);
    // ExportLogsServiceRequest.resource_logs (1) > ResourceLogs.resource (1), .scope_logs (2) >
    // ScopeLogs.scope (1), .log_records (2).
    field_head(out, 1, resource_logs)?;
    field_head(out, 1, resource.len())?;
    out.write_all(&resource)?;
    field_head(out, 2, scope_logs)?;
    field_head(out, 1, scope.len())?;
    out.write_all(&scope)?;
    let mut buffer = Vec::new();
    export.for_each_event(|event| {
        let record = pb_record(event);
        buffer.clear();
        field_head(&mut buffer, 2, record.encoded_len())?;
        record
            .encode(&mut buffer)
            .map_err(|e| io::Error::other(e.to_string()))?;
        out.write_all(&buffer)
    })
}

#[cfg(test)]
mod tests;
