//! The ROI comparison end to end on hand-built designs: the Monte Carlo is reproducible, moves the right way
//! when A's price rises, converges, never gains from a higher premium; the tornado's flip values flip the
//! verdict when fed back; A compared with several B gives each pair what it gives alone.

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

/// The Monte Carlo's path (one cluster stage per design and sample, each layout's stage kept between samples,
/// its collectives timed for its own ZeRO stage only, those inside one NVLink domain once:
/// `side_cost_and_speeds_in`) picks the same layouts at the same speeds as evaluating each candidate in full
/// (`side_speeds`), for every ZeRO stage, with and without a model error, on both fabrics, as the sampled fabric
/// figures and placement move from sample to sample.
#[test]
fn the_monte_carlo_path_times_each_sample_as_a_full_evaluation_does() {
    let errors = [StepError::NONE, StepError { common: 1.1, collective: 0.7, serving: 1.0 }];
    let samples = [(0.9, 1.0, 0.0), (0.6, 3.0, 0.5), (0.75, 1.5, 1.0)];
    for (f, fabric) in [ib_ndr(), roce()].iter().enumerate() {
        for zero in [0, 1, 2, 3] {
            let mut layouts = candidates(2048, fabric, 20_000.0);
            layouts.iter_mut().for_each(|c| c.parallelism.zero_stage = zero);
            layouts[0].parallelism.tp = 4;
            layouts[0].parallelism.dp *= 2;
            let workloads = vec![layouts];
            let mut scratch = DesignScratch::default();
            for (efficiency, tail, placement) in samples {
                let edit = |c: &mut Config| {
                    (c.fabric.efficiency, c.fabric.tail_latency_factor) = (efficiency, tail);
                    c.training.placement = placement;
                    Ok(())
                };
                let full = side_speeds(&workloads, &errors, &edit).unwrap();
                let (_, fast) = side_cost_and_speeds_in(&mut scratch, &workloads, &errors, &edit).unwrap();
                assert_eq!(fast, full, "fabric {f}, ZeRO {zero}, sample {efficiency} {tail} {placement}");
            }
        }
    }
}

fn problem(ib_switch: f64, premium: Option<f64>) -> RoiProblem {
    problem_against(ib_switch, premium, &[roce()])
}

/// A (IB at `ib_switch`) against each fabric of `bs` (sides 1, 2, ...) at 1,024 and 4,096 GPUs.
fn problem_against(ib_switch: f64, premium: Option<f64>, bs: &[FabricSpec]) -> RoiProblem {
    let mut designs = vec![];
    for gpus in [1024, 4096] {
        designs.push(Design {
            side: 0,
            gpus,
            topology: "rail".into(),
            candidates: vec![candidates(gpus, &ib_ndr(), ib_switch)],
            serving: None,
        });
        for (k, b) in bs.iter().enumerate() {
            designs.push(Design {
                side: k as u32 + 1,
                gpus,
                topology: "rail".into(),
                candidates: vec![candidates(gpus, b, 25e3)],
                serving: None,
            });
        }
    }
    RoiProblem {
        shares: vec![1.0],
        designs,
        options: RoiOptions { design: DesignRule::Same, premium, value_usd_per_gpu_hour: None, training_months: None },
    }
}

fn target(section: Section, side: Option<u32>, field: &str) -> Target {
    Target { section, side, field: field.into() }
}

fn input(name: &str, t: Vec<Target>, low: f64, typical: f64, high: f64) -> UncertainInput {
    UncertainInput {
        name: name.into(),
        targets: t,
        low,
        typical,
        high,
        empirical: vec![],
        weights: vec![],
        integer: false,
        loadings: vec![],
    }
}

fn inputs() -> Vec<UncertainInput> {
    inputs_for(&[1])
}

/// The test's inputs with B's figures set on each side of `bs` (one draw for all of them).
fn inputs_for(bs: &[u32]) -> Vec<UncertainInput> {
    let on_b = |section, field: &str| bs.iter().map(|&s| target(section, Some(s), field)).collect::<Vec<_>>();
    vec![
        input("ib switch", vec![target(Section::Network, Some(0), "switch_usd")], 32e3, 36e3, 50e3),
        input("roce switch", on_b(Section::Network, "switch_usd"), 15e3, 25e3, 70e3),
        UncertainInput {
            integer: true,
            ..input("roce queue pairs", on_b(Section::Fabric, "qps_per_connection"), 1.0, 2.0, 16.0)
        },
        input("optics", vec![target(Section::Network, None, "switch_optic_usd")], 1000.0, 1250.0, 2100.0),
        input("utilisation", vec![target(Section::Economics, None, "utilisation")], 0.7, 0.8, 0.9),
        UncertainInput {
            empirical: vec![-0.1, -0.05, 0.0, 0.02, 0.08],
            ..input("collective error (B)", on_b(Section::ModelError, "collective"), -0.1, 0.0, 0.08)
        },
    ]
}

fn uncertainty(inputs: &[UncertainInput]) -> Uncertainty {
    Uncertainty { inputs: inputs.to_vec(), groups: vec![], samples: 0, seed: 0 }
}

fn mc(problem: &RoiProblem, inputs: &[UncertainInput], samples: u64, seed: u64) -> McResult {
    let u = uncertainty(inputs);
    let plan = Plan::new(problem, &u).unwrap();
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
    let u = uncertainty(&ins);
    let plan = Plan::new(&p, &u).unwrap();
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
    // IB's network at 0.85 x RoCE's: close enough to break-even at 4,096 GPUs for inputs to flip the verdict; the
    // NPV is the metric (with a value per GPU-hour it is no longer the savings).
    for value in [None, Some(4.0)] {
        let mut p = problem(36e3, Some(0.85));
        p.options.value_usd_per_gpu_hour = value;
        let ins = inputs();
        let u = uncertainty(&ins);
        let plan = Plan::new(&p, &u).unwrap();
        let mut flips = 0;
        for count in &plan.counts {
            let base = plan.compare(count, plan.typical_values()).unwrap().npv_usd;
            for bar in tornado(&plan, count).unwrap() {
                assert!(bar.swing_usd() > 0.0, "{}: an inert bar is left out", ins[bar.input].name);
                if bar.flip.is_nan() {
                    continue;
                }
                flips += 1;
                let mut v = plan.typical_values().to_vec();
                v[bar.input] = bar.flip;
                let at = plan.compare(count, &v).unwrap().npv_usd;
                assert_ne!(at > 0.0, base > 0.0, "{}: {} at {}", ins[bar.input].name, at, bar.flip);
                // Just short of the flip (towards the typical value) the verdict is still the typical one: the
                // whole number before it for a whole-number input.
                let back = if ins[bar.input].integer { 1.0 } else { 1e-6 * (bar.high - bar.low) };
                v[bar.input] = bar.flip + if bar.flip > bar.typical { -back } else { back };
                assert_eq!(plan.compare(count, &v).unwrap().npv_usd > 0.0, base > 0.0);
                if ins[bar.input].integer {
                    assert_eq!(bar.flip.fract(), 0.0);
                }
            }
        }
        assert!(flips > 0, "the test scenario should have at least one flip");
    }
}

#[test]
fn a_unit_price_flips_exactly_where_its_line_crosses_zero() {
    // The NPV is linear in a part's price: the secant's zero is the quote that flips the verdict, even beyond the
    // range (RoCE's switch at 4,096 GPUs: the price at which IB's premium would pay).
    let p = problem(36e3, None);
    let ins = inputs();
    let u = uncertainty(&ins);
    let plan = Plan::new(&p, &u).unwrap();
    let count = &plan.counts[1];
    let bar = tornado(&plan, count).unwrap().into_iter().find(|b| b.input == 1).unwrap();
    assert!(bar.linear_flip.is_finite());
    let mut v = plan.typical_values().to_vec();
    for (x, sign) in [(bar.linear_flip * 0.99, -1.0), (bar.linear_flip * 1.01, 1.0)] {
        v[1] = x;
        let npv = plan.compare(count, &v).unwrap().npv_usd;
        assert_eq!(npv.signum(), sign * (bar.npv_high_usd - bar.npv_low_usd).signum(), "{x}: {npv}");
    }
}

#[test]
fn each_b_of_several_gets_what_it_gets_alone() {
    // A against RoCE and against a RoCE with 2x dearer optics: sides 1 and 2. Each pair's outcomes equal the
    // outcomes of A against that B alone, sample by sample (the draws are by input, not by pair).
    let mut dear = roce();
    dear.efficiency = 0.9;
    let both = problem_against(36e3, None, &[roce(), dear.clone()]);
    let ins = inputs_for(&[1, 2]);
    let all = mc(&both, &ins, 40, 3);
    let alone = [
        mc(&problem_against(36e3, None, &[roce()]), &inputs(), 40, 3),
        mc(&problem_against(36e3, None, &[dear]), &inputs(), 40, 3),
    ];
    let plan_u = uncertainty(&ins);
    let plan = Plan::new(&both, &plan_u).unwrap();
    assert_eq!(
        plan.counts.iter().map(|c| (c.gpus, c.side_b)).collect::<Vec<_>>(),
        [(1024, 1), (1024, 2), (4096, 1), (4096, 2)]
    );
    for (k, c) in plan.counts.iter().enumerate() {
        let single = &alone[c.side_b as usize - 1];
        let j = if c.gpus == 1024 { 0 } else { 1 };
        assert_eq!(all.outcomes[k], single.outcomes[j], "{} GPUs, B{}", c.gpus, c.side_b);
        assert_eq!((all.summaries[k].gpus, all.summaries[k].side_b), (c.gpus, c.side_b));
    }
}

#[test]
fn the_model_error_is_left_out_of_the_no_error_outcome_only() {
    // Without model-error inputs the two outcomes agree; with them, the no-error NPV is the one of a run whose
    // model-error inputs are fixed at 0.
    let p = problem(36e3, None);
    let prices_only: Vec<UncertainInput> = inputs().into_iter().filter(|i| i.name != "collective error (B)").collect();
    for o in mc(&p, &prices_only, 30, 5).outcomes.iter().flatten() {
        assert_eq!(o.npv_usd, o.npv_no_error_usd);
    }
    let with = mc(&p, &inputs(), 30, 5);
    let mut fixed = inputs();
    let last = fixed.len() - 1;
    (fixed[last].empirical, fixed[last].low, fixed[last].high) = (vec![0.0], 0.0, 0.0);
    let without = mc(&p, &fixed, 30, 5);
    for (w, f) in with.outcomes.iter().flatten().zip(without.outcomes.iter().flatten()) {
        assert!((w.npv_no_error_usd - f.npv_usd).abs() < 1e-6 * f.npv_usd.abs().max(1.0));
    }
    let s = &with.summaries[0];
    let share = with.outcomes[0].iter().filter(|o| o.npv_no_error_usd > 0.0).count() as f64 / 30.0;
    assert_eq!(s.p_npv_positive_no_error, share);
}

#[test]
fn prices_in_one_group_widen_the_spread_of_a_difference_they_do_not_cancel_in() {
    // IB's switch and the optics (both fabrics) loading on one group: when IB's switches are dear, so are the
    // optics, which IB buys more of here... the premium's spread changes, its median stays near (marginals kept).
    let p = problem(36e3, None);
    let ins = inputs();
    let mut grouped = ins.clone();
    for i in [0usize, 3] {
        grouped[i].loadings = vec![Loading { group: 0, loading: 0.8 }];
    }
    let u = Uncertainty { inputs: grouped, groups: vec!["vendor".into()], samples: 0, seed: 0 };
    let plan = Plan::new(&p, &u).unwrap();
    let correlated = run(&plan, 9, 0, 2000, &McProgress::default()).unwrap();
    let independent = mc(&p, &ins, 2000, 9);
    let spread = |r: &McResult| r.summaries[1].extra_capex_usd[2] - r.summaries[1].extra_capex_usd[0];
    assert!(spread(&correlated) > spread(&independent), "{} vs {}", spread(&correlated), spread(&independent));
    let (mc_c, mc_i) = (correlated.summaries[1].extra_capex_usd[1], independent.summaries[1].extra_capex_usd[1]);
    assert!((mc_c - mc_i).abs() < 0.05 * mc_i.abs(), "{mc_c} vs {mc_i}");
    // A loading on no declared group is refused.
    let bad = Uncertainty { groups: vec![], ..u.clone() };
    assert!(Plan::new(&p, &bad).is_err());
}

#[test]
fn a_session_reprices_as_a_fresh_run_with_those_prices_would() {
    // The UI's what-if: the speeds kept from the first run, the costs recomputed with A's switches at $30K and a
    // 4-year life. Sample by sample the outcomes equal a fresh Monte Carlo with those prices.
    let p = problem(36e3, None);
    let u = Uncertainty { inputs: inputs(), groups: vec![], samples: 40, seed: 4 };
    let session = Session::new(p.clone(), u.clone()).unwrap();
    let overrides = vec![
        Override { section: Section::Network, side: Some(0), field: "switch_usd".into(), value: 30e3 },
        Override { section: Section::Economics, side: None, field: "amortization_years".into(), value: 4.0 },
    ];
    let (typical, mc) = session.reprice(&overrides, false).unwrap();
    let plan = Plan::with_overrides(&p, &u, &overrides).unwrap();
    let fresh = run(&plan, 4, 0, 40, &McProgress::default()).unwrap();
    for (k, count) in mc.counts.iter().enumerate() {
        assert_eq!(count.outcomes.outcomes(), fresh.outcomes[k]);
        assert_eq!(count.summary, fresh.summaries[k]);
        let at_typical = plan.compare(&plan.counts[k], plan.typical_values()).unwrap();
        assert_eq!(typical.counts[k].comparison, at_typical);
        assert_eq!(at_typical.life_months, 48.0);
    }
    // The what-if moved the answer: a cheaper IB switch raises the NPV of choosing IB.
    let before = session.reprice(&[], false).unwrap().1;
    assert!(mc.counts[1].summary.npv_usd[1] != before.counts[1].summary.npv_usd[1]);
    // A field no accessor sets is refused.
    let bad = Override { section: Section::Network, side: None, field: "no_such_price".into(), value: 1.0 };
    assert!(session.reprice(&[bad], false).is_err());
}

#[test]
fn a_session_reprices_other_prices_ranges_and_options_as_a_fresh_run_and_refuses_other_physics() {
    // The UI's what-ifs as the comparison itself changed: IB's switches quoted lower (in every candidate's prices),
    // the utilisation's range scaled down, a premium set. The kept speeds serve it; sample by sample the outcomes
    // and the typical report (tornado included) equal a fresh run of that comparison.
    let (p, u) = (problem(36e3, None), Uncertainty { inputs: inputs(), groups: vec![], samples: 40, seed: 4 });
    let session = Session::new(p.clone(), u.clone()).unwrap();
    let mut q = problem(30e3, Some(1.2));
    q.designs.iter_mut().flat_map(|d| d.candidates.iter_mut().flatten()).for_each(|c| c.prices.economics.pue = 1.5);
    let mut v = u.clone();
    let util = v.inputs.iter_mut().find(|i| i.name == "utilisation").unwrap();
    (util.low, util.typical, util.high) = (0.5, 0.6, 0.7);
    assert!(session.reuses(&q, &v));
    let (typical, mc) = session.reprice_as(&q, &v, &[], true).unwrap();
    let plan = Plan::new(&q, &v).unwrap();
    let fresh = run(&plan, 4, 0, 40, &McProgress::default()).unwrap();
    // As text: NaN (a flip outside the range, an IRR of flows that never change sign) is not equal to itself.
    assert_eq!(format!("{typical:?}"), format!("{:?}", typical_report(&plan).unwrap()));
    for (k, count) in mc.counts.iter().enumerate() {
        assert_eq!(count.outcomes.outcomes(), fresh.outcomes[k]);
        assert_eq!(count.summary, fresh.summaries[k]);
    }
    assert!(mc.counts[1].summary.npv_usd != session.reprice(&[], false).unwrap().1.counts[1].summary.npv_usd);
    // What a step time reads is the kept one or nothing: a fabric figure, a timing input's range, the seed.
    let mut faster = p.clone();
    faster.designs[1].candidates[0][0].fabric.link_bytes_per_s *= 2.0;
    let mut qps = u.clone();
    qps.inputs[2].high = 8.0;
    for (problem, uncertainty) in [(&faster, &u), (&p, &qps), (&p, &Uncertainty { seed: 5, ..u.clone() })] {
        assert!(!session.reuses(problem, uncertainty));
        assert!(session.reprice_as(problem, uncertainty, &[], false).is_err());
    }
    // A what-if that sets a fabric figure is refused too (the kept speeds would not see it).
    let bad = Override { section: Section::Fabric, side: Some(1), field: "efficiency".into(), value: 0.9 };
    assert!(session.reprice(&[bad], false).is_err());
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
