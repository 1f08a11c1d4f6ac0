//! A training job on multi-server NVLink domains (GB200 NVL72: 18 trays of 4 GPUs), placed by the scheduler in
//! rank order or in segments of servers kept together (Slurm topology/block's `--segment`), worked by hand.

mod common;

use common::eval;
use scalefront_core::examples::*;
use scalefront_core::*;

/// Llama 3 70B on 128 GPUs of 72-GPU domains, 4 GPUs a server: TP 8, PP 4, DP 4, nothing overlapped.
fn nvl72_job() -> Config {
    let mut cfg = reference();
    cfg.gpu.server_gpus = 4;
    cfg.scale_up.domain_gpus = 72;
    cfg.gpus = 128;
    cfg.parallelism = Parallelism { tp: 8, pp: 4, dp: 4, vpp: 1, ..cfg.parallelism.clone() };
    cfg.training.global_batch = 32;
    cfg.overlap = Overlap { dp: 0.0, tp: 0.0, pp: 0.0, ep: 0.0 };
    cfg
}

#[test]
fn a_job_in_16_server_segments_keeps_its_data_parallel_groups_inside_the_nvlink_domain() {
    // A DP group is every 8th rank of a block of 32. Filled in rank order, the third block (ranks 64-95) puts one
    // member in the first domain (ranks 64-71) and three in the second, so its ring leaves the domain over the
    // NICs. In segments of 16 trays (64 GPUs), every block of 32 sits in one segment: each DP group rides NVLink,
    // its collectives timed exactly as on 64-GPU domains (the step's few whole-job all-reduces still see the racks).
    let mut cfg = nvl72_job();
    let packed = eval(&cfg);
    cfg.training.nvlink_segment_nodes = 16;
    let segmented = eval(&cfg);
    assert!(segmented.breakdown.dp_comm_s < 0.5 * packed.breakdown.dp_comm_s, "{segmented:?} vs {packed:?}");
    cfg.training.nvlink_segment_nodes = 0;
    cfg.scale_up.domain_gpus = 64;
    let domains_of_64 = eval(&cfg);
    assert_eq!(domains_of_64.breakdown.dp_comm_s, segmented.breakdown.dp_comm_s);
    assert_eq!(domains_of_64.breakdown.pp_comm_s, segmented.breakdown.pp_comm_s);
    // Segments of 8 trays (32 GPUs) still hold a whole DP block each.
    cfg.scale_up.domain_gpus = 72;
    cfg.training.nvlink_segment_nodes = 8;
    let eights = eval(&cfg);
    assert_eq!(eights.breakdown.dp_comm_s, segmented.breakdown.dp_comm_s);
}

#[test]
fn a_segment_must_fit_one_domain_and_divide_the_job() {
    let refused = |cfg: &Config| match evaluate(cfg) {
        Err(e @ ConfigError::NvlinkSegment { .. }) => e.field(),
        other => panic!("{other:?}"),
    };
    let mut cfg = nvl72_job();
    cfg.training.nvlink_segment_nodes = 5; // 32 trays are not whole segments of 5
    assert_eq!(refused(&cfg), "nvlink_segment_nodes");
    cfg.training.nvlink_segment_nodes = 19; // more trays than one NVL72 holds
    assert_eq!(refused(&cfg), "nvlink_segment_nodes");
    // On 8-GPU servers whose NVLink ends at the server there is nothing to keep together.
    let mut hgx = reference();
    hgx.training.nvlink_segment_nodes = 1;
    assert_eq!(refused(&hgx), "nvlink_segment_nodes");
    hgx.training.nvlink_segment_nodes = 0;
    assert!(evaluate(&hgx).is_ok());
}
