//! A file's contents as the readers see them: decompressed, with a leading UTF-8 byte-order mark read
//! past, and (under `--skip-bad-input`) with the JSON lines that do not parse left out.
//!
//! What is left out is overwritten with spaces, JSON's whitespace, instead of cut out, so that every
//! byte offset a reader reports is still the offset in the file. Only a file that needs it pays for the
//! copy: in memory up to [`archive::SPILL_AT`], past it in an unlinked temporary file that is mapped, as
//! decompressed output is.

use std::io::Write;
use std::ops::Range;
use std::path::Path;

use rayon::prelude::*;
use simd_json::prelude::*;

use super::archive::{self, Decompressed};
use super::json::{ParseFailure, with_tape};
use super::source::Source;
use crate::error::{InputError, display_path};

/// The UTF-8 encoding of U+FEFF. RFC 8259 (section 8.1) lets a parser ignore it at the start of a
/// text; Windows tools write one by default.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A file's contents: decompressed, with a leading byte-order mark read past.
pub(crate) fn of<'a>(path: &Path, stored: &'a [u8]) -> Result<Decompressed<'a>, InputError> {
    let data = archive::decompress(path, stored, archive::Limits::default())?;
    if !data.starts_with(BOM) {
        return Ok(data);
    }
    blank(path, data, std::slice::from_ref(&(0..BOM.len())))
}

/// Runs `f` on a file's contents ([`of`]).
pub(crate) fn with<T>(
    path: &Path,
    f: impl FnOnce(Decompressed<'_>) -> Result<T, InputError>,
) -> Result<T, InputError> {
    let stored = super::stream::open(path).map_err(|source| InputError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    f(of(path, &stored)?)
}

/// `data` with the byte ranges `ranges` (sorted, disjoint) overwritten with spaces.
fn blank<'a>(
    path: &Path,
    data: Decompressed<'a>,
    ranges: &[Range<usize>],
) -> Result<Decompressed<'a>, InputError> {
    let spill = |source: std::io::Error| InputError::Invalid {
        path: path.to_path_buf(),
        message: format!("cannot write its contents to a temporary file: {source}"),
    };
    match data {
        mut owned @ Decompressed::Owned(_) => {
            if let Decompressed::Owned(bytes) = &mut owned {
                for r in ranges {
                    bytes[r.clone()].fill(b' ');
                }
            }
            Ok(owned)
        }
        other if other.len() <= archive::SPILL_AT => {
            let mut bytes = other.to_vec();
            for r in ranges {
                bytes[r.clone()].fill(b' ');
            }
            Ok(Decompressed::Owned(bytes))
        }
        other => {
            let mut file = tempfile::tempfile().map_err(spill)?;
            let mut at = 0;
            for r in ranges {
                file.write_all(&other[at..r.start]).map_err(spill)?;
                file.write_all(&vec![b' '; r.len()]).map_err(spill)?;
                at = r.end;
            }
            file.write_all(&other[at..]).map_err(spill)?;
            drop(other);
            Source::map_spilled(&file)
                .map(Decompressed::Spilled)
                .map_err(spill)
        }
    }
}

/// The JSON lines of a file that do not parse, each with the line's range and why, when the file is
/// JSON lines: more than one non-blank line, and at least as many lines that parse as objects or
/// arrays as lines that do not parse (a pretty-printed document broken somewhere is one document, and
/// is refused whole). `None` when the file is not JSON lines or every line parses.
fn bad_lines(data: &[u8]) -> Option<Vec<(Range<usize>, ParseFailure)>> {
    let mut lines = Vec::new();
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', data).chain(std::iter::once(data.len())) {
        if data[start..end].iter().any(|b| !b.is_ascii_whitespace()) {
            lines.push(start..end);
        }
        start = end + 1;
    }
    if lines.len() < 2 {
        return None;
    }
    let parsed: Vec<Result<bool, ParseFailure>> = lines
        .par_iter()
        .map(|line| {
            with_tape(&data[line.clone()], |doc| {
                doc.as_object().is_some() || doc.as_array().is_some()
            })
        })
        .collect();
    let records = parsed.iter().filter(|p| matches!(p, Ok(true))).count();
    let bad: Vec<(Range<usize>, ParseFailure)> = lines
        .into_iter()
        .zip(parsed)
        .filter_map(|(line, p)| p.err().map(|f| (line, f)))
        .collect();
    (!bad.is_empty() && records >= bad.len()).then_some(bad)
}

/// What [`read_past_bad_lines`] left out of a file: one input warning per JSON line.
#[derive(Debug, Default)]
pub(crate) struct SkippedLines(pub Vec<String>);

/// The contents of a JSON-lines file whose reading failed with `error`, with the lines that do not
/// parse blanked, and a warning for each; `error` itself when the file is not JSON lines or no line is
/// at fault (the file is then skipped whole, or stops the run).
pub(crate) fn read_past_bad_lines<'a>(
    path: &Path,
    data: Decompressed<'a>,
    error: InputError,
) -> Result<(Decompressed<'a>, SkippedLines), InputError> {
    if !matches!(error, InputError::Json { .. }) {
        return Err(error);
    }
    let Some(bad) = bad_lines(&data) else {
        return Err(error);
    };
    let shown = display_path(path);
    let warnings = bad
        .iter()
        .map(|(line, failure)| {
            format!(
                "skipped a JSON line of {shown} at byte {}: {}",
                line.start, failure.message
            )
        })
        .collect();
    let ranges: Vec<Range<usize>> = bad.into_iter().map(|(line, _)| line).collect();
    Ok((blank(path, data, &ranges)?, SkippedLines(warnings)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leading_bom_becomes_whitespace_and_offsets_stay_the_file_s() {
        let path = Path::new("bom.json");
        let text = b"\xEF\xBB\xBF{\"resourceSpans\": []}";
        let data = of(path, text).unwrap();
        assert_eq!(&data[..], b"   {\"resourceSpans\": []}");
        // Only at the start: a BOM later in the text is the text's.
        let inner = b"{\"a\": \"\xEF\xBB\xBF\"}";
        assert!(matches!(
            of(path, inner).unwrap(),
            Decompressed::Borrowed(_)
        ));
        // Inside a compressed file too.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(text).unwrap();
        let packed = gz.finish().unwrap();
        assert_eq!(&of(path, &packed).unwrap()[..3], b"   ");
    }

    #[test]
    fn bad_json_lines_are_blanked_in_place_and_a_broken_document_is_not_json_lines() {
        let path = Path::new("b.jsonl");
        let text = b"{\"a\": 1}\n{\"b\": tru\n[2]\n{\"c\": \"unterminated";
        let error = InputError::Json {
            path: path.to_path_buf(),
            offset: 20,
            message: "x".into(),
        };
        let (data, skipped) =
            read_past_bad_lines(path, Decompressed::Borrowed(text), error).unwrap();
        assert_eq!(data.len(), text.len());
        let mut want = text.to_vec();
        want[9..18].fill(b' ');
        want[23..].fill(b' ');
        assert_eq!(&data[..], &want[..]);
        assert_eq!(skipped.0.len(), 2);
        assert!(
            skipped.0[0].starts_with("skipped a JSON line of b.jsonl at byte 9: "),
            "{:?}",
            skipped.0
        );
        assert!(skipped.0[1].contains("at byte 23: EOF while parsing a string"));
        // A pretty-printed document broken off: most of its lines are no document.
        let pretty = b"{\n \"resourceSpans\": [\n  {}\n ]\n, oops";
        let error = InputError::Json {
            path: path.to_path_buf(),
            offset: 30,
            message: "x".into(),
        };
        assert!(read_past_bad_lines(path, Decompressed::Borrowed(pretty), error).is_err());
        // Errors that are not JSON errors are not about lines.
        let error = InputError::NoTraces(path.to_path_buf());
        assert!(read_past_bad_lines(path, Decompressed::Borrowed(text), error).is_err());
    }

    #[test]
    fn a_large_file_is_blanked_through_a_temporary_file() {
        let path = Path::new("big.jsonl");
        let mut text = vec![b'{'; archive::SPILL_AT + 10];
        text[0..4].copy_from_slice(b"\xEF\xBB\xBF{");
        let data = blank(path, Decompressed::Borrowed(&text), &[0..1, 1..3]).unwrap();
        assert!(matches!(data, Decompressed::Spilled(_)));
        assert_eq!(data.len(), text.len());
        assert_eq!(&data[..5], b"   {{");
    }
}
