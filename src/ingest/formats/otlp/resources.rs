//! The resources of a scanned OTLP/JSON export: which resource each span was exported under, found by
//! the span's byte offset, and the resource's attributes, read once, when a trace first needs them.
//!
//! The structural scan (`scan`) notes where each `resourceSpans` element begins and where its
//! `resource` object lies, and never parses them: a span lies in the last element that begins before
//! it, so a trace finds its resource with a binary search per run of its spans, not by any work per
//! span. Resources of the same bytes are read once however often they repeat (JSON lines of one service
//! repeat one resource on every line).
//!
//! Example: a line `{"resourceSpans":[{"scopeSpans":[...],"resource":{"attributes":[{"key":
//! "service.version","value":{"stringValue":"2.1.0"}}]}}]}` gives its spans' trace the resource
//! attribute `service.version` `2.1.0`, whichever of the two keys comes first.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::read_resource;
use super::scan::ResourceBytes;
use crate::ingest::json::with_tape;
use crate::table::record::Attrs;

/// The number of no resource, for spans of elements without one.
const NONE: u32 = u32::MAX;

/// Where a scanned export's spans find their resource, and each resource's attributes once read.
#[derive(Default)]
pub(crate) struct ScannedResources {
    /// Where each entry's elements begin, in file order.
    starts: Vec<usize>,
    /// Each entry's resource, by its number in `ranges` ([`NONE`] for none).
    of_start: Vec<u32>,
    /// Each distinct resource's bytes: its `resource` object.
    ranges: Vec<(usize, usize)>,
    /// Each distinct resource's attributes, read when first asked for.
    read: Vec<OnceLock<Attrs<'static>>>,
    /// Read every attribute, not only `service.version`.
    all_attributes: bool,
}

impl ScannedResources {
    /// The resources the scan found in `bytes`.
    pub(crate) fn new(
        bytes: &[u8],
        found: &[ResourceBytes],
        all_attributes: bool,
    ) -> ScannedResources {
        let mut numbers: HashMap<&[u8], u32> = HashMap::new();
        let mut resources = ScannedResources {
            all_attributes,
            ..ScannedResources::default()
        };
        for entry in found {
            let (from, to) = entry.resource;
            let number = if from == to {
                NONE
            } else {
                *numbers.entry(&bytes[from..to]).or_insert_with(|| {
                    resources.ranges.push((from, to));
                    resources.read.push(OnceLock::new());
                    (resources.ranges.len() - 1) as u32
                })
            };
            resources.starts.push(entry.element);
            resources.of_start.push(number);
        }
        resources
    }

    /// Adds to `into` the attributes of the resources of the spans at `offsets` (in file order), the
    /// first resource's value of each key.
    pub(crate) fn add_to(
        &self,
        bytes: &[u8],
        into: &mut Attrs<'_>,
        offsets: impl Iterator<Item = usize>,
    ) {
        if self.ranges.is_empty() {
            return;
        }
        let mut last = NONE;
        for offset in offsets {
            let entry = self.starts.partition_point(|&start| start <= offset);
            let number = entry.checked_sub(1).map_or(NONE, |e| self.of_start[e]);
            if number == NONE || number == last {
                continue;
            }
            last = number;
            into.add_missing(self.attributes(bytes, number));
        }
    }

    /// The attributes of resource `number`, read the first time they are asked for. A resource that
    /// does not parse has none: the checks never read one, and the scan leaves its grammar unchecked.
    fn attributes(&self, bytes: &[u8], number: u32) -> &Attrs<'static> {
        let n = number as usize;
        self.read[n].get_or_init(|| {
            let (from, to) = self.ranges[n];
            with_tape(&bytes[from..to], |value| {
                read_resource(value, self.all_attributes).into_owned()
            })
            .unwrap_or_default()
        })
    }
}
