//! A structural pre-scan of OTLP/JSON exports: where each span object lies, which trace it belongs to and
//! when it starts, without parsing anything else.
//!
//! Parsing a large export as one document is slow (one thread, a tape several times the file) and holds
//! the whole archive in memory. The scan instead walks the bytes once, tracking only strings, brackets and
//! the keys on the path `resourceSpans[].scopeSpans[].spans[]`, and records each span's byte range with its
//! `traceId` and `startTimeUnixNano`. Spans are then grouped into traces and parsed a chunk of traces at a
//! time, in parallel, each span on its own.
//!
//! The scan accepts one export, a JSON list of exports, or several exports one after another (JSON lines).
//! It checks the bracket and string structure, not the full grammar: anything it does not understand makes
//! it give up (`None`), and the caller falls back to parsing the whole document, which reports errors with
//! their position. Bytes outside span objects (resource and scope attributes) are never parsed.

use memchr::memchr2;

/// One span object of an export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanSlice {
    /// Byte range of the span object, braces included.
    pub start: usize,
    pub end: usize,
    /// Byte range of the `traceId` string's contents.
    pub trace_id: (usize, usize),
    /// `startTimeUnixNano` as an integer (0 when absent).
    pub start_ns: i64,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    /// A top-level list of exports.
    ExportList,
    Export,
    ResourceSpans,
    Resource,
    ScopeSpans,
    Scope,
    Spans,
    Span,
    Other,
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    role: Role,
    is_object: bool,
    /// In an object: the next string is a key.
    expect_key: bool,
    /// The role of the value that follows the current key (objects) or of each element (arrays).
    child: Role,
    /// Where this container starts (spans only).
    start: usize,
    /// An export object has shown its `resourceSpans` key.
    has_resource_spans: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Capture {
    None,
    TraceId,
    StartTime,
}

/// Locates every span of an OTLP export (or list or sequence of exports). `None` when the bytes are not
/// such an export or their structure is broken; the caller then parses the document whole.
pub fn locate_spans(bytes: &[u8]) -> Option<Vec<SpanSlice>> {
    let mut spans = Vec::new();
    let mut stack: Vec<Frame> = Vec::with_capacity(32);
    let mut capture = Capture::None;
    let mut trace_id: Option<(usize, usize)> = None;
    let mut start_ns: i64 = 0;
    let mut saw_export = false;
    let mut i = 0;
    let n = bytes.len();
    while i < n {
        let b = bytes[i];
        match b {
            b' ' | b'\n' | b'\r' | b'\t' => {
                i += 1;
            }
            b'"' => {
                let content_start = i + 1;
                let end = string_end(bytes, content_start)?;
                i = end + 1;
                let frame = stack.last_mut()?;
                if frame.is_object && frame.expect_key {
                    frame.expect_key = false;
                    let key = &bytes[content_start..end];
                    frame.child = child_role(frame.role, key);
                    frame.has_resource_spans |= frame.child == Role::ResourceSpans;
                    capture = if frame.role == Role::Span {
                        match key {
                            b"traceId" => Capture::TraceId,
                            b"startTimeUnixNano" => Capture::StartTime,
                            _ => Capture::None,
                        }
                    } else {
                        Capture::None
                    };
                    // The key must be followed by a colon.
                    i = skip_ws(bytes, i);
                    if bytes.get(i) != Some(&b':') {
                        return None;
                    }
                    i += 1;
                } else {
                    match capture {
                        Capture::TraceId => {
                            if bytes[content_start..end].contains(&b'\\') {
                                return None;
                            }
                            trace_id = Some((content_start, end));
                        }
                        Capture::StartTime => start_ns = parse_int(&bytes[content_start..end])?,
                        Capture::None => {}
                    }
                    capture = Capture::None;
                }
            }
            b'{' | b'[' => {
                let role = match stack.last() {
                    None => {
                        if b == b'[' {
                            Role::ExportList
                        } else {
                            Role::Export
                        }
                    }
                    Some(parent) => parent.child,
                };
                // A value where a key was expected is broken structure.
                if let Some(parent) = stack.last()
                    && parent.is_object
                    && parent.expect_key
                {
                    return None;
                }
                let is_object = b == b'{';
                let role = match (role, is_object) {
                    (
                        Role::ResourceSpans | Role::ScopeSpans | Role::Spans | Role::ExportList,
                        true,
                    ) => {
                        return None;
                    }
                    (Role::Export | Role::Resource | Role::Scope | Role::Span, false) => {
                        return None;
                    }
                    (r, _) => r,
                };
                if role == Role::Export {
                    saw_export = true;
                }
                if role == Role::Span {
                    trace_id = None;
                    start_ns = 0;
                }
                stack.push(Frame {
                    role,
                    is_object,
                    expect_key: is_object,
                    child: element_role(role),
                    start: i,
                    has_resource_spans: false,
                });
                capture = Capture::None;
                i += 1;
            }
            b'}' | b']' => {
                let frame = stack.pop()?;
                if frame.is_object != (b == b'}')
                    || (frame.role == Role::Export && !frame.has_resource_spans)
                {
                    return None;
                }
                if frame.role == Role::Span {
                    spans.push(SpanSlice {
                        start: frame.start,
                        end: i + 1,
                        trace_id: trace_id?,
                        start_ns,
                    });
                }
                i += 1;
            }
            b',' => {
                if let Some(frame) = stack.last_mut()
                    && frame.is_object
                {
                    frame.expect_key = true;
                }
                capture = Capture::None;
                i += 1;
            }
            b':' => return None,
            _ => {
                // A number, true, false or null: up to the next delimiter.
                let begin = i;
                while i < n
                    && !matches!(bytes[i], b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
                {
                    i += 1;
                }
                if stack.is_empty() {
                    return None;
                }
                if capture == Capture::StartTime {
                    start_ns = parse_number(&bytes[begin..i])?;
                }
                capture = Capture::None;
            }
        }
    }
    (stack.is_empty() && saw_export).then_some(spans)
}

/// The role of elements of an array with `role` (objects: the role before any key is read).
fn element_role(role: Role) -> Role {
    match role {
        Role::ExportList => Role::Export,
        Role::ResourceSpans => Role::Resource,
        Role::ScopeSpans => Role::Scope,
        Role::Spans => Role::Span,
        _ => Role::Other,
    }
}

/// The role of the value under `key` in an object with `role`.
fn child_role(role: Role, key: &[u8]) -> Role {
    match (role, key) {
        (Role::Export, b"resourceSpans") => Role::ResourceSpans,
        (Role::Resource, b"scopeSpans") => Role::ScopeSpans,
        (Role::Scope, b"spans") => Role::Spans,
        _ => Role::Other,
    }
}

/// Index of the closing quote of a string whose contents start at `from`.
fn string_end(bytes: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let hit = from + memchr2(b'"', b'\\', &bytes[from..])?;
        if bytes[hit] == b'"' {
            return Some(hit);
        }
        from = hit + 2;
        if from > bytes.len() {
            return None;
        }
    }
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && matches!(bytes[i], b' ' | b'\n' | b'\r' | b'\t') {
        i += 1;
    }
    i
}

/// A decimal integer string as OTLP writes nanosecond times. Anything else: give up, so the full parser
/// reports it.
fn parse_int(text: &[u8]) -> Option<i64> {
    if text.is_empty() || text.len() > 19 || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// A JSON number; fractions truncate, as the span reader does.
fn parse_number(text: &[u8]) -> Option<i64> {
    if let Some(i) = parse_int(text) {
        return Some(i);
    }
    let f: f64 = std::str::from_utf8(text).ok()?.parse().ok()?;
    f.is_finite().then_some(f.trunc() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(bytes: &[u8]) -> Vec<(String, i64, String)> {
        locate_spans(bytes)
            .unwrap()
            .into_iter()
            .map(|s| {
                (
                    String::from_utf8(bytes[s.trace_id.0..s.trace_id.1].to_vec()).unwrap(),
                    s.start_ns,
                    String::from_utf8(bytes[s.start..s.end].to_vec()).unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn finds_spans_in_one_export_a_list_and_lines() {
        let one = br#"{"resource": {"attributes": [{"key": "spans", "value": {"stringValue": "{\"spans\": ["}}]},
          "resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "x"}, "spans": [
            {"traceId": "t1", "spanId": "a", "startTimeUnixNano": "5", "attributes": [{"key": "k", "value": {"arrayValue": {"values": []}}}]},
            {"spanId": "b", "traceId": "t2", "startTimeUnixNano": 7}
          ]}]}]}"#;
        let found = ids(one);
        assert_eq!(found.len(), 2);
        assert_eq!((found[0].0.as_str(), found[0].1), ("t1", 5));
        assert!(found[0].2.starts_with('{') && found[0].2.ends_with('}'));
        assert_eq!((found[1].0.as_str(), found[1].1), ("t2", 7));

        let list = br#"[{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "a"}]}]}]}, {"resourceSpans": []}]"#;
        assert_eq!(ids(list).len(), 1);
        let lines = b"{\"resourceSpans\": [{\"scopeSpans\": [{\"spans\": [{\"traceId\": \"a\"}]}]}]}\n{\"resourceSpans\": [{\"scopeSpans\": [{\"spans\": [{\"traceId\": \"b\"}]}]}]}\n";
        assert_eq!(ids(lines).len(), 2);
    }

    #[test]
    fn gives_up_on_what_it_does_not_understand() {
        for bad in [
            &br#"{"resourceSpans": [}"#[..],
            br#"{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "no trace id"}]}]}]}"#,
            br#"{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t", "startTimeUnixNano": "abc"}]}]}]}"#,
            br#"{"data": []}"#,
            br#"{"resourceSpans" []}"#,
            br#"{"resourceSpans": "x"#,
            br#"[1, 2]"#,
        ] {
            assert_eq!(locate_spans(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }
}
