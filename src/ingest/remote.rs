//! Trace inputs in object storage: `s3://bucket/key`, `gs://…`, `az://…` and `https://…` URLs, read
//! through the `object_store` crate.
//!
//! A URL is expanded as a local path is: a key is one object; a prefix (a URL ending in `/`, or one
//! that names no object) is listed recursively and read as a directory walk reads a folder (trace file
//! names only, hidden keys skipped, a note on the rest); a URL with `*`, `?` or `[…]` in its key
//! matches keys segment by segment, like a local glob. Keys are sorted segment by segment, as a folder
//! walk sorts names, whatever order the store lists them in, so every shard of a run plans the same.
//!
//! Objects are fetched ahead of the readers, on a thread of their own, a window of the run's next
//! objects at a time, with several GETs in flight under one bound on their bytes; a large object is
//! read in ranges. Each object's bytes are then kept for the process like a pipe's (`stream`): small
//! ones in memory, others in an unlinked temporary file that the readers map, since a run reads each
//! input more than once.
//!
//! Credentials come from the store's usual environment (`AWS_*`, `GOOGLE_*`, `AZURE_*`), for AWS also
//! from the profile of the shared files (`AWS_PROFILE`, `~/.aws/credentials`, `~/.aws/config`) or
//! the instance metadata; an S3-compatible store is reached through `AWS_ENDPOINT_URL` or the run's
//! `--s3-endpoint` (given to `expand`, [`bind`], [`upload_dir`] and [`download_dir`]; an object
//! is fetched through the store it was listed or named with). No credential is ever part of a
//! message: errors are told by kind and URL.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use object_store::path::Path as Key;
use object_store::{ClientOptions, ObjectStore, ObjectStoreExt, RetryConfig};

use super::source::Source;
use crate::error::InputError;

/// URL schemes read as object storage.
const SCHEMES: [&str; 8] = [
    "s3://", "s3a://", "gs://", "az://", "azure://", "abfs://", "abfss://", "https://",
];

/// Objects up to this size are kept in memory; larger ones in a temporary file.
const IN_MEMORY: u64 = 64 << 10;
/// Objects larger than this are read in ranges of this size, in parallel.
const RANGE: u64 = 8 << 20;
/// GETs in flight at once.
const CONCURRENT_GETS: usize = 16;
/// Bytes of GET responses in flight (held in memory before they are written out) at once.
const BYTES_IN_FLIGHT: u64 = 64 << 20;
/// Objects and bytes a fetch window takes beyond the object asked for.
const WINDOW_OBJECTS: usize = 64;
const WINDOW_BYTES: u64 = 256 << 20;
/// Bytes and objects of fetched objects kept for later reads of the same run.
const HELD_BYTES: u64 = 4 << 30;
const HELD_OBJECTS: usize = 8192;
/// Attempts at one GET whose body fails (the client already retries failed requests).
const BODY_ATTEMPTS: u32 = 3;

/// Everything this process knows of object storage: one client per bucket, the objects listed, and
/// the objects fetched. Behind one lock: fetches are batched, and a reader waiting for an object that
/// another thread's window is fetching waits for that window.
static STATE: Mutex<Option<State>> = Mutex::new(None);

#[derive(Default)]
struct State {
    runtime: Option<tokio::runtime::Runtime>,
    /// One client per store (`scheme://authority`) and S3 endpoint it is reached through.
    stores: HashMap<(String, Option<String>), Arc<dyn ObjectStore>>,
    /// The client each object was listed or named with, which its fetches use.
    bound: HashMap<PathBuf, Arc<dyn ObjectStore>>,
    /// Sizes of the objects listed, by URL.
    sizes: HashMap<PathBuf, u64>,
    /// The objects in the order the run reads them (listing order until [`prefetch_order`] says
    /// otherwise), and where each one is in it.
    order: Vec<PathBuf>,
    position: HashMap<PathBuf, usize>,
    fetched: HashMap<PathBuf, Result<Arc<Source>, String>>,
    /// Objects whose fetch has started and not yet arrived.
    pending: HashSet<PathBuf>,
    limits: Limits,
    /// The objects held in `fetched`, oldest first, and their bytes: past [`HELD_BYTES`] or
    /// [`HELD_OBJECTS`] the oldest are let go (fetched again if a later step reads them), so a bucket of
    /// many objects does not pile up in memory or in mappings.
    held: std::collections::VecDeque<(PathBuf, u64)>,
    held_bytes: u64,
    /// What each URL expanded to, by the S3 endpoint it was listed through: listed once, so every
    /// part of a run (its plan, its audit, its partial's manifest) sees the same objects even if the
    /// store changes meanwhile.
    expanded: HashMap<(PathBuf, Option<String>), Expansion>,
}

/// Returns true if and only if `path` is an object-storage URL.
pub(crate) fn is_url(path: &Path) -> bool {
    let raw = path.as_os_str().as_encoded_bytes();
    SCHEMES
        .iter()
        .any(|s| raw.len() > s.len() && raw[..s.len()].eq_ignore_ascii_case(s.as_bytes()))
}

/// A URL split into the store it names (`scheme://authority`) and the key within it.
struct Url<'a> {
    scheme: &'a str,
    store: &'a str,
    key: &'a str,
}

fn split(raw: &str) -> Result<Url<'_>, String> {
    let (scheme, rest) = raw.split_once("://").ok_or("not a URL")?;
    let (authority, key) = rest.split_once('/').unwrap_or((rest, ""));
    if authority.is_empty() {
        return Err("no bucket in the URL".into());
    }
    if authority.contains('@') {
        return Err(
            "credentials in a URL are not read (they would be printed); use the store's environment variables"
                .into(),
        );
    }
    if scheme.eq_ignore_ascii_case("https") && (key.contains('?') || key.contains('#')) {
        return Err(
            "a query string is not read (a presigned URL's signature would be printed); name the object without it"
                .into(),
        );
    }
    Ok(Url {
        scheme,
        store: &raw[..scheme.len() + 3 + authority.len()],
        key,
    })
}

fn retry_config() -> RetryConfig {
    RetryConfig {
        backoff: object_store::BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            base: 2.0,
        },
        max_retries: 4,
        retry_timeout: Duration::from_secs(120),
    }
}

fn client_options() -> ClientOptions {
    ClientOptions::new()
        .with_connect_timeout(Duration::from_secs(10))
        .with_timeout(Duration::from_secs(60))
}

/// The client for the store of `url`; an S3 store is reached at `s3_endpoint` when one is given.
fn build_store(url: &Url<'_>, s3_endpoint: Option<&str>) -> Result<Arc<dyn ObjectStore>, String> {
    // reqwest is built without a default TLS provider: the ring one rustls already has (ureq's).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let scheme = url.scheme.to_ascii_lowercase();
    let built: object_store::Result<Arc<dyn ObjectStore>> = match scheme.as_str() {
        "s3" | "s3a" => {
            let mut builder = object_store::aws::AmazonS3Builder::from_env()
                .with_url(url.store)
                .with_retry(retry_config())
                .with_client_options(client_options());
            let profile = aws_profile()?;
            if let (None, Some(id), Some(secret)) = (
                std::env::var_os("AWS_ACCESS_KEY_ID"),
                &profile.key_id,
                &profile.secret,
            ) {
                builder = builder
                    .with_access_key_id(id)
                    .with_secret_access_key(secret);
                if let Some(token) = &profile.token {
                    builder = builder.with_token(token);
                }
            }
            let region_in_env = ["AWS_REGION", "AWS_DEFAULT_REGION"]
                .iter()
                .any(|name| std::env::var_os(name).is_some());
            if let (false, Some(region)) = (region_in_env, &profile.region) {
                builder = builder.with_region(region);
            }
            let endpoint = s3_endpoint
                .map(str::to_string)
                .or_else(|| std::env::var("AWS_ENDPOINT_URL_S3").ok())
                .or_else(|| std::env::var("AWS_ENDPOINT_URL").ok())
                .or(profile.endpoint);
            if let Some(endpoint) = endpoint {
                builder = builder
                    .with_allow_http(endpoint.starts_with("http://"))
                    .with_endpoint(endpoint);
            }
            builder.build().map(|s| Arc::new(s) as _)
        }
        "gs" => object_store::gcp::GoogleCloudStorageBuilder::from_env()
            .with_url(url.store)
            .with_retry(retry_config())
            .with_client_options(client_options())
            .build()
            .map(|s| Arc::new(s) as _),
        "az" | "azure" | "abfs" | "abfss" => object_store::azure::MicrosoftAzureBuilder::from_env()
            .with_url(url.store)
            .with_retry(retry_config())
            .with_client_options(client_options())
            .build()
            .map(|s| Arc::new(s) as _),
        _ => object_store::http::HttpBuilder::new()
            .with_url(url.store)
            .with_retry(retry_config())
            .with_client_options(client_options())
            .build()
            .map(|s| Arc::new(s) as _),
    };
    built.map_err(|e| one_line(&e))
}

/// What the AWS shared files say for the profile `AWS_PROFILE` (or `default`): the environment's own
/// settings come first, as the AWS tools do.
#[derive(Default, Debug, PartialEq)]
struct AwsProfile {
    key_id: Option<String>,
    secret: Option<String>,
    token: Option<String>,
    region: Option<String>,
    endpoint: Option<String>,
}

/// The profile from `AWS_SHARED_CREDENTIALS_FILE` (or `~/.aws/credentials`) and `AWS_CONFIG_FILE`
/// (or `~/.aws/config`). A profile named in `AWS_PROFILE` that neither file holds is an error; the
/// `default` profile may be absent.
fn aws_profile() -> Result<AwsProfile, String> {
    let named = std::env::var("AWS_PROFILE").ok().filter(|p| !p.is_empty());
    let name = named.as_deref().unwrap_or("default");
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let file = |variable: &str, default: &str| {
        std::env::var_os(variable)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".aws").join(default)))
    };
    let read = |path: Option<PathBuf>| {
        path.and_then(|p| std::fs::read_to_string(p).ok())
            .unwrap_or_default()
    };
    let credentials = read(file("AWS_SHARED_CREDENTIALS_FILE", "credentials"));
    let config = read(file("AWS_CONFIG_FILE", "config"));
    let mut profile = AwsProfile::default();
    let in_config = profile_section(&config, name, true, &mut profile);
    // The credentials file wins over the config file for the keys both may hold.
    let in_credentials = profile_section(&credentials, name, false, &mut profile);
    if named.is_some() && !in_config && !in_credentials {
        return Err(format!(
            "the AWS profile `{name}` (AWS_PROFILE) is in neither the shared credentials file nor \
             the config file"
        ));
    }
    Ok(profile)
}

/// Reads the section of profile `name` from an AWS shared file into `profile`; says whether the file
/// has it. In the config file a profile's section is `[profile NAME]` (`[default]` for the default
/// one); in the credentials file, `[NAME]`. Indented lines belong to a service's own sub-settings
/// and are passed over.
fn profile_section(text: &str, name: &str, config: bool, profile: &mut AwsProfile) -> bool {
    let wanted = |header: &str| {
        let header = header.trim();
        if config {
            header.strip_prefix("profile").map(str::trim) == Some(name)
                || (name == "default" && header == "default")
        } else {
            header == name
        }
    };
    let mut found = false;
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let line = line.trim();
        if line.starts_with(['#', ';']) || line.is_empty() {
            continue;
        }
        if let Some(header) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = wanted(header);
            found |= inside;
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if !inside {
            continue;
        }
        let value = Some(value.trim().to_string()).filter(|v| !v.is_empty());
        let slot = match key.trim() {
            "aws_access_key_id" => &mut profile.key_id,
            "aws_secret_access_key" => &mut profile.secret,
            "aws_session_token" => &mut profile.token,
            "region" => &mut profile.region,
            "endpoint_url" => &mut profile.endpoint,
            _ => continue,
        };
        if value.is_some() {
            *slot = value;
        }
    }
    found
}

/// An error as one line without the request details a store's message may carry.
fn one_line(error: &object_store::Error) -> String {
    use object_store::Error as E;
    match error {
        E::NotFound { .. } => "no such object (404)".into(),
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => {
            "access denied (403); check the store's credentials".into()
        }
        other if body_broke_off(other) => {
            "the connection broke off during the response body".into()
        }
        other => {
            let mut text = other.to_string().replace(['\n', '\r'], " ");
            // A request URL in a message may carry a query (a signature): it is cut.
            while let Some(start) = text.find('?') {
                let end = text[start..]
                    .find(char::is_whitespace)
                    .map_or(text.len(), |e| start + e);
                text.replace_range(start..end, "");
            }
            if text.len() > 300 {
                let mut cut = 300;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
                text.push('…');
            }
            text
        }
    }
}

/// Whether `error` is a response body that ended early (a server or connection that went away).
fn body_broke_off(error: &object_store::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        let text = e.to_string();
        if text.contains("body error") || text.contains("IncompleteMessage") {
            return true;
        }
        source = e.source();
    }
    false
}

fn read_error(url: &Path, message: String) -> InputError {
    InputError::Read {
        path: url.to_path_buf(),
        source: std::io::Error::other(message),
    }
}

fn lock() -> std::sync::MutexGuard<'static, Option<State>> {
    STATE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl State {
    fn runtime(&mut self) -> std::io::Result<&tokio::runtime::Runtime> {
        if self.runtime.is_none() {
            self.runtime = Some(
                // One thread of its own runs the fetches, so they go on while the readers parse.
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .thread_name("faultgate-fetch")
                    .enable_all()
                    .build()?,
            );
        }
        Ok(self.runtime.as_ref().expect("just built"))
    }

    fn store(
        &mut self,
        url: &Url<'_>,
        s3_endpoint: Option<&str>,
    ) -> Result<Arc<dyn ObjectStore>, String> {
        let key = (url.store.to_string(), s3_endpoint.map(str::to_string));
        if let Some(store) = self.stores.get(&key) {
            return Ok(store.clone());
        }
        let store = build_store(url, s3_endpoint)?;
        self.stores.insert(key, store.clone());
        Ok(store)
    }

    /// The client `object` is fetched with: the one it was listed or named with, else the store's
    /// client without an endpoint of the run's.
    fn store_of(&mut self, object: &Path, url: &Url<'_>) -> Result<Arc<dyn ObjectStore>, String> {
        match self.bound.get(object) {
            Some(store) => Ok(store.clone()),
            None => self.store(url, None),
        }
    }
}

/// One object a URL expands to.
#[derive(Clone)]
pub(crate) struct Listed {
    pub url: PathBuf,
    /// Found by listing a prefix (not named, nor matched by a pattern).
    pub walked: bool,
}

/// What a URL expands to: the objects to read, and those a prefix listing left out by their names.
#[derive(Clone, Default)]
pub(crate) struct Expansion {
    pub objects: Vec<Listed>,
    pub skipped: Vec<PathBuf>,
}

/// The objects behind `url`, in key order, listed through `s3_endpoint` when one is given.
pub(crate) fn expand(url_path: &Path, s3_endpoint: Option<&str>) -> Result<Expansion, InputError> {
    let raw = url_path.to_string_lossy();
    let url = split(&raw).map_err(|m| read_error(url_path, m))?;
    let mut guard = lock();
    let state = guard.get_or_insert_with(State::default);
    let expanded = (url_path.to_path_buf(), s3_endpoint.map(str::to_string));
    if let Some(expansion) = state.expanded.get(&expanded) {
        return Ok(expansion.clone());
    }
    let store = state
        .store(&url, s3_endpoint)
        .map_err(|m| read_error(url_path, m))?;
    let runtime = state.runtime().map_err(|source| InputError::Read {
        path: url_path.to_path_buf(),
        source,
    })?;
    let join = |key: &str| PathBuf::from(format!("{}/{key}", url.store));
    let mut out = Expansion::default();
    if super::names::has_wildcard(url.key) {
        let pattern: Vec<&str> = url.key.split('/').filter(|s| !s.is_empty()).collect();
        let literal: Vec<&str> = pattern
            .iter()
            .take_while(|s| !super::names::has_wildcard(s))
            .copied()
            .collect();
        let listed = runtime
            .block_on(list(&store, &literal.join("/")))
            .map_err(|e| read_error(url_path, one_line(&e)))?;
        for (key, size) in listed {
            let segments: Vec<&str> = key.split('/').collect();
            if segments.len() < pattern.len() {
                continue;
            }
            let hit = pattern.iter().zip(&segments).all(|(p, s)| {
                super::names::matches(p, s) && (!s.starts_with('.') || p.starts_with('.'))
            });
            if !hit {
                continue;
            }
            // A pattern that matches a prefix reads the prefix as a listing of it.
            let walked = segments.len() > pattern.len();
            if walked && !walkable(&segments[pattern.len()..], &key, &join, &mut out) {
                continue;
            }
            state.sizes.insert(join(&key), size);
            out.objects.push(Listed {
                url: join(&key),
                walked,
            });
        }
        if out.objects.is_empty() && out.skipped.is_empty() {
            return Err(InputError::NotFound(url_path.to_path_buf()));
        }
    } else {
        let key = url.key.trim_matches('/');
        let named = if url.key.ends_with('/') || key.is_empty() {
            None
        } else {
            match runtime.block_on(store.head(&Key::from(key))) {
                Ok(meta) => Some(meta.size),
                Err(object_store::Error::NotFound { .. }) => None,
                Err(e) => return Err(read_error(url_path, one_line(&e))),
            }
        };
        if let Some(size) = named {
            state.sizes.insert(join(key), size);
            out.objects.push(Listed {
                url: join(key),
                walked: false,
            });
        } else {
            let listed = runtime
                .block_on(list(&store, key))
                .map_err(|e| read_error(url_path, one_line(&e)))?;
            if listed.is_empty() {
                return Err(InputError::NotFound(url_path.to_path_buf()));
            }
            let depth = key.split('/').filter(|s| !s.is_empty()).count();
            for (found, size) in listed {
                let segments: Vec<&str> = found.split('/').collect();
                if !walkable(
                    &segments[depth.min(segments.len())..],
                    &found,
                    &join,
                    &mut out,
                ) {
                    continue;
                }
                state.sizes.insert(join(&found), size);
                out.objects.push(Listed {
                    url: join(&found),
                    walked: true,
                });
            }
        }
    }
    for listed in &out.objects {
        state.order.push(listed.url.clone());
        state.bound.insert(listed.url.clone(), store.clone());
    }
    state.expanded.insert(expanded, out.clone());
    Ok(out)
}

/// Binds an object a command reads as named, without listing it (`precheck`'s files), to the client
/// reached through `s3_endpoint`, so that its fetch goes there. A path that is not a URL, or a URL
/// that cannot be read, is left for its read to report.
pub fn bind(path: &Path, s3_endpoint: Option<&str>) {
    if !is_url(path) {
        return;
    }
    let raw = path.to_string_lossy();
    let Ok(url) = split(&raw) else {
        return;
    };
    let mut guard = lock();
    let state = guard.get_or_insert_with(State::default);
    if let Ok(store) = state.store(&url, s3_endpoint) {
        state.bound.entry(path.to_path_buf()).or_insert(store);
    }
}

/// Whether a listed key is read, as a directory walk would read a file at `below` (its segments
/// under the prefix): not hidden, with a trace file's name. A key of another name is noted as skipped.
fn walkable(
    below: &[&str],
    key: &str,
    join: &dyn Fn(&str) -> PathBuf,
    out: &mut Expansion,
) -> bool {
    if below.iter().any(|s| s.starts_with('.')) {
        return false;
    }
    if !super::names::is_trace_name(below.last().copied().unwrap_or(key)) {
        out.skipped.push(join(key));
        return false;
    }
    true
}

/// Every key under `prefix` (all of them when it is empty) with its size, in walk order.
async fn list(
    store: &Arc<dyn ObjectStore>,
    prefix: &str,
) -> object_store::Result<Vec<(String, u64)>> {
    let prefix = (!prefix.is_empty()).then(|| Key::from(prefix));
    let mut stream = store.list(prefix.as_ref());
    let mut keys = Vec::new();
    while let Some(meta) = stream.next().await {
        let meta = meta?;
        keys.push((meta.location.to_string(), meta.size));
    }
    // Segment by segment, as a folder walk sorts each folder's names: `a/x.json` before `a-b.json`.
    keys.sort_unstable_by(|a, b| a.0.split('/').cmp(b.0.split('/')));
    keys.dedup_by(|a, b| a.0 == b.0);
    Ok(keys)
}

/// The size of a listed object; 0 when it was not listed.
pub(crate) fn len(url: &Path) -> u64 {
    lock()
        .as_ref()
        .and_then(|s| s.sizes.get(url).copied())
        .unwrap_or(0)
}

/// Says in which order the run reads its objects, so that fetch windows take the next ones (a shard's
/// own, say, not the next in the listing).
pub(crate) fn prefetch_order(paths: &[PathBuf]) {
    let remote: Vec<PathBuf> = paths.iter().filter(|p| is_url(p)).cloned().collect();
    if remote.is_empty() {
        return;
    }
    let mut guard = lock();
    let state = guard.get_or_insert_with(State::default);
    state.position = remote
        .iter()
        .enumerate()
        .map(|(i, p)| (p.clone(), i))
        .collect();
    state.order = remote;
}

/// The bytes of the object at `url`, fetched (with the next objects of the run) on first use.
///
/// Fetches run on the runtime's own thread while the readers parse: each read that finds its object
/// fetched also starts the next window once half of the one ahead of it is missing, so the run's
/// next objects arrive while the current ones are being read.
pub(crate) fn open(url: &Path) -> std::io::Result<Arc<Source>> {
    loop {
        let seen = {
            let mut guard = lock();
            let state = guard.get_or_insert_with(State::default);
            // Counted before the arrivals are taken and any fetch is started: a fetch that ends
            // between then and the wait below is seen, and the wait does not outlast it.
            let seen = arrivals().count;
            state.take_arrivals();
            if let Some(fetched) = state.fetched.get(url) {
                let fetched = fetched.clone();
                let ahead = state.ahead_of(url);
                let worth = ahead.len() * 2 >= WINDOW_OBJECTS
                    || state.bytes_of(&ahead) * 2 >= WINDOW_BYTES
                    || state.is_tail(&ahead);
                if !ahead.is_empty() && worth {
                    state.start_fetch(ahead)?;
                }
                return fetched.map_err(std::io::Error::other);
            }
            if !state.pending.contains(url) {
                let mut window = vec![url.to_path_buf()];
                window.extend(state.ahead_of(url));
                state.start_fetch(window)?;
            }
            seen
        };
        let mut arrived = arrivals();
        while arrived.count == seen {
            arrived = ARRIVED
                .wait(arrived)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }
}

/// Objects whose fetch has finished, waiting to be taken into [`State::fetched`]. Kept apart from
/// [`STATE`] so that a fetch never waits for a lock a reader holds while it lists or uploads.
static ARRIVALS: Mutex<Arrivals> = Mutex::new(Arrivals {
    count: 0,
    objects: Vec::new(),
});
static ARRIVED: Condvar = Condvar::new();

struct Arrivals {
    /// Fetches finished so far: a reader waits until it changes.
    count: u64,
    objects: Vec<(PathBuf, Result<Source, String>)>,
}

fn arrivals() -> std::sync::MutexGuard<'static, Arrivals> {
    ARRIVALS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl State {
    /// The run's objects after `url`, within a window's bounds, neither fetched nor being fetched.
    fn ahead_of(&self, url: &Path) -> Vec<PathBuf> {
        let Some(&at) = self.position.get(url) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut bytes = 0;
        for next in self.order[at + 1..].iter().take(WINDOW_OBJECTS) {
            if bytes >= WINDOW_BYTES {
                break;
            }
            bytes += self.sizes.get(next).copied().unwrap_or(0);
            if !self.fetched.contains_key(next) && !self.pending.contains(next) {
                out.push(next.clone());
            }
        }
        out
    }

    fn bytes_of(&self, objects: &[PathBuf]) -> u64 {
        objects
            .iter()
            .map(|o| self.sizes.get(o).copied().unwrap_or(0))
            .sum()
    }

    /// Whether `ahead` reaches the run's last object: the rest is fetched however little it is.
    fn is_tail(&self, ahead: &[PathBuf]) -> bool {
        ahead.last() == self.order.last()
    }

    /// Starts fetching `objects` on the runtime; they arrive in [`ARRIVALS`].
    fn start_fetch(&mut self, objects: Vec<PathBuf>) -> std::io::Result<()> {
        let mut jobs = Vec::with_capacity(objects.len());
        for object in objects {
            let raw = object.to_string_lossy().into_owned();
            let parsed = split(&raw).map_err(std::io::Error::other)?;
            let store = self
                .store_of(&object, &parsed)
                .map_err(std::io::Error::other)?;
            let key = Key::from(parsed.key);
            let size = self.sizes.get(&object).copied();
            jobs.push((object, store, key, size));
        }
        let runtime = self.runtime()?.handle().clone();
        // Marked only once the fetch surely starts: a reader waits for a pending object's arrival.
        self.pending
            .extend(jobs.iter().map(|(object, ..)| object.clone()));
        let limits = self.limits.clone();
        runtime.spawn(async move {
            let results = fetch_all(&jobs, &limits).await;
            let mut arrived = arrivals();
            for ((object, ..), result) in jobs.into_iter().zip(results) {
                arrived.objects.push((object, result));
            }
            arrived.count += 1;
            ARRIVED.notify_all();
        });
        Ok(())
    }

    /// Moves finished fetches into [`State::fetched`]; past [`HELD_BYTES`] or [`HELD_OBJECTS`] the
    /// oldest objects are let go, never those that just arrived (a reader may be waiting for them).
    fn take_arrivals(&mut self) {
        let arrived = std::mem::take(&mut arrivals().objects);
        let fresh = arrived.len();
        for (object, result) in arrived {
            self.pending.remove(&object);
            if let Ok(source) = &result {
                self.held.push_back((object.clone(), source.len() as u64));
                self.held_bytes += source.len() as u64;
            }
            self.fetched.insert(object, result.map(Arc::new));
        }
        while (self.held_bytes > HELD_BYTES || self.held.len() > HELD_OBJECTS)
            && self.held.len() > fresh
        {
            let Some((old, bytes)) = self.held.pop_front() else {
                break;
            };
            self.held_bytes -= bytes;
            self.fetched.remove(&old);
        }
    }
}

type Job = (PathBuf, Arc<dyn ObjectStore>, Key, Option<u64>);

/// The bounds every fetch of the process shares, however many windows are in flight.
#[derive(Clone)]
struct Limits {
    /// GETs in flight.
    gets: Arc<tokio::sync::Semaphore>,
    /// Bytes of GET responses not yet written out, in eighths of a range.
    bytes: Arc<tokio::sync::Semaphore>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            gets: Arc::new(tokio::sync::Semaphore::new(CONCURRENT_GETS)),
            bytes: Arc::new(tokio::sync::Semaphore::new(
                (BYTES_IN_FLIGHT / RANGE) as usize * 8,
            )),
        }
    }
}

/// Fetches every job's object: its ranges as GETs, `CONCURRENT_GETS` at once and at most
/// `BYTES_IN_FLIGHT` of them unwritten.
async fn fetch_all(jobs: &[Job], limits: &Limits) -> Vec<Result<Source, String>> {
    // The size an object was listed with decides its ranges; a URL named without listing asks first.
    let mut sizes = Vec::with_capacity(jobs.len());
    for (_, store, key, size) in jobs {
        sizes.push(match size {
            Some(size) => Ok(*size),
            None => store
                .head(key)
                .await
                .map(|m| m.size)
                .map_err(|e| one_line(&e)),
        });
    }
    // Each range is written as soon as it arrives, under its permits: the bytes held are bounded.
    let targets: Vec<Mutex<Result<Target, String>>> = sizes
        .iter()
        .map(|size| {
            let size = *size.as_ref().map_err(Clone::clone)?;
            Target::new(size).map_err(|e| format!("cannot spill to a temporary file: {e}"))
        })
        .map(Mutex::new)
        .collect();
    let mut pieces = Vec::new();
    for (j, size) in sizes.iter().enumerate() {
        let Ok(size) = size else { continue };
        let mut start = 0;
        loop {
            let end = (start + RANGE).min(*size);
            pieces.push((j, start..end));
            start = end;
            if start >= *size {
                break;
            }
        }
    }
    futures_util::stream::iter(pieces.into_iter().map(|(j, range)| {
        let (_, store, key, _) = &jobs[j];
        let target = &targets[j];
        async move {
            // One permit per eighth of a range: the bytes this GET may hold before they are written.
            let permits = ((range.end - range.start).div_ceil(RANGE / 8)).max(1) as u32;
            let _held = limits.bytes.acquire_many(permits).await;
            let _get = limits.gets.acquire().await;
            let offset = range.start;
            let bytes = get_range(store, key, range).await;
            let mut target = target
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let Ok(open) = &mut *target else {
                return;
            };
            let written = bytes.and_then(|bytes| {
                open.write_at(offset, &bytes)
                    .map_err(|e| format!("cannot spill to a temporary file: {e}"))
            });
            if let Err(message) = written {
                *target = Err(message);
            }
        }
    }))
    .buffer_unordered(CONCURRENT_GETS)
    .collect::<Vec<()>>()
    .await;
    targets
        .into_iter()
        .map(|t| {
            t.into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .and_then(|t| t.finish().map_err(|e| format!("cannot map its copy: {e}")))
        })
        .collect()
}

/// Where an object's bytes go as they arrive.
enum Target {
    Memory(Vec<u8>),
    File(std::fs::File),
}

impl Target {
    fn new(size: u64) -> std::io::Result<Target> {
        if size <= IN_MEMORY {
            return Ok(Target::Memory(vec![0; size as usize]));
        }
        let file = tempfile::tempfile()?;
        file.set_len(size)?;
        Ok(Target::File(file))
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Target::Memory(buffer) => {
                buffer[offset as usize..offset as usize + bytes.len()].copy_from_slice(bytes);
                Ok(())
            }
            Target::File(file) => file.write_all_at(bytes, offset),
        }
    }

    fn finish(self) -> std::io::Result<Source> {
        match self {
            Target::Memory(buffer) => Ok(Source::Read(buffer)),
            Target::File(mut file) => {
                file.flush()?;
                Source::map_spilled(&file)
            }
        }
    }
}

/// Uploads the files of the local folder `dir` (a partial) as the objects under the prefix `url`,
/// the file named `last` (the manifest) after all the others: a prefix that holds it holds the whole
/// partial, so a merge never reads half of one. An S3 store is reached at `s3_endpoint` when given.
pub fn upload_dir(
    dir: &Path,
    url: &Path,
    last: &str,
    s3_endpoint: Option<&str>,
) -> Result<(), InputError> {
    let raw = url.to_string_lossy().into_owned();
    let parsed = split(&raw).map_err(|m| read_error(url, m))?;
    let prefix = parsed.key.trim_matches('/').to_string();
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .and_then(|entries| {
            entries
                .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
                .collect()
        })
        .map_err(|source| InputError::Read {
            path: dir.to_path_buf(),
            source,
        })?;
    // The manifest last; the others in a fixed order.
    names.sort_by_key(|name| (name == last, name.clone()));
    let mut guard = lock();
    let state = guard.get_or_insert_with(State::default);
    let store = state
        .store(&parsed, s3_endpoint)
        .map_err(|m| read_error(url, m))?;
    let runtime = state.runtime().map_err(|source| InputError::Read {
        path: url.to_path_buf(),
        source,
    })?;
    for name in names {
        let bytes = std::fs::read(dir.join(&name)).map_err(|source| InputError::Read {
            path: dir.join(&name),
            source,
        })?;
        let key = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        runtime
            .block_on(store.put(&Key::from(key.as_str()), bytes.into()))
            .map_err(|e| {
                read_error(
                    url,
                    format!("cannot write {}/{key}: {}", parsed.store, one_line(&e)),
                )
            })?;
    }
    Ok(())
}

/// Downloads the objects directly under the prefix `url` (a partial) into a new temporary folder. An
/// S3 store is reached at `s3_endpoint` when given.
pub fn download_dir(
    url: &Path,
    s3_endpoint: Option<&str>,
) -> Result<tempfile::TempDir, InputError> {
    let raw = url.to_string_lossy().into_owned();
    let parsed = split(&raw).map_err(|m| read_error(url, m))?;
    let prefix = parsed.key.trim_matches('/');
    let mut guard = lock();
    let state = guard.get_or_insert_with(State::default);
    let store = state
        .store(&parsed, s3_endpoint)
        .map_err(|m| read_error(url, m))?;
    let io = |source| InputError::Read {
        path: url.to_path_buf(),
        source,
    };
    let runtime = state.runtime().map_err(io)?;
    let listed = runtime
        .block_on(list(&store, prefix))
        .map_err(|e| read_error(url, one_line(&e)))?;
    let depth = prefix.split('/').filter(|s| !s.is_empty()).count();
    let local = tempfile::Builder::new()
        .prefix("faultgate-partial-")
        .tempdir()
        .map_err(io)?;
    let mut any = false;
    for (key, _) in listed {
        let segments: Vec<&str> = key.split('/').collect();
        if segments.len() != depth + 1 {
            continue;
        }
        let bytes = runtime
            .block_on(async { store.get(&Key::from(key.as_str())).await?.bytes().await })
            .map_err(|e| read_error(url, format!("{}/{key}: {}", parsed.store, one_line(&e))))?;
        std::fs::write(local.path().join(segments[depth]), &bytes).map_err(io)?;
        any = true;
    }
    if !any {
        return Err(InputError::NotFound(url.to_path_buf()));
    }
    Ok(local)
}

/// One range of an object, retried with backoff when its body breaks off.
async fn get_range(
    store: &Arc<dyn ObjectStore>,
    key: &Key,
    range: std::ops::Range<u64>,
) -> Result<Vec<u8>, String> {
    let expected = range.end - range.start;
    if expected == 0 {
        return Ok(Vec::new());
    }
    let mut delay = Duration::from_millis(200);
    let mut attempt = 1;
    loop {
        let error = match store.get_range(key, range.clone()).await {
            Ok(bytes) if bytes.len() as u64 == expected => return Ok(bytes.to_vec()),
            Ok(bytes) => format!(
                "truncated body: {} of {expected} bytes at offset {}",
                bytes.len(),
                range.start
            ),
            Err(
                e @ (object_store::Error::NotFound { .. }
                | object_store::Error::PermissionDenied { .. }
                | object_store::Error::Unauthenticated { .. }),
            ) => return Err(one_line(&e)),
            Err(e) => one_line(&e),
        };
        if attempt >= BODY_ATTEMPTS {
            return Err(format!("{error} (after {attempt} attempts)"));
        }
        attempt += 1;
        tokio::time::sleep(delay).await;
        delay *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_told_from_paths() {
        for url in [
            "s3://b/k",
            "S3://b/",
            "gs://b/x.json",
            "az://c/p/",
            "https://h/x.json",
        ] {
            assert!(is_url(Path::new(url)), "{url}");
        }
        for path in ["s3:/b/k", "./s3://x", "-", "http://h/x", "s3://"] {
            assert!(!is_url(Path::new(path)), "{path}");
        }
    }

    #[test]
    fn each_endpoint_has_its_own_client_and_an_object_keeps_the_one_it_was_named_with() {
        let mut state = State::default();
        let url = split("s3://bucket/a.json").unwrap();
        let first = state.store(&url, Some("http://127.0.0.1:1")).unwrap();
        let second = state.store(&url, Some("http://127.0.0.1:2")).unwrap();
        assert!(!Arc::ptr_eq(&first, &second));
        assert!(Arc::ptr_eq(
            &first,
            &state.store(&url, Some("http://127.0.0.1:1")).unwrap()
        ));
        let object = Path::new("s3://bucket/a.json");
        state.bound.insert(object.to_path_buf(), second.clone());
        assert!(Arc::ptr_eq(&state.store_of(object, &url).unwrap(), &second));
    }

    #[test]
    fn secrets_in_a_url_are_refused_before_anything_prints_them() {
        assert!(split("s3://key:secret@bucket/x").is_err());
        assert!(split("https://h/x.json?X-Amz-Signature=abc").is_err());
        let url = split("s3://bucket/a/b?.json").unwrap();
        assert_eq!((url.store, url.key), ("s3://bucket", "a/b?.json"));
        assert!(split("s3:///x").is_err());
    }

    #[test]
    fn a_profile_is_read_from_its_own_section_of_each_shared_file() {
        let credentials = "[default]\naws_access_key_id = D\naws_secret_access_key = DS\n\n\
                           [ci]\naws_access_key_id=CI\naws_secret_access_key = CS \n\
                           aws_session_token = T\n# a comment = no\n";
        let config = "[default]\nregion = eu-west-1\n[profile ci]\nregion = us-east-2\n\
                      s3 =\n  endpoint_url = http://nested.invalid\nendpoint_url = http://127.0.0.1:9\n\
                      aws_access_key_id = FROM-CONFIG\n[ci]\nregion = wrong-section\n";
        let mut ci = AwsProfile::default();
        assert!(profile_section(config, "ci", true, &mut ci));
        assert!(profile_section(credentials, "ci", false, &mut ci));
        assert_eq!(
            ci,
            AwsProfile {
                key_id: Some("CI".into()),
                secret: Some("CS".into()),
                token: Some("T".into()),
                region: Some("us-east-2".into()),
                endpoint: Some("http://127.0.0.1:9".into()),
            }
        );
        let mut default = AwsProfile::default();
        assert!(profile_section(config, "default", true, &mut default));
        assert!(profile_section(credentials, "default", false, &mut default));
        assert_eq!(default.key_id.as_deref(), Some("D"));
        assert_eq!(default.region.as_deref(), Some("eu-west-1"));
        assert!(!profile_section(credentials, "absent", false, &mut default));
    }
}
