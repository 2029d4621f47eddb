//! The scan's tests: what it finds and where it gives up, the parallel scan held to the serial
//! reference (`serial`) on generated exports, whole and broken, in blocks small enough that their
//! boundaries fall everywhere, the bytes its result holds, and the lexical pieces it shares.

use super::blocks::{Anchors, MAX_CANDIDATES, anchored_blocks, lines_are_documents, worker_blocks};
use super::lex::{decimal_i64, first_of};
use super::runs::runs_in_block;
use super::serial::serial_reference;
use super::walk::scan_lines;
use super::*;
use serde_json::Value;

fn ids(bytes: &[u8]) -> Vec<(String, i64, String)> {
    locate_spans(bytes)
        .unwrap()
        .flat(bytes)
        .into_iter()
        .map(|s| {
            let id = s.trace_id(bytes);
            (
                String::from_utf8(bytes[id.0..id.1].to_vec()).unwrap(),
                s.start_ns,
                String::from_utf8(bytes[s.start()..s.end()].to_vec()).unwrap(),
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
        assert!(locate_spans(bad).is_none(), "{}", String::from_utf8_lossy(bad));
    }
}

/// A small deterministic generator (xorshift), so the documents are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

/// String contents (already JSON-escaped) that look like structure to a careless scanner.
const TRICKY: &[&str] = &[
    "plain",
    r#"\"}]}]}"#,
    r#",{\"traceId\":\"fake\","#,
    r#"\\\\\\\""#,
    r#"\\"#,
    r#"ends with a backslash \\"#,
    r#"\"spans\": [{"#,
    "é€😀 multi-byte",
    r#"\u00e9\ud83d\ude00"#,
    "{[",
    "]}",
    r#"a:b,c"#,
    "",
];

/// Whitespace and layout of a generated document.
struct Layout {
    pretty: bool,
    depth: usize,
}

impl Layout {
    fn nl(&self, out: &mut String) {
        if self.pretty {
            out.push('\n');
            for _ in 0..self.depth {
                out.push(' ');
            }
        }
    }
    fn sep(&self) -> &'static str {
        if self.pretty { ": " } else { ":" }
    }
}

fn string(rng: &mut Rng) -> String {
    let mut s = String::from("\"");
    for _ in 0..rng.below(3) {
        s.push_str(rng.pick(TRICKY));
    }
    s.push('"');
    s
}

/// An attribute value: strings, numbers, booleans, nested arrays and key-value lists.
fn any_value(rng: &mut Rng, l: &mut Layout, out: &mut String, nest: u32) {
    let sep = l.sep();
    match rng.below(if nest > 2 { 4 } else { 6 }) {
        0 => out.push_str(&format!("{{\"stringValue\"{sep}{}}}", string(rng))),
        1 => out.push_str(&format!("{{\"intValue\"{sep}\"{}\"}}", rng.below(1000))),
        2 => out.push_str(&format!("{{\"doubleValue\"{sep}{}.5e-3}}", rng.below(100))),
        3 => out.push_str(&format!("{{\"boolValue\"{sep}{}}}", rng.chance(50))),
        4 => {
            out.push_str(&format!("{{\"arrayValue\"{sep}{{\"values\"{sep}["));
            for k in 0..rng.below(3) {
                if k > 0 {
                    out.push(',');
                }
                any_value(rng, l, out, nest + 1);
            }
            out.push_str("]}}");
        }
        _ => {
            out.push_str(&format!("{{\"kvlistValue\"{sep}{{\"values\"{sep}"));
            attributes(rng, l, out, nest + 1);
            out.push_str("}}");
        }
    }
}

fn attributes(rng: &mut Rng, l: &mut Layout, out: &mut String, nest: u32) {
    let sep = l.sep();
    out.push('[');
    l.depth += 1;
    for k in 0..rng.below(4) {
        if k > 0 {
            out.push(',');
        }
        l.nl(out);
        out.push_str(&format!("{{\"key\"{sep}{},", string(rng)));
        l.nl(out);
        out.push_str(&format!("\"value\"{sep}"));
        any_value(rng, l, out, nest);
        out.push('}');
    }
    l.depth -= 1;
    l.nl(out);
    out.push(']');
}

fn span(rng: &mut Rng, l: &mut Layout, out: &mut String) {
    let sep = l.sep();
    let mut fields: Vec<String> = vec![
        format!("\"traceId\"{sep}\"{:032x}\"", rng.below(5)),
        format!("\"spanId\"{sep}\"{:016x}\"", rng.next()),
        format!("\"name\"{sep}{}", string(rng)),
        format!("\"kind\"{sep}{}", rng.below(5)),
        format!("\"endTimeUnixNano\"{sep}\"{}\"", rng.below(1 << 40)),
    ];
    match rng.below(4) {
        0 => fields.push(format!(
            "\"startTimeUnixNano\"{sep}\"{}\"",
            rng.below(1 << 60)
        )),
        1 => fields.push(format!("\"startTimeUnixNano\"{sep}{}", rng.below(1 << 50))),
        2 => fields.push(format!(
            "\"startTimeUnixNano\"{sep}{}.75",
            rng.below(1 << 30)
        )),
        _ => {}
    }
    let mut attrs = String::new();
    attributes(rng, l, &mut attrs, 0);
    fields.push(format!("\"attributes\"{sep}{attrs}"));
    if rng.chance(40) {
        let mut links = String::from("[");
        for k in 0..rng.below(3) {
            if k > 0 {
                links.push(',');
            }
            links.push_str(&format!(
                "{{\"traceId\"{sep}\"{:032x}\",\"spanId\"{sep}\"{:016x}\",\"attributes\"{sep}[]}}",
                rng.next(),
                rng.next()
            ));
        }
        links.push(']');
        fields.push(format!("\"links\"{sep}{links}"));
    }
    fields.push(format!(
        "\"status\"{sep}{{\"code\"{sep}{}, \"message\"{sep}{}}}",
        rng.below(3),
        string(rng)
    ));
    if rng.chance(20) {
        // The same keys one level down belong to another object, not to the span.
        fields.push(format!(
            "\"parent\"{sep}{{\"traceId\"{sep}\"p{}\",\"startTimeUnixNano\"{sep}\"{}\"}}",
            rng.below(9),
            rng.below(9)
        ));
    }
    // Shuffle the field order.
    for k in (1..fields.len()).rev() {
        fields.swap(k, rng.below(k as u64 + 1) as usize);
    }
    out.push('{');
    l.depth += 1;
    for (k, f) in fields.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        l.nl(out);
        out.push_str(f);
    }
    l.depth -= 1;
    l.nl(out);
    out.push('}');
}

/// `open` + items + `]`, each item written by `item`.
fn list(
    rng: &mut Rng,
    l: &mut Layout,
    out: &mut String,
    count: u64,
    item: fn(&mut Rng, &mut Layout, &mut String),
) {
    out.push('[');
    l.depth += 1;
    for k in 0..count {
        if k > 0 {
            out.push(',');
        }
        l.nl(out);
        item(rng, l, out);
    }
    l.depth -= 1;
    l.nl(out);
    out.push(']');
}

fn scope_spans(rng: &mut Rng, l: &mut Layout, out: &mut String) {
    let sep = l.sep();
    out.push_str(&format!(
        "{{\"scope\"{sep}{{\"name\"{sep}{}}},",
        string(rng)
    ));
    l.nl(out);
    out.push_str(&format!("\"spans\"{sep}"));
    let n = [0, 1, 2, 5][rng.below(4) as usize];
    list(rng, l, out, n, span);
    out.push('}');
}

/// An element of `resourceSpans`: its resource before its spans, after them, or none.
fn resource_spans(rng: &mut Rng, l: &mut Layout, out: &mut String) {
    let sep = l.sep();
    let placement = rng.below(4);
    let mut resource = format!("\"resource\"{sep}{{\"attributes\"{sep}");
    attributes(rng, l, &mut resource, 0);
    resource.push('}');
    out.push('{');
    if placement < 2 {
        out.push_str(&resource);
        out.push(',');
        l.nl(out);
    }
    out.push_str(&format!("\"scopeSpans\"{sep}"));
    let n = rng.below(4);
    list(rng, l, out, n, scope_spans);
    if placement == 2 {
        out.push(',');
        l.nl(out);
        out.push_str(&resource);
    }
    out.push('}');
}

/// Each span's resource as the scan finds it (the resource of the last element that begins
/// before the span), in file order.
fn scanned_resources(bytes: &[u8], block: usize) -> Vec<Option<Value>> {
    let list = locate_spans_in_blocks(bytes, block).expect("a generated export scans");
    let resources = list.resources().to_vec();
    list.flat(bytes)
        .iter()
        .map(|span| {
            let entry = resources.partition_point(|r| r.element <= span.start());
            let (from, to) = resources[entry.checked_sub(1)?].resource;
            (from != to).then(|| serde_json::from_slice(&bytes[from..to]).unwrap())
        })
        .collect()
}

/// Each span's resource as a JSON parser reads the document, in file order.
fn parsed_resources(bytes: &[u8]) -> Vec<Option<Value>> {
    let mut out = Vec::new();
    for doc in serde_json::Deserializer::from_slice(bytes).into_iter::<Value>() {
        let doc = doc.unwrap();
        let exports = match doc {
            Value::Array(exports) => exports,
            export => vec![export],
        };
        for export in &exports {
            for element in export["resourceSpans"].as_array().into_iter().flatten() {
                for scope in element["scopeSpans"].as_array().into_iter().flatten() {
                    for _ in scope["spans"].as_array().into_iter().flatten() {
                        out.push(element.get("resource").cloned());
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_span_finds_its_resource_at_any_block_size() {
    let mut rng = Rng(0x005e_ed0f_7e50_u64);
    let mut with_resource = 0;
    for _ in 0..200 {
        let doc = document(&mut rng);
        let expected = parsed_resources(doc.as_bytes());
        with_resource += expected.iter().flatten().count();
        for block in [7, 13, 64, 100, 4096] {
            assert_eq!(
                scanned_resources(doc.as_bytes(), block),
                expected,
                "block {block}:\n{doc}"
            );
        }
    }
    assert!(with_resource > 500, "{with_resource} spans with a resource");
}

fn export(rng: &mut Rng, l: &mut Layout, out: &mut String) {
    let sep = l.sep();
    out.push('{');
    l.depth += 1;
    l.nl(out);
    out.push_str(&format!("\"resourceSpans\"{sep}"));
    let n = rng.below(4);
    list(rng, l, out, n, resource_spans);
    l.depth -= 1;
    l.nl(out);
    out.push('}');
}

/// One export, a list of exports, or exports one per line; pretty or compact.
fn document(rng: &mut Rng) -> String {
    let mut l = Layout {
        pretty: rng.chance(50),
        depth: 0,
    };
    let mut out = String::new();
    match rng.below(3) {
        0 => export(rng, &mut l, &mut out),
        1 => {
            let n = 1 + rng.below(3);
            list(rng, &mut l, &mut out, n, export);
        }
        _ => {
            l.pretty = false;
            for _ in 0..=rng.below(3) {
                export(rng, &mut l, &mut out);
                out.push('\n');
            }
        }
    }
    out
}

/// A document with one random edit: a byte dropped, a structural byte inserted, or the end cut off.
fn broken(rng: &mut Rng, doc: &str) -> Vec<u8> {
    let mut bytes = doc.as_bytes().to_vec();
    let at = rng.below(bytes.len() as u64) as usize;
    match rng.below(6) {
        // Balanced pieces keep the brackets matched, so only the finer rules can catch them.
        4 | 5 => {
            let piece = [
                "{}",
                "[]",
                "\"x\"",
                "1",
                "\"k\":",
                ",",
                ":",
                "x\"",
                "1{}",
                "\\\"",
                "\"k\" 1",
                "{\"a\"}",
                "[\"a\":1]",
                "\"traceId\":",
                ",\"traceId\":\"t\\\"\"",
                "tru\"e\"",
            ];
            let piece = piece[rng.below(piece.len() as u64) as usize].as_bytes();
            bytes.splice(at..at, piece.iter().copied());
        }
        0 => {
            bytes.remove(at);
        }
        1 => bytes.insert(at, b"\"{}[],:\\ 1x"[rng.below(11) as usize]),
        2 => bytes.truncate(at),
        _ => bytes[at] = b"\"{}[],:\\ 1x"[rng.below(11) as usize],
    }
    bytes
}

/// The parallel scan of `bytes` in blocks of `block` gives `expected`, the serial scan's result.
fn assert_scans_as_serial(bytes: &[u8], block: usize, expected: Option<&Vec<SpanSlice>>) {
    assert_eq!(
        locate_spans_in_blocks(bytes, block)
            .map(|list| list.flat(bytes))
            .as_ref(),
        expected,
        "block {block}:\n{}",
        String::from_utf8_lossy(bytes)
    );
}

/// The parallel scan, and how many of its spans came from the workers' runs.
fn parallel(bytes: &[u8], block: usize) -> (Option<Vec<SpanSlice>>, usize) {
    let depth = span_depth(bytes);
    let from_runs = worker_blocks(bytes, block, depth)
        .0
        .into_iter()
        .map(|(from, to, s)| {
            let runs = runs_in_block(bytes, from, to, s, depth);
            runs.spans.iter().map(SpanSlice::count).sum::<usize>()
        })
        .sum();
    (
        locate_spans_in_blocks(bytes, block).map(|list| list.flat(bytes)),
        from_runs,
    )
}

/// The scan's result holds each trace's consecutive spans in one record of 24 bytes, plus a few bytes
/// per block: small traces one to a line made a list per run of three spans, and the walk copied
/// every span into one more list of 40 bytes a span, so a file's scan held several times this at its
/// end; a record per span held 24 bytes per span.
#[test]
fn the_scan_holds_twenty_four_bytes_per_trace_of_consecutive_spans() {
    assert_eq!(std::mem::size_of::<SpanSlice>(), 24);
    let (traces, spans_per_trace) = (3_000, 3);
    let bytes = small_traces_as_lines(traces, spans_per_trace);
    let block = 1 << 14;
    let found = locate_spans_in_blocks(&bytes, block).unwrap();
    let spans = traces * spans_per_trace;
    assert_eq!(found.len(), spans);
    assert_eq!(found.slices(), traces);
    let blocks = bytes.len().div_ceil(block);
    let held = found.bytes_held();
    assert!(
        held <= traces * 24 + blocks * 64,
        "{held} bytes held for {traces} traces in {blocks} blocks"
    );
    let first = found.iter().next().unwrap();
    let id = first.trace_id(&bytes);
    assert_eq!(&bytes[id.0..id.1], format!("{:032x}", 0).as_bytes());
    assert_eq!((first.count(), first.start_ns), (3, 1_000));
    assert_eq!(first.spans(&bytes).len(), 3);
}

#[test]
fn spans_of_one_trace_join_while_they_follow_each_other_and_stay_small() {
    let wrap = |spans: &str| {
        format!(r#"{{"resourceSpans": [{{"scopeSpans": [{{"spans": [{spans}]}}]}}]}}"#)
    };
    let big = "x".repeat(JOIN_BYTES / 2);
    let doc = wrap(
        &[
            r#"{"traceId":"a","startTimeUnixNano":"5"}"#.to_string(),
            r#" {"traceId":"a","startTimeUnixNano":"3"}"#.to_string(),
            r#"{"traceId":"b"}"#.to_string(),
            r#"{"traceId":"a"}"#.to_string(),
            format!(r#"{{"traceId":"c","name":"{big}"}}"#),
            format!(r#"{{"traceId":"c","name":"{big}"}}"#),
        ]
        .join(","),
    );
    let found = locate_spans(doc.as_bytes()).unwrap();
    let slices: Vec<(usize, i64)> = found.iter().map(|s| (s.count(), s.start_ns)).collect();
    assert_eq!(slices, [(2, 3), (1, 0), (1, 0), (1, 0), (1, 0)]);
    assert_eq!(found.len(), 6);
    assert_eq!(
        found.flat(doc.as_bytes()),
        serial_reference(doc.as_bytes()).unwrap()
    );
}

#[test]
fn parallel_scan_matches_the_serial_scan_on_generated_exports() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut spans = 0;
    for n in 0..300 {
        let doc = document(&mut rng);
        let expected = serial_reference(doc.as_bytes());
        let expected = expected.expect("a generated export scans");
        spans += expected.len();
        // Blocks of one byte put a boundary everywhere, but are slow; a few documents suffice.
        let tiny: &[usize] = if n % 20 == 0 { &[1, 2] } else { &[] };
        for &block in tiny.iter().chain(&[7, 13, 64, 100, 4096]) {
            let (found, from_runs) = parallel(doc.as_bytes(), block);
            assert_eq!(found.as_ref(), Some(&expected), "block {block}:\n{doc}");
            // The workers, not the serial walk, found the spans.
            assert_eq!(from_runs, expected.len(), "block {block}:\n{doc}");
        }
    }
    assert!(spans > 1000, "{spans} spans");
}

/// One export of `resources` resource records, pretty or compact: many `spans` arrays, so that
/// blocks of a few kilobytes each hold the key of one.
fn many_resources(rng: &mut Rng, pretty: bool, resources: u64) -> String {
    let mut l = Layout { pretty, depth: 0 };
    let mut out = String::from("{\"resourceSpans\": ");
    list(rng, &mut l, &mut out, resources, resource_spans);
    out.push('}');
    out
}

#[test]
fn blocks_start_at_span_objects_without_the_stage_one_pass() {
    let mut rng = Rng(0x1656_67b1_9e37_79f9);
    for pretty in [false, true] {
        let doc = many_resources(&mut rng, pretty, 400);
        let bytes = doc.as_bytes();
        let expected = serial_reference(bytes).expect("a generated export scans");
        assert!(expected.len() > 300, "{} spans", expected.len());
        for block in [2 << 10, 16 << 10] {
            let blocks =
                anchored_blocks(bytes, block, span_depth(bytes)).expect("blocks hold span objects");
            assert!(blocks.len() > 4, "{} blocks", blocks.len());
            for (from, _, start) in &blocks[1..] {
                let at_span = expected.iter().any(|span| span.start() == *from);
                let in_array = bytes[..*from].ends_with(b"[");
                assert!(at_span || in_array, "block at {from}");
                assert_eq!((start.in_string, start.depth), (false, 6));
            }
            let (found, from_runs) = parallel(bytes, block);
            assert_eq!(found.as_ref(), Some(&expected), "block {block}");
            assert_eq!(from_runs, expected.len(), "block {block}");
        }
    }
    // In a list of exports span objects lie one level deeper.
    let exports: Vec<String> = (0..3)
        .map(|_| many_resources(&mut rng, false, 100))
        .collect();
    let list = format!("[{}]", exports.join(",\n"));
    let bytes = list.as_bytes();
    assert_eq!(span_depth(bytes), 7);
    let expected = serial_reference(bytes).expect("a list of exports scans");
    let blocks = anchored_blocks(bytes, 4 << 10, 7).expect("blocks hold span objects");
    assert!(blocks[1..].iter().all(|&(_, _, start)| start.depth == 7));
    let (found, from_runs) = parallel(bytes, 4 << 10);
    assert_eq!(found.as_ref(), Some(&expected));
    assert_eq!(from_runs, expected.len());
}

/// One long `spans` array whose spans each carry links: blocks start at spans, never at links.
#[test]
fn blocks_in_one_long_spans_array_start_at_spans_not_links() {
    let spans: Vec<String> = (0..200)
        .map(|i| {
            format!(
                r#"{{"traceId": "t{}", "spanId": "s{i}", "links": [{{"traceId": "l", "spanId": "a"}}, {{"traceId": "m", "spanId": "b"}}], "startTimeUnixNano": "{}", "name": "x"}}"#,
                i % 3,
                i + 1
            )
        })
        .collect();
    let doc = format!(
        r#"{{"resourceSpans": [{{"scopeSpans": [{{"spans": [{}]}}]}}]}}"#,
        spans.join(", ")
    );
    let bytes = doc.as_bytes();
    let expected = serial_reference(bytes).expect("the export scans");
    assert_eq!(expected.len(), 200);
    for block in [100, 256, 1000] {
        let blocks = anchored_blocks(bytes, block, 6).expect("blocks hold spans");
        assert!(blocks.len() > 10, "{} blocks", blocks.len());
        for (from, _, _) in &blocks[1..] {
            assert!(
                bytes[*from..].starts_with(br#"{"traceId": "t"#),
                "block at {from}"
            );
        }
        let (found, from_runs) = parallel(bytes, block);
        assert_eq!(found.as_ref(), Some(&expected), "block {block}");
        assert_eq!(from_runs, 200, "block {block}");
    }
    // Without start times no span can be told from a link: the stage-1 pass places the blocks.
    let timeless = doc.replace("startTimeUnixNano", "endTimeUnixNano");
    assert!(anchored_blocks(timeless.as_bytes(), 256, 6).is_none());
    let (found, from_runs) = parallel(timeless.as_bytes(), 256);
    assert_eq!(found.map(|spans| spans.len()), Some(200));
    assert_eq!(from_runs, 200);
}

#[test]
fn anchors_are_unescaped_keys_of_spans_and_spans_arrays() {
    let anchors = Anchors::new();
    let arrays: [(&[u8], Option<usize>); 6] = [
        (br#"{"spans": ["#, Some(11)),
        (b"{\"spans\"\n :\t[ {", Some(13)),
        // An escaped quote: this ends a key `x"spans`.
        (br#"{"x\"spans": [{"a": 1}]"#, None),
        // An escaped backslash leaves the quote after it unescaped.
        (br#"{"x\\"spans": ["#, Some(15)),
        (br#"{"spans": {"#, None),
        (br#"{"spans" "x": ["#, None),
    ];
    for (text, expected) in arrays {
        let found = anchors.spans_array(text, 0, text.len());
        assert_eq!(found, expected, "{}", String::from_utf8_lossy(text));
    }
    // The key must start in the block: one that starts past it belongs to the next.
    assert_eq!(anchors.spans_array(br#"{"spans": ["#, 0, 2), Some(11));
    assert_eq!(anchors.spans_array(br#" {"spans": ["#, 0, 2), None);
    let spans: [(&[u8], Option<usize>); 7] = [
        (br#"[{"traceId": "a", "startTimeUnixNano": "5"}]"#, Some(1)),
        (
            b"[1,\n  {\n \"traceId\" : \"a\", \"startTimeUnixNano\": 5}]",
            Some(6),
        ),
        // A link: no start time.
        (br#"[{"traceId": "a", "spanId": "b"}]"#, None),
        // An object's value, not an array's element.
        (
            br#"{"parent": {"traceId": "a", "startTimeUnixNano": "5"}}"#,
            None,
        ),
        (
            br#"[{"name": "x", "traceId": "a", "startTimeUnixNano": "5"}]"#,
            None,
        ),
        (br#"[{"traceId": "a", "startTimeUnixNano": "5""#, None),
        (br#"[{\"traceId": "a", "startTimeUnixNano": "5"}]"#, None),
    ];
    for (text, expected) in spans {
        let found = anchors.span_object(text, 0, text.len());
        assert_eq!(found, expected, "{}", String::from_utf8_lossy(text));
        assert_eq!(anchors.in_block(text, 0, text.len()), expected);
    }
    // Only the first keys of a block are tried: a span after too many links is not looked for.
    let links = |n: usize| vec![r#"{"traceId": "l"}"#; n].join(",");
    let span = r#"{"traceId": "a", "startTimeUnixNano": "5"}"#;
    let near = format!("[{},{span}]", links(MAX_CANDIDATES - 1));
    let far = format!("[{},{span}]", links(MAX_CANDIDATES));
    assert!(
        anchors
            .span_object(near.as_bytes(), 0, near.len())
            .is_some()
    );
    assert_eq!(anchors.span_object(far.as_bytes(), 0, far.len()), None);
}

/// Edits that put an anchor inside a string, or shift the brackets around one, make the anchors'
/// guess wrong; the walk must still give the serial result.
#[test]
fn anchored_blocks_match_the_serial_scan_on_broken_exports() {
    let mut rng = Rng(0x27d4_eb2f_1656_67c5);
    let (mut anchored, mut rejected) = (0, 0);
    for n in 0..400 {
        let doc = many_resources(&mut rng, n % 2 == 0, 24);
        let bad = broken(&mut rng, &doc);
        let expected = serial_reference(&bad);
        rejected += usize::from(expected.is_none());
        for block in [2 << 10, 8 << 10] {
            anchored += usize::from(anchored_blocks(&bad, block, span_depth(&bad)).is_some());
            assert_scans_as_serial(&bad, block, expected.as_ref());
        }
    }
    assert!(
        anchored > 200 && rejected > 100,
        "{anchored} anchored, {rejected} rejected"
    );
}

#[test]
fn quotes_and_backslashes_are_found_where_a_plain_search_finds_them() {
    let mut rng = Rng(0x51de);
    for _ in 0..3000 {
        let len = rng.below(120) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| match rng.below(40) {
                0 => b'"',
                1 => b'\\',
                _ => b'a' + rng.below(26) as u8,
            })
            .collect();
        let from = rng.below(len as u64 + 1) as usize;
        let end = from + rng.below((len - from) as u64 + 1) as usize;
        for backslash in [false, true] {
            let plain = bytes[from..end]
                .iter()
                .position(|&b| b == b'"' || (backslash && b == b'\\'))
                .map(|i| from + i);
            assert_eq!(
                first_of(&bytes, from, end, backslash),
                plain,
                "{from} {end}"
            );
        }
    }
}

#[test]
fn decimals_read_as_str_parse_reads_them() {
    let mut rng = Rng(0x85eb_ca6b_c2b2_ae35);
    let mut cases: Vec<String> = [
        "",
        "0",
        "00",
        "7",
        "1758000000000000000",
        "9223372036854775807",
        "9223372036854775808",
        "9999999999999999999",
        "10000000000000000000",
        "01234567890123456789",
        "12a",
        "-1",
        "+1",
        " 1",
        "1 ",
        "1_0",
        "١",
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    for _ in 0..20_000 {
        let len = 1 + rng.below(20) as usize;
        let mut case: Vec<u8> = (0..len).map(|_| b'0' + rng.below(10) as u8).collect();
        // Now and then one byte that is not a digit, anywhere in an eight-byte chunk: the bytes
        // either side of the digits and ones that differ from a digit in one nibble.
        if rng.below(4) == 0 {
            let odd = [b'/', b':', b' ', b'.', b'-', b'@', b'p', 0x10, 0x3f, 0x7f];
            case[rng.below(len as u64) as usize] = odd[rng.below(odd.len() as u64) as usize];
        }
        cases.push(String::from_utf8(case).unwrap());
    }
    for case in &cases {
        let expected = if case.bytes().all(|b| b.is_ascii_digit()) && case.len() <= 19 {
            case.parse::<i64>().ok()
        } else {
            None
        };
        assert_eq!(decimal_i64(case.as_bytes()), expected, "{case:?}");
    }
}

#[test]
fn json_lines_are_cut_at_newlines_and_read_by_the_workers() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut l = Layout {
        pretty: false,
        depth: 0,
    };
    let mut lines = String::new();
    for _ in 0..400 {
        export(&mut rng, &mut l, &mut lines);
        lines.push('\n');
    }
    let bytes = lines.as_bytes();
    let expected = serial_reference(bytes).expect("generated lines scan");
    assert!(expected.len() > 200, "{} spans", expected.len());
    let first_line = bytes.iter().position(|&b| b == b'\n').unwrap();
    for block in [first_line + 1, first_line + 500, 3 * first_line, 1 << 20] {
        assert!(lines_are_documents(bytes, block), "block {block}");
        let (blocks, cut_between_lines) = worker_blocks(bytes, block, span_depth(bytes));
        assert!(cut_between_lines);
        // Blocks end just after a newline and cover the file in order.
        assert_eq!(blocks[0].0, 0);
        assert_eq!(blocks.last().unwrap().1, bytes.len());
        for pair in blocks.windows(2) {
            assert_eq!(pair[0].1, pair[1].0);
            assert_eq!(bytes[pair[0].1 - 1], b'\n');
        }
        let (found, from_runs) = parallel(bytes, block);
        assert_eq!(found.as_ref(), Some(&expected), "block {block}");
        assert_eq!(from_runs, expected.len(), "block {block}");
        // The blocks were walked on their own, not by the serial walk after a refusal.
        let walked = scan_lines(bytes, &blocks, span_depth(bytes)).ok().flatten();
        assert_eq!(
            walked.map(|list| list.flat(bytes)).as_ref(),
            Some(&expected),
            "block {block}"
        );
    }
    // A pretty export's first line is no whole document: its blocks come from the stage-1 pass.
    let pretty = b"{\n \"resourceSpans\": []\n}\n";
    assert!(!lines_are_documents(pretty, 1 << 20));
    // A first line that opens a string or a bracket it does not close is no document either.
    assert!(!lines_are_documents(b"{\"a\": \"b\n\"}\n{}\n", 1 << 20));
    assert!(!lines_are_documents(b"[{}\n]\n", 1 << 20));
}

#[test]
fn parallel_scan_matches_the_serial_scan_on_edge_cases() {
    let wrap = |spans: &str| {
        format!(r#"{{"resourceSpans": [{{"scopeSpans": [{{"spans": [{spans}]}}]}}]}}"#)
    };
    let cases = [
        // A key left without a value at the end of a span still captures what follows the array.
        r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"a","startTimeUnixNano":}] "x"}]}]}"#.to_string(),
        r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"a","name":}] "x"}]}]}"#.to_string(),
        wrap(r#"{"traceId":"a"},{"traceId":"b"}"#),
        wrap(r#"{"traceId":"a"}{"traceId":"b"}"#),
        wrap(r#"{"traceId":"a"},,{"traceId":"b"}"#),
        wrap(r#"{"traceId":"a",}"#),
        wrap(r#"{"traceId":"a" "startTimeUnixNano":"1"}"#),
        wrap(r#"{"traceId":"a", 1 "startTimeUnixNano":"2"}"#),
        wrap(r#"{"traceId":"a", 1 {}}"#),
        wrap(r#"{"traceId":"a","x":1"y"}"#),
        wrap(r#"{"traceId":"a","x":tru{e}"#),
        wrap(r#"{"traceId":"a","x":\"}"#),
        wrap(r#"{"traceId":"a","startTimeUnixNano":1e3}"#),
        wrap(r#"{"traceId":"a","startTimeUnixNano":-1.5}"#),
        wrap(r#"{"traceId":"a","startTimeUnixNano":null}"#),
        wrap(r#"{"traceId":"a\u0041"}"#),
        wrap(r#"{"traceId":5,"traceId":"b"}"#),
        wrap(r#"{"traceId":"a","traceId":"b"}"#),
        wrap(r#"{"traceId":"a","x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}"#),
        wrap(r#"{"traceId":"a","x":{"traceId":"b","startTimeUnixNano":"9"}}"#),
        wrap(r#"{"traceId":"a","x":[1:2]}"#),
        wrap(r#"{"traceId":"a","x":[}"#),
        wrap(r#"{"traceId":"a"}]}, {"spans": [{"traceId":"b"}"#),
        "[".to_string() + &wrap(r#"{"traceId":"a"}"#) + "," + &wrap(r#"{"traceId":"b"}"#) + "]",
        wrap(r#"{"traceId":"a"}"#) + "\n[" + &wrap(r#"{"traceId":"b"}"#) + "]\n",
        wrap(r#"{"traceId":"a"}"#) + " 1",
        wrap(r#"{"traceId":"a", "x": "unterminated}"#),
    ];
    for case in &cases {
        let expected = serial_reference(case.as_bytes());
        for block in [1, 2, 3, 5, 8, 64, 4096] {
            assert_eq!(
                locate_spans_in_blocks(case.as_bytes(), block)
                    .map(|list| list.flat(case.as_bytes())),
                expected,
                "block {block}: {case}"
            );
        }
    }
}

#[test]
fn parallel_scan_matches_the_serial_scan_on_broken_exports() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut rejected = 0;
    for _ in 0..3000 {
        let doc = document(&mut rng);
        let bad = broken(&mut rng, &doc);
        let expected = serial_reference(&bad);
        rejected += usize::from(expected.is_none());
        for block in [7, 64, 4096] {
            assert_scans_as_serial(&bad, block, expected.as_ref());
        }
    }
    assert!(rejected > 1500, "{rejected} rejected");
}

/// Many lines with one edit: the blocks after the edit are walked on their own, those around it
/// may not end between documents, and the result must be the serial walk's all the same.
#[test]
fn parallel_walk_of_lines_matches_the_serial_scan_on_broken_lines() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut l = Layout {
        pretty: false,
        depth: 0,
    };
    let (mut rejected, mut taken) = (0, 0);
    for _ in 0..150 {
        let mut lines = String::new();
        for _ in 0..12 {
            export(&mut rng, &mut l, &mut lines);
            lines.push('\n');
        }
        let bad = broken(&mut rng, &lines);
        let expected = serial_reference(&bad);
        rejected += usize::from(expected.is_none());
        taken += usize::from(expected.is_some());
        let first_line = bad.iter().position(|&b| b == b'\n').unwrap_or(bad.len());
        for block in [1, first_line / 2 + 1, 3 * first_line + 1] {
            assert_scans_as_serial(&bad, block, expected.as_ref());
        }
    }
    assert!(
        rejected > 20 && taken > 20,
        "{rejected} rejected, {taken} taken"
    );
}
