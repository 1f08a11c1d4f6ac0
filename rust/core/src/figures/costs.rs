//! What a cluster costs and how it fails: the price book's tables (data/prices.toml: `[gpu.<id>]`,
//! `[fabric.<id>]`, `[scale_up.<id>]`, `[economics]`) and the failure profiles (data/reliability.toml). Prices are
//! in SI already: each fills the core's field of the same name.

use super::{
    choice, core, flag, num, sampled, CatalogSection, CatalogUnit::*, Figure, AT_LEAST_ONE, FRACTION, NON_NEGATIVE,
    NOT_IN_CORE, POSITIVE, RATE, SHARE,
};
use crate::prices::FacilityMode;

const R: CatalogSection = CatalogSection::Reliability;
pub(super) const RELIABILITY: &[Figure] = &[
    super::text(R, "name", NOT_IN_CORE).doc("display name"),
    num(R, "gpu_failures_per_hour", PerHour, NON_NEGATIVE, core("gpu_failures_per_hour"), "GPU failure rate")
        .doc("interruptions attributed to a GPU (die, HBM, SRAM, GSP, silent corruption), per GPU-hour"),
    num(R, "server_failures_per_hour", PerHour, NON_NEGATIVE, core("server_failures_per_hour"), "server failure rate")
        .doc("host-level interruptions (software, host maintenance, CPU, memory, power), per server-hour"),
    num(R, "nic_failures_per_hour", PerHour, NON_NEGATIVE, core("nic_failures_per_hour"), "NIC failure rate")
        .doc("interruptions per NIC-hour"),
    num(R, "switch_failures_per_hour", PerHour, NON_NEGATIVE, core("switch_failures_per_hour"), "switch failure rate")
        .doc("interruptions per switch-hour"),
    num(R, "link_failures_per_hour", PerHour, NON_NEGATIVE, core("link_failures_per_hour"), "link failure rate")
        .doc("interruptions per link-hour (a link is a cable with its modules, or a copper DAC)"),
    num(R, "checkpoint_bytes_per_s", BytesPerS, POSITIVE, core("checkpoint_bytes_per_s"), "checkpoint bandwidth")
        .doc("storage write bandwidth for the job's checkpoints"),
    num(R, "checkpoint_bytes_per_param", Bytes, NON_NEGATIVE, core("checkpoint_bytes_per_param"), "checkpoint size")
        .doc("bytes per parameter in a checkpoint (weights and optimizer states)"),
    num(R, "restart_s", S, NON_NEGATIVE, core("restart_s"), "restart time")
        .doc("time from an interruption to training again (detect, replace, reload, warm up)"),
];

const G: CatalogSection = CatalogSection::GpuPrices;
pub(super) const GPU_PRICES: &[Figure] = &[
    num(G, "rent_usd_per_gpu_hour", Usd, NON_NEGATIVE, sampled!(prices.gpu, rent_usd_per_gpu_hour), "GPU rent")
        .doc("rental price per GPU-hour (cost mode `rent`; `roi` compares owned clusters, without rent)"),
    num(G, "server_usd", Usd, NON_NEGATIVE, sampled!(prices.gpu, server_usd), "GPU server price")
        .doc("one server with the GPU's `server_gpus` GPUs, without scale-out NICs (the fabric prices them)"),
    num(G, "gpus_per_rack", Count, POSITIVE, core("gpus_per_rack"), "GPUs per rack")
        .doc("compute rack density: each rack gets an out-of-band management switch"),
];

const F: CatalogSection = CatalogSection::FabricPrices;
pub(super) const FABRIC_PRICES: &[Figure] = &[
    num(F, "nic_usd", Usd, NON_NEGATIVE, sampled!(prices.network, nic_usd), "NIC price").doc("one NIC port"),
    num(F, "switch_usd", Usd, NON_NEGATIVE, sampled!(prices.network, switch_usd), "switch price")
        .doc("one switch of the fabric's `switch_radix` (hardware)"),
    num(F, "nic_optic_usd", Usd, NON_NEGATIVE, sampled!(prices.network, nic_optic_usd), "NIC optics price")
        .doc("one single-port optical module at a NIC"),
    num(F, "switch_optic_usd", Usd, NON_NEGATIVE, sampled!(prices.network, switch_optic_usd), "switch optics price")
        .doc("one module in a switch cage"),
    num(F, "switch_ports_per_optic", Count, AT_LEAST_ONE, core("switch_ports_per_optic"), "switch ports per module")
        .doc("switch ports one cage's module (or splitter DAC) serves: 2 for a twin-port 800G OSFP run as 2 x 400G"),
    num(F, "dac_usd", Usd, NON_NEGATIVE, sampled!(prices.network, dac_usd), "copper cable price")
        .doc("one passive copper cable from a switch cage to `switch_ports_per_optic` NICs"),
    num(F, "dac_reach_m", M, NON_NEGATIVE, core("dac_reach_m"), "copper reach")
        .doc("the copper cable's longest reach at the lane rate (0: none offered, as at 200G-PAM4)"),
    num(F, "acc_usd", Usd, NON_NEGATIVE, sampled!(prices.network, acc_usd), "active copper cable price").doc(
        "one active copper cable (ACC) from a switch cage to `switch_ports_per_optic` NICs, for host links beyond \
            `dac_reach_m` but within `acc_reach_m`",
    ),
    num(F, "acc_reach_m", M, NON_NEGATIVE, core("acc_reach_m"), "active copper reach")
        .doc("the active copper cable's longest reach at the lane rate (0: none offered)"),
    num(F, "fibre_usd", Usd, NON_NEGATIVE, sampled!(prices.network, fibre_usd), "fibre price")
        .doc("one fibre per optical link"),
    num(
        F,
        "support_fraction_per_year",
        Fraction,
        SHARE,
        sampled!(prices.network, support_fraction_per_year),
        "support per year",
    )
    .doc("support and software subscription per year, as a share of the fabric's hardware"),
    num(
        F,
        "nos_usd_per_switch_year",
        Usd,
        NON_NEGATIVE,
        sampled!(prices.network, nos_usd_per_switch_year),
        "NOS licence per switch-year",
    )
    .doc("network operating system licence per switch per year (0 on InfiniBand)"),
    num(
        F,
        "spine_switch_premium_usd",
        Usd,
        NON_NEGATIVE,
        sampled!(prices.network, spine_switch_premium_usd),
        "spine switch premium",
    )
    .doc("extra price of each spine and core switch over `switch_usd` (deep-buffer chassis spines; 0: none)"),
    num(F, "fabric_manager_usd", Usd, NON_NEGATIVE, sampled!(prices.network, fabric_manager_usd), "fabric manager")
        .doc(
            "management hosts and licences once per cluster (SHARP's dedicated aggregation-manager server and UFM; \
            0: none)",
        ),
    num(F, "nic_w", W, NON_NEGATIVE, sampled!(prices.network, nic_w), "NIC power").doc("power of one NIC port"),
    num(F, "switch_w", W, NON_NEGATIVE, sampled!(prices.network, switch_w), "switch power")
        .doc("power of one switch, without optics"),
    num(F, "nic_optic_w", W, NON_NEGATIVE, sampled!(prices.network, nic_optic_w), "NIC optics power")
        .doc("power of one NIC-side optical module"),
    num(F, "switch_optic_w", W, NON_NEGATIVE, sampled!(prices.network, switch_optic_w), "switch optics power")
        .doc("power of one switch-side optical module"),
    num(
        F,
        "fabric_manager_usd_per_endpoint_year",
        Usd,
        NON_NEGATIVE,
        sampled!(prices.network, fabric_manager_usd_per_endpoint_year),
        "fabric manager licence per endpoint-year",
    )
    .doc("fabric manager licence (InfiniBand UFM) per NIC endpoint per year; 0 where the switches manage the fabric"),
    num(F, "ops_staff_fte", Count, NON_NEGATIVE, sampled!(prices.network, ops_staff_fte), "operations staff")
        .doc("network operations staff the fabric needs at any size, full-time equivalents, its skills included"),
    num(
        F,
        "ops_staff_fte_per_1000_switches",
        Count,
        NON_NEGATIVE,
        sampled!(prices.network, ops_staff_fte_per_1000_switches),
        "operations staff per 1,000 switches",
    )
    .doc("further operations staff per 1,000 switches of the fabric"),
    num(
        F,
        "ops_wage_premium_fraction",
        Fraction,
        NON_NEGATIVE,
        sampled!(prices.network, ops_wage_premium_fraction),
        "skills wage premium",
    )
    .doc("the fabric's skills' wage premium over a network engineer's market rate (`usd_per_fte_year`)"),
    num(F, "lead_time_weeks", Weeks, NON_NEGATIVE, sampled!(prices.network, lead_time_weeks), "lead time")
        .doc("weeks from order to a working fabric; only the weeks beyond the GPUs' own lead time delay the cluster"),
    num(F, "incidents_per_year", PerYear, NON_NEGATIVE, sampled!(prices.network, incidents_per_year), "incidents")
        .doc("fabric-specific incidents a year that stall the whole job (PFC pause storms, subnet-manager failover)"),
    num(F, "incident_stall_s", S, NON_NEGATIVE, sampled!(prices.network, incident_stall_s), "stall per incident")
        .doc("busy time a job loses per fabric incident: detection, and the restart when the job dies"),
    flag(F, "rented", NOT_IN_CORE)
        .doc("`true`: sold only inside instance rent (EFA); an owned cluster cannot be priced with it"),
    super::table(F, "modes").doc(
        "price changes of the fabric's operating modes (`[fabric.<id>.modes.<mode>]`): the lines a mode replaces \
            (deep-buffer spines, a SuperNIC, the SHARP aggregation manager), with their sources",
    ),
];

const SU: CatalogSection = CatalogSection::ScaleUpPrices;
pub(super) const SCALE_UP_PRICES: &[Figure] = &[
    num(
        SU,
        "switch_tray_usd",
        Usd,
        NON_NEGATIVE,
        sampled!(prices.scale_up, switch_tray_usd),
        "NVLink switch tray price",
    )
    .doc("one NVLink switch tray of a domain whose trays are bought beside the servers"),
    num(SU, "switch_tray_w", W, NON_NEGATIVE, sampled!(prices.scale_up, switch_tray_w), "NVLink switch tray power")
        .doc("power of one NVLink switch tray"),
];

const E: CatalogSection = CatalogSection::Economics;
pub(super) const ECONOMICS: &[Figure] = &[
    num(
        E,
        "amortization_years",
        Years,
        POSITIVE,
        sampled!(prices.economics, amortization_years),
        "amortization period",
    )
    .doc("the cluster's life: depreciation and the horizon of its total cost of ownership"),
    num(E, "pue", Ratio, AT_LEAST_ONE, sampled!(prices.economics, pue), "PUE").doc("facility power / IT power"),
    num(E, "usd_per_kwh", Usd, NON_NEGATIVE, sampled!(prices.economics, usd_per_kwh), "power price")
        .doc("energy price per kWh"),
    num(
        E,
        "gpu_power_fraction",
        Fraction,
        FRACTION,
        sampled!(prices.economics, gpu_power_fraction),
        "GPU power while training",
    )
    .doc("average GPU draw while training / TDP"),
    num(E, "discount_rate", Fraction, RATE, sampled!(prices.economics, discount_rate), "discount rate")
        .doc("nominal yearly rate cash flows are discounted at (monthly)"),
    num(E, "residual_fraction", Fraction, SHARE, sampled!(prices.economics, residual_fraction), "residual value")
        .doc("resale value of the hardware at the end of the life, as a share of its price"),
    num(E, "utilisation", Fraction, FRACTION, sampled!(prices.economics, utilisation), "utilisation")
        .doc("share of hours with work to run (a faster fabric turns these into more work)"),
    num(E, "idle_power_fraction", Fraction, SHARE, sampled!(prices.economics, idle_power_fraction), "idle power")
        .doc("IT power of an idle hour / IT power while training"),
    choice(E, "facility", core("facility"), || FacilityMode::INFO.names())
        .doc("where the racks live: wholesale colocation, or a hall built for the cluster"),
    num(
        E,
        "colocation_usd_per_kw_month",
        Usd,
        NON_NEGATIVE,
        sampled!(prices.economics, colocation_usd_per_kw_month),
        "colocation price",
    )
    .doc("colocation per kW of critical IT load a month (power billed separately)"),
    num(
        E,
        "facility_build_usd_per_kw",
        Usd,
        NON_NEGATIVE,
        sampled!(prices.economics, facility_build_usd_per_kw),
        "facility build cost",
    )
    .doc("a built hall's cost per kW of critical load, recovered over its life at the discount rate"),
    num(E, "facility_life_years", Years, POSITIVE, sampled!(prices.economics, facility_life_years), "facility life")
        .doc("the years a built hall's cost is recovered over"),
    num(
        E,
        "server_spares_fraction",
        Fraction,
        NON_NEGATIVE,
        sampled!(prices.economics, server_spares_fraction),
        "server spares",
    )
    .doc("spare servers bought, as a share of the servers"),
    num(
        E,
        "network_spares_fraction",
        Fraction,
        NON_NEGATIVE,
        sampled!(prices.economics, network_spares_fraction),
        "network spares",
    )
    .doc("spare network parts bought, as a share of the network hardware"),
    num(
        E,
        "installation_fraction",
        Fraction,
        NON_NEGATIVE,
        sampled!(prices.economics, installation_fraction),
        "installation",
    )
    .doc("cabling, installation and testing, as a share of the network hardware"),
    num(
        E,
        "oob_usd_per_rack",
        Usd,
        NON_NEGATIVE,
        sampled!(prices.economics, oob_usd_per_rack),
        "management network per rack",
    )
    .doc("out-of-band management switch and copper per compute rack"),
    num(E, "usd_per_fte_year", Usd, NON_NEGATIVE, sampled!(prices.economics, usd_per_fte_year), "staff cost per year")
        .doc("loaded cost of one network engineer a year (salary, benefits, overhead)"),
    num(
        E,
        "gpu_lead_time_weeks",
        Weeks,
        NON_NEGATIVE,
        sampled!(prices.economics, gpu_lead_time_weeks),
        "GPU lead time",
    )
    .doc("weeks from order to the GPU servers' delivery: a fabric ready sooner gains nothing"),
    num(
        E,
        "optic_replacement_fraction_per_year",
        Fraction,
        SHARE,
        sampled!(prices.economics, optic_replacement_fraction_per_year),
        "optics failure rate",
    )
    .doc("share of the optical modules replaced a year (annualised failure rate)"),
    num(
        E,
        "switch_replacement_fraction_per_year",
        Fraction,
        SHARE,
        sampled!(prices.economics, switch_replacement_fraction_per_year),
        "switch failure rate",
    )
    .doc("share of the switches replaced a year"),
    num(
        E,
        "nic_replacement_fraction_per_year",
        Fraction,
        SHARE,
        sampled!(prices.economics, nic_replacement_fraction_per_year),
        "NIC failure rate",
    )
    .doc("share of the NICs replaced a year"),
    num(
        E,
        "replacement_labour_usd",
        Usd,
        NON_NEGATIVE,
        sampled!(prices.economics, replacement_labour_usd),
        "labour per replacement",
    )
    .doc("labour of one part replacement: swap, clean the fibre ends, re-test"),
];
