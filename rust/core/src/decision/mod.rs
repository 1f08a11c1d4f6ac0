//! The buyer's decision: is fabric A worth its premium over B (`roi`, from two evaluations and their costs), and
//! how sure is that answer (`montecarlo`: sampled inputs, probabilities, the tornado).

pub mod montecarlo;
pub mod roi;
