//! Sweeps: the frontier equals brute force, rows equal `evaluate`, counts add up, results are deterministic.

use scalefront_core::examples::*;
use scalefront_core::sweep::*;
use scalefront_core::*;
use std::sync::atomic::Ordering;

fn economics(cost_mode: CostMode) -> Economics {
    Economics { cost_mode, ..prices().economics }
}

fn fabric_option(spec: FabricSpec, nic_usd: f64) -> FabricOption {
    FabricOption { spec, prices: NetworkPrices { nic_usd, ..prices().network } }
}

fn gpu_option(spec: GpuSpec, rent_usd_per_gpu_hour: f64, server_usd: f64) -> GpuOption {
    GpuOption { spec, prices: GpuPrices { rent_usd_per_gpu_hour, server_usd, gpus_per_rack: 32.0 }, scale_ups: vec![0] }
}

/// The objectives of these names (metrics with a direction).
fn objectives(names: &[&str]) -> Vec<Objective> {
    names.iter().map(|n| Objective::named(n).unwrap()).collect()
}

/// Llama 3 70B on 256 or 512 H100s, two fabrics, two topologies, a searched layout.
pub fn small_space(objectives: Vec<Objective>, cost_mode: CostMode) -> SweepSpace {
    let roce = roce_400g();
    let mut big = h100();
    big.hbm_bytes = 141e9;
    SweepSpace {
        model: llama3_70b(),
        parallelism: Parallelism::default(),
        training: Training { global_batch: 512, seq_len: 8192, tokens: 1e12, ..Training::default() },
        errors: ErrorModel::none(),
        gpus: vec![gpu_option(h100(), 2.99, 255_000.0), gpu_option(big, 4.5, 312_000.0)],
        scale_ups: vec![ScaleUpOption { spec: nvlink4(), prices: ScaleUpPrices::default() }],
        gpu_counts: vec![256, 512],
        fabrics: vec![fabric_option(ib_ndr(), 2500.0), fabric_option(roce, 1500.0)],
        topologies: vec![rail_fat_tree(), fat_tree(2.0)],
        frameworks: vec![FrameworkSpec::kernels_only()],
        precisions: vec![Precision::Bf16],
        tp: DegreeAxis::Search { max: 8 },
        pp: DegreeAxis::Search { max: 8 },
        cp: DegreeAxis::List(vec![1]),
        dp: DegreeAxis::Search { max: u32::MAX },
        ep: DegreeAxis::List(vec![1]),
        vpp: vec![1, 2],
        micro_batch: vec![1, 2],
        sequence_parallel: vec![true],
        recompute: vec![Recompute::None, Recompute::Selective, Recompute::Full],
        zero: vec![0, 1, 3],
        overlap: vec![Overlap { dp: 1.0, tp: 0.0, pp: 0.0, ep: 0.0 }, Overlap { dp: 1.0, tp: 1.0, pp: 1.0, ep: 1.0 }],
        economics: economics(cost_mode),
        reliability: ReliabilitySpec::perfect(),
        objectives,
        group_by: vec![],
    }
}

/// Every configuration of the space, in enumeration order, evaluated one by one.
fn brute_force(space: &SweepSpace) -> Vec<(Choice, Result<Evaluation, ConfigError>)> {
    let mut out = Vec::new();
    for (g, gpu) in space.gpus.iter().enumerate() {
        for &su in &gpu.scale_ups {
            for (ci, &n) in space.gpu_counts.iter().enumerate() {
                for f in 0..space.fabrics.len() {
                    for t in 0..space.topologies.len() {
                        for w in 0..space.frameworks.len() {
                            for p in 0..space.precisions.len() {
                                for [tp, pp, cp, dp, ep] in factorizations(space, n) {
                                    for mb in 0..space.micro_batch.len() {
                                        for sp in 0..space.sequence_parallel.len() {
                                            for vpp in 0..space.vpp.len() {
                                                for r in 0..space.recompute.len() {
                                                    for z in 0..space.zero.len() {
                                                        for o in 0..space.overlap.len() {
                                                            let c = Choice {
                                                                gpu: g as u32,
                                                                scale_up: su as u32,
                                                                gpus: ci as u32,
                                                                fabric: f as u32,
                                                                topology: t as u32,
                                                                framework: w as u32,
                                                                precision: p as u32,
                                                                tp,
                                                                pp,
                                                                dp,
                                                                cp,
                                                                ep,
                                                                vpp: vpp as u32,
                                                                micro_batch: mb as u32,
                                                                sequence_parallel: sp as u32,
                                                                recompute: r as u32,
                                                                zero: z as u32,
                                                                overlap: o as u32,
                                                            };
                                                            out.push((c, evaluate(&space.config(&c))));
                                                        }
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

fn objective_values(space: &SweepSpace, e: &Evaluation) -> Vec<f64> {
    space.objectives.iter().map(|o| o.0.minimised(e)).collect()
}

fn dominated(a: &[f64], b: &[f64]) -> bool {
    // b dominates a
    b.iter().zip(a).all(|(x, y)| x <= y) && b.iter().zip(a).any(|(x, y)| x < y)
}

fn check_against_brute_force(space: &SweepSpace) {
    space.validate().unwrap();
    let progress = Progress::default();
    let result = run(space, &progress, None);
    let all = brute_force(space);
    assert_eq!(result.evaluated, all.len() as u64);
    assert_eq!(space_size(space), all.len() as u64);
    assert_eq!(progress.done.load(Ordering::Relaxed), all.len() as u64);
    // The live per-reason counters end equal to the result's.
    let live: Vec<u64> = progress.rejected.iter().map(|c| c.load(Ordering::Relaxed)).collect();
    assert_eq!(live, result.rejected.to_vec());
    let feasible: Vec<_> =
        all.iter().filter_map(|(c, r)| r.as_ref().ok().filter(|e| e.feasible).map(|e| (*c, e))).collect();
    assert_eq!(result.feasible, feasible.len() as u64);
    assert_eq!(result.feasible + result.rejected.iter().sum::<u64>(), result.evaluated);
    assert!(result.feasible > 0);
    // The brute-force frontier of each cell (cluster design): non-dominated, ties to the first in order.
    let cell = |c: &Choice| (c.gpu, c.scale_up, c.gpus, c.fabric, c.topology, c.precision);
    let mut expected: Vec<Choice> = feasible
        .iter()
        .filter(|(c, e)| {
            let v = objective_values(space, e);
            !feasible.iter().any(|(d, f)| {
                cell(d) == cell(c) && {
                    let w = objective_values(space, f);
                    dominated(&v, &w) || (w == v && d < c)
                }
            })
        })
        .map(|(c, _)| *c)
        .collect();
    expected.sort();
    let got: Vec<Choice> = result.kept.iter().map(|k| k.choice).collect();
    assert_eq!(got, expected);
    // Sweep rows are exactly what evaluate returns.
    for k in &result.kept {
        assert_eq!(k.evaluation, evaluate(&space.config(&k.choice)).unwrap());
    }
}

#[test]
fn frontier_matches_brute_force_time_and_rent_cost() {
    check_against_brute_force(&small_space(objectives(&["time_to_train_days", "cost_to_train_usd"]), CostMode::Rent));
}

#[test]
fn frontier_matches_brute_force_three_objectives_own_cost() {
    check_against_brute_force(&small_space(
        objectives(&["time_to_train_days", "cost_to_train_usd", "mfu"]),
        CostMode::Own,
    ));
}

#[test]
fn grouping_by_a_parallel_axis_keeps_each_groups_frontier() {
    let mut space = small_space(objectives(&["time_to_train_days", "cost_to_train_usd"]), CostMode::Rent);
    let plain = run(&space, &Progress::default(), None);
    space.group_by = vec![Axis::Recompute];
    let grouped = run(&space, &Progress::default(), None);
    // Every recompute mode with a feasible configuration in a cell has its own best there.
    assert!(grouped.kept.len() > plain.kept.len());
    for k in &plain.kept {
        assert!(grouped.kept.iter().any(|g| g.choice == k.choice), "a cell's best is also its group's best");
    }
}

#[test]
fn same_space_same_result() {
    let space = small_space(objectives(&["time_to_train_days", "cost_to_train_usd"]), CostMode::Own);
    let a = run(&space, &Progress::default(), None);
    let b = run(&space, &Progress::default(), None);
    assert_eq!(a, b);
}

#[test]
fn cancelled_sweep_stops_and_says_so() {
    let space = small_space(objectives(&["time_to_train_days", "cost_to_train_usd"]), CostMode::Rent);
    let progress = Progress::default();
    progress.cancel.store(true, Ordering::Relaxed);
    let r = run(&space, &progress, None);
    assert!(r.cancelled);
    assert_eq!(r.evaluated, 0);
}

#[test]
fn every_feasible_row_is_streamed_when_asked() {
    let space = small_space(objectives(&["time_to_train_days", "cost_to_train_usd"]), CostMode::Rent);
    let (tx, rx) = std::sync::mpsc::sync_channel(4);
    let result = std::thread::scope(|s| {
        let h = s.spawn(|| run(&space, &Progress::default(), Some(&tx)));
        let mut rows = 0usize;
        let mut seen = std::collections::HashSet::new();
        let r = loop {
            match rx.recv_timeout(std::time::Duration::from_millis(50)) {
                Ok(chunk) => {
                    assert_eq!(chunk.choices.len(), chunk.evaluations.len());
                    rows += chunk.choices.len();
                    seen.extend(chunk.choices);
                }
                Err(_) if h.is_finished() => {
                    while let Ok(chunk) = rx.try_recv() {
                        rows += chunk.choices.len();
                        seen.extend(chunk.choices);
                    }
                    break h.join().unwrap();
                }
                Err(_) => {}
            }
        };
        assert_eq!(rows as u64, r.feasible);
        assert_eq!(seen.len() as u64, r.feasible, "no row sent twice");
        r
    });
    assert!(result.feasible > 0);
}

/// The layouts of a GPU count as the sweep's definition states them, by scanning every candidate degree: the
/// reference the divisor-based listing and the combinatorial count must equal.
fn layouts_by_scanning(space: &SweepSpace, gpus: u32) -> Vec<[u32; 5]> {
    let values = |axis: &DegreeAxis, n: u32| match axis {
        DegreeAxis::List(v) => v.clone(),
        DegreeAxis::Search { max } => (1..=n.min(*max)).filter(|d| n.is_multiple_of(*d)).collect::<Vec<u32>>(),
    };
    let mut out = Vec::new();
    for tp in values(&space.tp, gpus) {
        for pp in values(&space.pp, gpus) {
            for cp in values(&space.cp, gpus) {
                let product = tp as u64 * pp as u64 * cp as u64;
                let dps = match &space.dp {
                    DegreeAxis::Search { .. } if (gpus as u64).is_multiple_of(product) => {
                        vec![(gpus as u64 / product) as u32]
                    }
                    DegreeAxis::Search { .. } => vec![],
                    DegreeAxis::List(v) => v.clone(),
                };
                for dp in dps {
                    let etp = if space.parallelism.etp == 0 { tp } else { space.parallelism.etp } as u64;
                    let stage = tp as u64 * dp as u64 * cp as u64;
                    let ranks = if stage.is_multiple_of(etp) { (stage / etp) as u32 } else { dp * cp };
                    for ep in values(&space.ep, ranks) {
                        out.push([tp, pp, cp, dp, ep]);
                    }
                }
            }
        }
    }
    out
}

#[test]
fn layouts_are_listed_and_counted_as_the_scan_finds_them() {
    // Searched and listed degrees, dp derived and listed, ep searched over the expert ranks (with and without an
    // expert TP), on GPU counts with few and many divisors.
    let base = small_space(objectives(&["time_to_train_days", "cost_to_train_usd"]), CostMode::Rent);
    let search = |max| DegreeAxis::Search { max };
    let variants = [
        (search(8), search(16), DegreeAxis::List(vec![1, 2]), search(u32::MAX), DegreeAxis::List(vec![1]), 0),
        (search(u32::MAX), search(u32::MAX), DegreeAxis::List(vec![1]), search(u32::MAX), search(64), 0),
        (DegreeAxis::List(vec![2, 8]), search(4), DegreeAxis::List(vec![1, 3]), search(u32::MAX), search(8), 2),
        (
            search(8),
            DegreeAxis::List(vec![1, 2]),
            DegreeAxis::List(vec![1]),
            DegreeAxis::List(vec![4, 64]),
            search(16),
            0,
        ),
    ];
    for (tp, pp, cp, dp, ep, etp) in variants {
        let space = SweepSpace {
            tp,
            pp,
            cp,
            dp,
            ep,
            parallelism: Parallelism { etp, ..Parallelism::default() },
            ..base.clone()
        };
        for gpus in [1, 7, 64, 96, 720, 1024, 5040, 65_536] {
            let reference = layouts_by_scanning(&space, gpus);
            assert_eq!(factorizations(&space, gpus), reference, "{gpus} GPUs");
            assert_eq!(layout_count(&space, gpus), reference.len() as u64, "{gpus} GPUs");
        }
    }
}

#[test]
fn space_size_counts_factorizations_exactly() {
    let space = small_space(objectives(&["time_to_train_days", "cost_to_train_usd"]), CostMode::Rent);
    // 256 GPUs: tp, pp in {1, 2, 4, 8}: 16 pairs, dp = 256 / (tp pp); same for 512. 2 counts x 16 layouts
    // x 2 GPUs x 2 fabrics x 2 topologies x 2 micro-batches x (2 vpp x 3 recompute x 3 zero x 2 overlap).
    assert_eq!(factorizations(&space, 256).len(), 16);
    assert_eq!(space_size(&space), 2 * 16 * 2 * 2 * 2 * 2 * (2 * 3 * 3 * 2));
}

#[test]
fn each_cells_fastest_configuration_is_kept_whatever_the_objectives() {
    // Objectives without time: the fastest configuration of each cluster design must still be among the rows.
    let space = small_space(objectives(&["network_capex_usd", "mfu"]), CostMode::Rent);
    let result = run(&space, &Progress::default(), None);
    let all = brute_force(&space);
    let cell = |c: &Choice| (c.gpu, c.scale_up, c.gpus, c.fabric, c.topology, c.precision);
    let cells: std::collections::BTreeSet<_> = all.iter().map(|(c, _)| cell(c)).collect();
    for key in cells {
        let fastest = all
            .iter()
            .filter(|(c, r)| cell(c) == key && r.as_ref().is_ok_and(|e| e.feasible))
            .map(|(c, r)| (r.as_ref().unwrap().time_to_train_s, *c))
            .min_by(|a, b| a.0.partial_cmp(&b.0).unwrap().then(a.1.cmp(&b.1)));
        if let Some((_, choice)) = fastest {
            assert!(result.kept.iter().any(|k| k.choice == choice), "fastest of {key:?} missing");
        }
    }
}

#[test]
fn a_paused_sweep_holds_until_resumed_and_a_cancel_releases_it() {
    // Gate on events, not time: pause before starting, wait until a worker is held, check nothing was done,
    // then resume and let it finish.
    use std::sync::Arc;
    let space = small_space(objectives(&["time_to_train_days", "cost_to_train_usd"]), CostMode::Rent);
    let progress = Arc::new(Progress::default());
    progress.pause();
    let (p, s) = (progress.clone(), space.clone());
    let worker = std::thread::spawn(move || run(&s, &p, None));
    while progress.held() == 0 {
        std::thread::yield_now();
    }
    assert_eq!(progress.done.load(Ordering::SeqCst), 0);
    progress.resume();
    let result = worker.join().unwrap();
    assert!(!result.cancelled);
    assert_eq!(result.evaluated, space_size(&space));

    // Cancelling a paused sweep releases the workers, which then stop.
    let progress = Arc::new(Progress::default());
    progress.pause();
    let (p, s) = (progress.clone(), space.clone());
    let worker = std::thread::spawn(move || run(&s, &p, None));
    while progress.held() == 0 {
        std::thread::yield_now();
    }
    progress.cancel();
    let result = worker.join().unwrap();
    assert!(result.cancelled && result.evaluated < space_size(&space));
}

/// Every feasible configuration in enumeration order, as the brute force lists it.
fn feasible_in_order(space: &SweepSpace) -> Vec<Choice> {
    brute_force(space).into_iter().filter(|(_, r)| r.as_ref().is_ok_and(|e| e.feasible)).map(|(c, _)| c).collect()
}

/// Run on a pool of `threads` threads, collecting the streamed rows in the order they arrive.
fn streamed(space: &SweepSpace, cells: &[u32], threads: usize) -> (SweepResult, Vec<Choice>) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let (tx, rx) = std::sync::mpsc::sync_channel(2);
    std::thread::scope(|s| {
        let h = s.spawn(|| pool.install(|| run_cells(space, cells, &Progress::default(), Some(&tx))));
        let mut rows = Vec::new();
        loop {
            match rx.recv_timeout(std::time::Duration::from_millis(20)) {
                Ok(chunk) => {
                    assert!(chunk.choices.len() <= CHUNK_ROWS && chunk.choices.len() == chunk.evaluations.len());
                    rows.extend(chunk.choices);
                }
                Err(_) if h.is_finished() => {
                    rows.extend(rx.try_iter().flat_map(|c| c.choices));
                    break (h.join().unwrap(), rows);
                }
                Err(_) => {}
            }
        }
    })
}

#[test]
fn streamed_rows_come_in_enumeration_order_whatever_the_pool_size() {
    let space = small_space(objectives(&["time_to_train_days", "cost_to_train_usd"]), CostMode::Rent);
    let all: Vec<u32> = (0..cluster_cells(&space).len() as u32).collect();
    let expected = feasible_in_order(&space);
    assert!(expected.len() > 100);
    for threads in [1, 2, 3, 7] {
        let (result, rows) = streamed(&space, &all, threads);
        assert_eq!(rows, expected, "{threads} threads");
        assert_eq!(result.feasible, expected.len() as u64);
    }
}

#[test]
fn shards_of_cells_merge_to_the_whole_sweep() {
    let space = small_space(objectives(&["time_to_train_days", "cost_to_train_usd", "mfu"]), CostMode::Own);
    let whole = run(&space, &Progress::default(), None);
    let costs = cell_costs(&space);
    let expected_rows = feasible_in_order(&space);
    for shards in [1, 2, 3, 5, 16, 40] {
        let mut kept = Vec::new();
        let (mut evaluated, mut feasible, mut rows) = (0, 0, Vec::new());
        let mut rejected = [0u64; REASONS.len()];
        for range in shard_ranges(&costs, shards) {
            let cells: Vec<u32> = range.map(|c| c as u32).collect();
            let (part, part_rows) = streamed(&space, &cells, 2);
            kept.extend(part.kept);
            evaluated += part.evaluated;
            feasible += part.feasible;
            for (a, b) in rejected.iter_mut().zip(part.rejected) {
                *a += b;
            }
            rows.extend(part_rows);
        }
        kept.sort_by_key(|k| k.choice);
        assert_eq!(kept, whole.kept, "{shards} shards: the union of the shards' kept rows");
        assert_eq!((evaluated, feasible, rejected), (whole.evaluated, whole.feasible, whole.rejected));
        assert_eq!(rows, expected_rows, "{shards} shards: concatenated streams in enumeration order");
    }
}

#[test]
fn cell_sizes_and_costs_add_up_to_the_run() {
    let mut space = small_space(objectives(&["time_to_train_days", "cost_to_train_usd"]), CostMode::Rent);
    space.precisions = vec![Precision::Bf16, Precision::Fp8];
    space.gpus[1].spec.peak_fp8_flops = 0.0; // its FP8 cells are rejected at once: one unit per task
    let sizes = cell_sizes(&space);
    assert_eq!(sizes.len(), cluster_cells(&space).len());
    assert_eq!(sizes.iter().sum::<u64>(), space_size(&space));
    let costs = cell_costs(&space);
    let progress = Progress::default();
    let result = run(&space, &progress, None);
    assert_eq!(result.evaluated, space_size(&space));
    assert_eq!(progress.work.load(Ordering::Relaxed), costs.iter().sum::<u64>());
    // 256 GPUs, global batch 512: dp x micro-batch must divide 512. dp = 256 / (tp pp) and micro-batch 1 or 2
    // are powers of two with dp x micro-batch <= 512, and tp <= 8 divides Llama 3 70B's 64 heads and 8 KV heads:
    // all 16 layouts x 2 micro-batches are valid, 32 tasks x (2 vpp x 3 recompute x 3 ZeRO x 2 overlap = 36)
    // schedule choices = 1,152 units, as many as the cell's configurations.
    let cells = cluster_cells(&space);
    let bf16_h100_256 = cells.iter().position(|c| *c == [0, 0, 0, 0, 0, 0, 0]).unwrap();
    assert_eq!(costs[bf16_h100_256], 32 * 36);
    assert_eq!(sizes[bf16_h100_256], 32 * 36);
    // The same cell in FP8 on the GPU without FP8: 32 tasks rejected at once, one unit each.
    let fp8_no = cells.iter().position(|c| *c == [1, 0, 0, 0, 0, 0, 1]).unwrap();
    assert_eq!(costs[fp8_no], 32);
}
