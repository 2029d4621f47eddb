//! A content-addressed cache of judge replies on disk.
//!
//! A reply is stored under the SHA-256 of what determines it: the endpoint and model, the system prompt
//! (the check's question) and the render sent. Bands take many runs and calibration reruns the same set,
//! so a rerun on the same traces makes no new calls. The raw reply is kept, not the verdict, so a change
//! in reply parsing applies to cached replies too.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::client::Reply;
use super::providers::Usage;

/// Bumped when what a key covers changes, so old entries stop matching.
const KEY_VERSION: &str = "faultgate-judge-1";

/// The cache key of one request, as 64 hex digits.
pub(crate) fn key(identity: &str, system: &str, user: &str) -> String {
    let mut hasher = crate::digest::Hasher::new();
    // Lengths first, so no two different triples hash the same bytes.
    for part in [KEY_VERSION, identity, system, user] {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher.finish_hex()
}

/// The default cache folder: `faultgate/judge` under the user's cache directory.
pub(crate) fn default_dir() -> Option<PathBuf> {
    let var = |n: &str| {
        std::env::var_os(n)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base = if cfg!(windows) {
        var("LOCALAPPDATA")
    } else if cfg!(target_os = "macos") {
        var("HOME").map(|h| h.join("Library/Caches"))
    } else {
        var("XDG_CACHE_HOME").or_else(|| var("HOME").map(|h| h.join(".cache")))
    }?;
    Some(base.join("faultgate").join("judge"))
}

/// A cache folder.
pub(crate) struct Cache {
    dir: PathBuf,
}

impl Cache {
    pub(crate) fn new(dir: PathBuf) -> Cache {
        Cache { dir }
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    /// The stored reply for `key`; an unreadable or damaged entry is a miss.
    pub(crate) fn get(&self, key: &str) -> Option<Reply> {
        let bytes = crate::sidefile::read(&self.path(key)).ok()?;
        let value: Value = serde_json::from_slice(&bytes).ok()?;
        let count = |k: &str| value.get(k).and_then(Value::as_u64).unwrap_or(0);
        Some(Reply {
            text: value.get("reply")?.as_str()?.to_string(),
            usage: Usage {
                prompt_tokens: count("prompt_tokens"),
                completion_tokens: count("completion_tokens"),
            },
        })
    }

    /// Stores a reply. Written to a temporary file and renamed, so a reader never sees half an entry.
    pub(crate) fn put(&self, key: &str, reply: &Reply) -> std::io::Result<()> {
        let path = self.path(key);
        let parent = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(parent)?;
        let text = json!({
            "reply": reply.text,
            "prompt_tokens": reply.usage.prompt_tokens,
            "completion_tokens": reply.usage.completion_tokens,
        })
        .to_string();
        let tmp = parent.join(format!(
            ".{key}.{}.{:?}.tmp",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, &path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_differ_by_every_part() {
        let k = key("m", "q", "r");
        assert_eq!(k.len(), 64);
        assert_ne!(k, key("m2", "q", "r"));
        assert_ne!(k, key("m", "q2", "r"));
        assert_ne!(k, key("m", "q", "r2"));
        assert_ne!(key("ab", "c", ""), key("a", "bc", ""));
        assert_eq!(k, key("m", "q", "r"));
    }

    #[test]
    fn stores_and_reads_replies() {
        let dir = std::env::temp_dir().join(format!("fg-cache-{}", std::process::id()));
        let cache = Cache::new(dir.clone());
        let k = key("m", "q", "r");
        assert!(cache.get(&k).is_none());
        let reply = Reply {
            text: "{\"detected\": true}".into(),
            usage: Usage {
                prompt_tokens: 7,
                completion_tokens: 2,
            },
        };
        cache.put(&k, &reply).unwrap();
        assert_eq!(cache.get(&k), Some(reply));
        std::fs::write(cache.path(&k), "not json").unwrap();
        assert!(cache.get(&k).is_none());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
