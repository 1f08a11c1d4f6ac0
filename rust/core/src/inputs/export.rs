//! The parameter table and the named enums as the bindings export them: records (`record!`), so that their
//! TypedDicts in `_core.pyi` are generated with the others.

use super::{surface, Core, Form, Missing, Param};
use crate::names::EnumInfo;
use crate::records::join_doc;

crate::record! {
    /// One name a parameter accepts, and its meaning.
    #[derive(Clone, Debug, PartialEq)]
    pub struct ChoiceDoc {
        pub name: &'static str,
        pub doc: String,
    }
}

crate::record! {
    /// Where a parameter sits in a scenario file: `[table] key`, written in `form` (one, list, counts, degrees,
    /// topologies, prices; a list of `min_items` to `max_items` values, 0: no limit); a missing key takes `default`
    /// (TOML), or means `means`, or is an error (`required`).
    #[derive(Clone, Debug, PartialEq)]
    pub struct ScenarioKeyDoc {
        pub table: &'static str,
        pub key: &'static str,
        pub form: &'static str,
        pub min_items: u32,
        pub max_items: u32,
        pub default: String,
        pub means: &'static str,
        pub required: bool,
    }
}

crate::record! {
    /// One input parameter (`scalefront_core::inputs::Param`): a missing value takes `default` (TOML) or means
    /// `means`; numbers lie within `ge`/`gt`/`le`/`lt`; a name is one of `choices` (whose names form the type
    /// `choice_type`) or an entry of the catalog section `catalog`; `core` is the field it sets
    /// (`parallelism.zero_stage`), "" when the Python layer resolves it; `serving` the field of the serving spec it
    /// sets (`scalefront_core::serve::Serving`), "" for none; `surfaces`: api, flag, bom, column, axis, roi, serve.
    #[derive(Clone, Debug, PartialEq)]
    pub struct ParamDoc {
        pub name: &'static str,
        pub kind: &'static str,
        pub group: &'static str,
        pub doc: &'static str,
        pub unit: &'static str,
        pub default: String,
        pub means: &'static str,
        pub ge: Option<f64>,
        pub gt: Option<f64>,
        pub le: Option<f64>,
        pub lt: Option<f64>,
        pub choice_type: &'static str,
        pub choices: Vec<ChoiceDoc>,
        pub catalog: &'static str,
        pub surfaces: Vec<&'static str>,
        pub core: String,
        pub serving: &'static str,
        pub scenario: Option<ScenarioKeyDoc>,
    }
}

crate::record! {
    /// A named enum: its name, its doc, and each variant's name and doc (the full doc comment).
    #[derive(Clone, Debug, PartialEq)]
    pub struct EnumDoc {
        pub name: &'static str,
        pub doc: String,
        pub variants: Vec<ChoiceDoc>,
    }
}

/// (default TOML, means) of what a missing value means; `Same` as `evaluate`'s, in a list for a list `form`.
fn missing_parts(m: Missing, eval: Missing, form: Form) -> (String, &'static str) {
    match (m, eval) {
        (Missing::Default(toml), _) => (toml.to_string(), ""),
        (Missing::Means(how), _) => (String::new(), how),
        (Missing::Same, Missing::Default(toml)) if matches!(form, Form::List { .. }) => (format!("[{toml}]"), ""),
        (Missing::Same, other) if other != Missing::Same => missing_parts(other, other, Form::One),
        _ => (String::new(), ""),
    }
}

impl Param {
    /// The parameter as the bindings export it.
    pub fn describe(&self) -> ParamDoc {
        let (default, means) = missing_parts(self.missing, self.missing, Form::One);
        ParamDoc {
            name: self.name,
            kind: self.kind.name(),
            group: self.group.name(),
            doc: self.doc,
            unit: self.unit,
            default,
            means,
            ge: self.bounds.ge,
            gt: self.bounds.gt,
            le: self.bounds.le,
            lt: self.bounds.lt,
            choice_type: self.choice_type(),
            choices: self.choices().into_iter().map(|(name, doc)| ChoiceDoc { name, doc }).collect(),
            catalog: self.catalog,
            surfaces: surface::NAMES.iter().filter(|(s, _)| self.takes(*s)).map(|(_, n)| *n).collect(),
            core: match self.core {
                Core::None => String::new(),
                Core::Parallelism(field) => format!("parallelism.{field}"),
                Core::Training(field) => format!("training.{field}"),
            },
            serving: self.serving,
            scenario: self.scenario.map(|s| {
                let (default, means) = missing_parts(s.missing, self.missing, s.form);
                let (min_items, max_items) = match s.form {
                    Form::List { min, max } => (u32::from(min), u32::from(max)),
                    _ => (0, 0),
                };
                ScenarioKeyDoc {
                    table: s.table.name(),
                    key: s.key,
                    form: s.form.name(),
                    min_items,
                    max_items,
                    default,
                    means,
                    required: s.missing == Missing::Required
                        || (s.missing == Missing::Same && self.missing == Missing::Required),
                }
            }),
        }
    }
}

impl EnumDoc {
    pub fn of(info: &EnumInfo) -> EnumDoc {
        EnumDoc {
            name: info.name,
            doc: join_doc(info.doc),
            variants: info.variants.iter().map(|(name, doc)| ChoiceDoc { name, doc: join_doc(doc) }).collect(),
        }
    }
}
