//! aws-ofi-nccl's p5/p5e regions (src/tuner/nccl_ofi_regions.cpp @228fa0ea, `region_init_internal_p5_p5e`), in
//! the file's order (the first region holding a point wins): all-reduce at 8, 2 and 1 ranks a node, all-gather and
//! reduce-scatter at 1; every vertex (message bytes, ranks) as written there.

use super::Algorithm::{NvlsTree, Ring, Tree};
use super::{ext, pt, pts, region, Region, Tables, MAX_RANKS, MAX_SIZE};
use crate::network::nccl::Protocol::{Ll128, Simple};

const ALL_REDUCE_8_TREE: [(f64, f64); 10] = [
    (0.0, 16.0),
    (31457280.0, 16.0),
    (37748736.0, 32.0),
    (117440512.0, 64.0),
    (301989888.0, 128.0),
    (301989888.0, 256.0),
    (335544320.0, 512.0),
    (536870912.0, 1024.0),
    (402653184.0, 2048.0),
    (402653184.0, 4096.0),
];
const ALL_REDUCE_8_RING_LL128: [(f64, f64); 11] = [
    (31457280.0, 17.0),
    (1073741824.0, 17.0),
    (2147483648.0, 64.0),
    (2147483648.0, 128.0),
    (1342177280.0, 160.0),
    (2147483648.0, 256.0),
    (1074790400.0, 256.0),
    (444596224.0, 160.0),
    (301989888.0, 128.0),
    (117440512.0, 64.0),
    (37748736.0, 32.0),
];
const ALL_REDUCE_8_NVLS_HEAD: [(f64, f64); 4] =
    [(2147483648.0, 128.0), (6442450944.0, 128.0), (8053063680.0, 160.0), (9663676416.0, 192.0)];
const ALL_REDUCE_8_NVLS_TAIL: [(f64, f64); 11] = [
    (402653184.0, 4096.0),
    (402653184.0, 2048.0),
    (536870912.0, 1024.0),
    (335544320.0, 512.0),
    (301989888.0, 256.0),
    (310378496.0, 160.0),
    (444596224.0, 160.0),
    (1074790400.0, 256.0),
    (2684354560.0, 256.0),
    (2147483648.0, 224.0),
    (1342177280.0, 160.0),
];
const ALL_REDUCE_8_RING_TAIL: [(f64, f64); 4] =
    [(9663676416.0, 192.0), (8053063680.0, 160.0), (2684354560.0, 64.0), (1610612736.0, 32.0)];
const ALL_REDUCE_2_TREE: [(f64, f64); 9] = [
    (0.0, 4.0),
    (1314816.0, 4.0),
    (1051648.0, 8.0),
    (1051648.0, 12.0),
    (2367488.0, 16.0),
    (5525504.0, 32.0),
    (9473024.0, 64.0),
    (88160256.0, 128.0),
    (178163712.0, 256.0),
];
const ALL_REDUCE_2_RING_LL128: [(f64, f64); 14] = [
    (1314816.0, 4.0),
    (19736576.0, 4.0),
    (41842688.0, 8.0),
    (296747008.0, 64.0),
    (257114112.0, 128.0),
    (269484032.0, 256.0),
    (178163712.0, 256.0),
    (88160256.0, 128.0),
    (9473024.0, 64.0),
    (5525504.0, 32.0),
    (2367488.0, 16.0),
    (1051648.0, 12.0),
    (1051648.0, 8.0),
    (1314816.0, 4.0),
];
const ALL_REDUCE_2_NVLS: [(f64, f64); 6] = [
    (19736576.0, 4.0),
    (81844224.0, 4.0),
    (275775488.0, 8.0),
    (275775488.0, 48.0),
    (296747008.0, 64.0),
    (41842688.0, 8.0),
];
const ALL_REDUCE_2_RING_SIMPLE: [(f64, f64); 10] = [
    (81844224.0, 5.0),
    (MAX_SIZE, 5.0),
    (MAX_SIZE, 32.0),
    (1073741824.0, 40.0),
    (1073741824.0, 128.0),
    (787480576.0, 128.0),
    (296747008.0, 64.0),
    (275775488.0, 48.0),
    (275775488.0, 8.0),
    (81844224.0, 5.0),
];
const ALL_REDUCE_2_TREE_SIMPLE_HEAD: [(f64, f64); 3] =
    [(296747008.0, 64.0), (787480576.0, 128.0), (1073741824.0, 256.0)];
const ALL_REDUCE_2_NVLS_TAIL: [(f64, f64); 5] =
    [(1073741824.0, 256.0), (787480576.0, 128.0), (1073741824.0, 128.0), (1073741824.0, 40.0), (MAX_SIZE, 32.0)];
const ALL_REDUCE_1_TREE: [(f64, f64); 4] = [(0.0, 16.0), (2367488.0, 16.0), (9999360.0, 64.0), (119477248.0, 128.0)];
const ALL_REDUCE_1_RING_TAIL: [(f64, f64); 4] =
    [(119477248.0, 128.0), (9999360.0, 64.0), (2367488.0, 16.0), (0.0, 16.0)];

pub(super) fn tables() -> Tables {
    Tables {
        all_reduce_8: all_reduce_8(),
        all_reduce_2: all_reduce_2(),
        all_reduce_1: all_reduce_1(),
        all_gather_1: vec![ring_simple_1((4194304.0, 2.0), (8589934592.0, 2048.0))],
        reduce_scatter_1: vec![ring_simple_1((8388608.0, 2.0), (4294967296.0, 1024.0))],
    }
}

fn all_reduce_8() -> Vec<Region> {
    let tree_ll128 = ext((402653184.0, 2048.0), (402653184.0, 4096.0));
    let nvls_tree = ext((8053063680.0, 160.0), (9663676416.0, 192.0));
    vec![
        region(Tree, Ll128, [pts(&ALL_REDUCE_8_TREE), vec![tree_ll128, (0.0, tree_ll128.1)]].concat()),
        region(NvlsTree, Simple, pts(&[(31457281.0, 16.0), (MAX_SIZE, 16.0), (31457281.0, 16.0)])),
        region(Ring, Ll128, pts(&ALL_REDUCE_8_RING_LL128)),
        region(
            NvlsTree,
            Simple,
            [pts(&ALL_REDUCE_8_NVLS_HEAD), vec![nvls_tree, tree_ll128], pts(&ALL_REDUCE_8_NVLS_TAIL)].concat(),
        ),
        region(
            Ring,
            Simple,
            [pts(&[(1073741824.0, 17.0)]), vec![(nvls_tree.0, 17f64.log2()), nvls_tree], pts(&ALL_REDUCE_8_RING_TAIL)]
                .concat(),
        ),
    ]
}

fn all_reduce_2() -> Vec<Region> {
    let tree_ll128 = ext((88160256.0, 128.0), (178163712.0, 256.0));
    let tree_simple_1 = ext((787480576.0, 128.0), (1073741824.0, 256.0));
    let tree_simple_2 = ext((257114112.0, 128.0), (269484032.0, 256.0));
    vec![
        region(Tree, Ll128, [pts(&ALL_REDUCE_2_TREE), vec![tree_ll128, (0.0, tree_ll128.1)]].concat()),
        region(Ring, Ll128, pts(&ALL_REDUCE_2_RING_LL128)),
        region(NvlsTree, Simple, pts(&ALL_REDUCE_2_NVLS)),
        region(Tree, Ll128, pts(&[(81844224.0, 4.0), (269484032.0, 4.0), (81844224.0, 4.0)])),
        region(Tree, Simple, pts(&[(269484032.0, 4.0), (MAX_SIZE, 4.0), (269484032.0, 4.0)])),
        region(Ring, Simple, pts(&ALL_REDUCE_2_RING_SIMPLE)),
        region(
            Tree,
            Simple,
            [
                pts(&ALL_REDUCE_2_TREE_SIMPLE_HEAD),
                vec![tree_simple_1, tree_simple_2],
                pts(&[(269484032.0, 256.0), (257114112.0, 128.0)]),
            ]
            .concat(),
        ),
        region(NvlsTree, Simple, [vec![tree_simple_1], pts(&ALL_REDUCE_2_NVLS_TAIL)].concat()),
    ]
}

fn all_reduce_1() -> Vec<Region> {
    let tree_ll128 = ext((9999360.0, 64.0), (119477248.0, 128.0));
    let ring_ll128 = ext((4736000.0, 2.0), (269484032.0, 128.0));
    vec![
        region(Tree, Ll128, [pts(&ALL_REDUCE_1_TREE), vec![tree_ll128, pt(0.0, MAX_RANKS)]].concat()),
        region(
            Ring,
            Ll128,
            [
                pts(&[(0.0, 2.0), (4736000.0, 2.0), (269484032.0, 128.0)]),
                vec![ring_ll128, tree_ll128],
                pts(&ALL_REDUCE_1_RING_TAIL),
            ]
            .concat(),
        ),
        region(
            Ring,
            Simple,
            [pts(&[(4736000.0, 2.0), (MAX_SIZE, 2.0)]), vec![ring_ll128], pts(&[(269484032.0, 128.0)])].concat(),
        ),
    ]
}

/// The one region of the all-gather and reduce-scatter tables at one rank a node: Ring Simple above the line
/// through `a` and `b` (NCCL's choice below it).
fn ring_simple_1(a: (f64, f64), b: (f64, f64)) -> Region {
    region(Ring, Simple, [pts(&[a, (MAX_SIZE, 2.0)]), vec![ext(a, b)], pts(&[b])].concat())
}
