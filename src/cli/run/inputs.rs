//! The input files of a run: the trace paths expanded into files, grouped into runs (one per argument
//! for `baseline`), and the share of them one shard reads.

use std::io::Write;
use std::path::PathBuf;

use crate::cli::CliError;
use crate::error::display_path;
use crate::partial::RunEntry;
use crate::report::render::repro;
use crate::run::InputFile;

/// Every input file of a run, in input order, and the runs they belong to.
pub(crate) struct Inputs {
    /// The files, until [`Inputs::take_share`] takes them for the run.
    pub files: Vec<InputFile>,
    /// How many files the whole list has (it stays when the files are taken).
    pub total: usize,
    pub runs: Vec<RunEntry>,
    /// SHA-256 of the list (runs, paths and sizes): every shard of one run computes the same.
    pub digest: String,
}

impl Inputs {
    /// Lists the files behind `paths`: one run over all of them, or (`per_arg`, for `baseline`) one
    /// run per argument.
    pub(crate) fn list(
        paths: &[PathBuf],
        per_arg: bool,
        sources: &crate::ingest::Sources,
    ) -> Result<Inputs, CliError> {
        let groups: Vec<crate::ingest::paths::Inputs> = if per_arg {
            paths
                .iter()
                .map(|p| crate::ingest::expand_inputs(std::slice::from_ref(p), sources))
                .collect::<Result<_, _>>()?
        } else {
            vec![crate::ingest::expand_inputs(paths, sources)?]
        };
        for group in &groups {
            if let Some(note) = group.skipped_note() {
                writeln!(std::io::stderr(), "{note}")?;
            }
        }
        let runs = if per_arg {
            paths
                .iter()
                .map(|p| RunEntry {
                    arg: p.to_string_lossy().into_owned(),
                    shown: repro::display_path(p).unwrap_or_else(|| display_path(p)),
                })
                .collect()
        } else {
            vec![RunEntry {
                arg: String::new(),
                shown: String::new(),
            }]
        };
        let mut files = Vec::new();
        // The list is hashed as it is made: the run keeps each file's path once, not its line too.
        let mut listing = crate::digest::Hasher::new();
        for (run, group) in groups.into_iter().enumerate() {
            for (path, walked) in group.files.into_iter().zip(group.walked) {
                let bytes = crate::ingest::stream::len(&path);
                listing.update(format!("{run}\t{bytes}\t{}\n", path.to_string_lossy()).as_bytes());
                files.push(InputFile {
                    index: files.len(),
                    run,
                    path,
                    bytes,
                    walked,
                });
            }
        }
        Ok(Inputs {
            total: files.len(),
            files,
            runs,
            digest: listing.finish_hex(),
        })
    }

    /// Takes the files of shard `k` of `n` ([`crate::partial::shard_plan`]), or all of them, out of
    /// the list, which keeps its count and digest: the run holds each path once, however many files
    /// it reads.
    pub(crate) fn take_share(&mut self, shard: Option<(usize, usize)>) -> Vec<InputFile> {
        let files = std::mem::take(&mut self.files);
        let Some((k, n)) = shard else {
            return files;
        };
        let sizes: Vec<u64> = files.iter().map(|f| f.bytes).collect();
        // The plan lists a shard's files in input order.
        let plan = crate::partial::shard_plan(&sizes, n).swap_remove(k - 1);
        let mut files: Vec<Option<InputFile>> = files.into_iter().map(Some).collect();
        plan.iter().filter_map(|&i| files[i].take()).collect()
    }
}
