//! Counting a space without enumerating it, and listing one GPU count's layouts quickly.
//!
//! A searched degree takes the divisors of the GPU count (up to its `max`). They are found once per GPU count from
//! its prime factors, never by scanning 1..=n for every outer degree: a space of 8,192 GPU
//! counts up to 65,536 with tp and pp searched is counted in milliseconds. A layout count multiplies instead of
//! listing: with dp derived, each (tp, pp, cp) whose product divides the GPU count is one layout per ep choice;
//! with dp listed, every listed (tp, pp, cp, dp) is. Only a searched ep depends on the other degrees (it takes
//! the divisors of the expert ranks), and there are at most as many distinct expert-rank counts as divisors.

use std::collections::HashMap;
use std::sync::OnceLock;

use rayon::prelude::*;

use super::{DegreeAxis, SweepSpace};

/// The primes up to 65,536 (= sqrt(2^32)): enough to factor any u32 by trial division, found once.
fn small_primes() -> &'static [u32] {
    static PRIMES: OnceLock<Vec<u32>> = OnceLock::new();
    PRIMES.get_or_init(|| {
        const LIMIT: usize = 65_536;
        let mut composite = vec![false; LIMIT + 1];
        let mut primes = Vec::new();
        for i in 2..=LIMIT {
            if !composite[i] {
                primes.push(i as u32);
                for j in (i * i..=LIMIT).step_by(i) {
                    composite[j] = true;
                }
            }
        }
        primes
    })
}

/// The divisors of `n`, ascending (none for 0): from its prime factors (trial division by the small primes), so
/// that even 10^5 GPU counts near 2^31 are factored in well under a second.
pub(crate) fn divisors(n: u32) -> Vec<u32> {
    if n == 0 {
        return Vec::new();
    }
    let (mut out, mut rest) = (vec![1u32], n);
    for &p in small_primes() {
        if (p as u64) * (p as u64) > rest as u64 {
            break;
        }
        let mut power = 0;
        while rest.is_multiple_of(p) {
            rest /= p;
            power += 1;
        }
        extend_by(&mut out, p, power);
    }
    if rest > 1 {
        extend_by(&mut out, rest, 1);
    }
    out.sort_unstable();
    out
}

/// Every divisor found so far times each power of `p` up to `power`.
fn extend_by(divisors: &mut Vec<u32>, p: u32, power: u32) {
    let found = divisors.len();
    let mut factor = 1u32;
    for _ in 0..power {
        factor *= p;
        for i in 0..found {
            divisors.push(divisors[i] * factor);
        }
    }
}

/// The divisors of the numbers one GPU count's layouts ask about (the count itself, and the expert ranks of a
/// searched ep), each found once.
struct Divisors {
    gpus: u32,
    of_gpus: Vec<u32>,
    others: HashMap<u32, Vec<u32>>,
}

impl Divisors {
    fn new(gpus: u32) -> Self {
        Divisors { gpus, of_gpus: divisors(gpus), others: HashMap::new() }
    }

    /// The divisors of `m`, ascending: from the GPU count's when `m` divides it, else by trial division.
    fn of(&mut self, m: u32) -> &[u32] {
        if m == self.gpus {
            return &self.of_gpus;
        }
        let of_gpus = &self.of_gpus;
        let gpus = self.gpus;
        self.others.entry(m).or_insert_with(|| {
            if m > 0 && gpus.is_multiple_of(m) {
                of_gpus.iter().copied().filter(|d| m.is_multiple_of(*d)).collect()
            } else {
                divisors(m)
            }
        })
    }

    /// The values of one degree axis: its list, or the GPU count's divisors up to `max`.
    fn values(&self, axis: &DegreeAxis) -> Vec<u32> {
        match axis {
            DegreeAxis::List(v) => v.clone(),
            DegreeAxis::Search { max } => self.of_gpus.iter().copied().take_while(|d| d <= max).collect(),
        }
    }
}

/// The dp values of a (tp, pp, cp): the GPU count over their product when dp is derived (none when the product
/// does not divide it), else the listed ones.
fn dp_values(space: &SweepSpace, gpus: u32, tp: u32, pp: u32, cp: u32) -> Vec<u32> {
    match &space.dp {
        DegreeAxis::Search { .. } => {
            let product = tp as u64 * pp as u64 * cp as u64;
            if product > 0 && (gpus as u64).is_multiple_of(product) {
                vec![(gpus as u64 / product) as u32]
            } else {
                Vec::new()
            }
        }
        DegreeAxis::List(v) => v.clone(),
    }
}

/// The ranks a searched ep divides: MoE parallel folding regroups tp x dp x cp ranks as etp x ep x expert-dp.
fn expert_ranks(space: &SweepSpace, tp: u32, dp: u32, cp: u32) -> u32 {
    let etp = if space.parallelism.etp == 0 { tp } else { space.parallelism.etp };
    let stage_ranks = tp as u64 * dp as u64 * cp as u64;
    if stage_ranks.is_multiple_of(etp.max(1) as u64) {
        (stage_ranks / etp.max(1) as u64).min(u32::MAX as u64) as u32
    } else {
        dp.saturating_mul(cp)
    }
}

/// Every (tp, pp, cp, dp) of a GPU count with the ep values it takes, in enumeration order.
fn for_each_layout(space: &SweepSpace, gpus: u32, mut visit: impl FnMut(&[u32; 4], &[u32])) {
    let mut divs = Divisors::new(gpus);
    let (tps, pps, cps) = (divs.values(&space.tp), divs.values(&space.pp), divs.values(&space.cp));
    let ep_list = match &space.ep {
        DegreeAxis::List(v) => Some(v.clone()),
        DegreeAxis::Search { .. } => None,
    };
    for &tp in &tps {
        for &pp in &pps {
            for &cp in &cps {
                for dp in dp_values(space, gpus, tp, pp, cp) {
                    match (&ep_list, &space.ep) {
                        (Some(eps), _) => visit(&[tp, pp, cp, dp], eps),
                        (None, DegreeAxis::Search { max }) => {
                            let ranks = expert_ranks(space, tp, dp, cp);
                            let eps: Vec<u32> = divs.of(ranks).iter().copied().take_while(|d| d <= max).collect();
                            visit(&[tp, pp, cp, dp], &eps)
                        }
                        (None, DegreeAxis::List(_)) => unreachable!("a listed ep is Some above"),
                    }
                }
            }
        }
    }
}

/// The (tp, pp, cp, dp, ep) combinations of the space for `gpus` GPUs. With dp derived (`Search`), only
/// products tp x pp x cp that divide the GPU count belong to the space; with dp listed, every listed
/// combination does (and those whose product is not the GPU count are rejected, counted as such).
pub fn factorizations(space: &SweepSpace, gpus: u32) -> Vec<[u32; 5]> {
    let mut out = Vec::new();
    for_each_layout(space, gpus, |&[tp, pp, cp, dp], eps| out.extend(eps.iter().map(|&ep| [tp, pp, cp, dp, ep])));
    out
}

/// How many layouts `factorizations(space, gpus)` lists, without listing them. With dp derived and ep listed
/// (the common case), every (tp, cp) whose product divides the GPU count contributes the pp values that divide
/// what is left, found by position among the GPU count's divisors: no layout is visited. Otherwise each
/// (tp, pp, cp, dp) is visited once, without allocating.
pub fn layout_count(space: &SweepSpace, gpus: u32) -> u64 {
    match (&space.dp, &space.ep) {
        (DegreeAxis::Search { .. }, DegreeAxis::List(eps)) => count_derived_dp(space, gpus) * eps.len() as u64,
        _ => {
            let mut n = 0u64;
            for_each_layout(space, gpus, |_, eps| n += eps.len() as u64);
            n
        }
    }
}

/// (tp, pp, cp) with tp x pp x cp dividing `gpus`, counted.
fn count_derived_dp(space: &SweepSpace, gpus: u32) -> u64 {
    let divs = Divisors::new(gpus);
    let of_gpus = &divs.of_gpus;
    let (tps, cps) = (divs.values(&space.tp), divs.values(&space.cp));
    // For each divisor m of the GPU count (by position), how many pp values divide it.
    let pp_dividing: Vec<u64> = match &space.pp {
        DegreeAxis::Search { max } => of_gpus
            .iter()
            .map(|&m| {
                of_gpus.iter().take_while(|&&d| d <= (*max).min(m)).filter(|&&d| m.is_multiple_of(d)).count() as u64
            })
            .collect(),
        DegreeAxis::List(pps) => {
            of_gpus.iter().map(|&m| pps.iter().filter(|&&p| p > 0 && m.is_multiple_of(p)).count() as u64).collect()
        }
    };
    let mut n = 0u64;
    for &tp in &tps {
        for &cp in &cps {
            let product = tp as u64 * cp as u64;
            if product == 0 || !(gpus as u64).is_multiple_of(product) {
                continue;
            }
            let rest = (gpus as u64 / product) as u32;
            if let Ok(i) = of_gpus.binary_search(&rest) {
                n += pp_dividing[i];
            }
        }
    }
    n
}

/// Schedule choices per layout: vpp x recompute x ZeRO x overlap.
pub(crate) fn inner_combinations(space: &SweepSpace) -> u64 {
    [space.vpp.len(), space.recompute.len(), space.zero.len(), space.overlap.len()]
        .iter()
        .fold(1u64, |n, &len| n.saturating_mul(len as u64))
}

/// Tasks per layout: micro-batch x sequence parallelism.
pub(crate) fn outer_combinations(space: &SweepSpace) -> u64 {
    (space.micro_batch.len() as u64).saturating_mul(space.sequence_parallel.len() as u64)
}

/// Cluster designs per GPU count: (GPU, scale-up domain) pairs x fabrics x topologies x precisions.
fn designs_per_count(space: &SweepSpace) -> u64 {
    let pairs = space.gpus.iter().map(|g| g.scale_ups.len() as u64).sum::<u64>();
    [space.fabrics.len(), space.topologies.len(), space.precisions.len()]
        .iter()
        .fold(pairs, |n, &len| n.saturating_mul(len as u64))
}

/// Configurations in the space, exactly, without evaluating or listing any (saturating at u64::MAX).
pub fn space_size(space: &SweepSpace) -> u64 {
    let per_count: Vec<u64> = space.gpu_counts.par_iter().map(|&g| layout_count(space, g)).collect();
    let layouts = per_count.iter().fold(0u64, |n, &c| n.saturating_add(c));
    layouts
        .saturating_mul(designs_per_count(space))
        .saturating_mul(outer_combinations(space))
        .saturating_mul(inner_combinations(space))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The divisors of `n` by testing every candidate up to its square root: the definition, slowly.
    fn divisors_by_trial(n: u32) -> Vec<u32> {
        let (mut low, mut high) = (Vec::new(), Vec::new());
        let mut d = 1u64;
        while n > 0 && d * d <= n as u64 {
            if (n as u64).is_multiple_of(d) {
                low.push(d as u32);
                if d * d != n as u64 {
                    high.push((n as u64 / d) as u32);
                }
            }
            d += 1;
        }
        low.extend(high.into_iter().rev());
        low
    }

    #[test]
    fn divisors_ascending() {
        assert_eq!(divisors(12), vec![1, 2, 3, 4, 6, 12]);
        assert_eq!(divisors(16), vec![1, 2, 4, 8, 16]);
        assert_eq!(divisors(1), vec![1]);
        assert_eq!(divisors(13), vec![1, 13]);
        assert!(divisors(0).is_empty());
        // 2^31 - 1 is prime; 2^31 has 32 divisors.
        assert_eq!(divisors(2_147_483_647), vec![1, 2_147_483_647]);
        assert_eq!(divisors(1 << 31).len(), 32);
        // 720,720 = 2^4 3^2 5 7 11 13: (4 + 1)(2 + 1)(1 + 1)^4 = 240 divisors, each found once, in order.
        let d = divisors(720_720);
        assert_eq!(d.len(), 240);
        assert!(d.windows(2).all(|w| w[0] < w[1]) && d.iter().all(|x| 720_720 % x == 0));
        // Two primes above sqrt(2^31) (65,521 and 65,519 are the largest below 2^16): their product is above
        // 2^31, and neither factor is found by primes up to 46,341 alone.
        assert_eq!(divisors(65_521 * 65_519), vec![1, 65_519, 65_521, 65_521 * 65_519]);
        assert_eq!(divisors(u32::MAX), divisors_by_trial(u32::MAX));
    }

    #[test]
    fn divisors_of_every_small_number_are_those_of_the_definition() {
        for n in 0..=5_000u32 {
            let scanned: Vec<u32> = (1..=n).filter(|d| n.is_multiple_of(*d)).collect();
            assert_eq!(divisors(n), scanned, "{n}");
        }
    }

    proptest! {
        #[test]
        fn divisors_match_trial_division(n in any::<u32>()) {
            prop_assert_eq!(divisors(n), divisors_by_trial(n));
        }

        #[test]
        fn divisors_of_products_of_small_factors_match_trial_division(
            twos in 0u32..=20, threes in 0u32..=8, p in prop::sample::select(vec![1u32, 5, 7, 11, 13, 65_521])
        ) {
            // Highly composite counts (many divisors, repeated primes), the GPU counts that matter most.
            if let Some(n) = 2u32.checked_pow(twos).and_then(|a| a.checked_mul(3u32.pow(threes))).and_then(|a| a.checked_mul(p)) {
                prop_assert_eq!(divisors(n), divisors_by_trial(n));
            }
        }
    }
}
