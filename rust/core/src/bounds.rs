//! The limits of a number, one vocabulary for the parameter table (`crate::inputs`) and the catalog figure table
//! (`crate::figures`), named as pydantic's `Field` names them so that the Python layer checks the same limits.

/// Bounds of a number (of a count, a real number, a ratio, a level), as pydantic's `Field` names them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    pub ge: Option<f64>,
    pub gt: Option<f64>,
    pub le: Option<f64>,
    pub lt: Option<f64>,
}

impl Bounds {
    pub const NONE: Bounds = Bounds { ge: None, gt: None, le: None, lt: None };

    /// Is `v` within the bounds?
    pub fn contain(&self, v: f64) -> bool {
        self.ge.is_none_or(|b| v >= b)
            && self.gt.is_none_or(|b| v > b)
            && self.le.is_none_or(|b| v <= b)
            && self.lt.is_none_or(|b| v < b)
    }
}

/// The largest count the Python layer passes on (the core's counts are 32-bit): 2^31.
pub const MAX_COUNT: f64 = 2_147_483_648.0;
