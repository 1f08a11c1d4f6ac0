//! Fused causal attention's rate: a GPU's measured table by heads per GPU and sequence length
//! (`hardware::AttentionTable`), read between its cells.
//!
//! A query tile's fixed costs (softmax rescaling, the pipeline's prologue) are spread over the keys it visits, so
//! short sequences run slower; few heads x sequences give few tiles to fill the GPU's SMs, and the causal mask
//! leaves the longest tiles last, so few heads run slower too (data/measurements/h200-measure-grid.json: 0.41 of
//! the peak at 128 heads and 2,048 tokens, 0.55 at 32,768; 0.37 at 4 heads and 8,192 tokens, 0.51 at 64).

use crate::hardware::{AttentionTable, ATTENTION_HEADS, ATTENTION_SEQS};

/// Multi-head latent attention (unequal query-key and value widths, 192 and 128 in DeepSeek-V3) against the same
/// table: H100 `h100-measure-quick.json` MLA at 4,096 tokens, 16 / 32 / 64 / 128 heads: 0.345 / 0.388 / 0.411 /
/// 0.410 of 989 TF/s, against 0.396 / 0.454 / 0.489 / 0.503 of the H200 table at the same heads and length
/// (ratios 0.87, 0.85, 0.84, 0.82; the median, 0.85) [measured].
pub const MLA_ATTENTION_FACTOR: f64 = 0.85;

/// Where `x` falls on `grid`, in logarithms: the cell's first index and the weight of the next, clamped to the
/// grid's ends (beyond them the nearest cell holds). Both grids double from cell to cell (a test holds it), so the
/// position in logarithms is log2(x / first cell): one logarithm per lookup, not four.
fn bracket(grid: &[f64], x: f64) -> (usize, f64) {
    let last = grid.len() - 1;
    let position = (x / grid[0]).log2().clamp(0.0, last as f64);
    let i = (position.floor() as usize).min(last - 1);
    (i, position - i as f64)
}

/// The table's fraction of the peak at `heads` heads per GPU x sequences per micro-batch and `seq` tokens:
/// bilinear in the logarithms of both, clamped to the table's edges.
pub fn attention_fraction(table: &AttentionTable, heads: f64, seq: f64) -> f64 {
    let (i, u) = bracket(&ATTENTION_HEADS, heads);
    let (j, v) = bracket(&ATTENTION_SEQS, seq);
    let along = |row: &[f64; 6]| row[j] + (row[j + 1] - row[j]) * v;
    along(&table[i]) + (along(&table[i + 1]) - along(&table[i])) * u
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp() -> AttentionTable {
        // Row r, column c: 0.1 + 0.05 r + 0.01 c.
        std::array::from_fn(|r| std::array::from_fn(|c| 0.1 + 0.05 * r as f64 + 0.01 * c as f64))
    }

    #[test]
    fn cells_are_read_exactly_and_between_them_in_logarithms() {
        let t = ramp();
        // 32 heads is row 4, 8,192 tokens column 3: 0.1 + 0.2 + 0.03.
        assert!((attention_fraction(&t, 32.0, 8192.0) - 0.33).abs() < 1e-12);
        // 45.25 heads = sqrt(32 x 64): half way in logarithms between rows 4 and 5 (+0.025).
        assert!((attention_fraction(&t, (32.0f64 * 64.0).sqrt(), 8192.0) - 0.355).abs() < 1e-12);
        // 11,585 tokens = sqrt(8,192 x 16,384): half way between columns 3 and 4 (+0.005).
        assert!((attention_fraction(&t, 32.0, (8192.0f64 * 16384.0).sqrt()) - 0.335).abs() < 1e-12);
    }

    #[test]
    fn the_grids_double_from_cell_to_cell() {
        for grid in [&ATTENTION_HEADS[..], &ATTENTION_SEQS[..]] {
            assert!(grid.windows(2).all(|w| w[1] == 2.0 * w[0]), "{grid:?}");
        }
    }

    #[test]
    fn beyond_the_table_the_edge_holds() {
        let t = ramp();
        assert_eq!(attention_fraction(&t, 1.0, 512.0), t[0][0]);
        assert_eq!(attention_fraction(&t, 1024.0, 131072.0), t[6][5]);
        assert_eq!(attention_fraction(&t, 128.0, 32768.0), t[6][5]);
    }
}
