//! Colour for the terminal table of `check`: FAIL cells red, ok cells dim; and for its gate lines.
//!
//! Colour is added to the finished table text, so the uncoloured bytes are exactly the table's (and
//! 0.4.1's): piped output, `--color never` and `NO_COLOR` print the table unchanged. Only the verdict
//! word of each cell is wrapped in SGR escapes; the trace-id column is never touched, so an id that
//! happens to read `FAIL` stays plain.

use std::io::IsTerminal;

/// `--color`: when to colour the terminal table (the flag's values live in `cli::values`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ColorChoice {
    /// When stdout is a terminal and `NO_COLOR` is unset or empty.
    #[default]
    Auto,
    Always,
    Never,
}

const RED: &str = "\x1b[31m";
const DIM: &str = "\x1b[2m";
const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";
const RESET: &str = "\x1b[0m";
/// Width of a cell and of the gap after it, in characters (see [`super::terminal::table`]).
const CELL: usize = 16;
const GAP: usize = 2;

/// Whether to colour, from the choice, the `NO_COLOR` value and whether stdout is a terminal.
pub(crate) fn enabled_with(
    choice: ColorChoice,
    no_color: Option<&str>,
    stdout_is_terminal: bool,
) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => stdout_is_terminal && no_color.is_none_or(str::is_empty),
    }
}

/// [`enabled_with`] for this process.
pub(crate) fn enabled(choice: ColorChoice) -> bool {
    let no_color = std::env::var("NO_COLOR").ok();
    enabled_with(choice, no_color.as_deref(), std::io::stdout().is_terminal())
}

/// Colours the verdict words of a table from [`super::terminal::table`]: the header and rule lines
/// are kept, and in each row the `cells` verdict cells after the trace-id column (a reason column
/// after them stays plain, so a reason that reads `ok` is not coloured as a verdict).
pub(crate) fn colour_table(table: &str, cells: usize) -> String {
    let mut out = String::with_capacity(table.len() + table.len() / 4);
    let Some(first) = table.lines().next() else {
        return String::new();
    };
    let rows = RowColour::of_header(first, cells);
    for (n, line) in table.split_inclusive('\n').enumerate() {
        if n < 2 {
            out.push_str(line);
        } else {
            rows.push_line(&mut out, line);
        }
    }
    out
}

/// Colours the verdict of a gate line (`gate: FAIL …`, `paired gate: PASS …`): the run's most
/// important line, so it stands out from the table above it. Other lines come back unchanged, and
/// removing the escapes gives the plain line back.
pub(crate) fn colour_gate_line(line: &str) -> String {
    for prefix in ["gate: ", "paired gate: "] {
        let Some(rest) = line.strip_prefix(prefix) else {
            continue;
        };
        for (word, colour) in [("FAIL", RED), ("PASS", GREEN), ("INCONCLUSIVE", YELLOW)] {
            if let Some(tail) = rest.strip_prefix(word) {
                return format!("{prefix}{colour}{word}{RESET}{tail}");
            }
        }
    }
    line.to_string()
}

/// Colours the rows of a table below its header, a few at a time: a table written row by row (from the
/// verdict spill) is coloured as [`colour_table`] colours it whole.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowColour {
    /// The column where the cells start.
    start_col: usize,
    /// How many verdict cells a row has.
    cells: usize,
}

impl RowColour {
    /// The colouring of the rows under `header`, the table's first line, of `cells` verdict cells.
    pub(crate) fn of_header(header: &str, cells: usize) -> RowColour {
        // Cells start where the header's first check name does: after `trace`, its padding and the gap.
        let start_col = header
            .char_indices()
            .skip("trace".len())
            .find(|(_, c)| *c != ' ')
            .map_or(header.chars().count(), |(i, _)| header[..i].chars().count());
        RowColour { start_col, cells }
    }

    /// Appends `rows` (whole lines of the table's rows) to `out`, coloured.
    pub(crate) fn push_rows(self, out: &mut String, rows: &str) {
        for line in rows.split_inclusive('\n') {
            self.push_line(out, line);
        }
    }

    fn push_line(self, out: &mut String, line: &str) {
        let chars: Vec<char> = line.chars().collect();
        let start = self.start_col.min(chars.len());
        out.extend(&chars[..start]);
        let mut at = start;
        for _ in 0..self.cells {
            if at >= chars.len() {
                break;
            }
            let end = (at + CELL).min(chars.len());
            let cell: String = chars[at..end].iter().collect();
            if let Some(rest) = cell.strip_prefix("FAIL") {
                out.push_str(&format!("{RED}FAIL{RESET}{rest}"));
            } else if let Some(rest) = cell.strip_prefix("ok") {
                out.push_str(&format!("{DIM}ok{RESET}{rest}"));
            } else {
                out.push_str(&cell);
            }
            let gap_end = (end + GAP).min(chars.len());
            out.extend(&chars[end..gap_end]);
            at = gap_end;
        }
        out.extend(&chars[at.min(chars.len())..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "trace         search_loop       abstention      \n\
                         ------------------------------------------------\n\
                         FAIL1         FAIL 1.00         ok   1.00       \n\
                         okid          ok   0.50         FAIL 0.90       \n";

    fn strip(text: &str) -> String {
        text.replace(RED, "")
            .replace(DIM, "")
            .replace(GREEN, "")
            .replace(YELLOW, "")
            .replace(RESET, "")
    }

    #[test]
    fn gate_verdicts_are_coloured_and_other_lines_kept() {
        let fail = "gate: FAIL \u{b7} clean rate 0.40 vs band [0.93, 0.93]";
        assert_eq!(
            colour_gate_line(fail),
            "gate: \x1b[31mFAIL\x1b[0m \u{b7} clean rate 0.40 vs band [0.93, 0.93]"
        );
        assert_eq!(
            colour_gate_line("paired gate: PASS \u{b7} 0 regressed"),
            "paired gate: \x1b[32mPASS\x1b[0m \u{b7} 0 regressed"
        );
        for line in [
            fail,
            "gate: INCONCLUSIVE \u{b7} p=0.072",
            "regressions: FAIL, PASS",
        ] {
            assert_eq!(strip(&colour_gate_line(line)), line);
        }
        assert_eq!(
            colour_gate_line("regressions: FAIL, PASS"),
            "regressions: FAIL, PASS"
        );
    }

    #[test]
    fn only_verdict_words_are_coloured_and_stripping_restores_the_bytes() {
        let coloured = colour_table(TABLE, 2);
        assert_eq!(strip(&coloured), TABLE);
        let rows: Vec<&str> = coloured.lines().collect();
        assert_eq!(rows[0], TABLE.lines().next().unwrap());
        assert!(
            rows[2].starts_with(
                "FAIL1         \x1b[31mFAIL\x1b[0m 1.00         \x1b[2mok\x1b[0m   1.00"
            )
        );
        assert!(
            rows[3].starts_with(
                "okid          \x1b[2mok\x1b[0m   0.50         \x1b[31mFAIL\x1b[0m 0.90"
            )
        );
    }

    #[test]
    fn choice_no_color_and_terminal_decide() {
        use ColorChoice::*;
        assert!(enabled_with(Always, Some("1"), false));
        assert!(!enabled_with(Never, None, true));
        assert!(enabled_with(Auto, None, true));
        assert!(enabled_with(Auto, Some(""), true));
        assert!(!enabled_with(Auto, Some("1"), true));
        assert!(!enabled_with(Auto, None, false));
    }

    #[test]
    fn rows_coloured_a_few_at_a_time_are_the_table_coloured_whole() {
        let (header, rows) = TABLE.split_at(TABLE.find('\n').unwrap() + 1);
        let (rule, rows) = rows.split_at(rows.find('\n').unwrap() + 1);
        let colour = RowColour::of_header(header, 2);
        let mut out = format!("{header}{rule}");
        for line in rows.split_inclusive('\n') {
            colour.push_rows(&mut out, line);
        }
        assert_eq!(out, colour_table(TABLE, 2));
    }

    #[test]
    fn a_reason_after_the_cells_stays_plain() {
        // The reason's `FAIL` falls where a third cell would start.
        let table = "trace  policy            reason\n\
                     -----------------------------\n\
                     t1     FAIL 1.00         policy: a b c d e FAIL x\n";
        let coloured = colour_table(table, 1);
        assert_eq!(
            coloured.lines().nth(2).unwrap(),
            "t1     \x1b[31mFAIL\x1b[0m 1.00         policy: a b c d e FAIL x"
        );
        assert_eq!(strip(&coloured), table);
    }
}
