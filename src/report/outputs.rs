//! The outputs of a run whose trace ids are distinct, written in one pass over its verdicts.
//!
//! The table is printed as the rows go by; the files' rows wait in their sinks ([`super::pass`]), and
//! once the gate has been printed the files are written side by side and put in place each in its
//! turn, so the order of what is printed and the error an output reports are those of writing the
//! outputs one after the other. A run in
//! which two rows share a trace id is written from the run held whole instead, since its rows merge.

use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};

use super::counts::SpilledCounts;
use super::gate_input::{GateInput, GateTally, Wanted, whole_run_input};
use super::pass::{Sink, VerdictSource, feed};
use super::render::audit::FailingSink;
use super::render::json::JsonSink;
use super::render::junit::JunitSink;
use super::render::parquet::{ParquetSink, TraceTrials, TrialCounting};
use super::render::slices::SlicesShown;
use super::render::terminal::{IdColumn, TableRows, TableSink};
use super::shown_rows::{Shown, ShownRowsSink};
use super::spill::{SpillError, SpilledRun};
use super::{OutcomeSummary, Report};
use crate::compat::fmt::fmt_fixed;
use crate::gate::{BandFile, Gate};
use crate::output::{StagedDir, Unplaced, write_beside};

use super::render::otlp_events;
use super::schema::{JsonReport, JudgeUsage};
use crate::gate::passk::PassKTable;
use crate::gate::slices::SliceVerdict;

use super::explanation::Explanation;
use super::render::gate_lines::{REGRESSIONS, gate_lines};

/// A run's verdicts as its outputs read them, and what was counted of them.
pub(crate) struct CountedRun {
    /// The spill the run stays in; `None` when its batches are in the report.
    pub spilled: Option<SpilledRun>,
    /// The run's counts when its trace ids are distinct, so every output is written in one pass
    /// ([`write`]); `None` when the outputs are written from the run held whole.
    pub streamed: Option<SpilledCounts>,
    /// What the gate and the outcome and pass^k blocks need.
    pub counted: GateInput,
    /// The trial columns of `traces.parquet`.
    pub trials: TraceTrials,
}

/// Counts a run: as it was spilled, or (when the gate tallies scenarios in input order, the rows read
/// back are not those written, or the run stayed in memory) in a pass of its own over its verdicts.
/// A run in which two rows share a trace id is taken back whole into `report`, as its rows merge in
/// the outputs; so is a run `whole` asks for (`--explain` reads it again). `set_aside` are the checks
/// `--trust` keeps out of the gate; `parquet_trials` counts the trial columns of `traces.parquet`.
///
/// # Errors
///
/// The spill cannot be read back.
pub(crate) fn count_run(
    report: &mut Report,
    spilled: Option<SpilledRun>,
    whole: bool,
    set_aside: &[String],
    wanted: Wanted,
    parquet_trials: bool,
) -> Result<CountedRun, SpillError> {
    let mut tally = GateTally::new(report, set_aside, wanted, [0.0; 3]);
    let mut spilled = match spilled {
        Some(spilled) if whole => {
            report.batches = spilled.load()?;
            None
        }
        spilled => spilled,
    };
    let written = spilled
        .as_mut()
        .filter(|_| !tally.is_needed())
        .and_then(SpilledRun::take_written_counts);
    let mut trials = (parquet_trials && wanted.pass_k).then(TrialCounting::default);
    let streamed = match written {
        Some(counting) => counting.finish().map_err(SpillError::from)?,
        None => {
            let source = match &spilled {
                Some(spilled) => VerdictSource::Spilled(spilled),
                None => VerdictSource::Memory(&report.batches),
            };
            super::render::terminal::count(report, source, |batch| {
                tally.add_batch(batch);
                if let Some(trials) = &mut trials {
                    trials.add(batch);
                }
            })?
        }
    };
    if streamed.is_none()
        && let Some(spilled) = spilled.take()
    {
        report.batches = spilled.load()?;
    }
    let counted = match &streamed {
        Some(_) => tally.finish(),
        None => whole_run_input(report, set_aside, wanted, [0.0; 3]),
    };
    let trials = match trials.filter(|_| counted.pass_k.is_some()) {
        Some(trials) => trials.finish(),
        None => TraceTrials::none(),
    };
    Ok(CountedRun {
        spilled,
        streamed,
        counted,
        trials,
    })
}

/// Which outputs a run writes, and how its table is shown.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Asked<'a> {
    /// `--json`.
    pub json: bool,
    /// `--markdown` or `--html`: the rows their bounded lists show are kept.
    pub shown: bool,
    /// `--audit`.
    pub audit: bool,
    /// `--junit`.
    pub junit: bool,
    /// `--parquet`.
    pub parquet: bool,
    /// The table's rows (`--table`), ids and colour.
    pub table: TableRows,
    pub ids: IdColumn,
    pub colour: bool,
    /// `--by`: `traces.parquet` has the slice column.
    pub sliced: bool,
    /// Where the outputs' rows wait (`--spill-dir`; `TMPDIR` when `None`).
    pub dir: Option<&'a Path>,
}

/// Each output's sink after the pass, or the error that stopped it (reported in the output's turn).
#[derive(Default)]
pub(crate) struct Written<'a> {
    pub json: Option<io::Result<JsonSink>>,
    pub shown_rows: Option<io::Result<ShownRowsSink<'a>>>,
    pub failing: Option<io::Result<FailingSink>>,
    pub junit: Option<io::Result<JunitSink>>,
    pub parquet: Option<io::Result<ParquetSink<'a>>>,
}

/// Why the pass stopped.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PassError {
    /// The table could not be printed.
    #[error(transparent)]
    Table(io::Error),
    /// The spill could not be read back.
    #[error(transparent)]
    Spill(#[from] SpillError),
}

/// A sink that failed keeps its error and takes no more rows.
impl<S: Sink> Sink for io::Result<S> {
    fn take(&mut self, batch: &super::VerdictBatch) -> io::Result<()> {
        if let Ok(sink) = self
            && let Err(e) = sink.take(batch)
        {
            *self = Err(e);
        }
        Ok(())
    }
}

/// What `check` prints of a run before its gate: the run, and the blocks counted beside it.
pub(crate) struct Results<'a> {
    pub report: &'a Report,
    /// The run's verdicts.
    pub source: VerdictSource<'a>,
    /// The trial columns of `traces.parquet`.
    pub trials: &'a TraceTrials,
    /// Seconds the run took, for the summary line.
    pub elapsed: f64,
    pub outcome: Option<&'a OutcomeSummary>,
    pub pass_k: Option<&'a PassKTable>,
    pub slices: Option<&'a SlicesShown<'a>>,
}

/// Prints the table, the summary line and the outcome, pass^k and slices lines under it to `out`.
/// A run whose trace ids are distinct (`streamed` gives its counts) prints its table in the one pass
/// that fills every asked output's sink, and its sinks are returned with its counts; a run written
/// whole prints its table from the report, and its outputs are written from it.
///
/// # Errors
///
/// `out` cannot be written, or the spill cannot be read back.
pub(crate) fn print_results<'a>(
    out: &mut (impl Write + Send),
    results: &Results<'a>,
    asked: &Asked<'_>,
    streamed: Option<SpilledCounts>,
) -> Result<Option<(Written<'a>, SpilledCounts)>, PassError> {
    let report = results.report;
    let streamed = match streamed {
        Some(counts) => Some((
            write(
                asked,
                report,
                &counts,
                results.trials,
                results.source,
                &mut *out,
            )?,
            counts,
        )),
        None => None,
    };
    let mut print = || -> io::Result<()> {
        if streamed.is_none() {
            let table = super::render::terminal::table(report, asked.table, asked.ids);
            if asked.colour {
                let cells = report.checks.len();
                write!(
                    out,
                    "{}",
                    super::render::colour::colour_table(&table, cells)
                )?;
            } else {
                write!(out, "{table}")?;
            }
        }
        // The blank line separates the table from the summary; without a table the summary comes
        // first.
        if asked.table != TableRows::None {
            writeln!(out)?;
        }
        let summary_line = match &streamed {
            Some((_, counts)) => super::render::terminal::summary_of(
                report,
                counts.failed,
                counts.traces,
                &counts.fired_by_name(report),
                counts.user_steps,
                counts.recorded_outcomes,
            ),
            None => super::render::terminal::summary(report),
        };
        writeln!(out, "{summary_line} · {}s", fmt_fixed(results.elapsed, 1))?;
        if let Some(o) = results.outcome {
            writeln!(out, "{}", super::render::terminal::outcome_line(o))?;
        }
        if let Some(table) = results.pass_k {
            writeln!(out, "{}", super::render::gate_lines::pass_k_line(table))?;
        }
        if let Some(shown) = results.slices {
            for line in shown.terminal_lines() {
                writeln!(out, "{line}")?;
            }
        }
        Ok(())
    };
    print().map_err(PassError::Table)?;
    Ok(streamed)
}

/// The gate as `check` prints it, with what explains its regressions.
pub(crate) struct GateShown<'a> {
    pub gate: &'a Gate,
    /// The band's runs in words ([`crate::gate::BandFile::runs_text`]).
    pub band_runs: &'a str,
    /// `--explain`: the regressions explained, and the notes about what could not be.
    pub explanations: &'a [Explanation],
    pub notes: &'a [String],
    /// The slices judged against the band's, and why they were not when they were not.
    pub slice_verdicts: Option<&'a [SliceVerdict]>,
    pub slice_warning: Option<&'a str>,
    /// `--gate-slices`.
    pub gate_slices: bool,
    /// The gate lines are coloured.
    pub colour: bool,
}

/// Prints the gate's lines to `out` and its warnings and notes to stderr.
///
/// # Errors
///
/// `out` or stderr cannot be written.
pub(crate) fn print_gate(out: &mut impl Write, shown: &GateShown<'_>) -> io::Result<()> {
    let (warnings, lines) = gate_lines(shown.gate, shown.band_runs);
    let mut stderr = io::stderr().lock();
    for w in warnings {
        writeln!(stderr, "{w}")?;
    }
    for note in shown.notes {
        writeln!(stderr, "note: {note}")?;
    }
    drop(stderr);
    let (under, others) = super::explanation::terminal_lines(shown.explanations);
    let gate_line = |out: &mut dyn Write, line: &str| {
        if shown.colour {
            writeln!(out, "{}", super::render::colour::colour_gate_line(line))
        } else {
            writeln!(out, "{line}")
        }
    };
    for line in lines {
        gate_line(out, &line)?;
        if line.starts_with(REGRESSIONS) {
            for line in &under {
                writeln!(out, "{line}")?;
            }
        }
    }
    for line in others {
        writeln!(out, "{line}")?;
    }
    if let Some(verdicts) = shown.slice_verdicts {
        let mut lines = super::render::slices::gate_lines(verdicts, shown.gate_slices);
        lines.extend(super::render::slices::failing_lines(
            verdicts,
            shown.gate_slices,
        ));
        if verdicts.is_empty() {
            writeln!(out, "{}", super::render::slices::none_judged_line())?;
        }
        for line in lines {
            gate_line(out, &line)?;
        }
    }
    if let Some(warning) = shown.slice_warning {
        writeln!(io::stderr(), "{warning}")?;
    }
    Ok(())
}

/// Where a run's output files go (each `None` when not asked for).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Files<'a> {
    pub json: Option<&'a Path>,
    pub markdown: Option<&'a Path>,
    pub audit: Option<&'a Path>,
    pub junit: Option<&'a Path>,
    pub html: Option<&'a Path>,
    pub parquet: Option<&'a Path>,
    pub otlp_events: Option<&'a Path>,
    /// `--otlp-endpoint`, with how the events are encoded.
    pub otlp_endpoint: Option<(&'a str, otlp_events::send::Protocol)>,
}

/// What a run's output files are written from.
pub(crate) struct RunFiles<'a> {
    pub report: &'a Report,
    /// The run's verdicts.
    pub source: VerdictSource<'a>,
    /// The judge's token counts, when its judge answered.
    pub judge_usage: Option<JudgeUsage>,
    pub outcome: Option<&'a OutcomeSummary>,
    pub pass_k: Option<&'a PassKTable>,
    /// The gate with the band's runs in words, and the band.
    pub gate: Option<&'a (Gate, String)>,
    pub band: Option<&'a BandFile>,
    /// `--explain`'s explanations.
    pub explanations: Option<&'a [Explanation]>,
    pub slices: Option<&'a SlicesShown<'a>>,
    /// The reproduce command.
    pub command: &'a str,
    /// The run's exit code, recorded by the audit.
    pub exit_code: i32,
    pub ids: IdColumn,
}

/// Why an output could not be written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WriteError {
    /// stdout could not be written.
    #[error(transparent)]
    Print(#[from] io::Error),
    /// An output file could not be written, with its writer's reason.
    #[error("{0}")]
    Output(String),
    /// The rows the reports show could not be kept, or the events could not be posted.
    #[error("{0}")]
    Invalid(String),
}

/// Writes every asked output file in turn, each followed by its line on `out`: from the sinks the
/// pass filled (`streamed`, with the run's counts), or from the run held whole. `audit_digests` gives
/// the audit's inputs with their digests, once the audit is written.
///
/// # Errors
///
/// An output cannot be written, or `out` cannot.
pub(crate) fn write_files(
    out: &mut impl Write,
    files: &Files<'_>,
    run: &RunFiles<'_>,
    streamed: Option<(Written<'_>, SpilledCounts)>,
    audit_digests: impl FnOnce() -> super::render::audit::InputDigests + Send,
) -> Result<(), WriteError> {
    std::thread::scope(|scope| {
        let mut placing = Placing::start(scope);
        write_each(out, files, run, streamed, audit_digests, &mut placing)?;
        placing.settle(out)
    })
}

/// [`write_files`]' outputs, each handed to `placing` in its turn to be put in place. The JSON report
/// is written on this thread; the audit, JUnit, and the Markdown and HTML texts are made meanwhile on
/// threads of their own ([`Turn`]), as each costs the better part of a second on a large run.
fn write_each(
    out: &mut impl Write,
    files: &Files<'_>,
    run: &RunFiles<'_>,
    streamed: Option<(Written<'_>, SpilledCounts)>,
    audit_digests: impl FnOnce() -> super::render::audit::InputDigests + Send,
    placing: &mut Placing,
) -> Result<(), WriteError> {
    let report = run.report;
    let command = run.command;
    let gate = run.gate.map(|(g, _)| g);
    let (written, counts) = match streamed {
        Some((written, counts)) => (written, Some(counts)),
        None => (Written::default(), None),
    };
    let counts = counts.as_ref();
    let Written {
        json: json_sink,
        shown_rows: shown_sink,
        failing: failing_sink,
        junit: junit_sink,
        parquet: parquet_sink,
    } = written;
    std::thread::scope(|scope| {
        let shown_texts = (files.markdown.is_some() || files.html.is_some()).then(|| {
            Turn::new(scope, true, move || {
                shown_texts(files, run, shown_sink, counts)
            })
        });
        let audit = files.audit.map(|dir| {
            let failing = failing_sink.transpose();
            Turn::new(scope, crate::output::hidden_until_placed(dir), move || {
                failing.and_then(|failing| {
                    super::render::audit::stage(
                        dir,
                        &super::render::audit::Audit {
                            report,
                            gate,
                            exit_code: run.exit_code,
                            command,
                            created_utc: super::render::audit::utc_now(),
                            streamed: counts,
                        },
                        audit_digests(),
                        failing,
                    )
                })
            })
        });
        let junit = files.junit.map(|path| {
            let sink = junit_sink.transpose();
            Turn::new(
                scope,
                crate::output::hidden_until_placed(path),
                move || match counts {
                    Some(counts) => sink.and_then(|sink| {
                        write_beside(path, |out| match sink {
                            Some(sink) => sink.finish(out, report, gate, counts),
                            None => Ok(()),
                        })
                    }),
                    None => {
                        let text = super::render::junit::render(report, gate);
                        write_beside(path, |out| out.write_all(text.as_bytes()))
                    }
                },
            )
        });
        let parquet = files.parquet.map(|dir| {
            Turn::new(scope, crate::output::hidden_until_placed(dir), move || {
                parquet_tables(dir, run, parquet_sink, counts.is_some())
            })
        });
        if let Some(path) = files.json {
            let json = json_sink.transpose().and_then(|sink| {
                let doc = json_doc(run, counts);
                write_beside(path, |out| match (sink, counts) {
                    (Some(sink), Some(_)) => sink.finish(out, doc, run.source),
                    (None, Some(_)) => Ok(()),
                    (_, None) => out.write_all(super::schema::to_pretty(&doc).as_bytes()),
                })
            });
            placing.place(out, "report", path, json)?;
        }
        let (markdown, html) = match shown_texts.map(Turn::result) {
            Some(Ok(texts)) => texts,
            Some(Err(e)) => {
                placing.settle(out)?;
                return Err(WriteError::Invalid(e.to_string()));
            }
            None => (None, None),
        };
        if let Some((path, text)) = files.markdown.zip(markdown) {
            let markdown = write_beside(path, |out| out.write_all(text.as_bytes()));
            placing.place(out, "markdown", path, markdown)?;
        }
        if let Some((dir, staged)) = files.audit.zip(audit) {
            placing.place(out, "audit", dir, staged.result())?;
        }
        if let Some((path, junit)) = files.junit.zip(junit) {
            placing.place(out, "junit", path, junit.result())?;
        }
        if let Some((path, page)) = files.html.zip(html) {
            let html = write_beside(path, |out| out.write_all(page.as_bytes()));
            placing.place(out, "html", path, html)?;
        }
        if let Some((dir, tables)) = files.parquet.zip(parquet) {
            placing.place(out, "parquet", dir, tables.result())?;
        }
        Ok(())
    })?;
    let events = otlp_events::Export {
        report,
        gate,
        source: run.source,
        counted: counts.map(|counts| otlp_events::Counted {
            traces: counts.traces,
            failed: counts.failed,
        }),
    };
    if let Some(path) = files.otlp_events {
        let written = write_beside(path, |w| otlp_events::write_json(w, events));
        placing.place(out, "otlp events", path, written)?;
    }
    if let Some((url, protocol)) = files.otlp_endpoint {
        placing.settle(out)?;
        otlp_events::send::send(url, protocol, events, Default::default())
            .map_err(|e| WriteError::Invalid(e.to_string()))?;
        writeln!(
            out,
            "otlp events sent to {}",
            otlp_events::send::shown_url(&otlp_events::send::logs_url(url))
        )?;
    }
    Ok(())
}

/// The JSON report of `run`, but for the per-trace lists of a run written in a pass (`counts` gives
/// its counts), which its sink writes.
fn json_doc(run: &RunFiles<'_>, counts: Option<&SpilledCounts>) -> JsonReport {
    let report = run.report;
    let without_rows;
    let listed = match counts {
        Some(_) => {
            without_rows = Report {
                batches: Vec::new(),
                ..report.clone()
            };
            &without_rows
        }
        None => report,
    };
    let doc = JsonReport {
        // Only a run whose judge answered has token counts, so a run without one keeps 0.4.1's bytes.
        judge_usage: run.judge_usage,
        outcome: run.outcome.map(super::render::json::outcome),
        pass_k: run.pass_k.map(super::render::json::pass_k),
        gate: run.gate.map(|(gate, _)| super::render::json::gate(gate)),
        explanations: run.explanations.map(<[_]>::to_vec),
        slices: run.slices.map(SlicesShown::json),
        ..super::render::json::report(listed)
    };
    let traces = counts.map_or(doc.traces, |counts| counts.traces);
    let units = report
        .sessions
        .as_deref()
        .map(|sessions| super::schema::UnitsBlock {
            sessions: sessions.len(),
            traces_without_conversation: traces.saturating_sub(sessions.len()),
        });
    match counts {
        Some(counts) => JsonReport {
            traces: counts.traces,
            fired: counts.fired_by_name(report).into_iter().collect(),
            units,
            ..doc
        },
        None => JsonReport { units, ..doc },
    }
}

/// The Markdown and HTML texts `files` asks for. A run written in a pass (`counts` gives its counts)
/// shows the rows its bounded lists need, which `sink` kept, beside the run's counts.
///
/// # Errors
///
/// The rows could not be kept.
fn shown_texts(
    files: &Files<'_>,
    run: &RunFiles<'_>,
    sink: Option<io::Result<ShownRowsSink<'_>>>,
    counts: Option<&SpilledCounts>,
) -> io::Result<(Option<String>, Option<String>)> {
    let shown_rows = match sink.zip(counts) {
        Some((sink, counts)) => Some(sink?.finish(run.report, counts)),
        None => None,
    };
    let (report, counts) = match &shown_rows {
        Some(rows) => (&rows.report, Some(&rows.counts)),
        None => (run.report, None),
    };
    let markdown = files.markdown.map(|_| {
        let text = super::render::markdown::render(&super::render::markdown::Summary {
            report,
            outcome: run.outcome,
            gate: run
                .band
                .zip(run.gate)
                .map(|(band, (gate, _))| super::render::markdown::GateContext { gate, band }),
            pass_k: run.pass_k,
            command: run.command,
            explanations: run.explanations.unwrap_or_default(),
            counts,
            ids: run.ids,
        });
        // The slices come last, so the document without --by is unchanged.
        match run.slices {
            Some(shown) => format!("{text}\n{}", shown.markdown_lines().join("\n")),
            None => text,
        }
    });
    let html = files.html.map(|_| {
        let page = super::render::html::render(&super::render::html::Page {
            report,
            outcome: run.outcome,
            gate: run.gate.zip(run.band).map(|((g, _), b)| (g, b)),
            command: run.command,
            explanations: run.explanations.unwrap_or_default(),
            counts,
        });
        // The slices' table goes at the end of the body, so the page without --by is unchanged.
        match run.slices {
            Some(shown) => match page.rfind("</body>") {
                Some(at) => format!("{}{}{}", &page[..at], shown.html(), &page[at..]),
                None => page,
            },
            None => page,
        }
    });
    Ok((markdown, html))
}

/// The Parquet tables of `run` staged in the folder `dir`: from `sink`, filled in the pass when
/// `streamed`, or from the run held whole; with `budgets.parquet` when the gate has budgets.
///
/// # Errors
///
/// A table cannot be encoded, or a file cannot be written.
fn parquet_tables(
    dir: &Path,
    run: &RunFiles<'_>,
    sink: Option<io::Result<ParquetSink<'_>>>,
    streamed: bool,
) -> io::Result<StagedDir> {
    let mut staged = StagedDir::new(dir)?;
    match (sink, streamed) {
        (Some(sink), true) => sink?.finish(&mut staged)?,
        (None, true) => {}
        (_, false) => super::render::parquet::write_check(
            &mut staged,
            run.report,
            run.pass_k.is_some(),
            run.slices.is_some(),
        )?,
    }
    if let Some(budgets) = run.gate.and_then(|(g, _)| g.budgets.as_deref()) {
        super::render::parquet::write_budgets(&mut staged, budgets)?;
    }
    Ok(staged)
}

/// An output made on a thread of its own while the ones before it are written; or in its turn, when
/// making it early would show before them (a FIFO or device written in place, a folder created).
enum Turn<'scope, T> {
    Early(std::thread::ScopedJoinHandle<'scope, T>),
    InTurn(Box<dyn FnOnce() -> T + Send + 'scope>),
}

impl<'scope, T: Send + 'scope> Turn<'scope, T> {
    /// Starts `make` on a thread of `scope` when `early`, or keeps it for its turn.
    fn new<'env>(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        early: bool,
        make: impl FnOnce() -> T + Send + 'scope,
    ) -> Self {
        if early {
            Turn::Early(scope.spawn(make))
        } else {
            Turn::InTurn(Box::new(make))
        }
    }

    /// What `make` gave, waiting for its thread.
    fn result(self) -> T {
        match self {
            Turn::Early(thread) => thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Turn::InTurn(make) => make(),
        }
    }
}

/// Puts an output in place once it is written whole (a sync and a rename).
type Commit = Box<dyn FnOnce() -> io::Result<()> + Send>;

/// An output written whole and not yet in place.
trait Placeable: Send + 'static {
    /// Puts it in place.
    fn commit(self) -> io::Result<()>;
}

impl Placeable for Unplaced {
    fn commit(self) -> io::Result<()> {
        Unplaced::commit(self)
    }
}

impl Placeable for StagedDir {
    fn commit(self) -> io::Result<()> {
        StagedDir::commit(self)
    }
}

/// The output files written and waiting to be put in place. One thread syncs and renames them into
/// place in the order they were written, while the next outputs are written (syncing a gigabyte to
/// disk takes about as long as writing the next output); each output's line is printed once it is in
/// place. The outputs appear, their lines are printed and their errors reported in the order they are
/// written: an output whose commit fails ends the run's outputs, and the ones written after it are
/// removed unplaced, as are those still queued when the outputs end in another error.
struct Placing {
    queue: mpsc::Sender<(Commit, String)>,
    placed: mpsc::Receiver<Result<String, io::Error>>,
    /// Outputs handed to the thread whose end has not been read.
    waiting: usize,
    /// Cleared when the outputs end: what is still queued then is not put in place.
    open: Arc<AtomicBool>,
}

impl Placing {
    /// The queue, and its thread in `scope`.
    fn start<'scope>(scope: &'scope std::thread::Scope<'scope, '_>) -> Placing {
        let (queue, commits) = mpsc::channel::<(Commit, String)>();
        let (ended, placed) = mpsc::channel();
        let open = Arc::new(AtomicBool::new(true));
        let still_open = Arc::clone(&open);
        scope.spawn(move || {
            for (commit, line) in commits {
                if !still_open.load(Ordering::Acquire) {
                    break;
                }
                let failed = match commit() {
                    Ok(()) => ended.send(Ok(line)).is_err(),
                    Err(e) => {
                        let _ = ended.send(Err(e));
                        true
                    }
                };
                // The outputs still queued are dropped, and their temporary files with them.
                if failed {
                    break;
                }
            }
        });
        Placing {
            queue,
            placed,
            waiting: 0,
            open,
        }
    }

    /// Reads the end of every output placed so far, printing their lines; with `wait`, of every
    /// output handed on.
    fn read(&mut self, out: &mut impl Write, wait: bool) -> Result<(), WriteError> {
        while self.waiting > 0 {
            let ended = if wait {
                self.placed.recv().ok()
            } else {
                match self.placed.try_recv() {
                    Ok(ended) => Some(ended),
                    Err(mpsc::TryRecvError::Empty) => return Ok(()),
                    Err(mpsc::TryRecvError::Disconnected) => None,
                }
            };
            self.waiting -= 1;
            match ended {
                Some(Ok(line)) => writeln!(out, "{line}")?,
                Some(Err(e)) => return Err(WriteError::Output(e.to_string())),
                None => {
                    return Err(WriteError::Output(
                        "an output could not be put in place".into(),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Waits until every output handed on is in place, and prints their lines.
    fn settle(&mut self, out: &mut impl Write) -> Result<(), WriteError> {
        self.read(out, true)
    }

    /// Hands on the output `written` gave for `path`, to be put in place after the ones before it,
    /// with the line `{what} written to {path}` after it. An earlier output's error comes before this
    /// one's.
    fn place<P: Placeable>(
        &mut self,
        out: &mut impl Write,
        what: &str,
        path: &Path,
        written: io::Result<P>,
    ) -> Result<(), WriteError> {
        match written {
            Ok(unplaced) => {
                let line = format!("{what} written to {}", path.display());
                self.hand_on(out, Box::new(move || unplaced.commit()), line)
            }
            Err(e) => {
                self.settle(out)?;
                Err(WriteError::Output(e.to_string()))
            }
        }
    }

    /// Hands on `commit`, to be run after the outputs before it are in place.
    fn hand_on(
        &mut self,
        out: &mut impl Write,
        commit: Commit,
        line: String,
    ) -> Result<(), WriteError> {
        self.read(out, false)?;
        // A thread stopped on an earlier output's error takes no more: the next read finds that
        // error (or the closed queue) before this output's end, and this output is dropped unplaced.
        let _ = self.queue.send((commit, line));
        self.waiting += 1;
        Ok(())
    }
}

impl Drop for Placing {
    fn drop(&mut self) {
        // Outputs that end early (stdout closed) put nothing more in place; the queue closes with
        // `self.queue`, which ends the thread.
        self.open.store(false, Ordering::Release);
    }
}

/// Prints the table of `report`'s rows to `table` and fills every asked output's sink, in one pass
/// over `source`.
///
/// # Errors
///
/// The table cannot be printed, or the spill cannot be read back.
pub(crate) fn write<'a>(
    asked: &Asked<'_>,
    report: &'a Report,
    counts: &SpilledCounts,
    trials: &'a TraceTrials,
    source: VerdictSource<'_>,
    table: impl Write + Send,
) -> Result<Written<'a>, PassError> {
    let dir = asked.dir;
    let mut table = TableSink::new(
        BufWriter::with_capacity(1 << 16, table),
        report,
        counts,
        asked.table,
        asked.ids,
        asked.colour,
    )
    .map_err(PassError::Table)?;
    let shown = Shown {
        failed_rows: super::render::markdown::MAX_LISTED.max(super::render::html::MAX_ROWS),
        policy_rows: super::render::markdown::MAX_LINES_FOR_POLICY_ROWS,
    };
    let mut written = Written {
        json: asked.json.then(|| JsonSink::new(report, dir)),
        shown_rows: asked.shown.then(|| Ok(ShownRowsSink::new(report, shown))),
        failing: asked.audit.then(|| FailingSink::new(report, dir)),
        junit: asked.junit.then(|| JunitSink::new(report, dir)),
        parquet: asked
            .parquet
            .then(|| ParquetSink::new(report, trials, asked.sliced, dir).map_err(io::Error::from)),
    };
    let mut sinks: Vec<&mut dyn Sink> = vec![&mut table];
    let Written {
        json,
        shown_rows,
        failing,
        junit,
        parquet,
    } = &mut written;
    push(&mut sinks, json);
    push(&mut sinks, shown_rows);
    push(&mut sinks, failing);
    push(&mut sinks, junit);
    push(&mut sinks, parquet);
    // A run without a table or an output file has nothing to read its rows for.
    if sinks.len() > 1 || asked.table != TableRows::None {
        let failed = feed(source, &mut sinks)?;
        if let Some(Some(e)) = failed.into_iter().next() {
            return Err(PassError::Table(e));
        }
    }
    table.into_inner().flush().map_err(PassError::Table)?;
    Ok(written)
}

/// Adds an asked output's sink to the pass.
fn push<'s, S: Sink>(sinks: &mut Vec<&'s mut dyn Sink>, sink: &'s mut Option<io::Result<S>>) {
    if let Some(sink) = sink {
        sinks.push(sink);
    }
}
