//! Posting the export to an OTLP/HTTP receiver (`--otlp-endpoint URL`).
//!
//! The URL is used as given: OTLP/HTTP receivers take logs at `/v1/logs`, and a URL whose path is
//! empty gets that path added, as OTel's exporters add it to a base endpoint. The body is the same
//! export [`super::write_protobuf`] or [`super::write_json`] writes, gzip-compressed as it is made into
//! an unnamed temporary file (so it is never held whole in memory), then sent from that file with its
//! length. A 408, 429 or 5xx answer and a failed connection are tried again after a pause that doubles
//! (0.25 s, 0.5 s, 1 s, 2 s); any other answer, or the last failure, stops the command with the URL
//! and the reason.

use std::fs::File;
use std::io::{self, Seek, Write};
use std::time::Duration;

use super::Export;

/// How the export is encoded on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Protocol {
    /// `application/x-protobuf`, OTLP/HTTP's default.
    #[default]
    Protobuf,
    /// `application/json`: OTLP/JSON, the bytes `--otlp-events` writes.
    Json,
}

impl Protocol {
    fn content_type(self) -> &'static str {
        match self {
            Protocol::Protobuf => "application/x-protobuf",
            Protocol::Json => "application/json",
        }
    }
}

/// The export could not be delivered.
#[derive(Debug, thiserror::Error)]
#[error("cannot send the evaluation events to {url}: {why}")]
pub(crate) struct SendError {
    /// The receiver's URL.
    pub url: String,
    /// What failed last.
    pub why: String,
}

/// How hard to try.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tries {
    /// Attempts in all, the first included.
    pub attempts: u32,
    /// The pause after the first failure; each later one doubles it.
    pub backoff: Duration,
    /// The limit of one attempt.
    pub timeout: Duration,
}

impl Default for Tries {
    fn default() -> Tries {
        Tries {
            attempts: 5,
            backoff: Duration::from_millis(250),
            timeout: Duration::from_secs(30),
        }
    }
}

/// The URL the export is posted to: `/v1/logs` added to a URL with no path.
pub(crate) fn logs_url(url: &str) -> String {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    if url[after_scheme..].contains('/') {
        url.to_string()
    } else {
        format!("{url}/v1/logs")
    }
}

/// `url` as messages show it: without the user and password before the host, nor the query, where
/// receivers that take a token in the URL carry it.
pub(crate) fn shown_url(url: &str) -> String {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let rest = &url[after_scheme..];
    let (authority, tail) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let path = tail.split_once('?').map_or(tail, |(path, _)| path);
    format!("{}{host}{path}", &url[..after_scheme])
}

/// The gzip-compressed body, in an unnamed temporary file rewound to its start.
fn body(export: Export<'_>, protocol: Protocol) -> io::Result<File> {
    let file = tempfile::tempfile()?;
    let mut gzip =
        flate2::write::GzEncoder::new(io::BufWriter::new(file), flate2::Compression::default());
    match protocol {
        Protocol::Protobuf => super::write_protobuf(&mut gzip, export)?,
        Protocol::Json => super::write_json(&mut gzip, export)?,
    }
    let mut file = gzip
        .finish()?
        .into_inner()
        .map_err(io::IntoInnerError::into_error)?;
    file.flush()?;
    file.rewind()?;
    Ok(file)
}

enum Attempt {
    Done,
    Retry(String),
    Fatal(String),
}

/// Posts the export to `url`, trying again as the module doc says.
///
/// # Errors
///
/// The body could not be made, or the receiver did not take it within `tries`.
pub(crate) fn send(
    url: &str,
    protocol: Protocol,
    export: Export<'_>,
    tries: Tries,
) -> Result<(), SendError> {
    let target = logs_url(url);
    let fail = |why: String| SendError {
        url: shown_url(&target),
        why,
    };
    let mut file =
        body(export, protocol).map_err(|e| fail(format!("cannot make the body: {e}")))?;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(tries.timeout))
        .http_status_as_error(false)
        .user_agent(concat!("faultgate/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let attempts = tries.attempts.max(1);
    let mut pause = tries.backoff;
    let mut attempt = 1;
    loop {
        file.rewind()
            .map_err(|e| fail(format!("cannot read the body: {e}")))?;
        let outcome = agent
            .post(&target)
            .header("Content-Type", protocol.content_type())
            .header("Content-Encoding", "gzip")
            .send(&file);
        let why = match outcome {
            Ok(mut response) => {
                let status = response.status().as_u16();
                // The answer's body is read (and dropped) so the connection can be reused.
                let _ = response.body_mut().read_to_vec();
                match status {
                    200..=299 => Attempt::Done,
                    408 | 429 | 500..=599 => Attempt::Retry(format!("HTTP {status}")),
                    _ => Attempt::Fatal(format!("HTTP {status}")),
                }
            }
            Err(
                e @ (ureq::Error::Timeout(_)
                | ureq::Error::Io(_)
                | ureq::Error::ConnectionFailed
                | ureq::Error::HostNotFound),
            ) => Attempt::Retry(e.to_string()),
            Err(e) => Attempt::Fatal(e.to_string()),
        };
        match why {
            Attempt::Done => return Ok(()),
            Attempt::Fatal(why) => return Err(fail(why)),
            Attempt::Retry(why) if attempt >= attempts => {
                return Err(fail(format!("{why} (after {attempts} attempts)")));
            }
            Attempt::Retry(_) => {
                std::thread::sleep(pause);
                pause = pause.saturating_mul(2);
                attempt += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_show_the_url_without_credentials_or_query() {
        assert_eq!(
            shown_url("https://user:secret@collector:4318/v1/logs?token=abc"),
            "https://collector:4318/v1/logs"
        );
        assert_eq!(shown_url("http://k@h?x=1"), "http://h");
        assert_eq!(
            shown_url("http://127.0.0.1:4318/v1/logs"),
            "http://127.0.0.1:4318/v1/logs"
        );
    }

    #[test]
    fn a_base_url_gets_the_logs_path_and_a_full_one_is_kept() {
        assert_eq!(
            logs_url("http://127.0.0.1:4318"),
            "http://127.0.0.1:4318/v1/logs"
        );
        assert_eq!(
            logs_url("https://collector:4318/custom/logs"),
            "https://collector:4318/custom/logs"
        );
        assert_eq!(
            logs_url("http://127.0.0.1:4318/v1/logs"),
            "http://127.0.0.1:4318/v1/logs"
        );
    }
}
