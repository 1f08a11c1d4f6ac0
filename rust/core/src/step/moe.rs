//! Expert-parallel token dispatch and combine: how long one all-to-all of routed tokens takes over the
//! expert-parallel group, by dispatcher.
//!
//! - `alltoall` (NCCL all-to-all, Megatron's alltoall dispatcher): every routed copy travels on its own; copies
//!   for experts on another scale-up domain cross the network once each.
//! - `flex` (DeepEP, HybridEP): hierarchical. A token crosses the network once per destination domain, by RDMA
//!   to the GPU of the same rail on that domain, which forwards it over NVLink to the GPUs holding its experts;
//!   the two legs are pipelined, so the slower one sets the time (DeepSeek-V3 report, arXiv 2412.19437,
//!   Sec. 3.2.2: "first transmitted via IB to the GPUs with the same in-node index on its target nodes ...
//!   instantly forwarded via NVLink"; deepseek-ai/DeepEP README, normal kernels). Node-limited routing caps the
//!   domains a token reaches (DeepSeek-V3 Sec. 2.1.2: at most M = 4 nodes).
//! - `allgather` (Megatron's allgather dispatcher): the EP group all-gathers every rank's tokens and each rank
//!   keeps its experts' share; combine is the matching reduce-scatter.
//!
//! Combine moves the same volumes back (DeepEP reduces inside the domain before the network leg), so one
//! function prices both. The busiest rank receives `imbalance` times the mean and sets the pace.

use crate::network::collectives::{Collective, Interconnect, COLLECTIVE_BASE_LATENCY_S};
use crate::network::placement::GroupPlacement;
use crate::network::topology::Traffic;
use crate::step::parallelism::Dispatcher;

/// One dispatch (or combine) of routed tokens.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dispatch {
    /// Tokens each rank routes.
    pub tokens_per_rank: f64,
    /// Experts each token visits.
    pub top_k: f64,
    /// Bytes of one token's hidden state.
    pub token_bytes: f64,
    /// Domains a token may reach (node-limited routing); 0 = no limit.
    pub node_limit: u32,
    /// Busiest rank's received tokens over the mean.
    pub imbalance: f64,
}

impl Dispatch {
    /// Expected distinct scale-up domains among a token's top_k experts when they are spread uniformly over
    /// `domains` domains: D (1 - (1 - 1/D)^k) (occupancy of k draws), capped by node-limited routing.
    pub fn domains_per_token(&self, domains: f64) -> f64 {
        let reached = domains * (1.0 - (1.0 - 1.0 / domains).powf(self.top_k));
        if self.node_limit > 0 {
            reached.min(self.node_limit as f64)
        } else {
            reached
        }
    }
}

/// Reorders of the routed copies around a MoE layer's experts in one forward pass, each reading and writing every
/// routed copy the rank holds: the permutation into expert order and its inverse after the experts. Megatron-Core's
/// alltoall dispatcher reorders twice more when a rank holds more than one expert: after the all-to-all it sorts
/// the received chunks by local expert, and unsorts them before the combine (megatron/core/transformer/moe/
/// token_dispatcher.py, MoEAlltoAllTokenDispatcher.dispatch_postprocess "Permutation 2: Sort tokens by local
/// expert" with sort_chunks_by_idxs, and combine_preprocess "Unpermutation 2"; a transpose-and-copy when it pads
/// to capacity); torchtitan's ExpertParallel permutes after its all-to-all and unpermutes before the combine the
/// same way (torchtitan/distributed/expert_parallel.py _token_dispatch, _token_combine). The flex (DeepEP,
/// HybridEP) and allgather dispatchers permute the received tokens once (MoEFlexTokenDispatcher
/// dispatch_postprocess / combine_preprocess).
pub fn token_reorders(dispatcher: Dispatcher, local_experts: f64) -> f64 {
    if dispatcher == Dispatcher::AllToAll && local_experts > 1.0 {
        4.0
    } else {
        2.0
    }
}

/// Time of one dispatch (or combine) over the expert-parallel group `g`.
pub fn dispatch_time_s(links: &Interconnect, d: &Dispatch, g: &GroupPlacement, dispatcher: Dispatcher) -> f64 {
    if g.size <= 1 || d.tokens_per_rank <= 0.0 {
        return 0.0;
    }
    let copies_bytes = d.tokens_per_rank * d.top_k * d.token_bytes * d.imbalance;
    match dispatcher {
        Dispatcher::AllToAll => links.all_to_all_time_s(copies_bytes, g),
        Dispatcher::AllGather => {
            // The gathered array holds every rank's tokens.
            let gathered = d.tokens_per_rank * g.size as f64 * d.token_bytes;
            links.collective_time_s(Collective::AllGather, gathered, g)
        }
        Dispatcher::Flex => hierarchical_time_s(links, d, g),
    }
}

/// DeepEP-style dispatch: the network leg carries one copy per remote destination domain, the NVLink leg the
/// copies for this domain's other GPUs plus the forwarding of what arrived over the network.
fn hierarchical_time_s(links: &Interconnect, d: &Dispatch, g: &GroupPlacement) -> f64 {
    let n = g.size as f64;
    let p = g.per_domain as f64;
    let token = d.tokens_per_rank * d.token_bytes * d.imbalance;
    let local_copies = d.top_k * (p - 1.0) / n;
    if g.domains <= 1 {
        let nvlink_bytes = token * local_copies;
        return COLLECTIVE_BASE_LATENCY_S + links.scale_up.step_latency_s + nvlink_bytes / links.scale_up_bytes_per_s();
    }
    let domains = g.domains as f64;
    let remote_domains = d.domains_per_token(domains) * (domains - 1.0) / domains;
    let network_bytes = token * remote_domains;
    // Copies bound for remote domains that land on a GPU other than the rail-matched receiver are forwarded.
    let forwarded_copies = d.top_k * (n - p) / n * (p - 1.0) / p;
    let nvlink_bytes = token * (local_copies + forwarded_copies);
    let network_s = network_bytes / links.network_bytes_per_s(g, Traffic::AllToAll);
    let nvlink_s = nvlink_bytes / links.scale_up_bytes_per_s();
    COLLECTIVE_BASE_LATENCY_S
        + links.scale_up.step_latency_s
        + links.network_latency_s(g, Traffic::AllToAll)
        + network_s.max(nvlink_s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::examples::{deepseek_v3, h100, mixtral_8x7b};
    use crate::network::collectives::tests::{ethernet_100g, round_nvlink4};
    use crate::network::topology::Network;
    use crate::software::FrameworkSpec;
    use crate::step::compute::{moe_layer_forward, Shard, Throughput};
    use crate::step::parallelism::{AttentionKernel, Parallelism, Precision, Training};

    fn dispatch(tokens: f64, top_k: f64) -> Dispatch {
        Dispatch { tokens_per_rank: tokens, top_k, token_bytes: 1e3, node_limit: 0, imbalance: 1.0 }
    }

    #[test]
    fn the_alltoall_dispatcher_reorders_twice_more_with_several_local_experts() {
        assert_eq!(token_reorders(Dispatcher::AllToAll, 16.0), 4.0);
        assert_eq!(token_reorders(Dispatcher::AllToAll, 1.0), 2.0);
        assert_eq!(token_reorders(Dispatcher::Flex, 16.0), 2.0);
        assert_eq!(token_reorders(Dispatcher::AllGather, 4.0), 2.0);
    }

    #[test]
    fn the_extra_reorders_cost_one_more_permutation_of_the_routed_copies() {
        // Mixtral 8x7B on one H100, EP 1 (8 local experts), 4,096 tokens, top-2, hidden 4,096: the permute and
        // unpermute move 4 x 4,096 x 2 x 4,096 x 2 bytes = 268.4 MB at 3.35 TB/s x 0.90 = 89.0 us; the alltoall
        // dispatcher's sort and unsort move as much again. With 8-way EP (one local expert) both dispatchers match.
        let tput = Throughput::new(&h100(), Precision::Bf16, AttentionKernel::Best, &FrameworkSpec::kernels_only());
        let training = Training { seq_len: 4096, ..Training::default() };
        let layer = |ep: u32, dispatcher: Dispatcher| {
            let par = Parallelism { ep, micro_batch: 1, ..Parallelism::default() };
            let shard = Shard::new(&par, &training);
            moe_layer_forward(&mixtral_8x7b(), &shard, &tput, &FrameworkSpec::kernels_only(), dispatcher)
        };
        let extra = layer(1, Dispatcher::AllToAll).elementwise_s - layer(1, Dispatcher::Flex).elementwise_s;
        assert!((extra - 268_435_456.0 / (3.35e12 * 0.90)).abs() < 1e-12, "{extra}");
        assert!((extra - 89.0e-6).abs() < 0.1e-6, "{extra}");
        assert_eq!(layer(8, Dispatcher::AllToAll), layer(8, Dispatcher::Flex));
    }

    proptest::proptest! {
        #[test]
        fn the_alltoall_dispatchers_layer_is_never_faster_than_the_flex_one(
            tokens in 256u32..32768, ep in proptest::sample::select(vec![1u32, 2, 4, 8]),
        ) {
            let tput = Throughput::new(&h100(), Precision::Fp8, AttentionKernel::Best, &FrameworkSpec::kernels_only());
            let training = Training { seq_len: tokens, ..Training::default() };
            let shard = Shard::new(&Parallelism { ep, micro_batch: 1, ..Parallelism::default() }, &training);
            let time = |d| moe_layer_forward(&deepseek_v3(), &shard, &tput, &FrameworkSpec::kernels_only(), d);
            proptest::prop_assert!(time(Dispatcher::AllToAll).total_s() >= time(Dispatcher::Flex).total_s());
        }
    }

    #[test]
    fn distinct_domains_follow_occupancy_and_the_node_limit() {
        // 8 experts of a token over 8 domains: 8 (1 - (7/8)^8) = 8 x 0.6564 = 5.25 domains; limited to 4.
        let d = dispatch(1.0, 8.0);
        assert!((d.domains_per_token(8.0) - 5.251).abs() < 1e-3, "{}", d.domains_per_token(8.0));
        assert_eq!(Dispatch { node_limit: 4, ..d }.domains_per_token(8.0), 4.0);
        // One domain: every expert is there.
        assert!((d.domains_per_token(1.0) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn deepep_sends_one_network_copy_per_remote_node() {
        // EP 64 over 8 servers of 8 GPUs, 100 Gb/s NICs at 100% (12.5 GB/s), NVLink4 450 GB/s at 82%.
        // 4096 tokens of 1 kB per rank, top-8, node limit 4: 4 domains reached, 4 x 7/8 = 3.5 remote;
        // network 4096 x 1e3 x 3.5 = 14.3 MB / 12.5 GB/s = 1.147 ms.
        // NVLink: 8 x 7/64 local + 8 x 56/64 x 7/8 forwarded = 0.875 + 6.125 = 7 copies: 28.7 MB / 369 GB/s
        // = 0.078 ms. The network leg sets the time.
        let (su, f) = (round_nvlink4(), ethernet_100g());
        let topo = crate::examples::fat_tree(1.0);
        let net = Network::new(&f, &topo, 64, 8);
        let links = Interconnect { scale_up: &su, fabric: &f, network: &net };
        let g = GroupPlacement::new(64, 1, 8);
        let d = Dispatch { node_limit: 4, ..dispatch(4096.0, 8.0) };
        let t = dispatch_time_s(&links, &d, &g, Dispatcher::Flex);
        let latency = COLLECTIVE_BASE_LATENCY_S + su.step_latency_s + links.network_latency_s(&g, Traffic::AllToAll);
        let network = 4096.0 * 1e3 * 3.5 / links.network_bytes_per_s(&g, Traffic::AllToAll);
        assert!((t - latency - network).abs() < 1e-12, "{t}");
        assert!((network - 1.147e-3).abs() < 1e-5, "{network}");
        // NCCL all-to-all sends every remote copy: 8 x 56/64 = 7 copies over the network, twice DeepEP's 3.5.
        let nccl = dispatch_time_s(&links, &d, &g, Dispatcher::AllToAll);
        assert!(nccl > 1.9 * network, "{nccl} vs {network}");
        // Imbalance 1.5: the busiest rank receives 1.5x.
        let busy = Dispatch { imbalance: 1.5, ..d };
        let tb = dispatch_time_s(&links, &busy, &g, Dispatcher::Flex);
        assert!((tb - latency - 1.5 * network).abs() < 1e-12);
    }

    #[test]
    fn inside_one_domain_only_nvlink_is_used() {
        // EP 8 on one server: 7/8 of 8 copies leave the GPU over NVLink: 4096 x 1e3 x 7 = 28.7 MB / 369 GB/s.
        let (su, f) = (round_nvlink4(), ethernet_100g());
        let topo = crate::examples::fat_tree(1.0);
        let net = Network::new(&f, &topo, 8, 8);
        let links = Interconnect { scale_up: &su, fabric: &f, network: &net };
        let g = GroupPlacement::new(8, 1, 8);
        let t = dispatch_time_s(&links, &dispatch(4096.0, 8.0), &g, Dispatcher::Flex);
        let expected = COLLECTIVE_BASE_LATENCY_S + su.step_latency_s + 4096.0 * 1e3 * 7.0 / (450e9 * 0.82);
        assert!((t - expected).abs() < 1e-12, "{t} vs {expected}");
    }
}
