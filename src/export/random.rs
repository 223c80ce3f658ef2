//! The random rules' numbers (`--random-skip`, `--wdl-skip`, `--piece-skip`, the loader's
//! mixing): every draw is a hash of the seed, the rule and the row's identity (its DB
//! index, or its input, pass over that input and position in it), never a generator's
//! state, so the same seed keeps the same rows whatever the thread count or chunking.

/// The random rules, each drawing independently.
#[derive(Clone, Copy, Debug)]
pub enum Rule {
    Random = 1,
    Wdl = 2,
    Pieces = 3,
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A row's identity for the draws: the input it comes from, the pass over that input
/// (an input read again in the same epoch draws anew) and its position there.
pub fn draw_key(input: u32, cycle: u32, index: u64) -> u64 {
    mix(index ^ mix(((input as u64) << 32 | cycle as u64) ^ 0x6b65_7973_6b69_7073))
}

/// A uniform number in [0, 1) for `rule` on the row `key`.
pub fn uniform(seed: u64, key: u64, rule: Rule) -> f64 {
    let z = mix(key ^ mix(seed.wrapping_add((rule as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))));
    (z >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_uniform_and_rule_independent() {
        let n = 100_000;
        let mean: f64 = (0..n)
            .map(|i| uniform(7, draw_key(0, 0, i), Rule::Random))
            .sum::<f64>()
            / n as f64;
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
        let same = (0..1000)
            .filter(|&i| {
                (uniform(7, draw_key(0, 0, i), Rule::Wdl) < 0.5)
                    == (uniform(7, draw_key(0, 0, i), Rule::Pieces) < 0.5)
            })
            .count();
        assert!((400..600).contains(&same), "{same}");
    }
}
