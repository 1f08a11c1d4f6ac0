use super::*;
use crate::metrics::named_for_unit;
use crate::step::parallelism::{Parallelism, Training};
use crate::sweep::Axis;

/// The field names of a struct, from its pretty `Debug` form (one `name: value,` line per field).
fn fields(debug: &str) -> Vec<String> {
    debug
        .lines()
        .filter(|l| l.starts_with("    ") && !l.starts_with("     "))
        .filter_map(|l| l.trim().split_once(':').map(|(name, _)| name.to_string()))
        .collect()
}

#[test]
fn names_are_unique_and_carry_their_units() {
    let mut names: Vec<&str> = PARAMS.iter().map(|p| p.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), PARAMS.len(), "a parameter is defined twice");
    let mut columns: Vec<&str> = columns().map(|p| p.name).chain(METRICS.iter().map(|m| m.name)).collect();
    let n = columns.len();
    columns.sort_unstable();
    columns.dedup();
    assert_eq!(columns.len(), n, "an input column has a metric's name");
    for p in PARAMS {
        assert!(named_for_unit(p.name, p.unit), "{} is in {} but not named so", p.name, p.unit);
        assert!(!p.doc.is_empty() && !p.doc.contains('\n'), "{}: one line of doc", p.name);
    }
}

#[test]
fn the_axis_parameters_are_the_sweeps_axes() {
    let mut axes: Vec<&str> = PARAMS.iter().filter(|p| p.takes(surface::AXIS)).map(|p| p.name).collect();
    let mut want = Axis::INFO.names();
    axes.sort_unstable();
    want.sort_unstable();
    assert_eq!(axes, want);
    // Each axis is a scenario key that takes several values.
    for p in PARAMS.iter().filter(|p| p.takes(surface::AXIS)) {
        let form = p.scenario.map(|s| s.form);
        assert!(
            matches!(form, Some(Form::List { .. } | Form::Counts | Form::Degrees | Form::Topologies)),
            "{}",
            p.name
        );
    }
}

#[test]
fn every_field_of_parallelism_and_training_is_one_parameters() {
    // A new field of the core's Parallelism or Training needs its row here, or `evaluate` and the sweep's
    // templates would never set it.
    for (section, debug) in
        [("parallelism", format!("{:#?}", Parallelism::default())), ("training", format!("{:#?}", Training::default()))]
    {
        let names = fields(&debug);
        assert!(names.len() >= 10, "{section}: {names:?}");
        for field in &names {
            let targets: Vec<&str> = PARAMS
                .iter()
                .filter(|p| match p.core {
                    Core::Parallelism(f) => section == "parallelism" && f == field,
                    Core::Training(f) => section == "training" && f == field,
                    Core::None => false,
                })
                .map(|p| p.name)
                .collect();
            assert_eq!(targets.len(), 1, "{section}.{field} is set by {targets:?}");
        }
        for p in PARAMS {
            match p.core {
                Core::Parallelism(f) if section == "parallelism" => assert!(names.iter().any(|n| n == f), "{f}"),
                Core::Training(f) if section == "training" => assert!(names.iter().any(|n| n == f), "{f}"),
                _ => {}
            }
        }
    }
}

/// Is `toml` (a default as TOML writes it) a valid value of `p`?
fn valid_value(p: &Param, toml: &str) -> bool {
    let text = toml.strip_prefix('"').and_then(|t| t.strip_suffix('"'));
    match p.kind {
        ParamKind::Count => toml.parse::<u64>().is_ok_and(|v| p.bounds.contain(v as f64)),
        ParamKind::Tokens | ParamKind::Float | ParamKind::Ratio | ParamKind::Level => {
            toml.parse::<f64>().is_ok_and(|v| p.bounds.contain(v))
        }
        ParamKind::Flag => toml == "true" || toml == "false",
        ParamKind::Enum => text.is_some_and(|t| p.choices().iter().any(|(n, _)| *n == t)),
        ParamKind::Names => text
            .is_some_and(|t| t.split(',').filter(|n| !n.is_empty()).all(|n| p.choices().iter().any(|(c, _)| *c == n))),
        ParamKind::Id | ParamKind::Model | ParamKind::Overlap => text.is_some(),
        ParamKind::Prices => toml == "{}",
    }
}

#[test]
fn defaults_are_values_the_parameter_accepts() {
    for p in PARAMS {
        if let Missing::Default(toml) = p.missing {
            assert!(valid_value(p, toml), "{} = {toml}", p.name);
        }
        let Some(s) = p.scenario else { continue };
        let doc = p.describe().scenario.unwrap();
        if doc.default.is_empty() || matches!(s.form, Form::Degrees | Form::Topologies) {
            continue;
        }
        let items = match s.form {
            // An empty list default (`[]`) has no item to check.
            Form::List { .. } | Form::Counts => {
                doc.default.trim_matches(['[', ']']).split(", ").filter(|i| !i.is_empty()).collect()
            }
            _ => vec![doc.default.as_str()],
        };
        for item in items {
            // A scale-up domain's "default" is each GPU's own; any other name is looked up in the catalog.
            assert!(valid_value(p, item), "[{}] {} = {}", s.table.name(), s.key, doc.default);
        }
    }
    assert_eq!(param("vpp").unwrap().describe().scenario.unwrap().default, "[1]");
    assert!(param("global_batch").unwrap().describe().scenario.unwrap().required);
}

#[test]
fn the_choices_of_an_input_are_documented() {
    for p in PARAMS.iter().filter(|p| p.kind == ParamKind::Enum) {
        let choices = p.choices();
        assert!(!choices.is_empty(), "{}", p.name);
        for (name, doc) in choices {
            assert!(!doc.is_empty() && !doc.contains('\n'), "{} {name}: {doc:?}", p.name);
        }
    }
    let objectives: Vec<&str> = param("objectives").unwrap().choices().into_iter().map(|(n, _)| n).collect();
    assert!(objectives.contains(&"mfu") && objectives.contains(&"network_capex_usd"), "{objectives:?}");
    assert_eq!(first_sentence("One.  Two\n three."), "One.");
}

#[test]
fn every_named_enum_is_listed() {
    // Counts the declarations in the source, so that a new named enum cannot miss the bindings' `enums()`.
    fn count(dir: &std::path::Path) -> usize {
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                n += count(&path);
            } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("names.rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                n += text
                    .lines()
                    .filter(|l| l.trim_start().trim_start_matches("crate::").starts_with("named_enum! {"))
                    .count();
            }
        }
        n
    }
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    assert_eq!(count(&src), ENUMS.len());
    let mut names: Vec<&str> = ENUMS.iter().map(|e| e.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), ENUMS.len());
}

#[test]
fn every_field_of_the_serving_spec_is_one_parameters() {
    // A new field of crate::serve::Serving needs its row (`.serving(..)`), or `scalefront inference` and the
    // serving scenarios could never set it.
    let names = fields(&format!("{:#?}", crate::examples::serving()));
    assert!(names.len() >= 20, "{names:?}");
    for field in &names {
        let targets: Vec<&str> = PARAMS.iter().filter(|p| p.serving == field).map(|p| p.name).collect();
        assert_eq!(targets.len(), 1, "serving.{field} is set by {targets:?}");
    }
    for p in PARAMS.iter().filter(|p| !p.serving.is_empty()) {
        assert!(names.iter().any(|n| n == p.serving), "{}", p.serving);
        assert!(p.takes(surface::SERVE), "{} sets serving.{} but is no option of inference", p.name, p.serving);
    }
}
