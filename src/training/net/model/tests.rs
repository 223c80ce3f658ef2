//! The model's tests: gradients against finite differences, quantisation, targets.
use super::tile as tile_values;
use super::*;
use crate::training::nnue::FeatureSet;

fn batch_of(fens: &[(&str, i32, f32)], set: FeatureSet) -> Batch {
    let mut batch = Batch::default();
    for &(fen, score, result) in fens {
        let position = crate::position::fen::parse_fen(fen).expect("fen");
        let boards = position.boards();
        let mut b = [0u64; 12];
        for colour in 0..2 {
            for kind in 0..6 {
                b[colour * 6 + kind] = boards.pieces[kind] & boards.colors[colour];
            }
        }
        let us = position.side_to_move();
        let (mut ours, mut theirs) = ([0; MAX_ACTIVE], [0; MAX_ACTIVE]);
        set.active_both(&b, us, &mut ours, &mut theirs);
        batch.stm_features.extend_from_slice(&ours);
        batch.nstm_features.extend_from_slice(&theirs);
        batch.stm.push(boards.black_to_move as u8);
        batch.score.push(score);
        batch.result.push(result);
        batch.len += 1;
    }
    batch
}

const FENS: [(&str, i32, f32); 4] = [
    (
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        -30,
        0.5,
    ),
    (
        "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 0 9",
        40,
        1.0,
    ),
    ("8/5k2/8/3P4/8/8/2K5/8 w - - 0 1", 250, 1.0),
    ("4k3/8/8/8/8/8/1q6/4K2R b K - 0 1", 600, 0.0),
];

/// The analytic gradient equals central differences of the error (in f64 terms: the
/// model runs in f32, so the step and the tolerance are those f32 allows).
/// With and without output buckets (the fixtures' positions fall in buckets 7 and 0 of
/// 8, so both an opening's and an endgame's output layer are probed).
#[test]
fn gradient_matches_finite_differences() {
    let kings = Layout {
        inputs: InputLayout::standard(4).unwrap(),
        ..Layout::new(16, 8)
    };
    for layout in [
        Layout::single(16),
        Layout::new(16, 8),
        kings,
        Layout {
            factoriser: true,
            ..kings
        },
    ] {
        gradient_matches_finite_differences_for(layout);
    }
}

/// The feature set a layout's batches are made with.
fn set_of(layout: Layout) -> FeatureSet {
    if layout.inputs.is_mirrored() {
        FeatureSet::KingBuckets(layout.inputs)
    } else {
        FeatureSet::Chess768
    }
}

fn gradient_matches_finite_differences_for(layout: Layout) {
    let batch = batch_of(&FENS, set_of(layout));
    let mut params = initial(layout, 5);
    // Spread the biases so that some accumulators sit in each region of the clamp.
    for (i, b) in params[layout.ft_bias()..layout.out_weights()]
        .iter_mut()
        .enumerate()
    {
        *b = (i as f32 - 8.0) * 0.1;
    }
    for k in 0..layout.buckets {
        params[layout.out_bias() + k] = 0.2 - 0.05 * k as f32;
    }
    // A scale other than 400, so that a missing slope in the gradient shows.
    let objective = Objective {
        wdl: 0.4,
        scale: 160.0,
    };
    // A factoriser that matters (it starts at zero).
    if layout.factoriser {
        let n = layout.hidden;
        for (i, w) in params[layout.factoriser_row() * n..layout.ft_bias()]
            .iter_mut()
            .enumerate()
        {
            *w = ((i * 7919) % 101) as f32 / 500.0 - 0.1;
        }
    }
    // The passes read merged parameters; the error is a function of the model's own.
    let merged = |p: &[f32]| {
        let mut out = AlignedFloats::default();
        if layout.factoriser {
            merge_factoriser(p, layout, Tiling::flat(layout), &mut out);
        } else {
            out = AlignedFloats::from_slice(p);
        }
        out
    };
    let mut scratch = Scratch::new(16);
    let mut grad = vec![0.0f32; layout.len()];
    let flat = Tiling::flat(layout);
    error_and_gradient(
        &merged(&params),
        layout,
        flat,
        objective,
        &batch,
        0..4,
        &mut scratch,
        Some((&mut grad, 1.0)),
    );
    fold_factoriser_gradient(&mut grad, layout, flat);
    let error = |p: &[f32]| {
        let mut s = Scratch::new(16);
        error_and_gradient(
            &merged(p),
            layout,
            flat,
            objective,
            &batch,
            0..4,
            &mut s,
            None,
        )
        .0
    };
    let mut checked = 0;
    // First-layer rows of pieces on the boards, the biases, the output layer.
    let ours = &batch.stm_features[..MAX_ACTIVE];
    let factoriser = layout.factoriser;
    let shared = layout.factoriser_row();
    let probes: Vec<usize> = active(ours)
        .take(3)
        .flat_map(|f| {
            let rows = [Some(f), factoriser.then_some(shared + f % INPUTS)];
            rows.into_iter().flatten()
        })
        .flat_map(|row| (0..16).map(move |k| row * 16 + k))
        .chain(layout.ft_bias()..layout.out_bias() + layout.buckets)
        .collect();
    for i in probes {
        let h = 1e-3f32;
        let mut p = params.clone();
        p[i] += h;
        let up = error(&p);
        p[i] -= 2.0 * h;
        let down = error(&p);
        let numeric = (up - down) / (2.0 * h as f64);
        let analytic = grad[i] as f64;
        assert!(
            (numeric - analytic).abs() < 2e-3 * (1.0 + analytic.abs()) + 1e-4,
            "parameter {i}: numeric {numeric} analytic {analytic}"
        );
        if analytic.abs() > 1e-4 {
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} parameters had a gradient");
}

/// More positions than [`FENS`], for the tiled passes: openings, middlegames, endgames,
/// kings on every side of the mirror line and in several buckets.
const MORE_FENS: [(&str, i32, f32); 8] = [
    (
        "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
        20,
        0.5,
    ),
    (
        "r2q1rk1/pp2bppp/2n1pn2/3p4/3P4/2NBPN2/PP3PPP/R2Q1RK1 b - - 3 10",
        -15,
        0.0,
    ),
    (
        "2r3k1/5pp1/p3p2p/1p1n4/3P4/P3BP2/1P4PP/2R3K1 w - - 0 28",
        35,
        1.0,
    ),
    ("8/8/4k3/3p4/3K4/4P3/8/8 w - - 0 50", 0, 0.5),
    ("8/2k5/8/1P6/8/5K2/8/8 b - - 0 60", -420, 0.0),
    ("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 30", 510, 1.0),
    (
        "r3k2r/1pp2ppp/p1n5/4P3/2B5/2N5/PPP2PPP/3RK2R b Kkq - 1 14",
        -60,
        0.5,
    ),
    (
        "4r1k1/1q3pp1/p6p/1p6/3Q4/1P4P1/P4P1P/4R1K1 w - - 2 33",
        10,
        0.5,
    ),
];

/// Every tiling of the first layer gives the flat pass's error and gradient bit for bit
/// (so the same net), with king buckets, a factoriser and output buckets, at widths
/// whose last tile is narrower.
#[test]
fn tiled_passes_give_the_flat_gradient_bit_for_bit() {
    let fens: Vec<_> = FENS.iter().chain(&MORE_FENS).copied().collect();
    for hidden in [48, 80] {
        let kings = Layout {
            inputs: InputLayout::standard(4).unwrap(),
            factoriser: true,
            ..Layout::new(hidden, 8)
        };
        for layout in [Layout::single(hidden), kings] {
            let batch = batch_of(&fens, set_of(layout));
            let mut params = initial(layout, 11);
            for (i, w) in params[layout.factoriser_row() * hidden..layout.out_weights()]
                .iter_mut()
                .enumerate()
            {
                *w = ((i * 7919) % 101) as f32 / 400.0 - 0.12;
            }
            let objective = Objective {
                wdl: 0.3,
                scale: 150.0,
            };
            let run = |tiling: Tiling| {
                let mut passes = AlignedFloats::default();
                pass_params(&params, layout, tiling, &mut passes);
                let mut grad = vec![0.0f32; layout.len()];
                let mut scratch = Scratch::new(hidden);
                let (error, counted) = error_and_gradient(
                    &passes,
                    layout,
                    tiling,
                    objective,
                    &batch,
                    0..batch.len,
                    &mut scratch,
                    Some((&mut grad, 0.5)),
                );
                let mut s = Scratch::new(hidden);
                let alone = error_and_gradient(
                    &passes,
                    layout,
                    tiling,
                    objective,
                    &batch,
                    1..9,
                    &mut s,
                    None,
                );
                (error, counted, alone, flat_gradient(&grad, layout, tiling))
            };
            let flat = run(Tiling::flat(layout));
            assert_eq!(flat.1, fens.len());
            assert!(flat.3.iter().filter(|g| **g != 0.0).count() > 500);
            for tile in 1..=4 {
                let tiling = Tiling::with_tile(layout, tile);
                let tiled = run(tiling);
                assert_eq!(tiled.0.to_bits(), flat.0.to_bits(), "{tiling:?}");
                assert_eq!((tiled.1, tiled.2), (flat.1, flat.2), "{tiling:?}");
                let differ = (0..layout.len())
                    .filter(|&i| tiled.3[i].to_bits() != flat.3[i].to_bits())
                    .count();
                assert_eq!(differ, 0, "{tiling:?}: {differ} gradient values differ");
            }
        }
    }
}

/// Steps of the trainer give the same state bit for bit whatever the passes' layout.
#[test]
fn a_trainer_steps_alike_in_every_layout() {
    use crate::training::net::{State, Trainer};
    let fens: Vec<_> = FENS.iter().chain(&MORE_FENS).copied().collect();
    let layout = Layout {
        inputs: InputLayout::standard(4).unwrap(),
        factoriser: true,
        ..Layout::new(48, 8)
    };
    let batch = batch_of(&fens, set_of(layout));
    let objective = Objective {
        wdl: 0.3,
        scale: 150.0,
    };
    let run = |tiling: Tiling| {
        let mut trainer = Trainer::with_tiling(State::new(layout, 3), objective, tiling);
        let losses: Vec<u64> = (0..5)
            .map(|_| trainer.step(&batch, 0.01).0.to_bits())
            .collect();
        (losses, trainer.state())
    };
    let flat = run(Tiling::flat(layout));
    assert_ne!(flat.1.params, State::new(layout, 3).params);
    for tile in 1..=3 {
        let tiled = run(Tiling::with_tile(layout, tile));
        assert_eq!(tiled.0, flat.0, "tile {tile}");
        assert!(tiled.1 == flat.1, "tile {tile}: the states differ");
    }
}

/// A step starts from zeroed gradient buffers: the update leaves each slice's buffer zeroed
/// as it reads it, so a trainer that took steps before gives the state a fresh trainer
/// (new buffers) gives from the same state, bit for bit. Over two slices (flat, 2,048
/// positions a slice) and one (tiled).
#[test]
fn each_step_starts_from_zeroed_gradients() {
    use crate::training::net::optimiser::SLICE;
    use crate::training::net::{State, Trainer};
    let fens: Vec<_> = FENS.iter().chain(&MORE_FENS).copied().collect();
    let layout = Layout {
        inputs: InputLayout::standard(4).unwrap(),
        factoriser: true,
        ..Layout::new(48, 8)
    };
    let many: Vec<_> = fens.iter().copied().cycle().take(SLICE + 300).collect();
    let batches = [
        batch_of(&many, set_of(layout)),
        batch_of(&fens, set_of(layout)),
        batch_of(&many[..SLICE + 7], set_of(layout)),
    ];
    let objective = Objective {
        wdl: 0.3,
        scale: 150.0,
    };
    for tiling in [Tiling::flat(layout), Tiling::of(layout)] {
        let mut going = Trainer::with_tiling(State::new(layout, 3), objective, tiling);
        let mut state = State::new(layout, 3);
        for (k, batch) in batches.iter().enumerate() {
            let went = going.step(batch, 0.01);
            let mut fresh = Trainer::with_tiling(state, objective, tiling);
            let stepped = fresh.step(batch, 0.01);
            state = fresh.state();
            assert_eq!(
                went.0.to_bits(),
                stepped.0.to_bits(),
                "{tiling:?}, step {k}"
            );
            assert!(
                going.state() == state,
                "{tiling:?}, step {k}: the states differ"
            );
        }
    }
}

/// AdamW's weight decay is decoupled: one step with decay `d` leaves every parameter the
/// undecayed step's less `lr · d` times its value before the step (within the clip), and
/// no decay is no shrink.
#[test]
fn weight_decay_shrinks_each_parameter_by_its_own_value() {
    use crate::training::net::optimiser::WEIGHT_DECAY;
    use crate::training::net::{State, Trainer};
    let layout = Layout::single(32);
    let batch = batch_of(&FENS, set_of(layout));
    let objective = Objective {
        wdl: 0.3,
        scale: 150.0,
    };
    let lr = 0.01f32;
    let step = |decay: Option<f32>| {
        let trainer = Trainer::new(State::new(layout, 5), objective);
        let mut trainer = match decay {
            Some(d) => trainer.with_weight_decay(d),
            None => trainer,
        };
        trainer.step(&batch, lr);
        trainer.state().params
    };
    let before = State::new(layout, 5).params;
    let undecayed = step(Some(0.0));
    let (decay, decayed) = (0.5f32, step(Some(0.5)));
    let mut shrunk = 0;
    for ((&p0, &plain), &with) in before.iter().zip(&undecayed).zip(&decayed) {
        if plain.abs() >= CLIP * 0.999 || with.abs() >= CLIP * 0.999 {
            continue;
        }
        let expected = plain - lr * decay * p0;
        assert!(
            (with - expected).abs() <= 1e-6 * (1.0 + p0.abs()),
            "{p0} stepped to {plain} without decay and {with} with it, not {expected}"
        );
        shrunk += (p0 != 0.0) as usize;
    }
    assert!(shrunk > 1000, "only {shrunk} parameters were checked");
    // The default is the constant, and differs from none.
    assert_eq!(step(None), step(Some(WEIGHT_DECAY)));
    assert_ne!(step(None), undecayed);
}

/// The tiled layout is a permutation of the first layer's units, and the flat one is the
/// parameters' own.
#[test]
fn a_tiling_places_every_unit_once() {
    let layout = Layout {
        inputs: InputLayout::standard(2).unwrap(),
        ..Layout::single(80)
    };
    for tile in 1..=5 {
        let tiling = Tiling::with_tile(layout, tile);
        let mut seen = vec![false; tiling.rows * tiling.units];
        for q in 0..tiling.rows * tiling.units {
            let at = tiling.of_flat_unit(q);
            assert!(!seen[at], "{tiling:?}: {q} lands on {at} twice");
            seen[at] = true;
        }
        assert_eq!(tiling.of_flat_unit(seen.len() + 3), seen.len() + 3);
    }
    let values: Vec<f32> = (0..layout.len()).map(|i| i as f32).collect();
    for tile in 1..=4 {
        let tiling = Tiling::with_tile(layout, tile);
        assert_eq!(untile(&tile_values(&values, tiling), tiling), values);
    }
    let flat = Tiling::flat(layout);
    assert!(flat.is_flat());
    assert!((0..flat.rows * flat.units).all(|q| flat.of_flat_unit(q) == q));
    // The passes' own choice: flat at 768 -> 128, tiled at 768x8hm -> 512, four units a
    // tile at AVX-512.
    assert!(Tiling::of(Layout::single(128)).is_flat());
    let big = Layout {
        inputs: InputLayout::standard(8).unwrap(),
        factoriser: true,
        ..Layout::single(512)
    };
    let wide = pawnstorm_kernels::simd::level() == pawnstorm_kernels::simd::Level::Avx512;
    assert_eq!(Tiling::of(big).tile, if wide { TILE_AVX512 } else { TILE });
}

#[test]
fn boards_come_back_from_features() {
    let batch = batch_of(&FENS, FeatureSet::Chess768);
    for (i, (fen, _, _)) in FENS.iter().enumerate() {
        let position = crate::position::fen::parse_fen(fen).unwrap();
        let pb = position.boards();
        let boards = boards_of_features(
            &batch.stm_features[i * MAX_ACTIVE..(i + 1) * MAX_ACTIVE],
            batch.stm[i] == 1,
        );
        for colour in 0..2 {
            for kind in 0..6 {
                assert_eq!(
                    boards[colour * 6 + kind],
                    pb.pieces[kind] & pb.colors[colour]
                );
            }
        }
    }
}

/// The quantised network's evaluations stay near the float model's: plain, and with
/// king buckets and a factoriser merged in (whose positions come back from their
/// features mirrored when the side to move's king stood on files e–h: the same
/// evaluation, which this checks too).
#[test]
fn quantisation_error_is_small() {
    let kings = Layout {
        inputs: InputLayout::standard(4).unwrap(),
        factoriser: true,
        ..Layout::single(32)
    };
    for layout in [Layout::single(32), kings] {
        quantisation_error_is_small_for(layout);
    }
}

fn quantisation_error_is_small_for(layout: Layout) {
    let mut params = initial(layout, 9);
    params[layout.out_bias()] = 0.05;
    if layout.factoriser {
        // A factoriser that matters: the draw of another seed.
        let other = initial(Layout::single(32), 10);
        let n = layout.hidden;
        params[layout.factoriser_row() * n..layout.ft_bias()].copy_from_slice(&other[..INPUTS * n]);
    }
    let net = quantise(&params, layout, "test").unwrap();
    assert_eq!(net.inputs(), layout.inputs);
    let batch = batch_of(&FENS, set_of(layout));
    for i in 0..batch.len {
        let ours = &batch.stm_features[i * MAX_ACTIVE..(i + 1) * MAX_ACTIVE];
        let theirs = &batch.nstm_features[i * MAX_ACTIVE..(i + 1) * MAX_ACTIVE];
        let float = evaluate_features(&params, layout, ours, theirs);
        let boards = boards_of_features(ours, batch.stm[i] == 1);
        let int = net.evaluate_reference(&boards, batch.stm[i] == 1);
        assert!((float - int as f32).abs() < 6.0, "{i}: {float} vs {int}");
    }
}

#[test]
fn targets_blend_and_need_their_labels() {
    let at = |wdl, scale| Objective { wdl, scale };
    assert_eq!(at(1.0, 400.0).target(i32::MIN, 1.0), Some(1.0));
    assert_eq!(at(0.0, 400.0).target(0, f32::NAN), Some(0.5));
    let blend = at(0.5, 400.0).target(400, 0.0).unwrap();
    assert!((blend - 0.5 * sigmoid(1.0)).abs() < 1e-7);
    let steeper = at(0.5, 160.0).target(400, 0.0).unwrap();
    assert!((steeper - 0.5 * sigmoid(2.5)).abs() < 1e-7);
    assert_eq!(at(0.5, 400.0).target(i32::MIN, 1.0), None);
    assert_eq!(at(0.5, 400.0).target(10, f32::NAN), None);
}
