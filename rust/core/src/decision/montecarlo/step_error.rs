//! The model's error on a sample's step: which uncertain inputs scale which factor (`StepError`), read once per
//! plan.

use crate::decision::roi::StepError;

use super::{Section, UncertainInput};

/// Which model-error factor a target scales.
#[derive(Clone, Copy, Debug)]
pub(super) enum ErrorFactor {
    Common,
    Serving,
    Collective,
}

/// Every model-error target, in input order: (input index, factor, side; None = both).
pub(super) type ErrorTerms = Vec<(usize, ErrorFactor, Option<u32>)>;

pub(super) fn error_terms(inputs: &[UncertainInput]) -> ErrorTerms {
    let mut terms = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        for t in input.targets.iter().filter(|t| t.section == Section::ModelError) {
            let factor = match t.field.as_str() {
                "common" => ErrorFactor::Common,
                "serving" => ErrorFactor::Serving,
                "collective" => ErrorFactor::Collective,
                _ => continue,
            };
            terms.push((i, factor, t.side));
        }
    }
    terms
}

/// The model error factors of side `side` at `values`, from `terms` (`error_terms`).
pub(super) fn step_error_of(terms: &ErrorTerms, values: &[f64], side: u32) -> StepError {
    let mut e = StepError::NONE;
    for &(i, factor, on) in terms {
        match factor {
            ErrorFactor::Common => e.common *= values[i].exp(),
            ErrorFactor::Serving => e.serving *= values[i].exp(),
            ErrorFactor::Collective if on.is_none_or(|s| s == side) => e.collective *= values[i].exp(),
            ErrorFactor::Collective => {}
        }
    }
    e
}
