//! The progress bar of a long run: files, traces, throughput and time left, on stderr.
//!
//! It appears only after a run has taken [`SHOW_AFTER`], only when stderr is a terminal, and never with
//! `--quiet`, so short runs, CI logs and redirected output look exactly as without it. It draws nothing
//! on stdout and is cleared before the run's own lines are printed, so no output byte depends on it.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::ingest::ReadProgress;

/// How long a run goes before its bar appears: a bar that flashes by is noise.
pub(crate) const SHOW_AFTER: Duration = Duration::from_secs(1);

/// Progress over the files of one run.
pub(crate) struct Bar {
    bar: ProgressBar,
    /// Where the bar draws once it is due.
    target: Box<dyn Fn() -> ProgressDrawTarget + Send + Sync>,
    show_after: Duration,
    shown: AtomicBool,
    files: AtomicUsize,
    files_done: AtomicUsize,
    traces: AtomicU64,
}

impl Bar {
    /// A bar on stderr, or none when stderr is not a terminal (a CI log, a file) or `quiet` is set.
    pub(crate) fn for_stderr(quiet: bool) -> Option<Bar> {
        let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
        (!quiet && !dumb && std::io::stderr().is_terminal())
            .then(|| Bar::new(Box::new(ProgressDrawTarget::stderr), SHOW_AFTER))
    }

    /// A bar that draws to `target` once it has run for `show_after`.
    pub(crate) fn new(
        target: Box<dyn Fn() -> ProgressDrawTarget + Send + Sync>,
        show_after: Duration,
    ) -> Bar {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template(
                "{bar:24} {decimal_bytes}/{decimal_total_bytes} · {msg} · {decimal_bytes_per_sec} · ETA {eta}",
            )
            .expect("a valid template")
            .progress_chars("█▉▊▋▌▍▎▏ "),
        );
        Bar {
            bar,
            target,
            show_after,
            shown: AtomicBool::new(false),
            files: AtomicUsize::new(0),
            files_done: AtomicUsize::new(0),
            traces: AtomicU64::new(0),
        }
    }

    /// Starts counting over `files` (their stored sizes make the total).
    pub(crate) fn start(&self, files: &[PathBuf]) {
        let total = files.iter().map(|f| crate::ingest::stream::len(f)).sum();
        self.files.store(files.len(), Ordering::Relaxed);
        self.files_done.store(0, Ordering::Relaxed);
        self.traces.store(0, Ordering::Relaxed);
        self.bar.reset();
        self.bar.set_length(total);
        self.update_message();
    }

    /// Removes the bar from the terminal, so what the run prints next starts on a clean line.
    pub(crate) fn clear(&self) {
        self.bar.finish_and_clear();
    }

    fn update_message(&self) {
        let traces = self.traces.load(Ordering::Relaxed);
        self.bar.set_message(format!(
            "{}/{} files · {traces} traces",
            self.files_done.load(Ordering::Relaxed),
            self.files.load(Ordering::Relaxed),
        ));
        if !self.shown.load(Ordering::Relaxed)
            && self.bar.elapsed() >= self.show_after
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            self.bar.set_draw_target((self.target)());
        }
    }
}

impl ReadProgress for Bar {
    fn advance(&self, traces: usize, bytes: u64) {
        self.traces.fetch_add(traces as u64, Ordering::Relaxed);
        self.bar.inc(bytes);
        self.update_message();
    }

    fn file_done(&self, bytes: u64) {
        self.files_done.fetch_add(1, Ordering::Relaxed);
        self.bar.inc(bytes);
        self.update_message();
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::sync::{Arc, Mutex};

    use indicatif::TermLike;

    use super::*;

    /// A terminal that keeps everything written to it.
    #[derive(Debug, Default, Clone)]
    struct Recorder(Arc<Mutex<String>>);

    impl TermLike for Recorder {
        fn width(&self) -> u16 {
            120
        }
        fn move_cursor_up(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> io::Result<()> {
            self.write_str(&format!("{s}\n"))
        }
        fn write_str(&self, s: &str) -> io::Result<()> {
            self.0.lock().unwrap().push_str(s);
            Ok(())
        }
        fn clear_line(&self) -> io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> io::Result<()> {
            Ok(())
        }
    }

    fn drawing_to(recorder: &Recorder) -> Box<dyn Fn() -> ProgressDrawTarget + Send + Sync> {
        let recorder = recorder.clone();
        Box::new(move || ProgressDrawTarget::term_like_with_hz(Box::new(recorder.clone()), 250))
    }

    fn three_files(dir: &std::path::Path) -> Vec<PathBuf> {
        (0..3)
            .map(|i| {
                let path = dir.join(format!("{i}.json"));
                std::fs::write(&path, vec![b' '; 1000]).unwrap();
                path
            })
            .collect()
    }

    #[test]
    fn the_bar_shows_files_traces_and_bytes_once_due_and_clears_itself() {
        let recorder = Recorder::default();
        let dir = tempfile::tempdir().unwrap();
        let bar = Bar::new(drawing_to(&recorder), Duration::ZERO);
        bar.start(&three_files(dir.path()));
        bar.advance(40, 600);
        bar.file_done(400);
        bar.advance(2, 1000);
        bar.file_done(0);
        let screen = recorder.0.lock().unwrap().clone();
        assert!(screen.contains("2/3 files · 42 traces"), "{screen:?}");
        assert!(screen.contains("2.00 kB/3.00 kB"), "{screen:?}");
        assert!(screen.contains("ETA"), "{screen:?}");
        let before_clear = screen.len();
        bar.clear();
        assert!(recorder.0.lock().unwrap().len() >= before_clear);
    }

    #[test]
    fn a_run_shorter_than_the_delay_draws_nothing() {
        let recorder = Recorder::default();
        let dir = tempfile::tempdir().unwrap();
        let bar = Bar::new(drawing_to(&recorder), Duration::from_secs(3600));
        bar.start(&three_files(dir.path()));
        bar.advance(5, 3000);
        bar.file_done(0);
        bar.clear();
        assert_eq!(recorder.0.lock().unwrap().as_str(), "");
    }
}
