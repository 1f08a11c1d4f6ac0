//! The algorithm and protocol a tuner plugin picks in place of NCCL's cost model: aws-ofi-nccl's region tuner on
//! p5 and p5e (H100 / H200 with 32 x 100G EFA), which AWS's benchmark jobs load with NCCL_TUNER_PLUGIN.
//!
//! The tuner maps (message bytes, ranks) to a fixed algorithm and protocol through polygons drawn in log2 space from
//! AWS's own measurements, one table per collective and ranks per node; a point in no polygon, a communicator of two
//! nodes or fewer, or a shape without a table falls back to NCCL's choice. Tables and geometry as in
//! aws/aws-ofi-nccl src/tuner/nccl_ofi_regions.cpp (commit 228fa0ea, `region_init_internal_p5_p5e`,
//! `is_inside_region`, `extend_region`, `region_get_coll_info_internal_v3`; the p5 all-reduce tables are the same
//! in the older src/tuner/nccl_ofi_tuner.c).

use std::sync::OnceLock;

use super::Collective;
use crate::network::nccl::Protocol;

/// An algorithm a tuner can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    Ring,
    Tree,
    NvlsTree,
}

/// What the tuner picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    pub algorithm: Algorithm,
    pub protocol: Protocol,
}

/// The GPUs of p5 and p5e (H100, H200): compute capability 9. The plugin runs other tables on p5en, p6 and p6-b300.
pub const P5_COMPUTE_CAPABILITY: u32 = 9;

/// The tuner's far corner: TUNER_MAX_SIZE 100 GiB, TUNER_MAX_RANKS 2^20 (include/tuner/nccl_ofi_tuner_region.h).
const MAX_SIZE: f64 = 100.0 * 1024.0 * 1024.0 * 1024.0;
const MAX_RANKS: f64 = 1024.0 * 1024.0;
const EPS: f64 = 1e-10;

/// A point in the tuner's log2 space: (log2 bytes, log2 ranks); 0 bytes sits at the left edge, log2 1 = 0.
type Point = (f64, f64);

fn pt(bytes: f64, ranks: f64) -> Point {
    (bytes.max(1.0).log2(), ranks.log2())
}

/// `extend_region`: the point where the line through `a` and `b` leaves the box below the far corner.
fn ext(a: (f64, f64), b: (f64, f64)) -> Point {
    let (a, b, z) = (pt(a.0, a.1), pt(b.0, b.1), pt(MAX_SIZE, MAX_RANKS));
    if a.0 == b.0 {
        return (a.0, z.1);
    }
    if a.1 == b.1 {
        return (z.0, a.1);
    }
    let m = (a.1 - b.1) / (a.0 - b.0);
    let c = b.1 - m * b.0;
    let projected = m * z.0 + c;
    if projected < z.1 {
        (z.0, projected)
    } else {
        ((z.1 - c) / m, z.1)
    }
}

struct Region {
    choice: Choice,
    vertices: Vec<Point>,
}

fn region(algorithm: Algorithm, protocol: Protocol, vertices: Vec<Point>) -> Region {
    Region { choice: Choice { algorithm, protocol }, vertices }
}

fn pts(raw: &[(f64, f64)]) -> Vec<Point> {
    raw.iter().map(|&(b, r)| pt(b, r)).collect()
}

mod geometry;
mod p5;

use geometry::inside;

/// The p5/p5e tables, built once.
struct Tables {
    all_reduce_8: Vec<Region>,
    all_reduce_2: Vec<Region>,
    all_reduce_1: Vec<Region>,
    all_gather_1: Vec<Region>,
    reduce_scatter_1: Vec<Region>,
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(p5::tables)
}

/// The p5/p5e tuner's choice for `op` of `message_bytes` over `ranks` ranks on `nodes` nodes, or None where it
/// leaves the choice to NCCL. `nvls`: whether NVLSTree can run (the tuner skips its regions otherwise).
pub fn aws_ofi_p5(op: Collective, message_bytes: f64, ranks: u32, nodes: u32, nvls: bool) -> Option<Choice> {
    if nodes <= 2 || !ranks.is_multiple_of(nodes) || message_bytes > MAX_SIZE || ranks as f64 > MAX_RANKS {
        return None;
    }
    let t = tables();
    let table = match (op, ranks / nodes) {
        (Collective::AllReduce, 8) => &t.all_reduce_8,
        (Collective::AllReduce, 2) => &t.all_reduce_2,
        (Collective::AllReduce, 1) => &t.all_reduce_1,
        (Collective::AllGather, 1) => &t.all_gather_1,
        (Collective::ReduceScatter, 1) => &t.reduce_scatter_1,
        _ => return None,
    };
    let p = pt(message_bytes, ranks as f64);
    table
        .iter()
        .filter(|r| nvls || r.choice.algorithm != Algorithm::NvlsTree)
        .find(|r| inside(p, &r.vertices))
        .map(|r| r.choice)
}

#[cfg(test)]
mod tests {
    use super::Algorithm::{NvlsTree, Ring, Tree};
    use super::*;
    use crate::network::nccl::Protocol::{Ll128, Simple};

    const MIB: f64 = 1024.0 * 1024.0;

    fn all_reduce_8(bytes: f64, nodes: u32) -> Option<Choice> {
        aws_ofi_p5(Collective::AllReduce, bytes, 8 * nodes, nodes, true)
    }

    #[test]
    fn the_p5_table_picks_by_size_and_ranks_as_its_polygons_draw() {
        // 8 ranks a node. Tree LL128 up to the edge through (288 MiB, 128) and (288 MiB, 256): 32 and 256 MiB at 32
        // nodes. Ring LL128 from there to (2 GiB, 128) at 16 nodes: 512 MiB. Ring Simple right of (1.5 GiB, 32):
        // 8 GiB at 4 nodes. At 128 ranks NVLSTree holds 2-6 GiB (its lower edge), and Ring Simple starts where the
        // edge from (2.5 GiB, 64) to (7.5 GiB, 160) crosses 128 ranks, 2^32.52 B: 4 GiB NVLSTree, 8 GiB Ring Simple.
        assert_eq!(all_reduce_8(32.0 * MIB, 32), Some(Choice { algorithm: Tree, protocol: Ll128 }));
        assert_eq!(all_reduce_8(256.0 * MIB, 32), Some(Choice { algorithm: Tree, protocol: Ll128 }));
        assert_eq!(all_reduce_8(512.0 * MIB, 16), Some(Choice { algorithm: Ring, protocol: Ll128 }));
        assert_eq!(all_reduce_8(8192.0 * MIB, 4), Some(Choice { algorithm: Ring, protocol: Simple }));
        assert_eq!(all_reduce_8(4096.0 * MIB, 16), Some(Choice { algorithm: NvlsTree, protocol: Simple }));
        assert_eq!(all_reduce_8(8192.0 * MIB, 16), Some(Choice { algorithm: Ring, protocol: Simple }));
    }

    #[test]
    fn the_p5_table_leaves_the_rest_to_nccl() {
        // Two nodes or fewer, ranks a node without a table, operations without one, past the far corner.
        assert_eq!(all_reduce_8(32.0 * MIB, 2), None);
        assert_eq!(aws_ofi_p5(Collective::AllReduce, 32.0 * MIB, 16, 4, true), None);
        assert_eq!(aws_ofi_p5(Collective::AllGather, 32.0 * MIB, 256, 32, true), None);
        assert_eq!(aws_ofi_p5(Collective::AllToAll, 32.0 * MIB, 256, 32, true), None);
        assert_eq!(all_reduce_8(200.0 * 1024.0 * MIB, 32), None);
        // One rank a node: the all-gather's ring Simple region starts at 4 MiB over 2 ranks and runs up the line
        // to (8 GiB, 2,048): 1 GiB over 16 ranks is right of it, 1 MiB left.
        let ag = |bytes| aws_ofi_p5(Collective::AllGather, bytes, 16, 16, false);
        assert_eq!(ag(1024.0 * MIB), Some(Choice { algorithm: Ring, protocol: Simple }));
        assert_eq!(ag(MIB), None);
    }

    #[test]
    fn without_nvlink_sharp_the_nvls_tree_regions_are_skipped() {
        let without = aws_ofi_p5(Collective::AllReduce, 4096.0 * MIB, 128, 16, false);
        assert_ne!(without.map(|c| c.algorithm), Some(NvlsTree));
    }

    #[test]
    fn the_tuner_runs_its_pick_which_is_never_faster_than_the_fastest_algorithm() {
        use crate::examples;
        use crate::hardware::{CollectiveTuner, FabricSpec};
        use crate::network::collectives::Interconnect;
        use crate::network::placement::GroupPlacement;
        use crate::network::topology::Network;
        // p5-like: NVLink4 with NVLink SHARP, 4 x 100G a GPU; 256 GPUs on 32 nodes.
        let su = examples::nvlink4();
        let nccl = FabricSpec { link_bytes_per_s: 12.5e9, links_per_gpu: 4, ..examples::ib_ndr() };
        let aws = FabricSpec { collective_tuner: CollectiveTuner::AwsOfiP5, ..nccl.clone() };
        let topo = examples::rail_fat_tree();
        for (gpus, bytes) in [(256, 32.0 * MIB), (256, 512.0 * MIB), (128, 8192.0 * MIB), (16, 32.0 * MIB)] {
            let g = GroupPlacement::new(gpus, 1, 8);
            let time = |f: &FabricSpec| {
                let net = Network::new(f, &topo, gpus, 8);
                let ic = Interconnect { scale_up: &su, fabric: f, network: &net };
                let c = ic.call(Collective::AllReduce, bytes, &g);
                let tree_ll128 = ic.tree(&c).unwrap().time_s(Ll128, bytes);
                (ic.collective_time_s(Collective::AllReduce, bytes, &g), tree_ll128)
            };
            let ((fastest, _), (tuned, tree_ll128)) = (time(&nccl), time(&aws));
            assert!(tuned >= fastest, "{gpus} GPUs, {bytes} B: {tuned} < {fastest}");
            if gpus == 256 && bytes == 32.0 * MIB {
                assert_eq!(tuned, tree_ll128);
                assert!(tuned > 1.5 * fastest, "NVLSTree would run in {fastest} s");
            }
            if gpus == 16 {
                assert_eq!(tuned, fastest, "two nodes: NCCL's choice");
            }
        }
        // On Blackwell the plugin runs the p6 tables, not these: NCCL's choice stands.
        let blackwell = crate::hardware::ScaleUpSpec { compute_capability: 10, ..su.clone() };
        let g = GroupPlacement::new(256, 1, 8);
        let net = Network::new(&aws, &topo, 256, 8);
        let ic = Interconnect { scale_up: &blackwell, fabric: &aws, network: &net };
        let mut plain = ic.clone();
        plain.fabric = &nccl;
        let t = |i: &Interconnect| i.collective_time_s(Collective::AllReduce, 32.0 * MIB, &g);
        assert_eq!(t(&ic), t(&plain));
    }

    #[test]
    fn a_point_on_an_edge_is_inside_and_the_ray_decides_the_rest() {
        let square = pts(&[(2.0, 2.0), (8.0, 2.0), (8.0, 8.0), (2.0, 8.0)]);
        assert!(geometry::inside(pt(4.0, 4.0), &square));
        assert!(geometry::inside(pt(8.0, 4.0), &square));
        assert!(geometry::inside(pt(2.0, 2.0), &square));
        assert!(!geometry::inside(pt(16.0, 4.0), &square));
        assert!(!geometry::inside(pt(4.0, 1.0), &square));
        // A concave L: (3, 5) lies in the notch, outside.
        let l = pts(&[(1.0, 1.0), (16.0, 1.0), (16.0, 4.0), (4.0, 4.0), (4.0, 16.0), (1.0, 16.0)]);
        assert!(geometry::inside(pt(2.0, 8.0), &l));
        assert!(!geometry::inside(pt(8.0, 8.0), &l));
    }

    #[test]
    fn extending_a_region_follows_its_edge_to_the_far_box() {
        // A vertical edge runs to the top; a 45-degree edge through (7.5 GiB, 160) and (9 GiB, 192) meets the right
        // side, 100 GiB, at 160 x 100 / 7.5 = 2,133 ranks.
        let up = ext((402653184.0, 2048.0), (402653184.0, 4096.0));
        assert_eq!(up, pt(402653184.0, MAX_RANKS));
        let side = ext((8053063680.0, 160.0), (9663676416.0, 192.0));
        assert!((side.0 - MAX_SIZE.log2()).abs() < 1e-12);
        assert!((side.1.exp2() - 160.0 * 100.0 / 7.5).abs() < 1e-6, "{}", side.1.exp2());
    }
}
