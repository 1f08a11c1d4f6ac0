//! Money and risk: what a cluster costs to buy and run (`economics`, from the price book `crate::prices` and the
//! network's parts), failures and goodput (`reliability`), and the model's validated error (`uncertainty`). The
//! fabric comparison built on them is `crate::decision`.

pub mod economics;
pub mod reliability;
pub mod uncertainty;
