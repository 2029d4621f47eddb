//! What choosing a file's reader asks of every byte of it, found in one parallel pass: where its UTF-8
//! first breaks, and whether it mentions OTLP logs (`"resourceLogs"`) or OpenInference's span kind
//! (`"openinference.span.kind"`).
//!
//! Each question alone is a pass over the whole file at memory speed; asked one after another, a large
//! export was read from memory three times before its scan began. Here each block is read once while it
//! sits in the core's cache, and all three answers come from that read. The blocks it found to be text
//! are kept as text (a pointer and a length each), so that a reader takes a span's text from them
//! instead of checking its UTF-8 a second time.

use std::sync::OnceLock;

use memchr::memmem::Finder;
use rayon::prelude::*;

/// The marker of an OTLP logs export, wherever it occurs.
const RESOURCE_LOGS: &[u8] = b"\"resourceLogs\"";
/// The marker of an OpenInference span.
const OPENINFERENCE_KIND: &[u8] = b"\"openinference.span.kind\"";

/// A file's bytes and, once first asked, the answers of the survey pass.
pub struct Survey<'b> {
    bytes: &'b [u8],
    markers: bool,
    surveyed: OnceLock<(Found, Text<'b>)>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Found {
    first_invalid_utf8: Option<usize>,
    resource_logs: bool,
    openinference_kind: bool,
}

/// A file's bytes as the text the survey found them to be, a block at a time: readers take the text of
/// a range from here instead of checking its UTF-8 again.
#[derive(Clone, Default)]
pub struct Text<'b> {
    /// The survey's block size.
    block: usize,
    /// Where each block starts, and where the last one ends.
    starts: Vec<usize>,
    /// Each block's text; none when some block is not UTF-8.
    blocks: Vec<&'b str>,
}

impl<'b> Text<'b> {
    /// The text of bytes `from..to`, if they lie in one block and start and end on characters.
    pub fn get(&self, from: usize, to: usize) -> Option<&'b str> {
        let last = self.blocks.len().checked_sub(1)?;
        let mut block = (from / self.block).min(last);
        while self.starts[block] > from {
            block -= 1;
        }
        let start = self.starts[block];
        self.blocks[block].get(from - start..to.checked_sub(start)?)
    }
}

impl<'b> Survey<'b> {
    /// A survey of `bytes`, run when first asked. With `markers` false the markers are not searched for
    /// (a reader was named, so nothing is detected) and both read as absent.
    pub fn new(bytes: &'b [u8], markers: bool) -> Survey<'b> {
        Survey {
            bytes,
            markers,
            surveyed: OnceLock::new(),
        }
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &'b [u8] {
        self.bytes
    }

    /// The file's text, for ranges of it that lie in one of the survey's blocks.
    pub fn text(&self) -> Text<'b> {
        self.surveyed().1.clone()
    }

    /// Offset of the first byte that is not part of valid UTF-8. Python reads a trace file as UTF-8 text
    /// first, so 0.4.1 refuses such a file whatever part of it holds the byte, even one the OTLP scan
    /// never parses.
    pub fn first_invalid_utf8(&self) -> Option<usize> {
        self.found().first_invalid_utf8
    }

    /// Whether `"resourceLogs"` occurs anywhere, quotes included.
    pub fn mentions_resource_logs(&self) -> bool {
        self.found().resource_logs
    }

    /// Whether `"openinference.span.kind"` occurs anywhere, quotes included.
    pub fn mentions_openinference_kind(&self) -> bool {
        self.found().openinference_kind
    }

    fn found(&self) -> Found {
        self.surveyed().0
    }

    fn surveyed(&self) -> &(Found, Text<'b>) {
        self.surveyed
            .get_or_init(|| survey(self.bytes, self.markers, BLOCK))
    }
}

/// Bytes per block: small enough that a block read for the UTF-8 check is still in the core's cache when
/// the markers are searched for, large enough that handing it to a thread costs nothing next to reading it.
const BLOCK: usize = 256 << 10;

fn survey(bytes: &[u8], markers: bool, block: usize) -> (Found, Text<'_>) {
    let block = block.max(1);
    let finders = markers.then(|| (Finder::new(RESOURCE_LOGS), Finder::new(OPENINFERENCE_KIND)));
    // A marker that straddles two blocks is searched whole in the first, which reaches this far past
    // its end.
    let overlap = RESOURCE_LOGS.len().max(OPENINFERENCE_KIND.len()) - 1;
    let starts = utf8_blocks(bytes, block);
    let blocks: Vec<(Found, Option<&str>)> = starts
        .par_windows(2)
        .map(|w| {
            let (from, to) = (w[0], w[1]);
            let text = simdutf8::compat::from_utf8(&bytes[from..to]);
            let (resource_logs, openinference_kind) = match &finders {
                Some((logs, kind)) => {
                    let reach = &bytes[from..(to + overlap).min(bytes.len())];
                    (logs.find(reach).is_some(), kind.find(reach).is_some())
                }
                None => (false, false),
            };
            let found = Found {
                first_invalid_utf8: text.as_ref().err().map(|e| from + e.valid_up_to()),
                resource_logs,
                openinference_kind,
            };
            (found, text.ok())
        })
        .collect();
    let found = blocks.iter().fold(Found::default(), |a, (b, _)| Found {
        first_invalid_utf8: a.first_invalid_utf8.or(b.first_invalid_utf8),
        resource_logs: a.resource_logs || b.resource_logs,
        openinference_kind: a.openinference_kind || b.openinference_kind,
    });
    let blocks = blocks
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Option<Vec<_>>>();
    let text = Text {
        block,
        starts,
        blocks: blocks.unwrap_or_default(),
    };
    (found, text)
}

/// Where the blocks start, and the end: `block` bytes apart, each at a byte that does not continue
/// a character (at most three steps on valid input), so that UTF-8 is checked a block at a time.
///
/// The cuts are found on the threads: on a freshly mapped file, reading the byte at a cut is the first
/// read of its page, and one thread taking a page fault per block held up the start of the survey.
fn utf8_blocks(bytes: &[u8], block: usize) -> Vec<usize> {
    let cut = |at: usize| {
        let mut start = at;
        while start < bytes.len() && start < at + 3 && bytes[start] & 0xC0 == 0x80 {
            start += 1;
        }
        start
    };
    let mut starts: Vec<usize> = (0..bytes.len().div_ceil(block).max(1))
        .into_par_iter()
        .map(|k| if k == 0 { 0 } else { cut(k * block) })
        .collect();
    // Block `k` starts at most three bytes past `k * block`, so [`Text::get`] finds a byte's block by
    // division (blocks of fewer than four bytes may be empty).
    for k in 1..starts.len() {
        starts[k] = starts[k].max(starts[k - 1]);
    }
    starts.push(bytes.len());
    starts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_blocks(bytes: &[u8], block: usize) -> Found {
        survey(bytes, true, block).0
    }

    #[test]
    fn text_is_given_for_ranges_within_a_block() {
        let text = "aé✓😀b\u{7ff}".repeat(20);
        for block in [1, 3, 7, 16, 1000] {
            let (_, blocks) = survey(text.as_bytes(), false, block);
            for from in 0..text.len() {
                for to in from..=text.len() {
                    match blocks.get(from, to) {
                        Some(got) => {
                            assert_eq!(Some(got), text.get(from..to), "{block} {from} {to}");
                        }
                        // Only a range that crosses blocks or cuts a character is refused.
                        None => assert!(
                            text.get(from..to).is_none()
                                || blocks.starts.iter().any(|&s| from < s && s < to),
                            "{block} {from} {to}"
                        ),
                    }
                }
            }
        }
        let mut bytes = text.clone().into_bytes();
        bytes[40] = 0xff;
        let (_, broken) = survey(&bytes, false, 1000);
        assert_eq!(broken.get(0, 1), None);
    }

    #[test]
    fn blocks_are_cut_between_characters_at_most_three_bytes_late() {
        let text = "aé✓😀b\u{7ff}".repeat(300);
        for block in [4, 5, 7, 16, 64, 1000, 4000] {
            let starts = utf8_blocks(text.as_bytes(), block);
            assert_eq!(starts.len(), text.len().div_ceil(block) + 1, "{block}");
            assert_eq!((starts[0], starts[starts.len() - 1]), (0, text.len()));
            for (k, &start) in starts[..starts.len() - 1].iter().enumerate() {
                assert!(text.is_char_boundary(start), "{block} {k}");
                assert!((k * block..=k * block + 3).contains(&start), "{block} {k}");
            }
        }
        assert_eq!(utf8_blocks(b"", 4), [0, 0]);
    }

    #[test]
    fn the_first_invalid_utf8_byte_is_named_across_blocks() {
        assert_eq!(
            Survey::new("plain é ✓".as_bytes(), true).first_invalid_utf8(),
            None
        );
        assert_eq!(
            Survey::new(b"{\"k\xff\": 1}", true).first_invalid_utf8(),
            Some(3)
        );
        let mut big = "é".repeat(3 << 20).into_bytes();
        assert_eq!(
            Survey::new(&big, true).first_invalid_utf8(),
            None,
            "blocks split between a character's bytes"
        );
        big[5 << 20] = 0xff;
        big[(5 << 20) + 7] = 0xff;
        assert_eq!(Survey::new(&big, true).first_invalid_utf8(), Some(5 << 20));
        // Each block size puts the boundary somewhere else within the characters.
        for block in 1..9 {
            let text = "aé✓😀b\u{7ff}".repeat(5);
            assert_eq!(with_blocks(text.as_bytes(), block).first_invalid_utf8, None);
            let mut bytes = text.into_bytes();
            for at in [0, 1, 2, 5, 11, 30] {
                let mut b = bytes.clone();
                b[at] = 0x80;
                let expected = std::str::from_utf8(&b).err().map(|e| e.valid_up_to());
                assert_eq!(
                    with_blocks(&b, block).first_invalid_utf8,
                    expected,
                    "{block} {at}"
                );
            }
            bytes.truncate(bytes.len() - 1);
            let expected = std::str::from_utf8(&bytes).err().map(|e| e.valid_up_to());
            assert!(expected.is_some());
            assert_eq!(with_blocks(&bytes, block).first_invalid_utf8, expected);
        }
    }

    #[test]
    fn a_marker_is_found_wherever_the_blocks_cut_it() {
        for (marker, is_logs) in [(RESOURCE_LOGS, true), (OPENINFERENCE_KIND, false)] {
            for at in 0..40 {
                let mut bytes = vec![b'x'; 70];
                bytes[at..at + marker.len()].copy_from_slice(marker);
                for block in [1, 2, 5, 7, 13, 64] {
                    let found = with_blocks(&bytes, block);
                    assert_eq!(
                        (found.resource_logs, found.openinference_kind),
                        (is_logs, !is_logs),
                        "at {at}, blocks of {block}"
                    );
                }
                // One byte short of the marker is found nowhere.
                bytes[at + marker.len() - 1] = b'x';
                for block in [1, 2, 5, 7, 13, 64] {
                    let found = with_blocks(&bytes, block);
                    assert!(
                        !found.resource_logs && !found.openinference_kind,
                        "at {at}, blocks of {block}"
                    );
                }
            }
        }
        assert_eq!(with_blocks(b"", 4).first_invalid_utf8, None);
        assert!(!with_blocks(b"", 4).resource_logs);
        // Escaped inside a string, the word is not the marker.
        let unmarked = r#"{"note":"\"resourceLogs\" \"openinference.span.kind\""}"#;
        let found = with_blocks(unmarked.as_bytes(), 7);
        assert!(!found.resource_logs && !found.openinference_kind);
    }

    #[test]
    fn markers_are_not_searched_for_when_not_asked() {
        let both = br#"{"resourceLogs":[{"key":"openinference.span.kind"}]}"#;
        let asked = Survey::new(both, true);
        assert!(asked.mentions_resource_logs() && asked.mentions_openinference_kind());
        let named = Survey::new(both, false);
        assert!(!named.mentions_resource_logs() && !named.mentions_openinference_kind());
        assert_eq!(named.first_invalid_utf8(), None);
    }
}
