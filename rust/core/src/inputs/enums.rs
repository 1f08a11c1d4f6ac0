//! The list of the core's named enums (see the module doc of `inputs`), for the bindings' `enums()`.

use crate::decision::montecarlo::Section;
use crate::decision::roi::{DesignRule, Payback};
use crate::figures::{CatalogSection, CatalogUnit, FigureKind};
use crate::hardware::{CollectiveTuner, Forwarding, Generation, LoadBalancing, RailPlanes, TopologyKind};
use crate::names::EnumInfo;
use crate::network::collectives::Collective;
use crate::prices::{CostMode, FacilityMode};
use crate::serve::{AttentionQuantization, KvAdmission, KvCacheDtype, Quantization, ServingMode};
use crate::step::modules::RecomputeModule;
use crate::step::parallelism::{AttentionKernel, Dispatcher, GradDtype, Precision, Recompute};
use crate::sweep::Axis;

/// Every named enum of the core (a test holds the list complete), for the bindings' `enums()`.
pub const ENUMS: &[EnumInfo] = &[
    Recompute::INFO,
    RecomputeModule::INFO,
    GradDtype::INFO,
    Dispatcher::INFO,
    AttentionKernel::INFO,
    Precision::INFO,
    CostMode::INFO,
    FacilityMode::INFO,
    Axis::INFO,
    DesignRule::INFO,
    Payback::INFO,
    Section::INFO,
    Collective::INFO,
    ServingMode::INFO,
    Quantization::INFO,
    AttentionQuantization::INFO,
    KvCacheDtype::INFO,
    KvAdmission::INFO,
    Generation::INFO,
    LoadBalancing::INFO,
    Forwarding::INFO,
    CollectiveTuner::INFO,
    TopologyKind::INFO,
    RailPlanes::INFO,
    CatalogSection::INFO,
    FigureKind::INFO,
    CatalogUnit::INFO,
];
