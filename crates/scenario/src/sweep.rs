//! `[sweep]`: the points of a sweep, each the scenario with some keys set
//! (a dotted path names a key; `flow.x` means every flow's).

use super::*;

pub(crate) fn show(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A sweep point: (key, value, index of the value in the key's array).
type Point = Vec<(String, toml::Value, usize)>;

/// The cartesian product of the sweep's arrays, keys in sorted order.
/// `at(key)` locates a sweep key (or the `[sweep]` table) for errors.
pub(crate) fn sweep_points(
    sweep: &toml::Table,
    at: &dyn Fn(Option<&str>) -> String,
) -> Result<Vec<Point>, ScenarioError> {
    let axes: BTreeMap<&String, &toml::Value> = sweep.iter().collect();
    let mut count: usize = 1;
    for (key, values) in &axes {
        let toml::Value::Array(values) = values else {
            return Err(ScenarioError {
                location: at(Some(key)),
                message: format!("[sweep] `{key}`: a sweep parameter must be an array of values, e.g. `\"link.forward.loss.bernoulli\" = [0.001, 0.01]`"),
            });
        };
        if values.is_empty() {
            return Err(ScenarioError {
                location: at(Some(key)),
                message: format!("[sweep] `{key}`: the array is empty; give at least one value"),
            });
        }
        // A key must name something a run is built from: `sweep.x` would
        // make a new [sweep] table inside each point, which is not read
        // again, and the `name`, `description`, `output` and
        // [conformance] of the file are not a run's; each made points that
        // differed only in their label.
        let head = key.split('.').next().unwrap_or_default();
        if ["sweep", "name", "description", "output", "conformance"].contains(&head) {
            return Err(ScenarioError {
                location: at(Some(key)),
                message: format!("[sweep] `{key}`: `{head}` is not part of a run, so sweeping it changes nothing; sweep a run's keys (`duration`, `seed`, `sample_interval`, `link.…`, `flow.…`, `arrivals.…`, `cross.…`)"),
            });
        }
        // Counted before expanding, so a huge product is refused without
        // building it.
        count = count.saturating_mul(values.len());
    }
    if count > crate::limits::MAX_RUNS {
        return Err(ScenarioError {
            location: at(None),
            message: format!(
                "[sweep]: {count} runs; the limit is {}",
                crate::limits::MAX_RUNS
            ),
        });
    }
    let mut points: Vec<Point> = vec![Vec::new()];
    for (key, values) in axes {
        let toml::Value::Array(values) = values else {
            unreachable!("checked above");
        };
        let mut next = Vec::with_capacity(points.len() * values.len());
        for p in &points {
            for (j, v) in values.iter().enumerate() {
                let mut q = p.clone();
                q.push((key.clone(), v.clone(), j));
                next.push(q);
            }
        }
        points = next;
    }
    Ok(points)
}

/// Sets a dotted path in a TOML document. `flow.x` sets `x` in every
/// `[[flow]]`; `flow.N.x` only in the N-th (from 0). Missing tables are
/// created, so a sweep can switch on a feature the base file leaves out.
pub(crate) fn set_path(doc: &mut toml::Table, key: &str, value: toml::Value) -> Result<(), String> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err("empty path segment; use dotted keys like `link.forward.rate`".into());
    }
    set_in(doc, &parts, value)
}

fn set_in(table: &mut toml::Table, parts: &[&str], value: toml::Value) -> Result<(), String> {
    let (head, rest) = (parts[0], &parts[1..]);
    if rest.is_empty() {
        table.insert(head.to_string(), value);
        return Ok(());
    }
    let entry = table
        .entry(head.to_string())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    match entry {
        toml::Value::Table(t) => set_in(t, rest, value),
        toml::Value::Array(items) => {
            // `arrivals.web.rate` / `cross.bg.rate`: the entry named `web`
            // (only these tables: a flow may be named like a `[flow]` key).
            if matches!(head, "arrivals" | "cross") && rest.len() > 1 {
                let named =
                    |t: &toml::Value| t.get("name").and_then(toml::Value::as_str) == Some(rest[0]);
                // Two entries of one name: the key could mean either, and
                // setting the first alone left the other as it was.
                if items.iter().filter(|t| named(t)).count() > 1 {
                    return Err(format!(
                        "two `[[{head}]]` entries are named `{}`; give each its own name",
                        rest[0]
                    ));
                }
                if let Some(toml::Value::Table(t)) = items.iter_mut().find(|t| named(t)) {
                    return set_in(t, &rest[1..], value);
                }
            }
            if let Ok(i) = rest[0].parse::<usize>() {
                let n = items.len();
                let item = items.get_mut(i).ok_or(format!(
                    "`{head}` has {n} entries; index {i} is out of range"
                ))?;
                match item {
                    toml::Value::Table(t) if rest.len() > 1 => set_in(t, &rest[1..], value),
                    _ => Err(format!("`{head}.{i}` is not a table with fields")),
                }
            } else {
                for item in items.iter_mut() {
                    match item {
                        toml::Value::Table(t) => set_in(t, rest, value.clone())?,
                        _ => return Err(format!("`{head}` is not an array of tables")),
                    }
                }
                Ok(())
            }
        }
        _ => Err(format!("`{head}` is a value, not a table")),
    }
}
