//! A time-series row, cell by cell: each sample type says once how its
//! cells read ([`Row::cells`]), and that one description serves both the
//! CSV writer, which formats every cell into one reused buffer so a run
//! writes its rows without allocating, and [`collect`], which gives the
//! cells as strings (tests, callers that want a row in hand).
//!
//! The simulator is fast enough that its output counts: a 120 s,
//! 100 Mbit/s run writes 12,000 rows per flow to `flows.csv` (and as many
//! to `model.csv` for a BBR flow) in about a quarter of a second, and
//! allocating a string per cell was a visible share of that.

use std::fmt::{self, Write as _};
use std::io::{self, Write};

/// Where a row's cells go, one at a time, each formatted into one buffer.
pub struct Cells<'a> {
    buf: &'a mut String,
    sink: &'a mut dyn FnMut(&str) -> io::Result<()>,
}

impl Cells<'_> {
    /// A formatted cell (`format_args!`).
    pub fn put(&mut self, args: fmt::Arguments<'_>) -> io::Result<()> {
        self.buf.clear();
        self.buf.write_fmt(args).map_err(io::Error::other)?;
        (self.sink)(self.buf)
    }

    /// A cell that is already text.
    pub fn text(&mut self, s: &str) -> io::Result<()> {
        (self.sink)(s)
    }

    /// A missing value: an empty cell.
    pub fn empty(&mut self) -> io::Result<()> {
        (self.sink)("")
    }
}

/// A sample that is one row of a CSV time series.
pub trait Row {
    /// Hands the row's cells, in its file's column order, to `c`.
    fn cells(&self, c: &mut Cells<'_>) -> io::Result<()>;
}

/// The row's `N` cells as strings.
pub fn collect<R: Row, const N: usize>(row: &R) -> [String; N] {
    let mut out = Vec::with_capacity(N);
    let mut buf = String::new();
    let mut sink = |s: &str| {
        out.push(s.to_string());
        Ok(())
    };
    row.cells(&mut Cells {
        buf: &mut buf,
        sink: &mut sink,
    })
    .expect("collecting cells cannot fail");
    out.try_into()
        .unwrap_or_else(|v: Vec<String>| panic!("a row of {N} columns gave {} cells", v.len()))
}

/// Writes the row as one record of `w`, its cells formatted into `buf`
/// (kept by the caller from row to row); the `csv` crate quotes a cell
/// that needs it.
pub fn write_row<R: Row, W: Write>(
    row: &R,
    w: &mut csv::Writer<W>,
    buf: &mut String,
) -> io::Result<()> {
    let mut sink = |s: &str| w.write_field(s).map_err(io::Error::other);
    row.cells(&mut Cells {
        buf,
        sink: &mut sink,
    })?;
    w.write_record(None::<&[u8]>).map_err(io::Error::other)
}

/// Writes the row as one CSV record to `w` (a writer of its own, for one
/// row at a time).
pub fn write_one<R: Row>(row: &R, w: &mut dyn Write) -> io::Result<()> {
    let mut c = csv::WriterBuilder::new().has_headers(false).from_writer(w);
    write_row(row, &mut c, &mut String::new())?;
    c.flush()
}
