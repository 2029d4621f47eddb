//! A Parquet file written as [`ArrowWriter`] writes it, its columns encoded side by side.
//!
//! [`ArrowWriter`] encodes a batch's columns one after the other, on the calling thread. Encoding is
//! most of what a Parquet output costs (dictionaries, statistics), and the `verdicts.parquet` of a
//! million traces holds six million rows: one thread encoding it was the longest part of writing every
//! output. [`ColumnsWriter`] hands each column to its own task instead. Each column's writer still
//! takes the same slices of rows in the same order, and the finished column chunks are appended in
//! schema order, so the file has the same bytes.
//!
//! The gain is in wall time where a core is free: with `--parquet` alone, or on a machine with more
//! cores than the outputs being made. On two cores with every output asked the other outputs keep
//! both busy, and the run takes as long as with one thread encoding.

use std::io::Write;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::{
    ArrowColumnWriter, ArrowLeafColumn, ArrowRowGroupWriterFactory, compute_leaves,
};
use parquet::errors::ParquetError;
use parquet::file::metadata::ParquetMetaData;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use rayon::prelude::*;

/// A Parquet file being written, a row group at a time.
pub(crate) struct ColumnsWriter<W: Write + Send> {
    file: SerializedFileWriter<W>,
    row_groups: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    /// Rows per row group, where [`ArrowWriter`] cuts them.
    row_group_rows: usize,
    /// The row group being filled: a writer per column, and its rows so far.
    open: Option<(Vec<ArrowColumnWriter>, usize)>,
}

impl<W: Write + Send> ColumnsWriter<W> {
    /// A file of `schema` written to `out` with `properties`, as [`ArrowWriter::try_new`] starts it.
    ///
    /// # Errors
    ///
    /// The schema cannot be written as Parquet, or `out` cannot be written.
    pub(crate) fn try_new(
        out: W,
        schema: SchemaRef,
        properties: WriterProperties,
    ) -> Result<Self, ParquetError> {
        let row_group_rows = properties.max_row_group_row_count().unwrap_or(usize::MAX);
        if properties.max_row_group_bytes().is_some() {
            // A cut by bytes depends on how the columns were encoded so far; this writer cuts by rows.
            return Err(ParquetError::General(
                "row groups are cut by rows alone".into(),
            ));
        }
        let (file, row_groups) = ArrowWriter::try_new(out, schema.clone(), Some(properties))?
            .into_serialized_writer()?;
        Ok(ColumnsWriter {
            file,
            row_groups,
            schema,
            row_group_rows: row_group_rows.max(1),
            open: None,
        })
    }

    /// Writes `batch`'s rows, closing each row group as it fills.
    ///
    /// # Errors
    ///
    /// A column cannot be encoded, or the file cannot be written.
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<(), ParquetError> {
        let mut remaining = batch.clone();
        while remaining.num_rows() > 0 {
            let (writers, rows) = match &mut self.open {
                Some(open) => open,
                open => open.insert((
                    self.row_groups
                        .create_column_writers(self.file.flushed_row_groups().len())?,
                    0,
                )),
            };
            let fit = (self.row_group_rows - *rows).min(remaining.num_rows());
            let piece = remaining.slice(0, fit);
            remaining = remaining.slice(fit, remaining.num_rows() - fit);
            let mut leaves: Vec<ArrowLeafColumn> = Vec::with_capacity(writers.len());
            for (field, column) in self.schema.fields().iter().zip(piece.columns()) {
                leaves.extend(compute_leaves(field, column)?);
            }
            writers
                .par_iter_mut()
                .zip(leaves.par_iter())
                .try_for_each(|(writer, leaf)| writer.write(leaf))?;
            *rows += fit;
            if *rows >= self.row_group_rows {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Closes the row group being filled, if any.
    ///
    /// # Errors
    ///
    /// A column cannot be closed, or the file cannot be written.
    pub(crate) fn flush(&mut self) -> Result<(), ParquetError> {
        let Some((writers, _)) = self.open.take() else {
            return Ok(());
        };
        let chunks = writers
            .into_par_iter()
            .map(ArrowColumnWriter::close)
            .collect::<Result<Vec<_>, _>>()?;
        let mut row_group = self.file.next_row_group()?;
        for chunk in chunks {
            chunk.append_to_row_group(&mut row_group)?;
        }
        row_group.close()?;
        Ok(())
    }

    /// Ends the file (its footer) and gives back what it was written to.
    ///
    /// # Errors
    ///
    /// The last row group or the footer cannot be written.
    pub(crate) fn into_inner(mut self) -> Result<W, ParquetError> {
        self.flush()?;
        self.file.into_inner()
    }

    /// Ends the file (its footer).
    ///
    /// # Errors
    ///
    /// The last row group or the footer cannot be written.
    pub(crate) fn close(mut self) -> Result<ParquetMetaData, ParquetError> {
        self.flush()?;
        self.file.close()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Utf8, false),
            Field::new("check", DataType::Utf8, false),
            Field::new("detected", DataType::Boolean, false),
            Field::new("confidence", DataType::Float64, false),
            Field::new("tokens", DataType::Int64, true),
        ]))
    }

    /// Rows `start..start + rows`: ids all different, the other columns repeating.
    fn rows(start: usize, rows: usize) -> RecordBatch {
        let range = start..start + rows;
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from_iter_values(
                range.clone().map(|i| format!("{:032x}", i * 2_654_435_761)),
            )),
            Arc::new(StringArray::from_iter_values(
                range
                    .clone()
                    .map(|i| ["loop", "policy", "abstention"][i % 3]),
            )),
            Arc::new(BooleanArray::from_iter(
                range.clone().map(|i| Some(i % 7 == 0)),
            )),
            Arc::new(Float64Array::from_iter_values(
                range.clone().map(|i| (i % 10) as f64 / 10.0),
            )),
            Arc::new(Int64Array::from_iter(
                range.map(|i| (i % 5 != 0).then_some(i as i64)),
            )),
        ];
        RecordBatch::try_new(schema(), columns).expect("batch")
    }

    fn properties() -> WriterProperties {
        // Small row groups and dictionary pages, so the pieces cross row groups and the ids' dictionary
        // falls back to plain encoding within a row group.
        WriterProperties::builder()
            .set_max_row_group_row_count(Some(3_000))
            .set_dictionary_page_size_limit(4_096)
            .set_data_page_row_count_limit(1_000)
            .build()
    }

    #[test]
    fn the_columns_encoded_side_by_side_make_the_bytes_the_arrow_writer_makes() {
        let pieces = [1_024, 700, 5_000, 1, 2_275, 3_000];
        let mut arrow = ArrowWriter::try_new(Vec::new(), schema(), Some(properties())).unwrap();
        let mut ours = ColumnsWriter::try_new(Vec::new(), schema(), properties()).unwrap();
        let mut start = 0;
        for rows_in_piece in pieces {
            let piece = rows(start, rows_in_piece);
            arrow.write(&piece).unwrap();
            ours.write(&piece).unwrap();
            start += rows_in_piece;
        }
        let (arrow, ours) = (arrow.into_inner().unwrap(), ours.into_inner().unwrap());
        assert!(arrow.len() > 100_000, "{} bytes", arrow.len());
        assert!(arrow == ours, "the files differ");
    }

    #[test]
    fn a_file_without_rows_has_the_arrow_writers_bytes() {
        let arrow = ArrowWriter::try_new(Vec::new(), schema(), Some(properties())).unwrap();
        let ours = ColumnsWriter::try_new(Vec::new(), schema(), properties()).unwrap();
        assert_eq!(arrow.into_inner().unwrap(), ours.into_inner().unwrap());
    }
}
