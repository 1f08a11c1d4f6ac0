//! Helpers shared by the integration tests (`mod common;` in each).

use scalefront_core::{evaluate, Config, Evaluation};

/// Evaluate a worked example whose figures must be valid: a test's own configuration, so any error is a bug.
pub fn eval(cfg: &Config) -> Evaluation {
    cfg.validate_figures().unwrap();
    evaluate(cfg).unwrap()
}
