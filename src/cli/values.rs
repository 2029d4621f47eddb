//! Flag values backed by library types (`--format`, `--color`, `--table`).
//!
//! The library's enums know nothing of clap, so the command line stays the one place that depends on it;
//! the values here spell each variant as the library names it.

use clap::ValueEnum;
use clap::builder::PossibleValue;

use crate::ingest::Format;
use crate::report::render::colour::ColorChoice;
use crate::report::render::terminal::TableRows;

impl ValueEnum for Format {
    fn value_variants<'a>() -> &'a [Self] {
        &Format::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.name()))
    }
}

impl ValueEnum for ColorChoice {
    fn value_variants<'a>() -> &'a [Self] {
        &[ColorChoice::Auto, ColorChoice::Always, ColorChoice::Never]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            ColorChoice::Auto => PossibleValue::new("auto")
                .help("When stdout is a terminal and `NO_COLOR` is unset or empty"),
            ColorChoice::Always => PossibleValue::new("always"),
            ColorChoice::Never => PossibleValue::new("never"),
        })
    }
}

impl ValueEnum for TableRows {
    fn value_variants<'a>() -> &'a [Self] {
        &[TableRows::All, TableRows::Failing, TableRows::None]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            TableRows::All => PossibleValue::new("all").help("One row per trace, as 0.4.1 prints"),
            TableRows::Failing => {
                PossibleValue::new("failing").help("The header and the failing traces' rows")
            }
            TableRows::None => PossibleValue::new("none").help("No table"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_decoded_format_is_a_flag_value() {
        assert_eq!(Format::ALL.len(), crate::ingest::DECODERS.len() + 1);
        for format in Format::ALL {
            let name = format.name();
            assert_eq!(Format::from_str(name, false), Ok(format), "{name}");
        }
        let mut names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Format::ALL.len());
    }

    #[test]
    fn table_values_read_back() {
        for rows in TableRows::value_variants() {
            let value = rows.to_possible_value().unwrap();
            assert_eq!(TableRows::from_str(value.get_name(), false), Ok(*rows));
        }
    }

    #[test]
    fn colour_values_read_back() {
        for choice in ColorChoice::value_variants() {
            let value = choice.to_possible_value().unwrap();
            assert_eq!(ColorChoice::from_str(value.get_name(), false), Ok(*choice));
        }
    }
}
