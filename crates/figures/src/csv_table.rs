//! The CSV reader: a whole file as named columns, read with the `csv`
//! crate so quoted fields keep their commas.

use std::path::Path;

/// A CSV file as named columns.
pub struct Table {
    header: Vec<String>,
    pub(crate) rows: Vec<Vec<String>>,
}

impl Table {
    /// Reads a whole CSV file with the `csv` crate, so quoted fields (a
    /// flow named `bbr, no lt_bw`) keep their commas instead of shifting
    /// every later column.
    pub fn read(path: &Path) -> Result<Table, String> {
        let err = |e: csv::Error| format!("cannot read {}: {e}", path.display());
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .from_path(path)
            .map_err(err)?;
        let header: Vec<String> = reader
            .headers()
            .map_err(err)?
            .iter()
            .map(str::to_string)
            .collect();
        if header.is_empty() {
            return Err(format!("{} is empty", path.display()));
        }
        let mut rows = Vec::new();
        for record in reader.records() {
            let record = record.map_err(err)?;
            if record.iter().all(str::is_empty) {
                continue;
            }
            rows.push(record.iter().map(str::to_string).collect());
        }
        Ok(Table { header, rows })
    }

    /// Rows where column `filter.0` equals `filter.1` (all rows if none).
    fn matching<'a>(
        &'a self,
        path: &Path,
        filter: Option<(&'a str, &'a str)>,
    ) -> Result<impl Iterator<Item = &'a Vec<String>> + 'a, String> {
        let fi = match filter {
            Some((c, v)) => Some((self.col(c, path)?, v)),
            None => None,
        };
        Ok(self.rows.iter().filter(move |r| match fi {
            Some((i, v)) => r.get(i).is_some_and(|c| c == v),
            None => true,
        }))
    }

    /// `(x, y)` pairs from numeric columns `x` and `y`, over rows where
    /// column `filter.0` equals `filter.1` (if given); empty cells skipped.
    pub fn points(
        &self,
        path: &Path,
        x: &str,
        y: &str,
        filter: Option<(&str, &str)>,
    ) -> Result<Vec<(f64, f64)>, String> {
        let (xi, yi) = (self.col(x, path)?, self.col(y, path)?);
        Ok(self
            .matching(path, filter)?
            .filter_map(|r| Some((r.get(xi)?.parse().ok()?, r.get(yi)?.parse().ok()?)))
            .collect())
    }

    /// The text cells of column `name` over rows matching `filter`, with
    /// the numeric `time_s` of each row.
    pub fn labels(
        &self,
        path: &Path,
        name: &str,
        filter: Option<(&str, &str)>,
    ) -> Result<Vec<(f64, String)>, String> {
        let (ti, ni) = (self.col("time_s", path)?, self.col(name, path)?);
        Ok(self
            .matching(path, filter)?
            .filter_map(|r| Some((r.get(ti)?.parse().ok()?, r.get(ni)?.clone())))
            .collect())
    }

    /// The index of column `name`, or an error naming the file `path`.
    pub(crate) fn col(&self, name: &str, path: &Path) -> Result<usize, String> {
        self.header.iter().position(|h| h == name).ok_or_else(|| {
            format!(
                "{}: no column `{name}` (is it a bbrlab time series?)",
                path.display()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn tables_keep_quoted_commas() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.csv");
        fs::write(
            &p,
            "time_s,flow,name,x\n0.5,0,\"bbr, no lt_bw\",7\n\n1.5,0,cubic,8\n",
        )
        .unwrap();
        let t = Table::read(&p).unwrap();
        assert_eq!(
            t.points(&p, "time_s", "x", None).unwrap(),
            [(0.5, 7.0), (1.5, 8.0)]
        );
        let names = t.labels(&p, "name", Some(("flow", "0"))).unwrap();
        assert_eq!(names[0].1, "bbr, no lt_bw");
        let empty = dir.path().join("e.csv");
        fs::write(&empty, "").unwrap();
        let err = Table::read(&empty).err().expect("an empty file is refused");
        assert!(err.contains("empty"), "{err}");
    }
}
