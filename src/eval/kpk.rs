//! The KPK bitbase: for every king-and-pawn-against-king position, whether the side with the
//! pawn wins. Computed when the crate is built ([`kpk_table`], by `build.rs`) and embedded:
//! 24 KB.

// The lib itself calls only `index` (and its tests `compute`); the build script the rest.
#[cfg_attr(not(test), allow(dead_code))]
#[path = "kpk_table.rs"]
mod kpk_table;

use kpk_table::{SIZE, index};

/// [`kpk_table::compute`]'s words, little-endian, as the build script wrote them.
static WIN: [u8; SIZE.div_ceil(64) * 8] = *include_bytes!(concat!(env!("OUT_DIR"), "/kpk.bin"));

/// Whether the side with the pawn wins. Squares a1 = 0; `strong_to_move` is whether the side
/// with the pawn is to move. The position must be legal.
pub fn strong_side_wins(
    strong_is_white: bool,
    strong_to_move: bool,
    strong_king: u8,
    weak_king: u8,
    pawn: u8,
) -> bool {
    // Normalise: the strong side plays up the board, the pawn on files a-d.
    let flip_rank = if strong_is_white { 0 } else { 56 };
    let flip_file = if (pawn ^ flip_rank) % 8 >= 4 { 7 } else { 0 };
    let normal = |square: u8| (square ^ flip_rank ^ flip_file) as usize;
    let i = index(
        strong_to_move,
        normal(pawn),
        normal(strong_king),
        normal(weak_king),
    );
    WIN[i / 8] >> (i % 8) & 1 == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_bitbase_is_the_computed_one() {
        let bytes: Vec<u8> = kpk_table::compute()
            .iter()
            .flat_map(|word| word.to_le_bytes())
            .collect();
        assert_eq!(bytes.len(), WIN.len());
        assert!(bytes == WIN, "build.rs wrote another table");
        assert!(WIN.iter().any(|&b| b != 0) && WIN.iter().any(|&b| b != 0xff));
    }
}
