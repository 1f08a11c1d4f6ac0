//! Money and risk: the price book (`prices`), what a cluster costs to buy and run (`economics`), failures and
//! goodput (`reliability`), the model's validated error (`uncertainty`), the fabric comparison (`roi`) and how
//! sure its verdict is (`montecarlo`).

pub mod economics;
pub mod montecarlo;
pub mod prices;
pub mod reliability;
pub mod roi;
pub mod uncertainty;
