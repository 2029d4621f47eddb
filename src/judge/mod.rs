//! Judges: a model (or a file of saved verdicts) that answers a judged check's question about a trace.
//!
//! The contract is 0.4.1's (docs/compatibility.md §13, §7.8): one chat completion per trace and judged
//! check, at temperature 0 with at most 512 tokens, the system message built from the check's question
//! and the user message the trace render (masked when redaction is on, since it leaves the process). The
//! reply is read as JSON `{detected, confidence, reason}` ([`parse`]).
//!
//! A run asks the judge in two steps so that calls can overlap: before a batch's checks run,
//! [`Judge::prefetch`] collects every request of the batch, answers what it can from the disk cache, and
//! sends the rest on `--judge-concurrency` threads; the judged checks then read the answers. Files are
//! read one after another while a judge runs, so which calls `--judge-max-calls` skips is the same on
//! every run.
//!
//! Module map: [`providers`] (spec → endpoint, wire formats), [`client`] (HTTP, retries), [`cache`]
//! (replies on disk), [`render`], [`parse`], [`replay`] (saved verdicts), [`custom`] (`--judge-checks`).

pub(crate) mod cache;
pub(crate) mod client;
pub(crate) mod custom;
pub(crate) mod parse;
pub(crate) mod providers;
pub(crate) mod render;
pub(crate) mod replay;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;

use crate::checks::{Check, CheckContext, Columns, Verdict, VerdictColumn};
use crate::redact::Redaction;
use crate::report::Report;
use cache::Cache;
use client::{CallPolicy, Client, Reply};
use custom::JudgedSpec;
use providers::{Endpoint, Usage};
use replay::ReplayFile;

/// What can stop a judged run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JudgeError {
    #[error(
        "unknown judge '{0}'; use 'litellm:<model>', 'openai:<model>' or 'replay:FILE' (see faultgate judges)"
    )]
    UnknownSpec(String),
    #[error(
        "the laya judge is not available: its local model cannot be bundled with this build; use litellm:ollama/<model> (a local Ollama model), openai:<model> --judge-url URL (vLLM, llama.cpp, LM Studio, a LiteLLM proxy), litellm:<provider>/<model> (an API model) or replay:FILE (saved verdicts)"
    )]
    Laya,
    #[error("judge {judge} needs {var} to be set")]
    MissingVariable { judge: String, var: String },
    #[error(
        "judge {judge}: unknown provider '{provider}'; litellm: knows openai/, anthropic/, ollama/ and azure/ (reach others through a LiteLLM proxy: litellm:openai/<model> with OPENAI_BASE_URL)"
    )]
    UnknownProvider { judge: String, provider: String },
    #[error("replay file {path}: {detail}")]
    Replay { path: String, detail: String },
    #[error("judge checks {path}: {detail}")]
    ChecksFile { path: String, detail: String },
    #[error("judge {judge} failed at {url}: {detail}")]
    Unreachable {
        judge: String,
        url: String,
        detail: String,
    },
}

/// A `--judge` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JudgeSpec {
    /// 0.4.1's local model; accepted as a name, refused when it would run.
    Laya,
    /// `litellm:<model>`: the provider from the model's prefix.
    Litellm(String),
    /// `openai:<model>`: an OpenAI-compatible server (`--judge-url`).
    OpenAi(String),
    /// `replay:FILE`: saved verdicts.
    Replay(PathBuf),
}

impl JudgeSpec {
    pub fn parse(spec: &str) -> Result<JudgeSpec, JudgeError> {
        let nonempty = |p: &str| spec.strip_prefix(p).filter(|m| !m.is_empty());
        if spec == "laya" {
            Ok(JudgeSpec::Laya)
        } else if let Some(m) = nonempty("litellm:") {
            Ok(JudgeSpec::Litellm(m.into()))
        } else if let Some(m) = nonempty("openai:") {
            Ok(JudgeSpec::OpenAi(m.into()))
        } else if let Some(f) = nonempty("replay:") {
            Ok(JudgeSpec::Replay(f.into()))
        } else {
            Err(JudgeError::UnknownSpec(spec.into()))
        }
    }
}

/// The question of `wrong_direction`, 0.4.1's text verbatim.
pub(crate) const WRONG_DIRECTION_QUESTION: &str = "Determine whether the agent made a MULTI_HOP_DIRECTION_ERROR. Rule: Return detected=true IF the agent searched in the reverse dependency direction across multi-hop entity links.";

/// The built-in judged checks.
pub(crate) fn builtin_checks() -> Vec<JudgedSpec> {
    vec![JudgedSpec {
        name: "wrong_direction".into(),
        question: WRONG_DIRECTION_QUESTION.into(),
        budget: None,
    }]
}

/// How a judged run calls its judge.
#[derive(Debug, Clone)]
pub struct JudgeOptions {
    /// `--judge-url`: the server of a `litellm:` or `openai:` judge.
    pub url: Option<String>,
    pub concurrency: usize,
    pub policy: CallPolicy,
    pub max_calls: Option<usize>,
    /// The cache folder, or none with `--no-judge-cache`.
    pub cache_dir: Option<PathBuf>,
    /// Keep per-verdict token counts for `--judge-record`.
    pub record: bool,
}

impl Default for JudgeOptions {
    fn default() -> Self {
        JudgeOptions {
            url: None,
            concurrency: 8,
            policy: CallPolicy {
                timeout: Duration::from_secs(60),
                retries: 4,
                backoff: Duration::from_millis(500),
            },
            max_calls: None,
            cache_dir: cache::default_dir(),
            record: false,
        }
    }
}

enum Backend {
    Http {
        endpoint: Endpoint,
        client: Client,
        cache: Option<Cache>,
    },
    Replay(ReplayFile),
}

#[derive(Clone)]
enum Answer {
    Reply(Reply),
    /// Over `--judge-max-calls`.
    Skipped,
    /// The judge failed for good; the run ends with that error.
    Failed,
}

struct Request {
    key: String,
    system: String,
    user: String,
}

/// Counters of one run, for the closing stderr line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunStats {
    pub verdicts: usize,
    pub calls: usize,
    pub cache_hits: usize,
    pub retries: usize,
    pub skipped: usize,
    pub missing: usize,
}

/// A judge ready to answer judged checks.
pub struct Judge {
    name: String,
    backend: Backend,
    checks: Vec<JudgedSpec>,
    redaction: Redaction,
    options: JudgeOptions,
    memo: Mutex<HashMap<String, Answer>>,
    /// Calls handed out so far, against `--judge-max-calls`.
    assigned: Mutex<usize>,
    abort: AtomicBool,
    fatal: Mutex<Option<String>>,
    verdicts: AtomicUsize,
    calls: AtomicUsize,
    cache_hits: AtomicUsize,
    skipped: AtomicUsize,
    missing: AtomicUsize,
    cache_warned: AtomicBool,
    usage: Mutex<Usage>,
    per_verdict: Mutex<HashMap<(String, String), Usage>>,
    /// The request keys of the batch being checked, by (batch address, trace index, check), so a
    /// verdict does not render and mask its trace a second time. Only one batch is judged at a time.
    batch_keys: Mutex<HashMap<(usize, usize, String), String>>,
    /// The replay lines of every run so far (`--judge-record`; a `baseline` has several runs).
    recorded: Mutex<String>,
}

impl Judge {
    /// A judge for `spec`, answering `checks`. Settings are read from `env` (the process environment
    /// in the CLI). `laya` is refused here: it is only built when a judged check would run.
    pub fn new(
        spec: &JudgeSpec,
        checks: Vec<JudgedSpec>,
        redaction: Redaction,
        options: JudgeOptions,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Judge, JudgeError> {
        let url = options.url.as_deref();
        let (name, backend) = match spec {
            JudgeSpec::Laya => return Err(JudgeError::Laya),
            JudgeSpec::Replay(path) => {
                let file = ReplayFile::load(path)?;
                let name = file.judge.clone().unwrap_or_else(|| "replay".into());
                (name, Backend::Replay(file))
            }
            JudgeSpec::Litellm(model) => (
                format!("litellm:{model}"),
                Self::http(Endpoint::litellm(model, url, env)?, &options),
            ),
            JudgeSpec::OpenAi(model) => {
                let name = format!("openai:{model}");
                let endpoint = Endpoint::openai(&name, model, url, env)?;
                (name, Self::http(endpoint, &options))
            }
        };
        Ok(Judge {
            name,
            backend,
            checks,
            redaction,
            options,
            memo: Mutex::default(),
            assigned: Mutex::default(),
            abort: AtomicBool::new(false),
            fatal: Mutex::default(),
            verdicts: AtomicUsize::new(0),
            calls: AtomicUsize::new(0),
            cache_hits: AtomicUsize::new(0),
            skipped: AtomicUsize::new(0),
            missing: AtomicUsize::new(0),
            cache_warned: AtomicBool::new(false),
            usage: Mutex::default(),
            per_verdict: Mutex::default(),
            batch_keys: Mutex::default(),
            recorded: Mutex::default(),
        })
    }

    fn http(endpoint: Endpoint, options: &JudgeOptions) -> Backend {
        Backend::Http {
            endpoint,
            client: Client::new(options.policy, options.concurrency),
            cache: options.cache_dir.clone().map(Cache::new),
        }
    }

    /// The judge's name in reports and bands.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn spec(&self, check: &str) -> Option<&JudgedSpec> {
        self.checks.iter().find(|c| c.name == check)
    }

    fn request(
        &self,
        endpoint: &Endpoint,
        cols: &Columns<'_>,
        t: usize,
        spec: &JudgedSpec,
    ) -> Request {
        let text = render::render(&render::RenderInput::from_columns(cols, t), spec.budget);
        // The render leaves the process, so it is masked like every other text that does.
        let user = self.redaction.mask(&text).into_owned();
        let system = parse::system_prompt(&spec.question);
        Request {
            key: cache::key(&endpoint.identity(), &system, &user),
            system,
            user,
        }
    }

    /// Answers every judged request of a batch ahead of its checks: from the cache when it can, else
    /// over the network on up to `--judge-concurrency` threads. `cols` covers the whole batch, so every
    /// part of it checked afterwards finds its answers.
    pub fn prefetch(&self, cols: &Columns<'_>, checks: &[&dyn Check]) {
        let Backend::Http { endpoint, .. } = &self.backend else {
            return;
        };
        let mut names = HashSet::new();
        let specs: Vec<&JudgedSpec> = checks
            .iter()
            .filter(|c| names.insert(c.name()))
            .filter_map(|c| self.spec(c.name()))
            .collect();
        if specs.is_empty() {
            return;
        }
        let mut seen = HashSet::new();
        let mut requests = Vec::new();
        let mut keys = HashMap::new();
        {
            let mut memo = self
                .memo
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            // Answers live for one batch, so memory holds one batch's replies, not the run's; a
            // repeated render in a later batch is answered by the disk cache.
            memo.clear();
            for t in cols.traces() {
                for spec in &specs {
                    let request = self.request(endpoint, cols, t, spec);
                    keys.insert(batch_slot(cols, t, &spec.name), request.key.clone());
                    if !memo.contains_key(&request.key) && seen.insert(request.key.clone()) {
                        requests.push(request);
                    }
                }
            }
        }
        *self
            .batch_keys
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = keys;
        self.resolve(requests);
    }

    /// Puts an answer for every request into the memo: cache, then the call budget, then the network.
    fn resolve(&self, requests: Vec<Request>) {
        let Backend::Http {
            endpoint,
            client,
            cache,
        } = &self.backend
        else {
            return;
        };
        let mut to_send = Vec::new();
        for request in requests {
            match cache.as_ref().and_then(|c| c.get(&request.key)) {
                Some(reply) => {
                    self.cache_hits.fetch_add(1, Ordering::Relaxed);
                    self.remember(&request.key, Answer::Reply(reply));
                }
                None => to_send.push(request),
            }
        }
        let allowed = {
            let mut assigned = self
                .assigned
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let left = self
                .options
                .max_calls
                .map_or(usize::MAX, |m| m.saturating_sub(*assigned));
            let allowed = left.min(to_send.len());
            *assigned += allowed;
            allowed
        };
        for request in &to_send[allowed..] {
            self.remember(&request.key, Answer::Skipped);
        }
        to_send.truncate(allowed);
        if to_send.is_empty() {
            return;
        }
        let next = AtomicUsize::new(0);
        let workers = self.options.concurrency.clamp(1, to_send.len());
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= to_send.len() || self.abort.load(Ordering::Relaxed) {
                            break;
                        }
                        let request = &to_send[i];
                        let body = endpoint.body(&request.system, &request.user);
                        self.calls.fetch_add(1, Ordering::Relaxed);
                        match client.call(endpoint, &body, &self.abort) {
                            Ok(reply) => {
                                if let Some(cache) = cache {
                                    self.store(cache, &request.key, &reply);
                                }
                                self.remember(&request.key, Answer::Reply(reply));
                            }
                            Err(detail) => self.fail(endpoint, &detail),
                        }
                    }
                });
            }
        });
    }

    fn remember(&self, key: &str, answer: Answer) {
        self.memo
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key.to_string(), answer);
    }

    fn store(&self, cache: &Cache, key: &str, reply: &Reply) {
        if let Err(e) = cache.put(key, reply)
            && !self.cache_warned.swap(true, Ordering::Relaxed)
        {
            eprintln!(
                "warning: cannot write the judge cache {}: {e}; going on without it",
                crate::error::display_path(cache.dir())
            );
        }
    }

    fn fail(&self, endpoint: &Endpoint, detail: &str) {
        let mut fatal = self
            .fatal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if fatal.is_none() {
            *fatal = Some(
                JudgeError::Unreachable {
                    judge: self.name.clone(),
                    url: endpoint.url.clone(),
                    // A server's error body may echo what it was sent.
                    detail: self.redaction.mask(detail).into_owned(),
                }
                .to_string(),
            );
        }
        self.abort.store(true, Ordering::Relaxed);
    }

    /// The remembered answer for a key.
    fn answer_for_key(&self, key: &str) -> Option<Answer> {
        self.memo
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(key)
            .cloned()
    }

    fn answer(&self, request: Request) -> Answer {
        let cached = |judge: &Judge, key: &str| {
            judge
                .memo
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .get(key)
                .cloned()
        };
        if let Some(answer) = cached(self, &request.key) {
            return answer;
        }
        if self.abort.load(Ordering::Relaxed) {
            return Answer::Failed;
        }
        let key = request.key.clone();
        self.resolve(vec![request]);
        cached(self, &key).unwrap_or(Answer::Failed)
    }

    /// The judge's verdict on trace `t` for one judged check.
    pub fn verdict(&self, cols: &Columns<'_>, t: usize, check: &str) -> Verdict {
        let Some(spec) = self.spec(check) else {
            return no_judge();
        };
        let (verdict, usage) = match &self.backend {
            Backend::Replay(file) => {
                let (trace_id, scenario) = (cols.trace_id.value(t), cols.scenario.value(t));
                let written = self.redaction.scenario_key(scenario);
                match file.lookup(trace_id, scenario, &written, check) {
                    Some(r) => (r.verdict.clone(), r.usage),
                    None => {
                        self.missing.fetch_add(1, Ordering::Relaxed);
                        (
                            unsure("no replayed verdict for this trace"),
                            Usage::default(),
                        )
                    }
                }
            }
            Backend::Http { endpoint, .. } => {
                let known = self
                    .batch_keys
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .get(&batch_slot(cols, t, check))
                    .cloned();
                let answer = known
                    .and_then(|key| self.answer_for_key(&key))
                    .unwrap_or_else(|| self.answer(self.request(endpoint, cols, t, spec)));
                match answer {
                    Answer::Reply(reply) => (parse::parse_reply(&reply.text), reply.usage),
                    Answer::Skipped => {
                        self.skipped.fetch_add(1, Ordering::Relaxed);
                        (
                            unsure("judge not asked: --judge-max-calls reached"),
                            Usage::default(),
                        )
                    }
                    Answer::Failed => (unsure("judge failed"), Usage::default()),
                }
            }
        };
        self.verdicts.fetch_add(1, Ordering::Relaxed);
        self.usage
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .add(usage);
        if self.options.record {
            self.per_verdict
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(
                    (cols.trace_id.value(t).to_string(), check.to_string()),
                    usage,
                );
        }
        verdict
    }

    /// Ends a run: the error that stopped the judge, if any, else the run's counters (reset for the
    /// next run of a `baseline`).
    pub fn finish_run(&self) -> Result<RunStats, String> {
        if let Some(e) = self
            .fatal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
        {
            return Err(e);
        }
        let take = |a: &AtomicUsize| a.swap(0, Ordering::Relaxed);
        let retries = match &self.backend {
            Backend::Http { client, .. } => take(&client.retries),
            Backend::Replay(_) => 0,
        };
        Ok(RunStats {
            verdicts: take(&self.verdicts),
            calls: take(&self.calls),
            cache_hits: take(&self.cache_hits),
            retries,
            skipped: take(&self.skipped),
            missing: take(&self.missing),
        })
    }

    /// The stderr lines closing a judged run.
    pub fn stats_lines(&self, stats: &RunStats) -> Vec<String> {
        let mut lines = Vec::new();
        match &self.backend {
            Backend::Replay(_) => lines.push(format!(
                "judge {}: {} verdict(s) replayed",
                self.name, stats.verdicts
            )),
            Backend::Http { .. } => lines.push(format!(
                "judge {}: {} verdict(s), {} call(s), {} from cache, {} retried",
                self.name, stats.verdicts, stats.calls, stats.cache_hits, stats.retries
            )),
        }
        if stats.skipped > 0 {
            lines.push(format!(
                "warning: {} judged verdict(s) skipped: --judge-max-calls {} reached; they count as not detected",
                stats.skipped,
                self.options.max_calls.unwrap_or_default()
            ));
        }
        if stats.missing > 0 {
            lines.push(format!(
                "warning: {} judged verdict(s) have no line in the replay file; they count as not detected",
                stats.missing
            ));
        }
        lines
    }

    /// The `judge_usage` block of the JSON report: verdicts and the tokens their replies cost (cached
    /// replies count what they cost when made, so a rerun reports the same numbers).
    pub fn usage_json(&self) -> serde_json::Value {
        let usage = *self
            .usage
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        json!({
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
        })
    }

    /// Adds a run's judged verdicts to the replay lines (`--judge-record`), in report order, and returns
    /// the lines of every run so far. Reasons and scenario keys are the report's, already masked.
    pub fn record_lines(&self, report: &Report) -> String {
        let per_verdict = std::mem::take(
            &mut *self
                .per_verdict
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        let mut out = self
            .recorded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for row in report.rows() {
            for (check, v) in report.checks.iter().zip(row.verdicts()) {
                if self.spec(check).is_none() {
                    continue;
                }
                let usage = per_verdict
                    .get(&(row.trace_id().to_string(), check.clone()))
                    .copied()
                    .unwrap_or_default();
                let line = json!({
                    "trace_id": row.trace_id(),
                    "scenario": row.scenario(),
                    "check": check,
                    "detected": v.detected,
                    "confidence": v.confidence,
                    "reason": v.reason,
                    "prompt_tokens": usage.prompt_tokens,
                    "completion_tokens": usage.completion_tokens,
                    "judge": self.name,
                });
                out.push_str(&line.to_string());
                out.push('\n');
            }
        }
        out.clone()
    }
}

/// Where a trace sits while its batch is checked: the address of the batch's trace-id column (shared by
/// every part of the batch) and the trace's index. The address is only compared, never followed.
fn batch_slot(cols: &Columns<'_>, index: usize, check: &str) -> (usize, usize, String) {
    (
        std::ptr::from_ref(cols.trace_id) as usize,
        index,
        check.to_string(),
    )
}

fn unsure(reason: &str) -> Verdict {
    Verdict {
        detected: false,
        confidence: 0.0,
        reason: reason.into(),
    }
}

fn no_judge() -> Verdict {
    unsure("no judge configured")
}

/// The pass of a judged check: per trace, the run's judge asked, or "no judge configured" without one.
pub(crate) fn judged_column(
    cols: &Columns<'_>,
    cx: &CheckContext,
    check: &str,
    out: &mut VerdictColumn,
) {
    for t in cols.traces() {
        out.push_verdict(match &cx.judge {
            Some(judge) => judge.verdict(cols, t, check),
            None => no_judge(),
        });
    }
}

/// `faultgate judges`: one line per judge spec, saying what this build and environment can run.
pub(crate) fn listing(env: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let set = |names: &[&str]| names.iter().any(|n| env(n).is_some_and(|v| !v.is_empty()));
    let state = |names: &[&str], what: &str| {
        if set(names) {
            format!("{what} set")
        } else {
            format!("{what} not set")
        }
    };
    let line = |key: &str, text: String| format!("{key:<16} {text}");
    vec![
        line(
            "litellm:<model>",
            format!(
                "a chat model by LiteLLM's prefix: openai/<m> or bare (OPENAI_BASE_URL, OPENAI_API_KEY; {}), anthropic/<m> ({}), ollama/<m> (OLLAMA_API_BASE, default http://localhost:11434), azure/<deployment> (AZURE_API_BASE, AZURE_API_KEY, AZURE_API_VERSION; {})",
                state(&["OPENAI_API_KEY"], "key"),
                state(&["ANTHROPIC_API_KEY"], "ANTHROPIC_API_KEY"),
                state(&["AZURE_API_BASE", "AZURE_OPENAI_ENDPOINT"], "base"),
            ),
        ),
        line(
            "openai:<model>",
            "any OpenAI-compatible server at --judge-url URL (vLLM, llama.cpp, Ollama's /v1, LM Studio, a LiteLLM proxy)".into(),
        ),
        line(
            "replay:FILE",
            "saved verdicts, one JSON line each (from --judge-record, a batch job or a review); no network".into(),
        ),
        line(
            "laya",
            "not available: 0.4.1's local model cannot be bundled; use litellm:ollama/<model> or openai:<model> instead".into(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_resolve_as_in_0_4_1_plus_the_new_ones() {
        assert_eq!(JudgeSpec::parse("laya"), Ok(JudgeSpec::Laya));
        assert_eq!(
            JudgeSpec::parse("litellm:openai/gpt-x"),
            Ok(JudgeSpec::Litellm("openai/gpt-x".into()))
        );
        assert_eq!(
            JudgeSpec::parse("openai:qwen"),
            Ok(JudgeSpec::OpenAi("qwen".into()))
        );
        assert_eq!(
            JudgeSpec::parse("replay:v.jsonl"),
            Ok(JudgeSpec::Replay("v.jsonl".into()))
        );
        for bad in ["", "gpt", "litellm:", "openai:", "replay:"] {
            assert_eq!(
                JudgeSpec::parse(bad),
                Err(JudgeError::UnknownSpec(bad.into()))
            );
        }
    }

    #[test]
    fn laya_is_refused_with_the_alternatives() {
        let err = Judge::new(
            &JudgeSpec::Laya,
            builtin_checks(),
            Redaction::Builtin,
            JudgeOptions::default(),
            &|_| None,
        )
        .err()
        .unwrap()
        .to_string();
        for alternative in ["litellm:ollama/", "openai:<model>", "replay:FILE"] {
            assert!(err.contains(alternative), "{err}");
        }
    }

    #[test]
    fn listing_has_one_line_per_spec_and_reads_the_environment() {
        let lines = listing(&|n| (n == "OPENAI_API_KEY").then(|| "k".to_string()));
        assert_eq!(lines.len(), 4);
        assert!(lines[0].starts_with("litellm:<model>  "));
        assert!(lines[0].contains("key set"));
        assert!(lines[0].contains("ANTHROPIC_API_KEY not set"));
        assert!(lines[3].starts_with("laya             not available"));
    }
}
