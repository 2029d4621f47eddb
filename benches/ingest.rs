//! Throughput of each stage of `faultgate check` (the survey of a file's bytes, scan, open, the trace-id
//! hashes of the identity rule, decode into tables, checks) and of the whole path, on a ~50 MB OTLP/JSON
//! export built in memory. Decoding and table building are one stage: decoders append values straight
//! into the Arrow builders.
//!
//! No benchmark framework: each stage runs `FG_BENCH_RUNS` times (default 5) and the median is
//! reported, which is steady enough on a shared machine and keeps `cargo bench --bench ingest` well
//! under two minutes. Every stage's output is checked against what the input must give (trace and span
//! counts, the number of failing traces), so the measured work cannot be skipped or go wrong unnoticed.
//!
//! The export is a seeded shuffle of copies of the traces in `examples/gate/*.json`, each copy with fresh
//! trace and span ids, laid out like the examples (one export, indent 1). `FG_BENCH_MB` sets its size
//! (default 50) and `FG_BENCH_SEED` the seed (default 0). `FG_BENCH_LINES=1` lays the same traces out
//! as compact JSON lines, one export per trace, as the Collector writes them: the scan then cuts its
//! blocks between lines and walks them in parallel.

use std::collections::HashMap;
use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use faultgate::checks::{CheckKind, Reasons, SideInputs, checks};
use faultgate::ingest::{self, Format, ReadOptions, for_each_batch, scan};
use faultgate::redact::Redaction;
use faultgate::report::VerdictBatch;
use faultgate::run::{RunSettings, run_batch};
use faultgate::table::{TableOptions, TraceBatch};
use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;
use serde_json::ser::{PrettyFormatter, Serializer};

const SPANS_SLOT: &str = "@@SPANS@@";

fn main() {
    let runs = env_usize("FG_BENCH_RUNS", 5).max(1);
    let target_mb = env_usize("FG_BENCH_MB", 50).max(1);
    let seed = env_usize("FG_BENCH_SEED", 0) as u64;

    let settings = default_settings();
    let templates = load_templates(&settings);
    let lines = env_usize("FG_BENCH_LINES", 0) == 1;
    let export = generate(&templates, target_mb * 1_000_000, seed, lines);
    let mb = export.bytes.len() as f64 / 1e6;
    println!(
        "ingest bench: {mb:.1} MB {}, {} traces, {} spans, {} failing (seed {seed}; median of {runs} runs; {} threads)",
        if lines {
            "of compact JSON lines, a trace a line"
        } else {
            "in one export"
        },
        export.traces,
        export.spans,
        export.failing,
        rayon::current_num_threads()
    );
    println!();
    println!("| stage | median s | MB/s | traces/s | spans/s |\n|---|---:|---:|---:|---:|");

    let path = Path::new("bench.json");
    let options = ReadOptions::new(Format::Auto, TableOptions::default());

    let (t_survey, found) = time(runs, || {
        let survey = ingest::Survey::new(&export.bytes, true);
        (
            survey.first_invalid_utf8(),
            survey.mentions_resource_logs(),
            survey.mentions_openinference_kind(),
        )
    });
    assert_eq!(found, (None, false, false), "survey: UTF-8 text, no marker");
    row(
        "survey (UTF-8, format markers)",
        t_survey,
        &export,
        true,
        false,
    );

    let (t_scan, slices) = time(runs, || {
        scan::locate_spans(&export.bytes).expect("export scans")
    });
    assert_eq!(slices.len(), export.spans, "scan: span count");
    row("scan (locate spans)", t_scan, &export, true, true);
    drop(slices);

    let (t_open, traces) = time(runs, || {
        ingest::open(path, &export.bytes, &options)
            .expect("generated export opens")
            .traces
            .len()
    });
    assert_eq!(traces, export.traces, "open: trace count");
    row(
        "open (survey + scan + group by trace)",
        t_open,
        &export,
        true,
        true,
    );

    let opened = ingest::open(path, &export.bytes, &options).expect("generated export opens");
    // What the trace-identity rule costs a run that shares nothing: a hash of each trace id, taken
    // from the index as the file is read, then one sort of the run's hashes.
    let (t_ids, distinct) = time(runs, || {
        let traces = opened.traces.as_ref();
        let mut hashes: Vec<u64> = (0..traces.len())
            .map(|t| ingest::id_hash(&traces.trace_id(t)))
            .collect();
        hashes.sort_unstable();
        hashes.dedup();
        hashes.len()
    });
    assert_eq!(distinct, export.traces, "id hashes: one per trace");
    row(
        "trace-id hashes (identity rule)",
        t_ids,
        &export,
        false,
        false,
    );

    let (t_decode, batches) = time(runs, || {
        let mut batches = Vec::new();
        for_each_batch(path, opened.traces.as_ref(), &options, &|b| b, &mut |b| {
            batches.push(b);
            Ok(())
        })
        .expect("generated export decodes");
        batches
    });
    let spans: usize = batches.iter().map(|b| b.spans.num_rows()).sum();
    assert_eq!(spans, export.spans, "decode: span rows");
    row("decode + table build", t_decode, &export, true, true);

    let (t_checks, failed) = time(runs, || {
        batches
            .par_iter()
            .map(|batch| failing(&run_batch(batch, &settings)))
            .sum::<usize>()
    });
    assert_eq!(failed, export.failing, "checks: failing traces");
    row("checks", t_checks, &export, false, false);
    drop(batches);
    drop(opened);

    let (t_all, failed) = time(runs, || {
        let opened = ingest::open(path, &export.bytes, &options).expect("generated export opens");
        let mut failed = 0;
        let each = |batch: TraceBatch| failing(&run_batch(&batch, &settings));
        for_each_batch(path, opened.traces.as_ref(), &options, &each, &mut |n| {
            failed += n;
            Ok(())
        })
        .expect("generated export decodes");
        failed
    });
    assert_eq!(failed, export.failing, "end to end: failing traces");
    row(
        "end to end (open, decode, build, check)",
        t_all,
        &export,
        true,
        true,
    );
}

/// The checks `faultgate check FILE` runs with no flags: the default rule checks (golden, judge,
/// outcome and workflow checks need inputs a plain run does not have).
fn default_settings() -> RunSettings {
    RunSettings {
        checks: checks()
            .filter(|c| c.default_enabled() && c.kind() == CheckKind::Rule)
            .collect(),
        inputs: SideInputs::default(),
        judge: None,
        redaction: Redaction::Builtin,
        format: Format::Auto,
        keep_raw_scenario: false,
        reasons: Reasons::None,
        failing_steps: 0,
        progress: None,
        skip_bad_input: false,
        agent_version: None,
        outcome_score: None,
        slices: None,
        sessions: None,
        links: None,
    }
}

/// Runs `f` `runs` times; returns the median time and the last result.
fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        // The previous result is dropped outside the timed region.
        drop(last.take());
        let start = Instant::now();
        let out = black_box(f());
        times.push(start.elapsed());
        last = Some(out);
    }
    times.sort();
    (times[runs / 2], last.expect("at least one run"))
}

fn row(stage: &str, t: Duration, export: &Export, bytes: bool, spans: bool) {
    let s = t.as_secs_f64();
    let mbps = if bytes {
        format!("{:.1}", export.bytes.len() as f64 / 1e6 / s)
    } else {
        "-".into()
    };
    let sps = if spans {
        format!("{:.0}", export.spans as f64 / s)
    } else {
        "-".into()
    };
    println!(
        "| {stage} | {s:.3} | {mbps} | {:.0} | {sps} |",
        export.traces as f64 / s
    );
}

fn failing(results: &VerdictBatch) -> usize {
    results
        .rows()
        .filter(faultgate::report::Row::failed)
        .count()
}

fn env_usize(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a whole number, not {v:?}")),
        Err(_) => default,
    }
}

/// One example trace: its spans, and whether the default checks fail it.
struct Template {
    spans: Vec<Value>,
    failing: bool,
}

/// Templates plus the resource and scope of the first export, which frame the generated one.
struct Templates {
    traces: Vec<Template>,
    resource: Value,
    scope: Value,
}

fn load_templates(settings: &RunSettings) -> Templates {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/gate");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples/gate exists")
        .map(|e| e.expect("examples/gate lists").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut out = Templates {
        traces: Vec::new(),
        resource: Value::Null,
        scope: Value::Null,
    };
    for file in files {
        let bytes = std::fs::read(&file).expect("example reads");
        let doc: Value = serde_json::from_slice(&bytes).expect("example is JSON");
        let Some(resource_spans) = doc.get("resourceSpans").and_then(Value::as_array) else {
            continue; // band, golden and policy files sit next to the traces
        };
        // Which traces fail comes from running the checks on the example itself: copies keep their
        // spans and attributes, so they must get the same verdicts.
        let (_, read) = ingest::read_bytes(&file, &bytes, Format::Auto).expect("example reads");
        let fails: HashMap<String, bool> = verdicts(&read, settings);
        let mut order: Vec<String> = Vec::new();
        let mut by_trace: HashMap<String, Vec<Value>> = HashMap::new();
        for rs in resource_spans {
            if out.resource.is_null() {
                out.resource = rs.get("resource").cloned().unwrap_or(Value::Null);
            }
            for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
                if out.scope.is_null() {
                    out.scope = ss.get("scope").cloned().unwrap_or(Value::Null);
                }
                for span in ss["spans"].as_array().into_iter().flatten() {
                    let id = span["traceId"]
                        .as_str()
                        .expect("span has a traceId")
                        .to_string();
                    if !by_trace.contains_key(&id) {
                        order.push(id.clone());
                    }
                    by_trace.entry(id).or_default().push(span.clone());
                }
            }
        }
        for id in order {
            let failing = fails[&id];
            out.traces.push(Template {
                spans: by_trace.remove(&id).unwrap_or_default(),
                failing,
            });
        }
    }
    assert!(
        !out.traces.is_empty(),
        "no example traces in {}",
        dir.display()
    );
    out
}

fn verdicts(batch: &TraceBatch, settings: &RunSettings) -> HashMap<String, bool> {
    run_batch(batch, settings)
        .rows()
        .map(|r| (r.trace_id().to_string(), r.failed()))
        .collect()
}

/// The generated export and what reading and checking it must give.
struct Export {
    bytes: Vec<u8>,
    traces: usize,
    spans: usize,
    failing: usize,
}

/// Copies templates in seeded, shuffled rounds until the export reaches `target` bytes.
fn generate(templates: &Templates, target: usize, seed: u64, lines: bool) -> Export {
    let mut rng = SplitMix64(seed ^ 0x6661_756c_7467_6174);
    let frame = serde_json::json!({"resourceSpans": [{
        "resource": templates.resource,
        "scopeSpans": [{"scope": templates.scope, "spans": [SPANS_SLOT]}],
    }]});
    let layout = |value: &Value| {
        if lines {
            serde_json::to_vec(value).expect("JSON value serialises")
        } else {
            pretty(value)
        }
    };
    let framed = layout(&frame);
    let slot = format!("\"{SPANS_SLOT}\"");
    let at = framed
        .windows(slot.len())
        .position(|w| w == slot.as_bytes())
        .expect("frame holds the slot");
    let (head, tail) = (&framed[..at], &framed[at + slot.len()..]);

    let mut bytes = Vec::with_capacity(target + target / 8);
    if !lines {
        bytes.extend_from_slice(head);
    }
    let mut export = Export {
        bytes: Vec::new(),
        traces: 0,
        spans: 0,
        failing: 0,
    };
    let mut order: Vec<usize> = (0..templates.traces.len()).collect();
    'rounds: loop {
        rng.shuffle(&mut order);
        for &i in &order {
            if bytes.len() >= target {
                break 'rounds;
            }
            let template = &templates.traces[i];
            let trace_id = format!("{:016x}{:016x}", rng.next(), rng.next());
            let mut span_ids: HashMap<String, String> = HashMap::new();
            let mut fresh = |old: &str| {
                span_ids
                    .entry(old.to_string())
                    .or_insert_with(|| format!("{:016x}", rng.next()))
                    .clone()
            };
            if lines {
                bytes.extend_from_slice(head);
            }
            for (s, span) in template.spans.iter().enumerate() {
                let mut span = span.clone();
                let obj = span.as_object_mut().expect("span is an object");
                obj.insert("traceId".into(), Value::String(trace_id.clone()));
                for key in ["spanId", "parentSpanId"] {
                    if let Some(old) = obj.get(key).and_then(Value::as_str)
                        && !old.is_empty()
                    {
                        let new = fresh(old);
                        obj.insert(key.into(), Value::String(new));
                    }
                }
                if lines && s > 0 {
                    bytes.push(b',');
                } else if !lines && export.spans > 0 {
                    bytes.extend_from_slice(b",\n");
                }
                bytes.extend_from_slice(&layout(&span));
                export.spans += 1;
            }
            if lines {
                bytes.extend_from_slice(tail);
                bytes.push(b'\n');
            }
            export.traces += 1;
            export.failing += usize::from(template.failing);
        }
    }
    if !lines {
        bytes.extend_from_slice(tail);
        bytes.write_all(b"\n").expect("writing to a Vec");
    }
    export.bytes = bytes;
    export
}

/// JSON with one-space indentation, like the shipped examples.
fn pretty(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    let mut ser = Serializer::with_formatter(&mut out, PrettyFormatter::with_indent(b" "));
    value.serialize(&mut ser).expect("JSON value serialises");
    out
}

/// A small seeded generator (SplitMix64): enough for ids and shuffles, and no dependency.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            items.swap(i, j);
        }
    }
}
