//! The serial byte-by-byte scan the parallel one replaced, kept word for word: the reference the
//! tests hold the parallel scan to.

use super::lex::{parse_int, parse_number, skip_ws, string_end};
use super::walk::{child_role, element_role};
use super::{Capture, Frame, Role, SpanSlice};

/// The spans of `bytes` as the serial scan finds them; `None` where it gives up.
pub(super) fn serial_reference(bytes: &[u8]) -> Option<Vec<SpanSlice>> {
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
                    spans.push(SpanSlice::new(frame.start, i + 1, trace_id?, start_ns)?);
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
