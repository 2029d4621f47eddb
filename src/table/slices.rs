//! Slice keys (`--by KEY`): which value of a trace each key reads, and the trace's slice label.
//!
//! The table builder labels each trace with its slice (one `KEY=VALUE` per key, joined by `,`) in
//! the trace table's `slice` column, only when the run slices; the gate's slices module counts the
//! verdict rows by that label.
//!
//! `service` and `attr:NAME` read the spans first and the trace's OTLP resource last: OpenTelemetry
//! puts `service.name` (and a deployment's attributes) on the resource, not on each span, while a
//! span that carries the attribute itself says it more precisely.

use std::borrow::Cow;

use super::record::{SpanRecord, TraceRecord};

/// The value of a key a trace does not record.
pub const NONE: &str = "(none)";

/// The request model attribute (`--by model`).
const REQUEST_MODEL: &str = "gen_ai.request.model";

/// The service name attribute (`--by service`).
const SERVICE_NAME: &str = super::record::attr::SERVICE_NAME;

/// One `--by` key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SliceKey {
    /// The request model: the root span's `gen_ai.request.model`, else the first span's that has one.
    Model,
    /// The agent's name, as the verdict table's `agent` column holds it.
    Agent,
    /// The agent's version, as the verdict table's `agent_version` column holds it
    /// (`gen_ai.agent.version`, else the resource's `service.version`).
    AgentVersion,
    /// The service: `service.name` on the root span, else on the first span that has one, else on
    /// the trace's resource (where OpenTelemetry puts it).
    Service,
    /// Any span or resource attribute: on the root span, else on the first span that has one, else on
    /// the trace's resource.
    Attr(String),
}

/// A `--by` value that names no slice key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--by {key}: unknown slice key (one of model, agent, agent_version, service, attr:NAME)")]
pub struct UnknownSliceKey {
    /// The value as given.
    pub key: String,
}

impl SliceKey {
    /// Parses one `--by` value.
    ///
    /// # Errors
    ///
    /// [`UnknownSliceKey`] for anything but the keys above (`attr:` needs a name).
    pub fn parse(text: &str) -> Result<SliceKey, UnknownSliceKey> {
        let key = match text {
            "model" => SliceKey::Model,
            "agent" => SliceKey::Agent,
            "agent_version" => SliceKey::AgentVersion,
            "service" => SliceKey::Service,
            _ => match text.strip_prefix("attr:") {
                Some(name) if !name.trim().is_empty() => SliceKey::Attr(name.to_string()),
                _ => {
                    return Err(UnknownSliceKey {
                        key: text.to_string(),
                    });
                }
            },
        };
        Ok(key)
    }

    /// The key as `--by` spells it.
    pub fn name(&self) -> String {
        match self {
            SliceKey::Model => "model".into(),
            SliceKey::Agent => "agent".into(),
            SliceKey::AgentVersion => "agent_version".into(),
            SliceKey::Service => "service".into(),
            SliceKey::Attr(name) => format!("attr:{name}"),
        }
    }

    /// The attribute the key reads, for the keys the tables do not already carry.
    fn attribute(&self) -> Option<&str> {
        match self {
            SliceKey::Model => Some(REQUEST_MODEL),
            SliceKey::Service => Some(SERVICE_NAME),
            SliceKey::Attr(name) => Some(name),
            SliceKey::Agent | SliceKey::AgentVersion => None,
        }
    }
}

/// The `--by` keys of a run, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SliceKeys(Vec<SliceKey>);

impl SliceKeys {
    /// Parses every `--by` value; `None` when there are none.
    ///
    /// # Errors
    ///
    /// The first value that names no key.
    pub fn parse(texts: &[String]) -> Result<Option<SliceKeys>, UnknownSliceKey> {
        let keys = texts
            .iter()
            .map(|t| SliceKey::parse(t))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((!keys.is_empty()).then_some(SliceKeys(keys)))
    }

    /// The keys as `--by` spells them.
    pub fn names(&self) -> Vec<String> {
        self.0.iter().map(SliceKey::name).collect()
    }

    /// Returns true if and only if some key reads an attribute the decoders would otherwise drop.
    pub fn reads_attributes(&self) -> bool {
        self.0.iter().any(|k| k.attribute().is_some())
    }

    /// Writes the slice of `trace` (whose root span is `root`) into `label` (cleared first):
    /// `KEY=VALUE` for each key, joined by `,`; a value the trace does not record is [`NONE`]. Into a
    /// buffer the caller keeps, with the values borrowed from the trace, so that labelling a trace
    /// allocates nothing.
    pub(crate) fn label_into(
        &self,
        label: &mut String,
        trace: &TraceRecord<'_>,
        root: Option<usize>,
        agent_version: Option<&str>,
    ) {
        let spans = &trace.spans;
        label.clear();
        for (i, key) in self.0.iter().enumerate() {
            if i > 0 {
                label.push(',');
            }
            match key {
                SliceKey::Model => label.push_str("model"),
                SliceKey::Agent => label.push_str("agent"),
                SliceKey::AgentVersion => label.push_str("agent_version"),
                SliceKey::Service => label.push_str("service"),
                SliceKey::Attr(name) => {
                    label.push_str("attr:");
                    label.push_str(name);
                }
            }
            label.push('=');
            let value: Option<Cow<'_, str>> = match key {
                SliceKey::Agent => Some(Cow::Borrowed(trace.agent.as_str())),
                SliceKey::AgentVersion => agent_version.map(Cow::Borrowed),
                _ => {
                    let name = key.attribute().unwrap_or_default();
                    root.and_then(|r| read_value(&spans[r], name))
                        .or_else(|| spans.iter().find_map(|span| read_value(span, name)))
                        .or_else(|| {
                            let value = trace.resource.get(name)?.py_str();
                            (!value.is_empty()).then_some(value)
                        })
                }
            };
            label.push_str(value.as_deref().filter(|v| !v.is_empty()).unwrap_or(NONE));
        }
    }
}

/// A span's value of attribute `name`, as the slice label shows it; `None` when absent or empty.
fn read_value<'s>(span: &'s SpanRecord<'_>, name: &str) -> Option<Cow<'s, str>> {
    let value = span.attr(name)?.py_str();
    (!value.is_empty()).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_and_unknown_ones_are_named() {
        let keys = SliceKeys::parse(&["model".to_string(), "attr:tenant".to_string()])
            .expect("keys")
            .expect("some");
        assert_eq!(keys.names(), ["model", "attr:tenant"]);
        assert!(keys.reads_attributes());
        let err = SliceKey::parse("region").unwrap_err();
        assert_eq!(
            err.to_string(),
            "--by region: unknown slice key (one of model, agent, agent_version, service, attr:NAME)"
        );
        assert!(SliceKey::parse("attr:").is_err());
        assert_eq!(SliceKeys::parse(&[]), Ok(None));
        let agent = SliceKeys::parse(&["agent".to_string()]).unwrap().unwrap();
        assert!(!agent.reads_attributes());
    }
}
