//! What evaluating a claim finds: the published-vs-measured rows, the
//! tolerance checks, remarks, and the figures drawn. `claims.json` and the
//! report are written from these.

use crate::tolerance::Rule;
use serde::Serialize;

/// One row of the published-vs-measured table.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// What is compared.
    pub quantity: String,
    /// The published figure.
    pub published: String,
    /// Ours.
    pub measured: String,
}

/// One tolerance check.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    /// The rule, the measured value, and the reason for the tolerance.
    pub what: String,
    /// Whether it held.
    pub ok: bool,
}

/// What evaluating a claim produces.
#[derive(Default)]
pub struct Eval {
    /// Published vs measured.
    pub rows: Vec<Row>,
    /// Tolerance checks; the claim is reproduced when all hold.
    pub checks: Vec<Check>,
    /// Remarks shown whatever the verdict.
    pub notes: Vec<String>,
    /// Figure stems written in the claim directory.
    pub figures: Vec<String>,
}

impl Eval {
    /// Adds a row: `quantity`, its `published` figure and ours.
    pub(crate) fn row(&mut self, quantity: &str, published: &str, measured: String) {
        self.rows.push(Row {
            quantity: quantity.to_string(),
            published: published.to_string(),
            measured,
        });
    }

    /// Judges `values` (all must hold; NaN, a quantity that could not be
    /// measured, never does) by `rule`, and records the check with the
    /// sentence the rule gives: "`subject` *range* (*reason*): `measured`".
    pub(crate) fn judge<'a>(
        &mut self,
        subject: &str,
        rule: impl Into<Rule<'a>>,
        values: &[f64],
        measured: String,
    ) {
        let rule = rule.into();
        self.checks.push(Check {
            what: rule.sentence(subject, &measured),
            ok: rule.check_all(values),
        });
    }
}
