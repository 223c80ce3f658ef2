use std::sync::Arc;

use super::network::{HEADER_BYTES, NetError, bucket_of, payload_size, raw_size};
use super::simd::Level;
use super::*;
use crate::movegen::{Board, MoveList, legal_moves};

/// Positions of pseudo-random games from the start and from a few middlegame and endgame
/// positions (so that promotions, castling, en passant and bare kings all occur).
fn random_game_positions(games: usize, seed: u64) -> Vec<Vec<(Board, [u64; 12])>> {
    let starts = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        "8/P6k/8/8/8/8/6Kp/8 w - - 0 1",
    ];
    let mut state = seed;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    (0..games)
        .map(|g| {
            let mut board = Board::from_fen(starts[g % starts.len()]).unwrap();
            let mut positions = vec![(board.clone(), boards_of(board.position()))];
            let mut moves = MoveList::new();
            for _ in 0..160 {
                moves.clear();
                legal_moves(&board, &mut moves);
                if moves.is_empty() {
                    break;
                }
                board = board.play(moves[next() % moves.len()]);
                positions.push((board.clone(), boards_of(board.position())));
            }
            positions
        })
        .collect()
}

fn black(board: &Board) -> bool {
    board.side_to_move() == crate::Color::Black
}

#[test]
fn every_path_and_every_base_give_the_reference_after_every_move() {
    let plain = InputLayout::CHESS768;
    let kings = |k| InputLayout::standard(k).unwrap();
    for (hidden, buckets, inputs) in [
        (16, 1, plain),
        (128, 1, plain),
        (48, 1, plain),
        (64, 8, plain),
        (64, 1, kings(4)),
        (48, 8, kings(8)),
        (32, 1, kings(16)),
        (32, 1, kings(1)),
    ] {
        let net = Arc::new(Network::random_with(inputs, hidden, buckets, hidden as u64).unwrap());
        for level in Level::available() {
            // One evaluator walks each game's positions in order (each the base of the next,
            // as a bulk pass does); the other jumps between plies as a search does, so its
            // bases are parents, siblings and stale positions of other lines.
            let mut sequential = NnueEvaluator::with_level(net.clone(), level);
            let mut tree = NnueEvaluator::with_level(net.clone(), level);
            for game in random_game_positions(12, 7 + hidden as u64) {
                for (k, (board, boards)) in game.iter().enumerate() {
                    let expected = net.evaluate_reference(boards, black(board));
                    assert_eq!(
                        sequential.evaluate(boards, black(board), 0),
                        expected,
                        "{} {} width {hidden}, {buckets} buckets: {}",
                        level.name(),
                        inputs.shorthand(),
                        board.to_fen()
                    );
                    let ply = [0, 1, 2, 3, 2, 3, 4, 1, 2][k % 9];
                    assert_eq!(tree.evaluate(boards, black(board), ply), expected);
                    let reference = net.reference_accumulators(boards);
                    let acc = tree.accumulate(boards, ply);
                    for (p, values) in reference.iter().enumerate() {
                        let kept: Vec<i16> = acc
                            .perspective(p)
                            .iter()
                            .flat_map(|c| c.0)
                            .take(hidden)
                            .collect();
                        assert_eq!(&kept, values);
                    }
                }
            }
            let stats = sequential.stats();
            assert!(
                stats.updates > 5 * stats.refreshes,
                "consecutive positions should update, not refresh: {stats:?}"
            );
            // A king crossing a bucket boundary or the mirror line sums one perspective
            // again (and only then).
            if inputs.is_mirrored() {
                assert!(stats.king_refreshes > 0, "{stats:?}");
                assert!(stats.king_refreshes < stats.updates / 2, "{stats:?}");
            } else {
                assert_eq!(stats.king_refreshes, 0);
            }
        }
    }
}

#[test]
fn king_bucketed_nets_round_trip_and_raw_files_load_by_their_arch() {
    let inputs =
        InputLayout::parse_king_buckets("0123/4455/6666/6666/7777/7777/7777/7777").unwrap();
    assert_eq!(inputs, InputLayout::standard(8).unwrap());
    let mut net = Network::random_with(inputs, 48, 8, 3).unwrap();
    net.set_provenance("king buckets");
    let bytes = net.to_bytes();
    assert_eq!(bytes[16], 2, "version 2: the map follows the header");
    assert_eq!(
        &bytes[HEADER_BYTES..HEADER_BYTES + 8],
        &[0, 1, 2, 3, 4, 4, 5, 5]
    );
    assert_eq!(Network::from_bytes(&bytes, "n").unwrap(), net);
    // A damaged map is caught by the checksum.
    let mut damaged = bytes.clone();
    damaged[HEADER_BYTES + 5] ^= 1;
    assert!(matches!(
        Network::from_bytes(&damaged, "n"),
        Err(NetError::Checksum { .. })
    ));
    // The raw payload (what bullet saves) loads as that net given its arch, padded too.
    let arch: Arch = "king-buckets=8,output-buckets=8".parse().unwrap();
    assert_eq!(arch, net.arch());
    let mut raw = net.raw_bytes();
    let mut as_raw = Network::from_bytes_as(&raw, "raw", Some(&arch)).unwrap();
    as_raw.set_provenance("king buckets");
    assert_eq!(as_raw, net);
    raw.resize(raw.len().div_ceil(64) * 64, 0);
    assert!(Network::from_bytes_as(&raw, "raw", Some(&arch)).is_ok());
    // Without its arch, or with another, it is refused by its size, naming the shape.
    assert!(matches!(
        Network::from_bytes(&raw, "raw"),
        Err(NetError::Size { .. })
    ));
    let other: Arch = "king-buckets=4,output-buckets=8".parse().unwrap();
    let error = Network::from_bytes_as(&raw, "raw", Some(&other)).unwrap_err();
    assert!(error.to_string().contains("768x4hm"), "{error}");
    // A pawnstorm file must agree with an arch given for it.
    let error = Network::from_bytes_as(&bytes, "n", Some(&other)).unwrap_err();
    assert!(error.to_string().contains("the file says"), "{error}");
    assert!(Network::from_bytes_as(&bytes, "n", Some(&arch)).is_ok());
    // The text of an arch reads back.
    assert_eq!(arch.to_string().parse::<Arch>().unwrap(), arch);
    assert!("king-buckets=8,hidden=3".parse::<Arch>().is_err());
    assert!("output-buckets=9".parse::<Arch>().is_err());
}

/// A net's raw payload as its `i16` values.
fn raw_values(net: &Network) -> Vec<i16> {
    net.raw_bytes()
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]))
        .collect()
}

#[test]
fn the_paths_agree_when_output_weights_are_too_large_to_multiply_first() {
    let random = Network::random(64, 3).unwrap();
    let mut values = raw_values(&random);
    let out = INPUTS * 64 + 64;
    for (i, w) in values[out..out + 128].iter_mut().enumerate() {
        *w = if i % 3 == 0 {
            30_000
        } else {
            -20_000 + i as i16
        };
    }
    let (ft, rest) = values.split_at(INPUTS * 64);
    let (bias, rest) = rest.split_at(64);
    let (out_w, rest) = rest.split_at(128);
    let net = Arc::new(Network::from_parts(64, ft, bias, out_w, rest[0], "").unwrap());
    assert!(!net.small_output_weights());
    for level in Level::available() {
        let mut evaluator = NnueEvaluator::with_level(net.clone(), level);
        for game in random_game_positions(3, 11) {
            for (board, boards) in &game {
                assert_eq!(
                    evaluator.evaluate(boards, black(board), 0),
                    net.evaluate_reference(boards, black(board))
                );
            }
        }
    }
}

#[test]
fn the_integer_evaluation_is_the_float_network_to_within_its_truncations() {
    let mut worst = 0.0f64;
    for buckets in [1, 8] {
        let net = Network::random_bucketed(128, buckets, 5).unwrap();
        for game in random_game_positions(4, 99) {
            for (board, boards) in &game {
                let int = net.evaluate_reference(boards, black(board)) as f64;
                let float = net.evaluate_float(boards, black(board));
                worst = worst.max((int - float).abs());
            }
        }
    }
    // Truncating Σ/QA loses under 1/QA of a unit (0.025 cp after scaling), the final
    // division under 1 cp.
    assert!(worst < 1.05, "integer and float differ by {worst} cp");
}

#[test]
fn the_side_to_moves_accumulator_comes_first() {
    let net = Network::random(32, 8).unwrap();
    let board =
        Board::from_fen("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")
            .unwrap();
    let flipped =
        Board::from_fen("rnbqk2r/pppp1ppp/5n2/2b1p3/4P3/2N2N2/PPPP1PPP/R1BQKB1R b KQkq - 4 4")
            .unwrap();
    // The colour-mirrored position from the other side's point of view has the same
    // features, so the same score.
    assert_eq!(
        net.evaluate_reference(&boards_of(board.position()), false),
        net.evaluate_reference(&boards_of(flipped.position()), true)
    );
    let boards = boards_of(board.position());
    assert_ne!(
        net.evaluate_reference(&boards, false),
        net.evaluate_reference(&boards, true),
        "the side to move must change which accumulator meets which half of the output"
    );
}

#[test]
fn exact_endgame_rules_override_the_network() {
    let net = Arc::new(Network::random(32, 1).unwrap());
    let mut evaluator = NnueEvaluator::new(net);
    for (fen, expected) in [
        ("8/8/4k3/8/8/3K4/8/8 w - - 0 1", Some(0)),
        ("8/8/4k3/8/8/3KN3/8/8 b - - 0 1", Some(0)),
        ("8/8/8/8/8/2k5/8/K1N5 w - - 0 1", Some(0)),
    ] {
        let board = Board::from_fen(fen).unwrap();
        let boards = boards_of(board.position());
        assert_eq!(exact_rule(&boards, black(&board)), expected, "{fen}");
        assert_eq!(evaluator.score(&boards, black(&board), 0), 0, "{fen}");
    }
    // KQK is a known win for the queen's side, whoever moves.
    let board = Board::from_fen("8/8/4k3/8/8/3KQ3/8/8 b - - 0 1").unwrap();
    let boards = boards_of(board.position());
    let score = evaluator.score(&boards, true, 0);
    assert!(score <= -1000, "KQK, the bare king to move: {score}");
    // Both sides with pawns: no rule, the network's own value.
    let board = Board::startpos();
    let boards = boards_of(board.position());
    assert_eq!(exact_rule(&boards, false), None);
}

#[test]
fn both_layouts_round_trip_and_raw_files_load_padded_or_not() {
    let mut net = Network::random(64, 21).unwrap();
    net.set_provenance("trained on nothing, for a test");
    let bytes = net.to_bytes();
    assert_eq!(bytes.len(), HEADER_BYTES + 30 + raw_size(64));
    assert_eq!(Network::from_bytes(&bytes, "t").unwrap(), net);

    let raw = net.raw_bytes();
    assert_eq!(raw.len(), 1542 * 64 + 2);
    let mut plain = net.clone();
    plain.set_provenance("");
    assert_eq!(Network::from_bytes(&raw, "raw").unwrap(), plain);
    let mut padded = raw.clone();
    padded.resize(raw.len().div_ceil(64) * 64, 0);
    assert_ne!(padded.len(), raw.len());
    assert_eq!(Network::from_bytes(&padded, "padded").unwrap(), plain);
}

/// bullet's `MaterialCount<8>`: `(pieces − 2) / 4`.
#[test]
fn output_buckets_follow_the_piece_count_as_bullet_counts() {
    let expected = [
        (2, 0),
        (5, 0),
        (6, 1),
        (9, 1),
        (10, 2),
        (29, 6),
        (30, 7),
        (32, 7),
    ];
    for (pieces, bucket) in expected {
        assert_eq!(bucket_of(pieces, 8), bucket, "{pieces} pieces");
    }
    assert!((2..=32).all(|p| bucket_of(p, 1) == 0));
    // Four buckets: ⌈32 / 4⌉ = 8 pieces each.
    assert_eq!(bucket_of(9, 4), 0);
    assert_eq!(bucket_of(10, 4), 1);
    assert_eq!(bucket_of(32, 4), 3);
}

/// A bucketed net keeps its buckets through its file, the raw payload in bullet's bucketed
/// order (`[B][2N]` output weights, then `[B]` biases), and a position is read by its own
/// bucket's output layer.
#[test]
fn bucketed_networks_round_trip_and_read_their_own_bucket() {
    let net = Network::random_bucketed(32, 8, 12).unwrap();
    assert_eq!(net.buckets(), 8);
    let bytes = net.to_bytes();
    assert_eq!(u32::from_le_bytes(bytes[28..32].try_into().unwrap()), 8);
    assert_eq!(
        bytes.len(),
        HEADER_BYTES + "random".len() + payload_size(32, 8)
    );
    assert_eq!(Network::from_bytes(&bytes, "t").unwrap(), net);

    // Every bucket but one zeroed: only positions of that bucket's piece counts see the
    // weights and bias left.
    let mut values = raw_values(&net);
    let out = INPUTS * 32 + 32;
    for k in (0..8).filter(|&k| k != 7) {
        values[out + k * 64..out + (k + 1) * 64].fill(0);
        values[out + 8 * 64 + k] = 0;
    }
    let (ft, rest) = values.split_at(INPUTS * 32);
    let (bias, rest) = rest.split_at(32);
    let (out_w, out_b) = rest.split_at(8 * 64);
    let only_7 = Network::from_bucketed_parts(32, 8, ft, bias, out_w, out_b, "").unwrap();
    let start = Board::startpos();
    let boards = boards_of(start.position());
    assert_eq!(
        only_7.evaluate_reference(&boards, false),
        net.evaluate_reference(&boards, false)
    );
    let endgame = Board::from_fen("8/5k2/8/3P4/8/8/2K5/8 w - - 0 1").unwrap();
    let boards = boards_of(endgame.position());
    assert_eq!(only_7.evaluate_reference(&boards, false), 0);
    assert_ne!(net.evaluate_reference(&boards, false), 0);
    for level in Level::available() {
        let mut evaluator = NnueEvaluator::with_level(Arc::new(only_7.clone()), level);
        assert_eq!(evaluator.evaluate(&boards, false, 0), 0);
    }
}

#[test]
fn damaged_and_foreign_files_are_refused_with_the_reason() {
    let net = Network::random(32, 2).unwrap();
    let bytes = net.to_bytes();

    let mut flipped = bytes.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    assert!(matches!(
        Network::from_bytes(&flipped, "f"),
        Err(NetError::Checksum { .. })
    ));

    let cut = &bytes[..bytes.len() - 10];
    let message = Network::from_bytes(cut, "cut.nnue")
        .unwrap_err()
        .to_string();
    assert!(
        message.starts_with("cut.nnue: ") && message.contains("cut short"),
        "{message}"
    );

    let mut other_width = bytes.clone();
    other_width[24..28].copy_from_slice(&40u32.to_le_bytes());
    let message = Network::from_bytes(&other_width, "w")
        .unwrap_err()
        .to_string();
    assert!(message.contains("another architecture"), "{message}");

    let raw = net.raw_bytes();
    let message = Network::from_bytes(&raw[..raw.len() - 2], "short.bin")
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("short.bin: ") && message.contains("1542"),
        "{message}"
    );

    let mut dirty_padding = raw.clone();
    dirty_padding.resize(raw.len().div_ceil(64) * 64, 0);
    let end = dirty_padding.len() - 1;
    dirty_padding[end] = 7;
    assert!(matches!(
        Network::from_bytes(&dirty_padding, "p"),
        Err(NetError::Size { .. })
    ));

    assert!(Network::random(40, 1).is_err(), "40 is no multiple of 16");
}

#[test]
fn the_compiled_in_network_loads_with_its_provenance() {
    let net = default_network().expect("nets/default.nnue is compiled in");
    assert!(
        net.provenance().contains("train-net"),
        "{}",
        net.provenance()
    );
    // Through every path, on positions of games, it gives the reference's values.
    for level in Level::available() {
        let mut evaluator = NnueEvaluator::with_level(net.clone(), level);
        for game in random_game_positions(2, 3) {
            for (board, boards) in &game {
                assert_eq!(
                    evaluator.evaluate(boards, black(board), 0),
                    net.evaluate_reference(boards, black(board))
                );
            }
        }
    }
}

/// The update and the output layer in one pass give what the two passes give: the sums
/// stored and the output's sum, for the row counts it has fixed forms of (a quiet move, a
/// capture, castling) and others, at every level and at widths that pad.
#[test]
fn the_fused_update_and_output_equal_the_two_passes() {
    use super::simd::{PerspectiveUpdate, apply_in_place, screlu_sum_pair, update_and_screlu_pair};
    let counts = [(1, 1), (1, 2), (2, 2), (0, 1), (3, 1), (2, 3)];
    for hidden in [16, 48, 512] {
        let net = Network::random(hidden, 11 + hidden as u64).unwrap();
        assert!(net.small_output_weights());
        let (ours, theirs) = net.output_weights(0);
        for level in Level::available() {
            for (k, &(adds, subs)) in counts.iter().enumerate() {
                let rows = |first: usize, n: usize| -> Vec<u16> {
                    (0..n).map(|i| ((first + 97 * i) % INPUTS) as u16).collect()
                };
                let (us_adds, us_subs) = (rows(3 * k, adds), rows(5 + k, subs));
                let (them_adds, them_subs) = (rows(400 + k, adds), rows(17 * k + 1, subs));
                let mut acc = Accumulators::new(&net);
                acc.refresh(&net, level, &boards_of(Board::startpos().position()));
                let start = (acc.perspective(0).to_vec(), acc.perspective(1).to_vec());
                let (mut us, mut them) = start.clone();
                apply_in_place(level, &mut us, net.weights(), &us_adds, &us_subs);
                apply_in_place(level, &mut them, net.weights(), &them_adds, &them_subs);
                let expected = screlu_sum_pair(level, &us, ours, &them, theirs, true);
                let (mut fused_us, mut fused_them) = start;
                let sum = update_and_screlu_pair(
                    level,
                    net.weights(),
                    PerspectiveUpdate {
                        acc: &mut fused_us,
                        adds: &us_adds,
                        subs: &us_subs,
                    },
                    ours,
                    PerspectiveUpdate {
                        acc: &mut fused_them,
                        adds: &them_adds,
                        subs: &them_subs,
                    },
                    theirs,
                    true,
                );
                let what = format!("{} width {hidden}, {adds} + {subs} rows", level.name());
                assert_eq!(sum, expected, "{what}");
                assert_eq!((fused_us, fused_them), (us, them), "{what}");
            }
        }
    }
}
