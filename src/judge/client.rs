//! One judge call over HTTP, with a per-request timeout and retries.
//!
//! A blocking client (`ureq`, rustls) is enough: calls run on a few plain threads, and an async runtime
//! would add a scheduler for no gain. Retries cover rate limits (429), server errors (5xx) and network
//! failures, with exponential backoff and jitter, honouring `Retry-After`. Other statuses (401, 404, …)
//! mean the judge is misconfigured and end the run at once.

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use super::providers::{Endpoint, Usage, head};

/// How patient a client is.
#[derive(Debug, Clone, Copy)]
pub struct CallPolicy {
    pub timeout: Duration,
    /// Retries after the first attempt.
    pub retries: u32,
    /// The first backoff; each retry doubles it, up to [`MAX_BACKOFF`].
    pub backoff: Duration,
}

const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A server asking for a longer pause than this is waited on for this long.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

/// A reply's text and token counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reply {
    pub text: String,
    pub usage: Usage,
}

/// The blocking HTTP client every judge call goes through.
pub(crate) struct Client {
    agent: ureq::Agent,
    policy: CallPolicy,
    /// Retries made, over all calls.
    pub retries: AtomicUsize,
}

enum Attempt {
    Done(Reply),
    /// Worth another try, after the server's `Retry-After` when it gave one.
    Retry(String, Option<Duration>),
    Fatal(String),
}

impl Client {
    /// A client for up to `concurrency` calls at once.
    pub(crate) fn new(policy: CallPolicy, concurrency: usize) -> Client {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(policy.timeout))
            // One kept-alive connection per worker thread, so no call waits on a new handshake.
            .max_idle_connections_per_host(concurrency.max(1))
            .max_idle_connections(concurrency.max(1).max(10))
            .http_status_as_error(false)
            .user_agent(concat!("faultgate/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Client {
            agent,
            policy,
            retries: AtomicUsize::new(0),
        }
    }

    /// Sends one judge request, retrying what can pass on a second try. `abort` stops the waiting
    /// between tries once another call has failed for good.
    pub(crate) fn call(
        &self,
        endpoint: &Endpoint,
        body: &str,
        abort: &AtomicBool,
    ) -> Result<Reply, String> {
        let mut attempt = 0;
        loop {
            let (why, retry_after) = match self.attempt(endpoint, body) {
                Attempt::Done(reply) => return Ok(reply),
                Attempt::Fatal(why) => return Err(why),
                Attempt::Retry(why, after) => (why, after),
            };
            if attempt >= self.policy.retries || abort.load(Ordering::Relaxed) {
                let tries = attempt + 1;
                return Err(format!(
                    "{why} (after {tries} attempt{})",
                    if tries == 1 { "" } else { "s" }
                ));
            }
            let pause = match retry_after {
                Some(after) => after.min(MAX_RETRY_AFTER),
                None => jittered(self.policy.backoff, attempt),
            };
            self.retries.fetch_add(1, Ordering::Relaxed);
            sleep_unless(pause, abort);
            attempt += 1;
        }
    }

    fn attempt(&self, endpoint: &Endpoint, body: &str) -> Attempt {
        let mut request = self
            .agent
            .post(&endpoint.url)
            .header("Content-Type", "application/json");
        for (name, value) in &endpoint.headers {
            request = request.header(name, value);
        }
        let mut response = match request.send(body) {
            Ok(r) => r,
            Err(e) => return classify_error(e),
        };
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(Duration::from_secs_f64);
        let text = match response.body_mut().read_to_string() {
            Ok(t) => t,
            Err(e) => return classify_error(e),
        };
        match status {
            200..=299 => match endpoint.read_reply(&text) {
                Ok((text, usage)) => Attempt::Done(Reply { text, usage }),
                Err(why) => Attempt::Fatal(why),
            },
            429 | 500..=599 => {
                Attempt::Retry(format!("HTTP {status}: {}", head(&text)), retry_after)
            }
            _ => Attempt::Fatal(format!("HTTP {status}: {}", head(&text))),
        }
    }
}

fn classify_error(e: ureq::Error) -> Attempt {
    match e {
        ureq::Error::Timeout(_) => Attempt::Retry("timed out".into(), None),
        ureq::Error::Io(_) | ureq::Error::ConnectionFailed | ureq::Error::HostNotFound => {
            Attempt::Retry(e.to_string(), None)
        }
        other => Attempt::Fatal(other.to_string()),
    }
}

/// base · 2^attempt, capped, times a random factor in [0.5, 1): spreads the retries of parallel calls.
fn jittered(base: Duration, attempt: u32) -> Duration {
    let full = base
        .saturating_mul(1u32.checked_shl(attempt).unwrap_or(u32::MAX))
        .min(MAX_BACKOFF);
    // Jitter needs no quality: the standard library's randomly keyed hasher is random enough.
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    full.mul_f64(0.5 + (random % 1000) as f64 / 2000.0)
}

fn sleep_unless(pause: Duration, abort: &AtomicBool) {
    let step = Duration::from_millis(50);
    let mut left = pause;
    while !left.is_zero() && !abort.load(Ordering::Relaxed) {
        let now = left.min(step);
        std::thread::sleep(now);
        left -= now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_within_jitter_and_is_capped() {
        let base = Duration::from_millis(500);
        for attempt in 0..4 {
            let d = jittered(base, attempt);
            let full = base * 2u32.pow(attempt);
            assert!(d >= full / 2 && d < full, "{attempt}: {d:?}");
        }
        assert!(jittered(base, 40) <= MAX_BACKOFF);
    }
}
