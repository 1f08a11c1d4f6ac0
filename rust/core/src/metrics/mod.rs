//! The output schema, defined once: every metric of an evaluation, with its unit, meaning and, for those a sweep
//! can optimise, its direction; the input columns are the `COLUMN` rows of the parameter table
//! (`crate::inputs::columns`). The Python bindings, `scalefront.Evaluation`, the sweep columns and objectives, the
//! CSV/Parquet schema, `--json` and the README's field table are all derived from these lists.

use crate::evaluate::Evaluation;

/// How a value is stored and printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A real number.
    Float,
    /// A whole number (printed and exported as an integer).
    Count,
    /// True or false.
    Flag,
    /// A name (inputs only: catalog ids, modes).
    Text,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Float => "float",
            Kind::Count => "count",
            Kind::Flag => "flag",
            Kind::Text => "text",
        }
    }
}

/// Which part of the answer a metric belongs to; the Python layer groups `step`, `hidden` and `memory`
/// metrics into `Evaluation.breakdown`, `.hidden` and `.memory`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// Headline results of one step.
    Result,
    /// Step time by component, exposed part; they add up to `step_time_s`.
    Step,
    /// Communication hidden behind compute, per step.
    Hidden,
    /// Memory of the busiest GPU.
    Memory,
    /// The whole training run.
    Run,
    /// The cluster: capex, power, network, reliability.
    Cluster,
    /// The model's size and FLOPs.
    Model,
    /// Serving: latency, throughput and cost of the service.
    Serving,
    /// Serving: the decode step by kind of work.
    Decode,
}

impl Group {
    pub fn name(self) -> &'static str {
        match self {
            Group::Result => "result",
            Group::Step => "step",
            Group::Hidden => "hidden",
            Group::Memory => "memory",
            Group::Run => "run",
            Group::Cluster => "cluster",
            Group::Model => "model",
            Group::Serving => "serving",
            Group::Decode => "decode",
        }
    }
}

/// One output metric of an evaluation (`E`: `Evaluation` for training, `ServingEvaluation` for serving).
#[derive(Clone, Copy, Debug)]
pub struct Metric<E: 'static = Evaluation> {
    pub name: &'static str,
    /// Unit, also spelled at the end of `name` where it has one; "fraction" marks a share in [0, 1] (shown as a
    /// percentage by readers such as the UI), "" a plain number.
    pub unit: &'static str,
    pub kind: Kind,
    pub group: Group,
    pub doc: &'static str,
    /// The value, as f64 (counts are whole, flags 0 or 1).
    pub value: fn(&E) -> f64,
    /// Which way is better, for a metric a sweep can take as an objective (`--objectives`, `[objectives]
    /// minimize`); None for the others.
    pub direction: Option<Direction>,
}

/// Which way a metric is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Minimise,
    Maximise,
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::Minimise => "min",
            Direction::Maximise => "max",
        }
    }
}

impl<E> Metric<E> {
    /// The value a sweep minimises for this metric as an objective: the metric itself, or its negation when it is
    /// maximised.
    pub fn minimised(&self, e: &E) -> f64 {
        match self.direction {
            Some(Direction::Maximise) => -(self.value)(e),
            _ => (self.value)(e),
        }
    }
}

/// The suffix a name carries for its unit (`time_to_train_days`, `it_power_w`), where the unit has one; names in
/// other units ("fraction", "tokens/s", "USD/Mtoken", ...) carry none. Metrics and input parameters follow it (a
/// test holds each list to it), and readers drop it to make a column's label.
pub const UNIT_SUFFIXES: &[(&str, &str)] = &[
    ("s", "_s"),
    ("days", "_days"),
    ("USD", "_usd"),
    ("W", "_w"),
    ("GB", "_gb"),
    ("bytes", "_bytes"),
    ("MWh", "_mwh"),
    ("1/day", "_per_day"),
];

/// The suffix for `unit`, if it has one (see `UNIT_SUFFIXES`).
pub fn unit_suffix(unit: &str) -> Option<&'static str> {
    UNIT_SUFFIXES.iter().find(|(u, _)| *u == unit).map(|(_, s)| *s)
}

/// Does `name` carry the suffix of `unit` (before an interval end's `_lo` / `_hi`), where the unit has one?
pub fn named_for_unit(name: &str, unit: &str) -> bool {
    let base = name.strip_suffix("_lo").or_else(|| name.strip_suffix("_hi")).unwrap_or(name);
    unit_suffix(unit).is_none_or(|s| base.ends_with(s))
}

/// `metric!(name, unit, kind, group, doc, accessor)`, and for a metric a sweep can optimise, its direction last
/// (`Minimise` or `Maximise`).
macro_rules! metric {
    ($name:literal, $unit:literal, $kind:ident, $group:ident, $doc:literal, $value:expr) => {
        Metric {
            name: $name,
            unit: $unit,
            kind: Kind::$kind,
            group: Group::$group,
            doc: $doc,
            value: $value,
            direction: None,
        }
    };
    ($name:literal, $unit:literal, $kind:ident, $group:ident, $doc:literal, $value:expr, $direction:ident) => {
        Metric { direction: Some(Direction::$direction), ..metric!($name, $unit, $kind, $group, $doc, $value) }
    };
}

mod serving;
mod training;

/// The metric of `list` with this name.
fn find<E>(list: &'static [Metric<E>], name: &str) -> Option<&'static Metric<E>> {
    list.iter().find(|m| m.name == name)
}

/// Every metric of `list` named once, each name carrying its unit's suffix (`what`: the list, for the message).
#[cfg(test)]
fn assert_named_once_with_units<E>(list: &[Metric<E>], what: &str) {
    let mut names: Vec<&str> = list.iter().map(|m| m.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), list.len(), "a {what} is defined twice");
    for m in list {
        assert!(named_for_unit(m.name, m.unit), "{} is in {} but not named so", m.name, m.unit);
    }
}

pub use serving::{serving_metric, SERVING_METRICS};
pub use training::{metric, METRICS};
