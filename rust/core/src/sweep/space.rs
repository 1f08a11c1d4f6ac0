//! The space of a sweep: its cluster and parallel axes, the options of each (GPU, scale-up domain, fabric with
//! their prices), one configuration as a `Choice` of them, and how many configurations the space holds.

use crate::cost::reliability::ReliabilitySpec;
use crate::cost::uncertainty::ErrorModel;
use crate::error::ConfigError;
use crate::evaluate::Config;
use crate::hardware::{FabricSpec, GpuSpec, ScaleUpSpec, TopologySpec};
use crate::metrics::{metric, Metric, METRICS};
use crate::prices::{Economics, GpuPrices, NetworkPrices, Prices, ScaleUpPrices};
use crate::software::FrameworkSpec;
use crate::step::parallelism::{check_moe_settings, Overlap, Parallelism, Precision, Recompute, Training};
use crate::step::workload::TransformerSpec;

/// A GPU type and what it costs.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct GpuOption {
    pub spec: GpuSpec,
    pub prices: GpuPrices,
    /// Indices into `SweepSpace::scale_ups` this GPU can be built with.
    pub scale_ups: Vec<usize>,
}

/// A fabric and the prices and power of its parts.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct FabricOption {
    pub spec: FabricSpec,
    pub prices: NetworkPrices,
}

/// A scale-up domain and the price of its switch trays.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct ScaleUpOption {
    pub spec: ScaleUpSpec,
    pub prices: ScaleUpPrices,
}

/// Values of one parallel degree: a list, or every divisor of the GPU count up to `max` (`Search`).
/// For dp, `Search` means "the GPU count divided by tp x pp x cp"; for ep, divisors of tp x dp x cp / etp up to
/// `max` (dp x cp when the expert TP is the attention's).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject))]
pub enum DegreeAxis {
    List(Vec<u32>),
    Search {
        #[cfg_attr(feature = "python", pyo3(item("search")))]
        max: u32,
    },
}

/// What a sweep optimises: any metric with a direction (`metrics::Direction`). The sweep minimises
/// `Metric::minimised`, the metric's own value (its negation when it is maximised).
#[derive(Clone, Copy, Debug)]
pub struct Objective(pub &'static Metric);

impl Objective {
    /// The objective of this name: a metric with a direction.
    pub fn named(name: &str) -> Option<Objective> {
        metric(name).filter(|m| m.direction.is_some()).map(Objective)
    }

    /// Every objective, in the schema's order.
    pub fn all() -> impl Iterator<Item = Objective> {
        METRICS.iter().filter(|m| m.direction.is_some()).map(Objective)
    }

    pub fn name(self) -> &'static str {
        self.0.name
    }
}

impl PartialEq for Objective {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}

#[cfg(feature = "python")]
impl<'a, 'py> pyo3::FromPyObject<'a, 'py> for Objective {
    type Error = pyo3::PyErr;

    fn extract(obj: pyo3::Borrowed<'a, 'py, pyo3::PyAny>) -> Result<Self, Self::Error> {
        let text: String = obj.extract()?;
        Objective::named(&text).ok_or_else(|| {
            let names: Vec<&str> = Objective::all().map(Objective::name).collect();
            pyo3::exceptions::PyValueError::new_err(format!(
                "{text:?} is not an objective: expected one of {}",
                names.join(", ")
            ))
        })
    }
}

crate::named_enum! {
    /// Every axis of the space, for grouping and for naming the columns of the result.
    pub enum Axis {
        Gpu = "gpu",
        ScaleUp = "scale_up",
        Gpus = "gpus",
        Fabric = "fabric",
        Topology = "topology",
        Framework = "framework",
        Precision = "precision",
        Tp = "tp",
        Pp = "pp",
        Dp = "dp",
        Cp = "cp",
        Ep = "ep",
        Vpp = "vpp",
        MicroBatch = "micro_batch",
        SequenceParallel = "sequence_parallel",
        Recompute = "recompute",
        Zero = "zero",
        Overlap = "overlap",
    }
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct SweepSpace {
    pub model: TransformerSpec,
    /// The parallelism every configuration starts from: the shared settings (expert TP, the stage split, FSDP
    /// resharding, ...); each configuration sets the swept fields (degrees, vpp, micro-batch, ZeRO stage,
    /// recomputation, sequence parallelism).
    pub parallelism: Parallelism,
    /// The training run every configuration shares; each configuration sets the precision.
    pub training: Training,
    /// Validation residuals for the prediction intervals.
    pub errors: ErrorModel,
    pub gpus: Vec<GpuOption>,
    pub scale_ups: Vec<ScaleUpOption>,
    pub gpu_counts: Vec<u32>,
    pub fabrics: Vec<FabricOption>,
    pub topologies: Vec<TopologySpec>,
    pub frameworks: Vec<FrameworkSpec>,
    pub precisions: Vec<Precision>,
    pub tp: DegreeAxis,
    pub pp: DegreeAxis,
    pub cp: DegreeAxis,
    pub dp: DegreeAxis,
    pub ep: DegreeAxis,
    pub vpp: Vec<u32>,
    pub micro_batch: Vec<u32>,
    pub sequence_parallel: Vec<bool>,
    pub recompute: Vec<Recompute>,
    pub zero: Vec<u32>,
    pub overlap: Vec<Overlap>,
    /// Economic assumptions, and which cost `cost_to_train_usd` reports.
    pub economics: Economics,
    pub reliability: ReliabilitySpec,
    /// Two or three objectives.
    pub objectives: Vec<Objective>,
    /// Parallel axes whose values also split cells (cluster axes always do).
    pub group_by: Vec<Axis>,
}

/// One configuration of the space, by value (degrees) or by index into the space's lists (everything else).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Choice {
    pub gpu: u32,
    pub scale_up: u32,
    pub gpus: u32,
    pub fabric: u32,
    pub topology: u32,
    pub framework: u32,
    pub precision: u32,
    pub tp: u32,
    pub pp: u32,
    pub dp: u32,
    pub cp: u32,
    pub ep: u32,
    pub vpp: u32,
    pub micro_batch: u32,
    pub sequence_parallel: u32,
    pub recompute: u32,
    pub zero: u32,
    pub overlap: u32,
}

impl Choice {
    pub fn axis(&self, axis: Axis) -> u32 {
        match axis {
            Axis::Gpu => self.gpu,
            Axis::ScaleUp => self.scale_up,
            Axis::Gpus => self.gpus,
            Axis::Fabric => self.fabric,
            Axis::Topology => self.topology,
            Axis::Framework => self.framework,
            Axis::Precision => self.precision,
            Axis::Tp => self.tp,
            Axis::Pp => self.pp,
            Axis::Dp => self.dp,
            Axis::Cp => self.cp,
            Axis::Ep => self.ep,
            Axis::Vpp => self.vpp,
            Axis::MicroBatch => self.micro_batch,
            Axis::SequenceParallel => self.sequence_parallel,
            Axis::Recompute => self.recompute,
            Axis::Zero => self.zero,
            Axis::Overlap => self.overlap,
        }
    }
}

pub(crate) const PARALLEL_AXES: [Axis; 11] = [
    Axis::Tp,
    Axis::Pp,
    Axis::Dp,
    Axis::Cp,
    Axis::Ep,
    Axis::Vpp,
    Axis::MicroBatch,
    Axis::SequenceParallel,
    Axis::Recompute,
    Axis::Zero,
    Axis::Overlap,
];

impl SweepSpace {
    /// Check every figure and that no axis is empty.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.model.validate()?;
        for g in &self.gpus {
            g.spec.validate()?;
            if g.scale_ups.iter().any(|&i| i >= self.scale_ups.len()) || g.scale_ups.is_empty() {
                return Err(ConfigError::InvalidFigure { field: "scale_ups", value: 0.0, expected: "valid indices" });
            }
        }
        for s in &self.scale_ups {
            s.spec.validate()?;
            s.prices.validate()?;
        }
        for f in &self.fabrics {
            f.spec.validate()?;
            f.prices.validate()?;
        }
        for g in &self.gpus {
            g.prices.validate()?;
        }
        self.economics.validate()?;
        for t in &self.topologies {
            t.validate()?;
        }
        for f in &self.frameworks {
            f.validate()?;
        }
        for o in &self.overlap {
            o.validate()?;
        }
        for (field, len) in [
            ("gpus", self.gpus.len()),
            ("gpu_counts", self.gpu_counts.len()),
            ("fabrics", self.fabrics.len()),
            ("topologies", self.topologies.len()),
            ("frameworks", self.frameworks.len()),
            ("precisions", self.precisions.len()),
            ("vpp", self.vpp.len()),
            ("micro_batch", self.micro_batch.len()),
            ("sequence_parallel", self.sequence_parallel.len()),
            ("recompute", self.recompute.len()),
            ("zero", self.zero.len()),
            ("overlap", self.overlap.len()),
        ] {
            if len == 0 {
                return Err(ConfigError::ZeroDegree { field });
            }
        }
        if !(2..=3).contains(&self.objectives.len()) {
            return Err(ConfigError::InvalidFigure {
                field: "objectives",
                value: self.objectives.len() as f64,
                expected: "two or three objectives",
            });
        }
        self.training(0).validate()?;
        check_moe_settings(&self.model, self.parallelism.etp != 0, &self.training(0))?;
        self.errors.validate()?;
        self.reliability.validate()?;
        Ok(())
    }

    /// The configuration a choice of this space stands for, as `evaluate` takes it.
    pub fn config(&self, c: &Choice) -> Config {
        let gpu = &self.gpus[c.gpu as usize];
        Config {
            model: self.model.clone(),
            gpu: gpu.spec.clone(),
            scale_up: self.scale_ups[c.scale_up as usize].spec.clone(),
            fabric: self.fabrics[c.fabric as usize].spec.clone(),
            topology: self.topologies[c.topology as usize].clone(),
            framework: self.frameworks[c.framework as usize].clone(),
            prices: self.prices(gpu, &self.fabrics[c.fabric as usize], c.scale_up as usize),
            gpus: self.gpu_counts[c.gpus as usize],
            parallelism: Parallelism {
                tp: c.tp,
                pp: c.pp,
                dp: c.dp,
                cp: c.cp,
                ep: c.ep,
                vpp: self.vpp[c.vpp as usize],
                micro_batch: self.micro_batch[c.micro_batch as usize],
                zero_stage: self.zero[c.zero as usize],
                recompute: self.recompute[c.recompute as usize],
                sequence_parallel: self.sequence_parallel[c.sequence_parallel as usize],
                ..self.parallelism.clone()
            },
            training: self.training(c.precision as usize),
            overlap: self.overlap[c.overlap as usize].clone(),
            reliability: self.reliability.clone(),
            errors: self.errors.clone(),
        }
    }

    /// The parallelism a task starts from: its degrees (tp, pp, cp, dp, ep), micro-batch size and sequence
    /// parallelism, the schedule choices at their defaults (vpp 1, no recomputation, ZeRO 0). The cost estimate
    /// (`cells`) and the engine build it here, so that the work they count is the same.
    pub(crate) fn layout_parallelism(
        &self,
        degrees: [u32; 5],
        micro_batch: u32,
        sequence_parallel: bool,
    ) -> Parallelism {
        let [tp, pp, cp, dp, ep] = degrees;
        Parallelism {
            tp,
            pp,
            dp,
            cp,
            ep,
            vpp: 1,
            micro_batch,
            zero_stage: 0,
            recompute: Recompute::None,
            sequence_parallel,
            ..self.parallelism.clone()
        }
    }

    /// The training run with the space's `precision`-th precision.
    pub(crate) fn training(&self, precision: usize) -> Training {
        let precision = self.precisions.get(precision).copied().unwrap_or(self.training.precision);
        Training { precision, ..self.training.clone() }
    }

    /// Every price of one cluster design.
    pub(crate) fn prices(&self, g: &GpuOption, f: &FabricOption, scale_up: usize) -> Prices {
        Prices {
            gpu: g.prices.clone(),
            network: f.prices.clone(),
            scale_up: self.scale_ups[scale_up].prices.clone(),
            economics: self.economics.clone(),
        }
    }
}
