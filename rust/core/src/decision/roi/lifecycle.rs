//! The cluster's life in two phases (issue 23, `[lifecycle]` of a scenario): it trains for its first T months,
//! then serves a model at a service level for the rest of the life. In each month A's extra capacity is that
//! phase's speed ratio less one, times the cluster's busy GPU-hours: training months take the training mix's
//! ratio rho_t = W_A / W_B (`Side::work`), serving months the ratio of the two fabrics' output tokens per second per
//! GPU at the best serving layout that meets the SLO on each (`crate::serve::sweep::best_at_slo`), rho_s. So the
//! life's speed ratio is each phase's ratio weighted by its discounted months,
//! rho = (rho_t a(T) + rho_s (a(M) - a(T))) / a(M) (a the annuity of `Discounting`), and the value of speed splits
//! into a training part (rho_t - 1) H v a(T) and a serving part (rho_s - 1) H v (a(M) - a(T)) (H busy GPU-hours a
//! month, v the value of one). A token served on B costs B's levelised GPU-hour over B's tokens per GPU-hour, so
//! valuing A's extra serving capacity at v values its extra tokens at B's cost per million tokens.
//!
//! In the Monte Carlo the layout chosen at typical values is evaluated again on each sample's fabric figures
//! (`ServingSpeed::on`), as training's candidates are. The serving model's error enters as the training model's
//! does (`StepError`): a common factor on the time per output token (the serving validation residuals, one draw for
//! every design) and the collective model's error on the decode step's exposed communication
//! (`ServingRate::comm_share`), per fabric.

use crate::cost::economics::Discounting;
use crate::error::ConfigError;
use crate::hardware::FabricSpec;
use crate::serve::{serve, ServingConfig};

use super::{Side, StepError};

/// What one design serves at the lifecycle's service level, at typical values, and the layout that serves it.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct ServingSpeed {
    /// Output tokens per second per GPU of the best layout that meets the SLO.
    pub tokens_per_s_per_gpu: f64,
    /// Exposed communication's share of its decode step (what the collective model's error scales).
    pub comm_share: f64,
    /// That layout's configuration (None: the figures above hold at any fabric figures).
    #[cfg_attr(feature = "python", pyo3(default))]
    pub config: Option<ServingConfig>,
}

/// Output tokens per second per GPU and the decode step's exposed communication share.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ServingRate {
    pub tokens_per_s_per_gpu: f64,
    pub comm_share: f64,
}

impl ServingSpeed {
    /// At typical values.
    pub fn typical(&self) -> ServingRate {
        ServingRate { tokens_per_s_per_gpu: self.tokens_per_s_per_gpu, comm_share: self.comm_share }
    }

    /// The layout evaluated again on `fabric` (a sample's figures of the design's fabric).
    pub fn on(&self, fabric: &FabricSpec) -> Result<ServingRate, ConfigError> {
        let Some(base) = &self.config else {
            return Ok(self.typical());
        };
        let mut cfg = base.clone();
        cfg.fabric = fabric.clone();
        let e = serve(&cfg)?;
        let step = e.decode_step.total_s();
        let comm_share = if step > 0.0 { e.decode_step.comm_s / step } else { 0.0 };
        Ok(ServingRate { tokens_per_s_per_gpu: e.output_tokens_per_s_per_gpu, comm_share })
    }
}

impl ServingRate {
    /// Output tokens per second per GPU with the model's error `e` applied to the time per token: the common
    /// serving factor on all of it, the collective factor on its communication.
    pub fn delivered(&self, e: StepError) -> f64 {
        let c = self.comm_share;
        self.tokens_per_s_per_gpu / (e.serving * (1.0 - c + e.collective * c))
    }
}

/// The two phases of the life as the comparison prices them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Phases {
    /// Months of training at the start of the life (the whole life without a lifecycle).
    pub training_months: f64,
    /// a(T) and a(M) - a(T): the discounted months of each phase.
    pub training_annuity: f64,
    pub serving_annuity: f64,
    /// rho_t and rho_s (rho_s = rho_t without a lifecycle: no serving months).
    pub training_ratio: f64,
    pub serving_ratio: f64,
}

impl Phases {
    /// The phases of A against B: `training_months` (None, or the whole life or more: it only trains) with the
    /// training ratio `rho_t`; serving needs both sides' serving speeds (each less the busy time its incidents
    /// stall).
    pub fn new(training_months: Option<f64>, d: &Discounting, a: &Side, b: &Side, rho_t: f64) -> Phases {
        let whole = Phases {
            training_months: d.months(),
            training_annuity: d.life_annuity(),
            serving_annuity: 0.0,
            training_ratio: rho_t,
            serving_ratio: rho_t,
        };
        let (Some(t), Some(sa), Some(sb)) = (training_months, a.serving, b.serving) else {
            return whole;
        };
        if t >= d.months() {
            return whole;
        }
        let t = t.max(0.0);
        let serving = |s: f64, side: &Side| s * (1.0 - side.cost.cost.stall_fraction);
        let training_annuity = d.annuity(t);
        Phases {
            training_months: t,
            training_annuity,
            serving_annuity: d.life_annuity() - training_annuity,
            training_ratio: rho_t,
            serving_ratio: serving(sa, a) / serving(sb, b),
        }
    }

    /// The life's speed ratio: each phase's ratio weighted by its discounted months (rho_t exactly when nothing
    /// is served).
    pub fn ratio(&self) -> f64 {
        if self.serving_annuity == 0.0 {
            return self.training_ratio;
        }
        let total = self.training_annuity + self.serving_annuity;
        (self.training_ratio * self.training_annuity + self.serving_ratio * self.serving_annuity) / total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::economics::ClusterCost;
    use crate::decision::roi::{compare, DesignRule, Payback, RoiOptions, SideCost, SideSpeed};
    use crate::examples;
    use crate::prices::Economics;

    /// No discounting, no residual, always busy, nothing but the servers and the fabric: plain arithmetic.
    fn plain() -> Economics {
        let mut e = examples::prices().economics;
        (e.discount_rate, e.residual_fraction, e.utilisation, e.usd_per_kwh) = (0.0, 0.0, 1.0, 0.0);
        (e.colocation_usd_per_kw_month, e.network_spares_fraction, e.installation_fraction) = (0.0, 0.0, 0.0);
        (e.amortization_years, e.server_spares_fraction) = (5.0, 0.0);
        e
    }

    /// 1,000 GPUs on $100M of servers and `fabric_usd` of fabric, training at `tau` and serving at `serving`.
    fn side(tau: f64, fabric_usd: f64, serving: f64) -> Side {
        let cost = ClusterCost {
            server_capex_usd: 100e6,
            network_capex_usd: fabric_usd,
            fabric_capex_usd: fabric_usd,
            ..ClusterCost::default()
        };
        Side {
            speed: SideSpeed::one_workload(tau),
            cost: SideCost::new(cost, &plain()),
            gpus: 1000,
            serving: Some(serving),
        }
    }

    fn months(t: Option<f64>) -> RoiOptions {
        RoiOptions { design: DesignRule::Same, premium: None, value_usd_per_gpu_hour: None, training_months: t }
    }

    #[test]
    fn a_life_of_training_then_serving_by_hand() {
        // A $12M fabric against B's $10M, both on $100M of servers (TCO $112M and $110M, undiscounted, 60
        // months). A trains 2% faster and serves 5% more tokens/s per GPU. 12 months of training, 48 serving:
        // speed worth 0.02 x 12/60 x $110M = $0.44M while training and 0.05 x 48/60 x $110M = $4.4M while
        // serving; life ratio (1.02 x 12 + 1.05 x 48) / 60 = 1.044; savings = NPV = 1.044 x 110 - 112 = +$2.84M.
        let (a, b) = (side(1.02, 12e6, 1050.0), side(1.0, 10e6, 1000.0));
        let c = compare(&a, &b, &[1.0], &[1.02], &months(Some(12.0)));
        assert!((c.speed_ratio - 1.044).abs() < 1e-12, "{}", c.speed_ratio);
        assert!((c.training_speed_ratio - 1.02).abs() < 1e-12 && (c.serving_speed_ratio - 1.05).abs() < 1e-12);
        assert!((c.speed_value_training_usd - 0.44e6).abs() < 1e-3, "{}", c.speed_value_training_usd);
        assert!((c.speed_value_serving_usd - 4.4e6).abs() < 1e-3, "{}", c.speed_value_serving_usd);
        assert!((c.speed_value_usd - 4.84e6).abs() < 1e-3);
        assert!((c.savings_usd - 2.84e6).abs() < 1e-3 && (c.npv_usd - c.savings_usd).abs() < 1e-3);
        // Payback: B's GPU-hour is $110M / 43.83M h; A's extra $2M is recovered by $36,667 a month for 12
        // months ($0.44M), then $91,667 a month: 1.56M / 91,667 = 17.018 more months, 29.018 in all.
        assert_eq!(c.payback, Payback::Months);
        assert!((c.payback_months - (12.0 + 1.56e6 / 91_666.666_666_7)).abs() < 1e-6, "{}", c.payback_months);
        // The yearly table: year 1 of training, years 2-5 of serving; it adds up to the NPV.
        let years = super::super::Flows::of(&c).yearly(&a.cost.tco.discounting);
        assert!((years[1].benefit_usd - 0.44e6).abs() < 1e-3 && (years[2].benefit_usd - 1.1e6).abs() < 1e-3);
        assert!((years[5].cumulative_discounted_usd - c.npv_usd).abs() < 1e-3);
    }

    #[test]
    fn no_serving_months_is_the_training_answer_and_serving_alike_is_worth_nothing() {
        let (a, b) = (side(1.02, 12e6, 1050.0), side(1.0, 10e6, 1000.0));
        let training = compare(&a, &b, &[1.0], &[1.02], &months(None));
        // A lifecycle that trains all 60 months serves for none: every number as without one.
        assert_eq!(compare(&a, &b, &[1.0], &[1.02], &months(Some(60.0))), training);
        assert!((training.savings_usd - 0.2e6).abs() < 1e-3);
        // Serving the whole life at equal tokens/s per GPU: no value from speed; NPV = -$2M, A's extra fabric.
        let (a, b) = (side(1.02, 12e6, 1000.0), side(1.0, 10e6, 1000.0));
        let served = compare(&a, &b, &[1.0], &[1.02], &months(Some(0.0)));
        assert_eq!((served.speed_ratio, served.speed_value_usd, served.speed_value_training_usd), (1.0, 0.0, 0.0));
        assert!((served.npv_usd + 2e6).abs() < 1e-3 && served.payback == Payback::Never, "{served:?}");
    }

    #[test]
    fn the_layout_is_evaluated_again_on_a_samples_fabric() {
        // Llama 3 70B in FP8 on two 8-GPU servers, tp 8 x pp 2: the pipeline's activations cross the fabric every
        // step. At the typical figures the rate is the serving model's own; on a fabric 10x slower in latency the
        // same layout serves fewer tokens per GPU.
        let mut cfg = examples::serving_config();
        (cfg.gpus, cfg.serving.tp, cfg.serving.pp, cfg.serving.batch) = (16, 8, 2, 64);
        let e = crate::serve::serve(&cfg).unwrap();
        let speed = ServingSpeed {
            tokens_per_s_per_gpu: e.output_tokens_per_s_per_gpu,
            comm_share: e.decode_step.comm_s / e.decode_step.total_s(),
            config: Some(cfg.clone()),
        };
        assert_eq!(speed.on(&cfg.fabric).unwrap(), speed.typical());
        let mut slow = cfg.fabric.clone();
        slow.switch_hop_latency_s *= 10.0;
        slow.nic_latency_s *= 10.0;
        let at = speed.on(&slow).unwrap();
        assert!(at.tokens_per_s_per_gpu < speed.tokens_per_s_per_gpu, "{at:?} {:?}", speed.typical());
        // Without a layout the figures hold at any fabric.
        let bare = ServingSpeed { config: None, ..speed.clone() };
        assert_eq!(bare.on(&slow).unwrap(), bare.typical());
    }

    #[test]
    fn the_collective_error_scales_only_the_decode_steps_communication() {
        // 1,000 tokens/s per GPU, a quarter of the decode step communication: the collective model 20% slow
        // stretches the step by 0.75 + 0.25 x 1.2 = 1.05 -> 952.38 tokens/s; a serving residual of +10% on top
        // -> 1,000 / (1.1 x 1.05) = 865.80.
        let s = ServingRate { tokens_per_s_per_gpu: 1000.0, comm_share: 0.25 };
        assert_eq!(s.delivered(StepError::NONE), 1000.0);
        let e = StepError { collective: 1.2, ..StepError::NONE };
        assert!((s.delivered(e) - 1000.0 / 1.05).abs() < 1e-9);
        let e = StepError { serving: 1.1, ..e };
        assert!((s.delivered(e) - 865.800_865_8).abs() < 1e-6);
    }
}
