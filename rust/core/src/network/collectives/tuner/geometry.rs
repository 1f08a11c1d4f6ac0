//! Point in polygon as aws-ofi-nccl's region tuner decides it (src/tuner/nccl_ofi_regions.cpp `intersect`,
//! `distance`, `is_inside_region`): a point on an edge is inside; otherwise a ray to a point beyond the far corner
//! crosses the polygon's edges an odd number of times.

use super::{pt, Point, EPS, MAX_RANKS, MAX_SIZE};

fn sub(a: Point, b: Point) -> Point {
    (a.0 - b.0, a.1 - b.1)
}

fn cross(a: Point, b: Point) -> f64 {
    a.0 * b.1 - a.1 * b.0
}

/// Whether segment x0-x1 crosses segment y0-y1: 1 crosses, -1 does not, 0 parallel or at an end of y0-y1; and
/// the crossing point on the line through y0-y1.
fn intersect(x0: Point, x1: Point, y0: Point, y1: Point) -> (i32, Point) {
    let (dx, dy) = (sub(x1, x0), sub(y1, y0));
    let d = cross(dy, dx);
    if d.abs() < EPS {
        return (0, (f64::NAN, f64::NAN));
    }
    let a = (cross(x0, dx) - cross(y0, dx)) / d;
    let sect = (y0.0 + a * dy.0, y0.1 + a * dy.1);
    if !(-EPS..=1.0 + EPS).contains(&a) {
        return (-1, sect);
    }
    if !(EPS..=1.0 - EPS).contains(&a) {
        return (0, sect);
    }
    let b = (cross(x0, dy) - cross(y0, dy)) / d;
    (if (0.0..=1.0).contains(&b) { 1 } else { -1 }, sect)
}

/// Distance from `x` to the segment y0-y1 along its normal; infinite when the foot falls outside the segment.
fn distance(x: Point, y0: Point, y1: Point) -> f64 {
    let dy = sub(y1, y0);
    let x1 = (x.0 + dy.1, x.1 - dy.0);
    let (r, s) = intersect(x, x1, y0, y1);
    if r == -1 {
        return f64::INFINITY;
    }
    let s = sub(s, x);
    (s.0 * s.0 + s.1 * s.1).sqrt()
}

/// Whether `p` lies inside the polygon or on its edge.
pub(super) fn inside(p: Point, vertices: &[Point]) -> bool {
    let n = vertices.len();
    let edges = || (0..n).map(move |i| (vertices[i], vertices[(i + 1) % n]));
    if edges().any(|(a, b)| distance(p, a, b) < EPS) {
        return true;
    }
    let (lo_x, hi_x) = vertices.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| (l.min(v.0), h.max(v.0)));
    let (lo_y, hi_y) = vertices.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| (l.min(v.1), h.max(v.1)));
    if p.0 < lo_x || p.0 > hi_x || p.1 < lo_y || p.1 > hi_y {
        return false;
    }
    let far = pt(2.0 * MAX_SIZE, 2.0 * MAX_RANKS);
    edges().filter(|&(a, b)| intersect(p, far, a, b).0 == 1).count() % 2 == 1
}
