//! The KPK bitbase's retrograde analysis (~196k positions). Run by the build script
//! (`build.rs` includes this file as a module of its own), which embeds the result in the
//! binary: computed at run time it took some 12 ms, a tenth of a bulk pass over 2M
//! positions. So this file uses nothing but `std`.
//!
//! Positions are normalised so that White has the pawn, on files a-d. A position is a win
//! when White can promote without losing the new queen at once, or force such a position;
//! everything else (stalemates, the pawn lost, positions White cannot force) is a draw.

/// Index: side to move (0 White), pawn (files a-d, ranks 2-7 as (rank - 1) * 4 + file),
/// White king, Black king.
pub const SIZE: usize = 2 * 24 * 64 * 64;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Invalid,
    Unknown,
    Draw,
    Win,
}

pub fn index(white_to_move: bool, pawn: usize, white_king: usize, black_king: usize) -> usize {
    let pawn_index = (pawn / 8 - 1) * 4 + pawn % 8;
    ((((!white_to_move) as usize * 24 + pawn_index) * 64) + white_king) * 64 + black_king
}

fn distance(a: usize, b: usize) -> usize {
    let (af, ar) = ((a % 8) as isize, (a / 8) as isize);
    let (bf, br) = ((b % 8) as isize, (b / 8) as isize);
    (af - bf).unsigned_abs().max((ar - br).unsigned_abs())
}

/// King steps from each square, as bitboards (computed at compile time).
const KING_STEPS: [u64; 64] = {
    let mut steps = [0u64; 64];
    let mut square = 0;
    while square < 64 {
        let (file, rank) = ((square % 8) as i32, (square / 8) as i32);
        let mut df = -1;
        while df <= 1 {
            let mut dr = -1;
            while dr <= 1 {
                let (f, r) = (file + df, rank + dr);
                if (df != 0 || dr != 0) && f >= 0 && f < 8 && r >= 0 && r < 8 {
                    steps[square] |= 1 << (r * 8 + f);
                }
                dr += 1;
            }
            df += 1;
        }
        square += 1;
    }
    steps
};

fn king_moves(square: usize) -> impl Iterator<Item = usize> {
    let mut steps = KING_STEPS[square];
    std::iter::from_fn(move || {
        let to = steps.trailing_zeros() as usize;
        steps &= steps.wrapping_sub(1);
        (to < 64).then_some(to)
    })
}

/// Squares a White pawn on `pawn` (below the eighth rank) attacks, as a bitboard.
fn pawn_attack_set(pawn: usize) -> u64 {
    let ahead = 1u64 << (pawn + 8);
    ((ahead << 1) & !0x0101_0101_0101_0101) | ((ahead >> 1) & !0x8080_8080_8080_8080)
}

/// Whether a White pawn on `pawn` attacks `target`.
fn pawn_attacks(pawn: usize, target: usize) -> bool {
    target / 8 == pawn / 8 + 1 && (target % 8).abs_diff(pawn % 8) == 1
}

fn classify_initial(white_to_move: bool, pawn: usize, wk: usize, bk: usize) -> Verdict {
    if wk == bk || wk == pawn || bk == pawn || distance(wk, bk) <= 1 {
        return Verdict::Invalid;
    }
    if white_to_move {
        // Black cannot be in check with White to move.
        if pawn_attacks(pawn, bk) {
            return Verdict::Invalid;
        }
        let promotion = pawn + 8;
        if pawn / 8 == 6
            && promotion != wk
            && promotion != bk
            && (distance(bk, promotion) > 1 || distance(wk, promotion) == 1)
        {
            return Verdict::Win;
        }
        Verdict::Unknown
    } else {
        // Black's king moves: not next to White's king, not onto a square the pawn attacks.
        let legal = KING_STEPS[bk] & !KING_STEPS[wk] & !pawn_attack_set(pawn);
        if legal == 0 {
            // Stalemate, or mate by the pawn (impossible with a pawn below rank 8).
            return if pawn_attacks(pawn, bk) {
                Verdict::Win
            } else {
                Verdict::Draw
            };
        }
        if legal >> pawn & 1 == 1 {
            // The pawn is undefended (otherwise `pawn` would not be a legal square).
            return Verdict::Draw;
        }
        Verdict::Unknown
    }
}

/// The bitbase: bit `index(...)` set where the position is a win for White, in words of
/// 64 (bit `i % 64` of word `i / 64`).
pub fn compute() -> Vec<u64> {
    let mut table = vec![Verdict::Invalid; SIZE];
    // Pawn squares from the seventh rank down: a position leads to positions with the same
    // pawn (king moves) or a pawn further up (pushes), so each rank's positions are settled
    // once the ranks above are, and iterating rank by rank (instead of the whole table
    // until nothing changes) reaches the same table sooner. The wins are the same whatever
    // the order: a win is forced or not.
    let pawns: Vec<usize> = (8..56).rev().filter(|p| p % 8 < 4).collect();
    let kings = || (0..64).flat_map(|wk| (0..64).map(move |bk| (wk, bk)));
    for &p in &pawns {
        for stm in [true, false] {
            for (wk, bk) in kings() {
                table[index(stm, p, wk, bk)] = classify_initial(stm, p, wk, bk);
            }
        }
    }
    for rank in pawns.chunks(4) {
        loop {
            let mut changed = false;
            for &p in rank {
                for stm in [true, false] {
                    for (wk, bk) in kings() {
                        let at = index(stm, p, wk, bk);
                        if table[at] != Verdict::Unknown {
                            continue;
                        }
                        let verdict = if stm {
                            white_moves_verdict(&table, p, wk, bk)
                        } else {
                            black_moves_verdict(&table, p, wk, bk)
                        };
                        if verdict != Verdict::Unknown {
                            table[at] = verdict;
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }
    let mut win = vec![0u64; SIZE.div_ceil(64)];
    for (i, verdict) in table.iter().enumerate() {
        if *verdict == Verdict::Win {
            win[i / 64] |= 1 << (i % 64);
        }
    }
    win
}

/// White to move: a win if any move reaches a win, a draw if every move reaches a draw.
fn white_moves_verdict(table: &[Verdict], p: usize, wk: usize, bk: usize) -> Verdict {
    let mut all_draw = true;
    let mut consider = |verdict: Verdict| match verdict {
        Verdict::Win => Some(Verdict::Win),
        Verdict::Unknown => {
            all_draw = false;
            None
        }
        _ => None,
    };
    for to in king_moves(wk) {
        if to == p || distance(to, bk) <= 1 {
            continue;
        }
        if let Some(win) = consider(table[index(false, p, to, bk)]) {
            return win;
        }
    }
    let push = p + 8;
    // Promotions are judged by the initial classification; a push to rank 8 that is not
    // an immediate win loses the queen, which is a draw.
    if p / 8 < 6 && push != wk && push != bk {
        if let Some(win) = consider(table[index(false, push, wk, bk)]) {
            return win;
        }
        let double = p + 16;
        if p / 8 == 1
            && double != wk
            && double != bk
            && let Some(win) = consider(table[index(false, double, wk, bk)])
        {
            return win;
        }
    }
    if all_draw {
        Verdict::Draw
    } else {
        Verdict::Unknown
    }
}

/// Black to move: a draw if any move reaches a draw, a win if every move reaches a win.
fn black_moves_verdict(table: &[Verdict], p: usize, wk: usize, bk: usize) -> Verdict {
    let mut all_win = true;
    for to in king_moves(bk) {
        if distance(to, wk) <= 1 || pawn_attacks(p, to) {
            continue;
        }
        match table[index(true, p, wk, to)] {
            Verdict::Draw => return Verdict::Draw,
            Verdict::Unknown => all_win = false,
            _ => {}
        }
    }
    if all_win {
        Verdict::Win
    } else {
        Verdict::Unknown
    }
}
