//! One decoder per export format, each describing its traces as [`crate::table::record::SpanRecord`]s,
//! and the one list that declares the formats.
//!
//! A format is its decoder, a file here implementing [`Decoder`] (its `--format` name, where
//! `--format auto` tries it, how it recognises a document, its optional fast path, how it reads), and its
//! line in the `formats!` list below. Everything else is derived from that list: the [`Format`] enum
//! and [`Format::ALL`] (what `--format` accepts, in the order `--help` lists it), [`Format::name`], the
//! detection order (`detection_order`) and the refusal that names every format. The steps to add one are in
//! CONTRIBUTING.md ("Adding a format").

pub(crate) mod any_agent;
pub(crate) mod braintrust;
pub(crate) mod chat;
pub(crate) mod common;
pub(crate) mod langfuse;
pub(crate) mod langsmith;
pub(crate) mod langsmith_sdk;
pub(crate) mod multi_agent;
pub(crate) mod openinference;
pub(crate) mod openinference_spans;
pub(crate) mod otlp;
pub(crate) mod otlp_logs;
pub(crate) mod otlp_proto;
pub(crate) mod spans;
pub(crate) mod swe_agent;
pub(crate) mod tau;
pub(crate) mod trajectory;

use crate::ingest::decoder::{Decoder, Detection};

/// Declares the formats: each line is a [`Format`] variant (with its documentation) and the decoder that
/// reads it, in the order `--format` lists them. It writes [`Format`] (with `Auto` first),
/// [`Format::ALL`], [`Format::decoder`] and [`DECODERS`], so the variants and the decoders cannot
/// disagree.
macro_rules! formats {
    ($($(#[$doc:meta])* $variant:ident => $decoder:path,)+) => {
        /// The trace formats `--format` accepts: `auto`, then one per decoder of [`DECODERS`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Format {
            /// `auto`: detect each file's format from its contents, in 0.4.1's order (the default).
            Auto,
            $($(#[$doc])* $variant,)+
        }

        impl Format {
            /// Every format, in the order `--format` lists them.
            pub const ALL: [Format; 1 + [$(Format::$variant),+].len()] =
                [Format::Auto, $(Format::$variant),+];

            /// The decoder of a format other than `auto`.
            pub fn decoder(self) -> Option<&'static dyn Decoder> {
                match self {
                    Format::Auto => None,
                    $(Format::$variant => Some(&$decoder),)+
                }
            }
        }

        /// Every format's decoder, in the order `--format` lists them (`--format auto` tries them in
        /// the order their [`Decoder::detection`] gives, see `detection_order`).
        pub static DECODERS: &[&dyn Decoder] = &[$(&$decoder),+];
    };
}

formats! {
    /// `otlp`: an object with `resourceSpans` (OTLP/JSON, OpenTelemetry GenAI conventions).
    Otlp => otlp::Otlp,
    /// `openinference`: OTLP whose spans carry `openinference.span.kind` (Arize Phoenix).
    Openinference => openinference::OpenInference,
    /// `langfuse`: trace objects with `observations`, or observation rows.
    Langfuse => langfuse::LANGFUSE,
    /// `langsmith`: runs with `run_type`.
    Langsmith => langsmith::LANGSMITH,
    /// `braintrust`: logged spans with `span_attributes` or `root_span_id`.
    Braintrust => braintrust::BRAINTRUST,
    /// `trajectory`: JSON lines of `seq`-numbered action, checkpoint, handoff and final events (one run per file).
    Trajectory => trajectory::TRAJECTORY,
    // Formats 0.4.1 did not read come after its own, so a file 0.4.1 reads keeps its format.
    /// `tau-bench`: tau-bench or tau2-bench results (one trace per task trial).
    TauBench => tau::TAU,
    /// `swe-agent`: a SWE-agent `.traj` or a mini-swe-agent run.
    SweAgent => swe_agent::SWE_AGENT,
    /// `multi-agent`: logs with a `history` list of turns (Who&When: AG2 and Magentic-One runs).
    MultiAgent => multi_agent::MULTI_AGENT,
    /// `otlp-proto`: OTLP protobuf (the Collector file exporter's `format: proto`, or an OTLP/HTTP body).
    OtlpProto => otlp_proto::OtlpProto,
    /// `any-agent`: mozilla-ai any-agent traces.
    AnyAgent => any_agent::AnyAgent,
    /// `langsmith-sdk`: LangSmith runs as the SDK sends them (`post` and `patch` bodies).
    LangsmithSdk => langsmith_sdk::LangsmithSdk,
    /// `openinference-spans`: span objects outside an OTLP envelope (a list or JSON lines).
    OpeninferenceSpans => openinference_spans::OpenInferenceSpans,
    /// `otlp-logs`: OTLP logs with GenAI content (`resourceLogs`), alone or mixed with spans.
    OtlpLogs => otlp_logs::OtlpLogs,
}

impl Format {
    /// The name `--format` takes and reports print: its decoder's.
    pub fn name(self) -> &'static str {
        self.decoder().map_or("auto", |d| d.name())
    }

    /// Returns true if and only if the format's trace ids are names ([`Decoder::named_ids`]).
    pub fn named_ids(self) -> bool {
        self.decoder().is_some_and(Decoder::named_ids)
    }

    /// Every format but `auto`, with its decoder, in the order `--format` lists them.
    pub(crate) fn decoded() -> impl Iterator<Item = (Format, &'static dyn Decoder)> {
        Format::ALL[1..]
            .iter()
            .copied()
            .zip(DECODERS.iter().copied())
    }
}

/// The formats `--format auto` tries on a parsed document, in order: the order `--format` lists them,
/// except that a format refining another ([`Detection::Refines`]) is tried just before it. Binary
/// formats are not among them: only their fast paths recognise them.
pub(crate) fn detection_order() -> Vec<(Format, &'static dyn Decoder)> {
    let mut order = Vec::new();
    for (format, decoder) in Format::decoded().filter(|(_, d)| d.detection() == Detection::Document)
    {
        order.extend(
            Format::decoded().filter(|(_, r)| r.detection() == Detection::Refines(decoder.name())),
        );
        order.push((format, decoder));
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_variant_is_read_by_the_decoder_of_its_line() {
        assert_eq!(Format::ALL.len(), DECODERS.len() + 1);
        for (format, decoder) in Format::decoded() {
            assert_eq!(format.decoder().map(Decoder::name), Some(decoder.name()));
        }
        let mut names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(names[0], "auto");
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Format::ALL.len(), "names are unique");
    }

    #[test]
    fn the_formats_that_name_their_traces_are_the_benchmark_and_agent_logs() {
        let named: Vec<&str> = Format::ALL
            .iter()
            .filter(|f| f.named_ids())
            .map(|f| f.name())
            .collect();
        assert_eq!(named, ["tau-bench", "swe-agent", "multi-agent"]);
    }

    #[test]
    fn formats_are_tried_in_0_4_1_order_then_in_the_order_they_were_added() {
        let names: Vec<&str> = detection_order().iter().map(|(_, d)| d.name()).collect();
        assert_eq!(
            names,
            [
                "openinference",
                "otlp",
                "langfuse",
                "langsmith",
                "braintrust",
                "trajectory",
                "tau-bench",
                "swe-agent",
                "multi-agent",
                "any-agent",
                "langsmith-sdk",
                "openinference-spans",
                "otlp-logs",
            ]
        );
        // Every format is recognised somewhere: on documents here, or by its fast path.
        for (format, decoder) in Format::decoded() {
            let tried = detection_order()
                .iter()
                .filter(|(f, _)| *f == format)
                .count();
            let binary = decoder.detection() == Detection::Binary;
            assert_eq!(tried, usize::from(!binary), "{}", decoder.name());
        }
    }
}
