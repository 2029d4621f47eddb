//! OTLP logs with GenAI content: `{"resourceLogs": [...]}` exports in JSON, the Collector file
//! exporter's JSON lines of them, and files that mix both signals (lines or documents of
//! `resourceSpans` and of `resourceLogs`, or one export with both).
//!
//! Spans are read exactly as the OTLP/JSON reader reads them (`otlp::read_span`, span events
//! included). Each log record with GenAI content (`otlp::content`) becomes a content record of its
//! span's trace, joined to the span by trace id and span id: in this file when the file holds the span,
//! else when the run merges the traces its files share (`crate::identity`), so the content counts as the
//! span's own wherever the span was read. A record whose span no input holds is dropped and counted in
//! an input warning. Resources are read as the OTLP/JSON reader reads them (`otlp::read_resource`), those
//! of log records too: they name the same services. Not read: the OpenInference mapping (spans here are
//! read as GenAI spans), scopes, severities, and log records without GenAI content.

use std::borrow::Cow;
use std::path::Path;

use simd_json::tape::Value as TapeValue;

use super::otlp::content::read_log_record;
use super::otlp::{read_resource, read_span};
use super::spans::{SpanResources, group_spans_under};
use crate::error::{InputError, display_path};
use crate::ingest::ReadOptions;
use crate::ingest::decoder::{Decoder, Document, OwnedTraces, Traces};
use crate::ingest::json::{get, with_tape};
use crate::table::TableBuilder;
use crate::table::record::{SpanRecord, join_content};

/// OTLP logs, alone or with spans.
pub(crate) struct OtlpLogs;

impl Decoder for OtlpLogs {
    fn name(&self) -> &'static str {
        "otlp-logs"
    }

    fn detect(&self, doc: TapeValue<'_, '_>) -> bool {
        match doc.as_array() {
            Some(items) => items.iter().any(|i| has_logs(&i)),
            None => has_logs(&doc),
        }
    }

    fn read(
        &self,
        path: &Path,
        docs: &[Document<'_>],
        options: &ReadOptions,
    ) -> Result<Box<dyn Traces>, InputError> {
        let all = options.all_attributes();
        let mut records: Vec<(String, SpanRecord<'static>)> = Vec::new();
        let mut resources = SpanResources::default();
        let mut skipped = 0;
        for doc in docs {
            let read = with_tape(doc.bytes, |value| {
                let exports: Vec<TapeValue<'_, '_>> = match value.as_array() {
                    Some(items) => items.iter().collect(),
                    None => vec![value],
                };
                for (e, export) in exports.into_iter().enumerate() {
                    read_export(export, all, &mut skipped, &mut records, &mut resources).map_err(
                        |m| {
                            if doc.is_line {
                                m
                            } else {
                                format!("export {e}: {m}")
                            }
                        },
                    )?;
                }
                Ok::<(), String>(())
            })
            .map_err(|f| doc.json_error(path, f))?;
            read.map_err(|message| doc.invalid(path, message))?;
        }
        Ok(log_traces(path, records, &resources, skipped, options))
    }
}

/// The traces of a file's spans and content records (its log records with GenAI content): each record
/// joined to its span in the file, or kept for the run to join when other files hold its trace too (see
/// [`ReadOptions::hold`]), or else dropped and counted in the file's warning. The protobuf reader
/// (`otlp_proto`) hands its log records here too, so both encodings join alike.
pub(crate) fn log_traces(
    path: &Path,
    records: Vec<(String, SpanRecord<'static>)>,
    resources: &SpanResources,
    skipped: usize,
    options: &ReadOptions,
) -> Box<dyn Traces> {
    let mut traces = group_spans_under(records, resources, skipped, None);
    let mut unjoined: Vec<(String, String)> = Vec::new();
    // A trace other files hold too is joined when the run merges it; while the run lists the ids
    // its files share, a trace of log records alone is kept so that its id is listed.
    let held = |id: &str| options.hold.as_ref().is_some_and(|h| h.contains(id));
    traces.retain_mut(|trace| {
        if options.listing || held(&trace.trace_id) {
            return true;
        }
        let id = trace.trace_id.to_string();
        unjoined.extend(join_content(trace).into_iter().map(|s| (id.clone(), s)));
        !trace.spans.is_empty()
    });
    traces.sort_by_key(|t| t.spans.first().map_or(0, |s| s.start_ns));
    let warning = unjoined.first().map(|(trace, span)| {
        format!(
            "{} log record(s) in {} carry GenAI content for spans no input of the run holds; their content was not read (first: trace {trace} span {span})",
            unjoined.len(),
            display_path(path)
        )
    });
    Box::new(LogTraces {
        traces: OwnedTraces(traces),
        warning,
    })
}

/// Returns true if and only if the value is an export object with `resourceLogs`.
fn has_logs(v: &TapeValue<'_, '_>) -> bool {
    v.as_object()
        .is_some_and(|o| get(&o, "resourceLogs").is_some())
}

/// Reads an export's spans and its log records with GenAI content.
fn read_export(
    export: TapeValue<'_, '_>,
    all: bool,
    skipped: &mut usize,
    out: &mut Vec<(String, SpanRecord<'static>)>,
    resources: &mut SpanResources,
) -> Result<(), String> {
    let Some(export) = export.as_object() else {
        return Err("expected an OTLP export object with resourceSpans or resourceLogs".into());
    };
    for (r, resource) in list(get(&export, "resourceSpans")).into_iter().enumerate() {
        let Some(resource) = resource.as_object() else {
            continue;
        };
        add_resource(&resource, all, out.len(), resources);
        for (s, scope) in list(get(&resource, "scopeSpans")).into_iter().enumerate() {
            let Some(scope) = scope.as_object() else {
                continue;
            };
            for (i, span) in list(get(&scope, "spans")).into_iter().enumerate() {
                let Some(span) = span.as_object() else {
                    continue;
                };
                let (trace_id, span) = read_span(&span, all, skipped)
                    .map_err(|e| format!("resourceSpans[{r}].scopeSpans[{s}].spans[{i}]: {e}"))?;
                out.push((trace_id.to_string(), span.into_owned()));
            }
        }
    }
    for (r, resource) in list(get(&export, "resourceLogs")).into_iter().enumerate() {
        let Some(resource) = resource.as_object() else {
            continue;
        };
        add_resource(&resource, all, out.len(), resources);
        for (s, scope) in list(get(&resource, "scopeLogs")).into_iter().enumerate() {
            let Some(scope) = scope.as_object() else {
                continue;
            };
            for (i, record) in list(get(&scope, "logRecords")).into_iter().enumerate() {
                let Some(record) = record.as_object() else {
                    continue;
                };
                let read = read_log_record(&record, all, skipped).map_err(|e| {
                    format!("resourceLogs[{r}].scopeLogs[{s}].logRecords[{i}]: {e}")
                })?;
                if let Some((trace_id, content)) = read {
                    out.push((trace_id.into_owned(), content.into_owned()));
                }
            }
        }
    }
    Ok(())
}

/// Records the resource of a `resourceSpans` or `resourceLogs` element, whose records are read from
/// number `first` on.
fn add_resource(
    element: &simd_json::tape::Object<'_, '_>,
    all: bool,
    first: usize,
    resources: &mut SpanResources,
) {
    let attributes = get(element, "resource")
        .map(|r| read_resource(r, all).into_owned())
        .unwrap_or_default();
    resources.begin(first, attributes);
}

fn list<'t, 'i>(v: Option<TapeValue<'t, 'i>>) -> Vec<TapeValue<'t, 'i>> {
    v.and_then(|v| v.as_array().map(|a| a.iter().collect()))
        .unwrap_or_default()
}

/// A file's traces, and the warning about its log records whose spans no input holds.
struct LogTraces {
    traces: OwnedTraces,
    warning: Option<String>,
}

impl Traces for LogTraces {
    fn len(&self) -> usize {
        self.traces.len()
    }

    fn weight(&self, trace: usize) -> usize {
        self.traces.weight(trace)
    }

    fn trace_id(&self, trace: usize) -> Cow<'_, str> {
        self.traces.trace_id(trace)
    }

    fn append(&self, path: &Path, trace: usize, out: &mut TableBuilder) -> Result<(), InputError> {
        self.traces.append(path, trace, out)
    }

    fn warnings(&self) -> Vec<String> {
        self.warning.iter().cloned().collect()
    }

    fn holds_log_records(&self) -> bool {
        true
    }
}

/// The ids of a file's traces, for tests.
#[cfg(test)]
fn ids(traces: &dyn Traces) -> Vec<String> {
    (0..traces.len())
        .map(|t| traces.trace_id(t).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::Format;
    use crate::table::TableOptions;

    fn open(text: &str, listing: bool) -> Box<dyn Traces + '_> {
        let options = ReadOptions {
            listing,
            ..ReadOptions::new(Format::Auto, TableOptions::default())
        };
        crate::ingest::open(Path::new("l.jsonl"), text.as_bytes(), &options)
            .expect("opens")
            .traces
    }

    const SPANS: &str = r#"{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t1", "spanId": "s1", "name": "chat", "startTimeUnixNano": "5", "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}]}]}]}]}"#;
    const LOGS: &str = r#"{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"traceId": "t1", "spanId": "s1", "timeUnixNano": "1", "eventName": "gen_ai.client.inference.operation.details", "attributes": [{"key": "gen_ai.output.messages", "value": {"stringValue": "[{\"role\": \"assistant\", \"parts\": [{\"type\": \"text\", \"content\": \"done\"}]}]"}}]}, {"traceId": "t2", "spanId": "s9", "attributes": [{"key": "gen_ai.input.messages", "value": {"stringValue": "[]"}}]}, {"traceId": "t1", "spanId": "s1", "body": {"stringValue": "an application log line"}}]}]}]}"#;

    #[test]
    fn log_records_join_their_spans_in_a_file_that_mixes_both_signals() {
        let text = format!("{SPANS}\n{LOGS}\n");
        let traces = open(&text, false);
        assert_eq!(ids(traces.as_ref()), ["t1"]);
        let warnings = traces.warnings();
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].starts_with(
                "1 log record(s) in l.jsonl carry GenAI content for spans no input of the run holds"
            ) && warnings[0].ends_with("(first: trace t2 span s9)"),
            "{warnings:?}"
        );
        let mut builder = TableBuilder::new(TableOptions::default());
        traces
            .append(Path::new("l.jsonl"), 0, &mut builder)
            .unwrap();
        let batch = builder.finish();
        let answer = batch.trace_str(crate::table::schema::TRACE_ANSWER);
        assert_eq!(answer.value(0), "done");
        // While a run lists the ids its files share, a trace of log records alone is listed too.
        assert_eq!(ids(open(LOGS, true).as_ref()), ["t2", "t1"]);
        assert!(ids(open(LOGS, false).as_ref()).is_empty());
    }

    #[test]
    fn a_span_event_with_a_gen_ai_name_counts_as_the_span_s_own() {
        let with_event = SPANS.replace(
            r#""attributes": [{"key": "gen_ai.operation.name""#,
            r#""events": [{"name": "gen_ai.client.inference.operation.details", "attributes": [{"key": "gen_ai.output.messages", "value": {"stringValue": "[{\"role\": \"assistant\", \"parts\": [{\"type\": \"text\", \"content\": \"done\"}]}]"}}]}, {"name": "exception", "attributes": [{"key": "gen_ai.output.messages", "value": {"stringValue": "no"}}]}], "attributes": [{"key": "gen_ai.operation.name""#,
        );
        let (format, batch) =
            crate::ingest::read_bytes(Path::new("e.json"), with_event.as_bytes(), Format::Auto)
                .unwrap();
        assert_eq!(format, Format::Otlp);
        assert_eq!(
            batch.trace_str(crate::table::schema::TRACE_ANSWER).value(0),
            "done"
        );
    }
}
