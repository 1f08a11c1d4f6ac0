//! Failures cost time too: expected interruptions from the parts a cluster is built of, the checkpoint interval
//! that minimises lost time, and the resulting goodput (the share of wall-clock time that advances training).

use crate::error::ConfigError;

/// Failure rates per part-hour and the cost of checkpointing and restarting.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct ReliabilitySpec {
    /// Interruptions attributed to a GPU (die, HBM, SRAM, GSP, silent corruption), per GPU-hour.
    pub gpu_failures_per_hour: f64,
    /// Host-level interruptions (software, host maintenance, CPU, memory, power), per server-hour.
    pub server_failures_per_hour: f64,
    pub nic_failures_per_hour: f64,
    pub switch_failures_per_hour: f64,
    /// Per cable with its transceivers.
    pub link_failures_per_hour: f64,
    /// Storage write bandwidth for checkpoints, bytes/s, for the whole job.
    pub checkpoint_bytes_per_s: f64,
    /// Bytes per parameter in a checkpoint (weights and optimizer states).
    pub checkpoint_bytes_per_param: f64,
    /// Time from an interruption to training again (detect, replace, reload, warm up).
    pub restart_s: f64,
}

impl ReliabilitySpec {
    /// No failures and free checkpoints: goodput 1.
    pub fn perfect() -> Self {
        ReliabilitySpec {
            gpu_failures_per_hour: 0.0,
            server_failures_per_hour: 0.0,
            nic_failures_per_hour: 0.0,
            switch_failures_per_hour: 0.0,
            link_failures_per_hour: 0.0,
            checkpoint_bytes_per_s: f64::INFINITY,
            checkpoint_bytes_per_param: 0.0,
            restart_s: 0.0,
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        for (field, v) in [
            ("gpu_failures_per_hour", self.gpu_failures_per_hour),
            ("server_failures_per_hour", self.server_failures_per_hour),
            ("nic_failures_per_hour", self.nic_failures_per_hour),
            ("switch_failures_per_hour", self.switch_failures_per_hour),
            ("link_failures_per_hour", self.link_failures_per_hour),
            ("checkpoint_bytes_per_param", self.checkpoint_bytes_per_param),
            ("restart_s", self.restart_s),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(ConfigError::InvalidFigure { field, value: v, expected: "a finite number >= 0" });
            }
        }
        if self.checkpoint_bytes_per_s.is_nan() || self.checkpoint_bytes_per_s <= 0.0 {
            return Err(ConfigError::InvalidFigure {
                field: "checkpoint_bytes_per_s",
                value: self.checkpoint_bytes_per_s,
                expected: "a number > 0",
            });
        }
        Ok(())
    }
}

/// Counts of the parts that can interrupt a job.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PartCounts {
    pub gpus: f64,
    pub servers: f64,
    pub nics: f64,
    pub switches: f64,
    pub links: f64,
}

/// What failures do to a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Goodput {
    pub interruptions_per_day: f64,
    /// Mean time between interruptions of the job.
    pub mtbi_s: f64,
    pub checkpoint_write_s: f64,
    /// Young/Daly optimal time between checkpoints.
    pub checkpoint_interval_s: f64,
    /// Ideal training time / wall-clock time, in (0, 1].
    pub goodput: f64,
}

/// Expected interruptions and goodput. The job stops at any part's failure (no spare-based masking), so rates
/// add. Checkpoint interval: Daly's first-order optimum tau = sqrt(2 delta M) - delta for delta < 2M (J. T. Daly,
/// "A higher order estimate of the optimum checkpoint interval for restart dumps", FGCS 22(3), 2006; Young,
/// CACM 1974, without the - delta). Wall time W satisfies W = T (1 + delta / tau) + (W / M) (R + (tau + delta) / 2):
/// checkpoint writes, and per interruption a restart plus on average half an interval of lost work.
pub fn goodput(spec: &ReliabilitySpec, parts: &PartCounts, params: f64) -> Goodput {
    let per_hour = parts.gpus * spec.gpu_failures_per_hour
        + parts.servers * spec.server_failures_per_hour
        + parts.nics * spec.nic_failures_per_hour
        + parts.switches * spec.switch_failures_per_hour
        + parts.links * spec.link_failures_per_hour;
    let delta = params * spec.checkpoint_bytes_per_param / spec.checkpoint_bytes_per_s;
    if per_hour <= 0.0 {
        return Goodput {
            interruptions_per_day: 0.0,
            mtbi_s: f64::INFINITY,
            checkpoint_write_s: delta,
            checkpoint_interval_s: f64::INFINITY,
            goodput: 1.0,
        };
    }
    let m = 3600.0 / per_hour;
    let tau = if delta < 2.0 * m { (2.0 * delta * m).sqrt() - delta } else { m };
    let tau = tau.max(1e-9);
    let lost_per_interruption = spec.restart_s + (tau + delta) / 2.0;
    let denominator = 1.0 - lost_per_interruption / m;
    // When interruptions come faster than a restart plus half an interval, the job makes (almost) no progress.
    let good = if denominator > 0.0 { denominator / (1.0 + delta / tau) } else { 0.0 };
    Goodput {
        interruptions_per_day: per_hour * 24.0,
        mtbi_s: m,
        checkpoint_write_s: delta,
        checkpoint_interval_s: tau,
        goodput: good.clamp(1e-9, 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama3_interruption_rate_is_reproduced_from_per_part_rates() {
        // Llama 3 (Table 5): 419 unplanned interruptions in 54 days on 16,384 GPUs = 7.76 a day. With the catalog
        // rates derived from that table (GPU 262, host 115, NIC 7, network 35 over a 16,384-GPU three-tier
        // radix-64 tree: 1,280 switches and 49,152 links), the sum returns the same 7.76 a day.
        let hours = 54.0 * 24.0;
        let spec = ReliabilitySpec {
            gpu_failures_per_hour: 262.0 / (16384.0 * hours),
            server_failures_per_hour: 115.0 / (2048.0 * hours),
            nic_failures_per_hour: 7.0 / (16384.0 * hours),
            switch_failures_per_hour: 35.0 / ((1280.0 + 49152.0) * hours),
            link_failures_per_hour: 35.0 / ((1280.0 + 49152.0) * hours),
            checkpoint_bytes_per_s: 2e12,
            checkpoint_bytes_per_param: 16.0,
            restart_s: 600.0,
        };
        let parts = PartCounts { gpus: 16384.0, servers: 2048.0, nics: 16384.0, switches: 1280.0, links: 49152.0 };
        let g = goodput(&spec, &parts, 405e9);
        assert!((g.interruptions_per_day - 419.0 / 54.0).abs() < 1e-9, "{}", g.interruptions_per_day);
        // One every 3.09 h; a 6.48 TB checkpoint at 2 TB/s takes 3.24 s; Daly: sqrt(2 x 3.24 x 11,134) - 3.24 =
        // 265 s between checkpoints.
        assert!((g.checkpoint_write_s - 3.24).abs() < 1e-9);
        let m: f64 = 86400.0 / (419.0 / 54.0);
        assert!((g.checkpoint_interval_s - ((2.0 * 3.24 * m).sqrt() - 3.24)).abs() < 1e-6);
        // Goodput: (1 - (600 + (tau + delta)/2) / M) / (1 + delta / tau) = about 0.93; Meta reports > 90%
        // effective training time.
        assert!(g.goodput > 0.90 && g.goodput < 0.96, "{}", g.goodput);
    }

    #[test]
    fn more_parts_or_higher_rates_never_help() {
        let spec = ReliabilitySpec {
            gpu_failures_per_hour: 1e-5,
            server_failures_per_hour: 4e-5,
            nic_failures_per_hour: 3e-7,
            switch_failures_per_hour: 5e-7,
            link_failures_per_hour: 5e-7,
            checkpoint_bytes_per_s: 1e12,
            checkpoint_bytes_per_param: 16.0,
            restart_s: 600.0,
        };
        let base = PartCounts { gpus: 4096.0, servers: 512.0, nics: 4096.0, switches: 200.0, links: 8000.0 };
        let g = goodput(&spec, &base, 70e9).goodput;
        let more = PartCounts { switches: 400.0, links: 16000.0, ..base };
        assert!(goodput(&spec, &more, 70e9).goodput < g);
        assert_eq!(goodput(&ReliabilitySpec::perfect(), &base, 70e9).goodput, 1.0);
    }
}
