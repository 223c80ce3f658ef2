//! Float buffers whose first value starts a cache line.
//!
//! Why: the training passes load and store whole 16-float units of the first layer and
//! its gradient. A `Vec<f32>` is aligned to 16 bytes, so every 64-byte unit of it crosses
//! two cache lines, and every other 32-byte half of one. On cache lines `768 → 128`
//! trained 1.17× and `768x8hm → 512` 1.37× as fast on an Intel Xeon, the same nets bit
//! for bit (docs/NNUE.md).

use bytemuck::{Pod, Zeroable};

/// 64 bytes of floats, aligned as a cache line.
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C, align(64))]
struct Line([f32; 16]);

/// `len` floats in cache lines (the last line's tail unused).
#[derive(Clone, Default)]
pub struct AlignedFloats {
    lines: Vec<Line>,
    len: usize,
}

impl AlignedFloats {
    pub fn zeroed(len: usize) -> AlignedFloats {
        AlignedFloats {
            lines: vec![Line([0.0; 16]); len.div_ceil(16)],
            len,
        }
    }

    pub fn from_slice(values: &[f32]) -> AlignedFloats {
        let mut out = AlignedFloats::zeroed(values.len());
        out.copy_from_slice(values);
        out
    }

    /// Made `values.len()` long, then `values` copied in.
    pub fn assign(&mut self, values: &[f32]) {
        self.resize(values.len());
        self.copy_from_slice(values);
    }

    /// Made `len` floats long; new values are zero.
    pub fn resize(&mut self, len: usize) {
        self.lines.resize(len.div_ceil(16), Line([0.0; 16]));
        if len > self.len {
            let old = self.len;
            self.len = len;
            self[old..].fill(0.0);
        } else {
            self.len = len;
        }
    }
}

impl std::ops::Deref for AlignedFloats {
    type Target = [f32];
    fn deref(&self) -> &[f32] {
        &bytemuck::cast_slice(&self.lines)[..self.len]
    }
}

impl std::ops::DerefMut for AlignedFloats {
    fn deref_mut(&mut self) -> &mut [f32] {
        &mut bytemuck::cast_slice_mut(&mut self.lines)[..self.len]
    }
}

impl PartialEq for AlignedFloats {
    fn eq(&self, other: &AlignedFloats) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for AlignedFloats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for &'a AlignedFloats {
    type Item = &'a f32;
    type IntoIter = std::slice::Iter<'a, f32>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl From<Vec<f32>> for AlignedFloats {
    fn from(values: Vec<f32>) -> AlignedFloats {
        AlignedFloats::from_slice(&values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_a_cache_line_and_keeps_its_values_through_resizes() {
        let mut floats = AlignedFloats::from_slice(&[1.0, 2.0, 3.0]);
        assert_eq!(floats.as_ptr() as usize % 64, 0);
        assert_eq!(&floats[..], &[1.0, 2.0, 3.0]);
        floats.resize(1);
        floats.resize(40);
        assert_eq!(floats.len(), 40);
        assert_eq!(floats[0], 1.0);
        assert!(
            floats[1..].iter().all(|&x| x == 0.0),
            "grown values are zero"
        );
        assert_eq!(floats.as_ptr() as usize % 64, 0);
        floats.assign(&[5.0; 17]);
        assert_eq!(floats, AlignedFloats::from(vec![5.0; 17]));
        assert_ne!(floats, AlignedFloats::from(vec![5.0; 16]));
    }
}
