//! The judge of a run: its verdicts on a batch's judged checks, asked before the batch's checks run.
//!
//! [`Judge::verdicts`] collects every request of a batch (one per trace and judged check: the trace's
//! render, masked, under the check's question), answers what it can from the disk cache, hands out
//! what is left of the `--judge-max-calls` budget in trace order, and sends those calls on
//! `--judge-concurrency` threads, so the batch's calls overlap. It then reads one verdict per trace
//! and check from the replies and hands them over as data ([`JudgedVerdicts`]), which the judged
//! checks push. A `replay:` judge looks its verdicts up instead. Along the way it counts what the
//! closing lines report ([`RunStats`]), the tokens the replies cost, and for `--judge-record` the cost
//! of each verdict.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::json;

use super::cache::{self, Cache};
use super::client::{Client, Reply};
use super::custom::JudgedSpec;
use super::error::JudgeError;
use super::parse::{parse_reply, system_prompt};
use super::providers::{Endpoint, Usage};
use super::render::{RenderInput, render};
use super::replay::ReplayFile;
use super::spec::{JudgeOptions, JudgeSpec};
use super::stderr::{RunStats, cache_warning, closing_lines};
use crate::checks::{Check, JudgedVerdicts, Verdict};
use crate::redact::Redaction;
use crate::table::columns::Columns;

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

/// A judge ready to answer judged checks.
pub struct Judge {
    name: String,
    backend: Backend,
    checks: Vec<JudgedSpec>,
    redaction: Redaction,
    options: JudgeOptions,
    /// The answers of the batch being judged, by request key.
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

    /// The judge's verdicts on every trace of `cols` (a whole batch) for the judged checks among
    /// `checks`; a check the judge does not answer gets none. A check selected twice fills two columns
    /// and is counted for each, as a run reports it twice.
    pub fn verdicts(&self, cols: &Columns<'_>, checks: &[&dyn Check]) -> JudgedVerdicts {
        let keys = self.prefetch(cols, checks);
        let mut out = JudgedVerdicts::new(cols.traces());
        for check in checks {
            let Some(spec) = self.spec(check.name()) else {
                continue;
            };
            let verdicts = cols
                .traces()
                .map(|t| self.verdict(cols, t, spec, keys.get(&(t, spec.name.as_str()))))
                .collect();
            out.insert(&spec.name, verdicts);
        }
        out
    }

    fn request(
        &self,
        endpoint: &Endpoint,
        cols: &Columns<'_>,
        t: usize,
        spec: &JudgedSpec,
    ) -> Request {
        let text = render(&RenderInput::from_columns(cols, t), spec.budget);
        // The render leaves the process, so it is masked like every other text that does.
        let user = self.redaction.mask(&text).into_owned();
        let system = system_prompt(&spec.question);
        Request {
            key: cache::key(&endpoint.identity(), &system, &user),
            system,
            user,
        }
    }

    /// Answers every judged request of a batch ahead of its verdicts: from the cache when it can, else
    /// over the network on up to `--judge-concurrency` threads. Returns each request's key by trace
    /// and check, so a verdict does not render and mask its trace a second time.
    fn prefetch(
        &self,
        cols: &Columns<'_>,
        checks: &[&dyn Check],
    ) -> HashMap<(usize, &str), String> {
        let mut keys = HashMap::new();
        let Backend::Http { endpoint, .. } = &self.backend else {
            return keys;
        };
        let mut names = HashSet::new();
        let specs: Vec<&JudgedSpec> = checks
            .iter()
            .filter(|c| names.insert(c.name()))
            .filter_map(|c| self.spec(c.name()))
            .collect();
        if specs.is_empty() {
            return keys;
        }
        let mut seen = HashSet::new();
        let mut requests = Vec::new();
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
                    keys.insert((t, spec.name.as_str()), request.key.clone());
                    if !memo.contains_key(&request.key) && seen.insert(request.key.clone()) {
                        requests.push(request);
                    }
                }
            }
        }
        self.resolve(requests);
        keys
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
            eprintln!("{}", cache_warning(cache.dir(), &e));
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

    /// The answer to a request the batch's prefetch did not leave in the memo: none once the judge
    /// failed, else asked now.
    fn answer(&self, request: Request) -> Answer {
        if let Some(answer) = self.answer_for_key(&request.key) {
            return answer;
        }
        if self.abort.load(Ordering::Relaxed) {
            return Answer::Failed;
        }
        let key = request.key.clone();
        self.resolve(vec![request]);
        self.answer_for_key(&key).unwrap_or(Answer::Failed)
    }

    /// The judge's verdict on trace `t` for one judged check; `key` is its request's, when the
    /// batch's prefetch made it.
    fn verdict(
        &self,
        cols: &Columns<'_>,
        t: usize,
        spec: &JudgedSpec,
        key: Option<&String>,
    ) -> Verdict {
        let check = spec.name.as_str();
        let (verdict, usage) = match &self.backend {
            Backend::Replay(file) => {
                let (trace_id, scenario) = (cols.trace_id.value(t), cols.scenario.value(t));
                let written = self.redaction.scenario_key(scenario);
                match file.lookup(trace_id, scenario, &written, check) {
                    Some(r) => (r.verdict.clone(), r.usage),
                    None => {
                        self.missing.fetch_add(1, Ordering::Relaxed);
                        (
                            Verdict::unsure("no replayed verdict for this trace"),
                            Usage::default(),
                        )
                    }
                }
            }
            Backend::Http { endpoint, .. } => {
                let answer = key
                    .and_then(|key| self.answer_for_key(key))
                    .unwrap_or_else(|| self.answer(self.request(endpoint, cols, t, spec)));
                match answer {
                    Answer::Reply(reply) => (parse_reply(&reply.text), reply.usage),
                    Answer::Skipped => {
                        self.skipped.fetch_add(1, Ordering::Relaxed);
                        (
                            Verdict::unsure("judge not asked: --judge-max-calls reached"),
                            Usage::default(),
                        )
                    }
                    Answer::Failed => (Verdict::unsure("judge failed"), Usage::default()),
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
        let replayed = matches!(self.backend, Backend::Replay(_));
        closing_lines(&self.name, replayed, self.options.max_calls, stats)
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

    /// The tokens each verdict of the run so far cost, by (trace id, check), for `--judge-record`
    /// (kept only when [`JudgeOptions::record`] asks); the next run starts from none.
    pub(crate) fn take_verdict_usage(&self) -> HashMap<(String, String), Usage> {
        std::mem::take(
            &mut *self
                .per_verdict
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::spec::builtin_checks;

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
}
