//! The ROI comparison end to end on hand-built designs: the Monte Carlo is reproducible, moves the right way
//! when A's price rises, converges, never gains from a higher premium; the tornado's flip values flip the
//! verdict when fed back.

use proptest::prelude::*;
use scalefront_core::decision::montecarlo::*;
use scalefront_core::decision::roi::*;
use scalefront_core::examples::*;
use scalefront_core::*;

fn roce() -> FabricSpec {
    roce_400g()
}

/// Llama 3 70B layouts on `gpus` GPUs: tp 8 with pp 1, 2, 4 (the candidates a sweep would keep).
fn candidates(gpus: u32, fabric: &FabricSpec, switch_usd: f64) -> Vec<Config> {
    [1, 2, 4]
        .iter()
        .map(|&pp| {
            let mut c = reference();
            c.gpus = gpus;
            c.fabric = fabric.clone();
            c.prices.network.switch_usd = switch_usd;
            c.parallelism.pp = pp;
            c.parallelism.vpp = 1;
            c.parallelism.dp = gpus / (8 * pp);
            c.training.global_batch = 1024;
            c.reliability = ReliabilitySpec::perfect();
            c
        })
        .collect()
}

fn problem(ib_switch: f64, premium: Option<f64>) -> RoiProblem {
    let mut designs = vec![];
    for gpus in [1024, 4096] {
        designs.push(Design {
            side: 0,
            gpus,
            topology: "rail".into(),
            candidates: vec![candidates(gpus, &ib_ndr(), ib_switch)],
        });
        designs.push(Design {
            side: 1,
            gpus,
            topology: "rail".into(),
            candidates: vec![candidates(gpus, &roce(), 25e3)],
        });
    }
    RoiProblem {
        shares: vec![1.0],
        designs,
        options: RoiOptions { design: DesignRule::Same, premium, value_usd_per_gpu_hour: None },
    }
}

fn target(section: Section, side: Option<u32>, field: &str) -> Target {
    Target { section, side, field: field.into() }
}

fn input(name: &str, t: Vec<Target>, low: f64, typical: f64, high: f64) -> UncertainInput {
    UncertainInput { name: name.into(), targets: t, low, typical, high, empirical: vec![] }
}

fn inputs() -> Vec<UncertainInput> {
    vec![
        input("ib switch", vec![target(Section::Network, Some(0), "switch_usd")], 32e3, 36e3, 50e3),
        input("roce switch", vec![target(Section::Network, Some(1), "switch_usd")], 15e3, 25e3, 70e3),
        input("roce queue pairs", vec![target(Section::Fabric, Some(1), "qps_per_connection")], 1.0, 2.0, 16.0),
        input("optics", vec![target(Section::Network, None, "switch_optic_usd")], 1000.0, 1250.0, 2100.0),
        input("utilisation", vec![target(Section::Economics, None, "utilisation")], 0.7, 0.8, 0.9),
        UncertainInput {
            empirical: vec![-0.1, -0.05, 0.0, 0.02, 0.08],
            ..input("collective error (B)", vec![target(Section::ModelError, Some(1), "collective")], -0.1, 0.0, 0.08)
        },
    ]
}

fn mc(problem: &RoiProblem, inputs: &[UncertainInput], samples: u64, seed: u64) -> McResult {
    let plan = Plan::new(problem, inputs).unwrap();
    run(&plan, seed, 0, samples, &McProgress::default()).unwrap()
}

#[test]
fn same_seed_same_outcomes_and_shards_agree() {
    let p = problem(36e3, None);
    let ins = inputs();
    let a = mc(&p, &ins, 64, 7);
    assert_eq!(a, mc(&p, &ins, 64, 7));
    assert_ne!(a.outcomes, mc(&p, &ins, 64, 8).outcomes);
    // Samples 32..64 computed as a shard equal the second half of the whole run.
    let plan = Plan::new(&p, &ins).unwrap();
    let shard = run(&plan, 7, 32, 32, &McProgress::default()).unwrap();
    assert_eq!(shard.outcomes[0][..], a.outcomes[0][32..]);
}

#[test]
fn a_dearer_a_wins_less_often() {
    let ins = inputs();
    let cheap = mc(&problem(36e3, None), &ins, 200, 1);
    // A's switch price enters through the input (its typical value is what the catalog says): raise the range.
    let mut dear = ins.clone();
    (dear[0].low, dear[0].typical, dear[0].high) = (90e3, 100e3, 120e3);
    let dear = mc(&problem(100e3, None), &dear, 200, 1);
    for (c, d) in cheap.summaries.iter().zip(&dear.summaries) {
        assert!(d.p_a_cheaper <= c.p_a_cheaper, "{} GPUs: {} then {}", c.gpus, c.p_a_cheaper, d.p_a_cheaper);
        assert!(d.savings_usd[1] < c.savings_usd[1]);
    }
}

#[test]
fn more_samples_converge() {
    // The first n samples of a run are the n samples of a shorter run; the estimate with n samples stays within
    // 4 standard errors of the 3,200-sample one, and the error shrinks with n on average.
    let p = problem(36e3, None);
    let ins = inputs();
    let long = mc(&p, &ins, 3200, 11);
    for c in 0..long.summaries.len() {
        let p_long = long.summaries[c].p_a_cheaper;
        for n in [50usize, 200, 800] {
            let p_n = long.outcomes[c][..n].iter().filter(|o| o.savings_usd > 0.0).count() as f64 / n as f64;
            let se = (p_long * (1.0 - p_long) / n as f64).sqrt().max(1.0 / n as f64);
            assert!((p_n - p_long).abs() <= 4.0 * se, "count {c}, n {n}: {p_n} vs {p_long}");
        }
    }
}

#[test]
fn tornado_flip_values_flip_the_verdict_when_fed_back() {
    // IB's network at 0.85 x RoCE's: close enough to break-even at 4,096 GPUs for inputs to flip the verdict.
    let p = problem(36e3, Some(0.85));
    let ins = inputs();
    let plan = Plan::new(&p, &ins).unwrap();
    let mut flips = 0;
    for count in &plan.counts {
        let base = plan.compare(count, plan.typical_values()).unwrap().savings_usd;
        for bar in tornado(&plan, count).unwrap() {
            if bar.flip.is_nan() {
                continue;
            }
            flips += 1;
            let mut v = plan.typical_values().to_vec();
            v[bar.input] = bar.flip;
            let at = plan.compare(count, &v).unwrap().savings_usd;
            assert_ne!(at > 0.0, base > 0.0, "{}: {} at {}", ins[bar.input].name, at, bar.flip);
            // Just short of the flip (towards the typical value) the verdict is still the typical one.
            let tol = 1e-6 * (bar.high - bar.low);
            v[bar.input] = bar.flip + if bar.flip > bar.typical { -tol } else { tol };
            assert_eq!(plan.compare(count, &v).unwrap().savings_usd > 0.0, base > 0.0);
        }
    }
    assert!(flips > 0, "the test scenario should have at least one flip");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]

    /// A higher premium on A never raises P(A is cheaper per delivered work): sample by sample, A's cost only
    /// grows with its premium.
    #[test]
    fn a_higher_premium_never_raises_p_a_wins(p1 in 0.8f64..1.6, dp in 0.0f64..0.6, seed in 0u64..1000) {
        let ins = inputs();
        let low = mc(&problem(36e3, Some(p1)), &ins, 48, seed);
        let high = mc(&problem(36e3, Some(p1 + dp)), &ins, 48, seed);
        for (l, h) in low.summaries.iter().zip(&high.summaries) {
            prop_assert!(h.p_a_cheaper <= l.p_a_cheaper);
        }
        for (l, h) in low.outcomes.iter().flatten().zip(high.outcomes.iter().flatten()) {
            prop_assert!(h.savings_usd <= l.savings_usd + 1e-6);
        }
    }
}
