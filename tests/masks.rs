//! The pawn kernels against plain square-by-square definitions (written here, apart from the
//! set-wise code) and against the expected masks of `fixtures/masks`, on every lane width.

mod common;

use pawnstorm::eval::features::{self, COLUMNS, position_features};
use pawnstorm::position::fen::parse_fen;
use pawnstorm::{Color, PieceType, Position};
use pawnstorm_kernels::Lanes;
use pawnstorm_kernels::simd::{LanesFn, Path, dispatch};
use pawnstorm_kernels::{geometry, pawns};

use common::{Rng, board_fen, read_fixture, test_stride};

// ---- The reference: one square at a time. ----

fn bit(b: u64, file: i32, rank: i32) -> bool {
    (0..8).contains(&file) && (0..8).contains(&rank) && b >> (rank * 8 + file) & 1 == 1
}

fn squares(b: u64) -> impl Iterator<Item = (i32, i32)> {
    (0..64)
        .filter(move |s| b >> s & 1 == 1)
        .map(|s| (s % 8, s / 8))
}

fn set(file: i32, rank: i32) -> u64 {
    1 << (rank * 8 + file)
}

/// +1 for White (north is ahead), -1 for Black.
fn dir(color: Color) -> i32 {
    match color {
        Color::White => 1,
        Color::Black => -1,
    }
}

fn any_ahead(b: u64, color: Color, file: i32, rank: i32) -> bool {
    let d = dir(color);
    (1..8).any(|k| bit(b, file, rank + d * k))
}

struct Reference {
    masks: [u64; 12],
    distances: [u64; 2],
}

/// The definitions of `docs/DEFINITIONS.md`, literally, for `color`.
fn reference(position: &Position, color: Color) -> Reference {
    let own = position.pieces(color, PieceType::Pawn).0;
    let enemy = position.pieces(!color, PieceType::Pawn).0;
    let occupied = position.occupied().0;
    let own_rooks = position.pieces(color, PieceType::Rook).0;
    let enemy_rooks = position.pieces(!color, PieceType::Rook).0;
    let d = dir(color);
    let mut m = [0u64; 12];
    for (f, r) in squares(own) {
        let me = set(f, r);
        let doubled = any_ahead(own, color, f, r);
        let isolated = !(0..8).any(|rr| bit(own, f - 1, rr) || bit(own, f + 1, rr));
        let passed = ![f - 1, f, f + 1]
            .iter()
            .any(|&ff| any_ahead(enemy, color, ff, r));
        let stop_attacked = bit(enemy, f - 1, r + 2 * d) || bit(enemy, f + 1, r + 2 * d);
        let support_possible = (0..8).any(|rr| {
            let same_or_behind = if d == 1 { rr <= r } else { rr >= r };
            same_or_behind && (bit(own, f - 1, rr) || bit(own, f + 1, rr))
        });
        let backward = stop_attacked && !support_possible;
        let supported = bit(own, f - 1, r - d) || bit(own, f + 1, r - d);
        let phalanx = bit(own, f - 1, r) || bit(own, f + 1, r);
        let defends = bit(own, f - 1, r + d) || bit(own, f + 1, r + d);
        let blocked = passed && bit(occupied, f, r + d);
        let free = passed && !any_ahead(occupied, color, f, r);
        let rook_behind = |rooks: u64| {
            let mut rank = r - d;
            while (0..8).contains(&rank) {
                if bit(rooks, f, rank) {
                    return true;
                }
                if bit(occupied, f, rank) {
                    return false;
                }
                rank -= d;
            }
            false
        };
        let flags = [
            passed,
            isolated,
            doubled,
            backward,
            supported,
            phalanx,
            supported || phalanx,
            defends && !supported,
            blocked,
            free,
            passed && rook_behind(own_rooks),
            passed && rook_behind(enemy_rooks),
        ];
        for (mask, flag) in m.iter_mut().zip(flags) {
            if flag {
                *mask |= me;
            }
        }
    }
    let chebyshev = |king: pawnstorm::Square| {
        squares(m[0])
            .map(|(f, r)| {
                let (kf, kr) = (king.file().index() as i32, king.rank().index() as i32);
                (f - kf).abs().max((r - kr).abs()) as u64
            })
            .sum::<u64>()
    };
    Reference {
        masks: m,
        distances: [
            chebyshev(position.king(color)),
            chebyshev(position.king(!color)),
        ],
    }
}

/// The reference in the feature columns' order.
fn reference_features(position: &Position) -> [u64; COLUMNS] {
    let white = reference(position, Color::White);
    let black = reference(position, Color::Black);
    let mut out = [0u64; COLUMNS];
    out[..6].copy_from_slice(&white.masks[..6]);
    out[6..12].copy_from_slice(&black.masks[..6]);
    out[12..14].copy_from_slice(&white.distances);
    out[14..16].copy_from_slice(&black.distances);
    out[16..22].copy_from_slice(&white.masks[6..]);
    out[22..28].copy_from_slice(&black.masks[6..]);
    out
}

// ---- The kernels on every lane width. ----

/// Features of `positions` (at most `L::WIDTH`) computed `L::WIDTH` at a time.
fn kernel_features<L: Lanes>(positions: &[Position]) -> Vec<[u64; COLUMNS]> {
    let mut result = Vec::new();
    for group in positions.chunks(L::WIDTH) {
        let column = |f: &dyn Fn(&Position) -> u64| {
            let mut values = vec![0u64; L::WIDTH];
            for (v, p) in values.iter_mut().zip(group) {
                *v = f(p);
            }
            L::load(&values)
        };
        let pieces = PieceType::ALL.map(|kind| column(&|p: &Position| p.piece_type(kind).0));
        let colors = Color::ALL.map(|color| column(&|p: &Position| p.color(color).0));
        let features = position_features(pieces, colors);
        for lane in 0..group.len() {
            let mut row = [0u64; COLUMNS];
            for (c, value) in features.iter().enumerate() {
                let mut values = vec![0u64; L::WIDTH];
                value.store(&mut values);
                row[c] = values[lane];
            }
            result.push(row);
        }
    }
    result
}

fn check_all_widths(positions: &[Position]) {
    let scalar = kernel_features::<u64>(positions);
    let names = features::column_names();
    for (i, position) in positions.iter().enumerate() {
        let expected = reference_features(position);
        for c in 0..COLUMNS {
            assert_eq!(
                scalar[i][c],
                expected[c],
                "{}: {} scalar vs square-by-square",
                position.to_fen(),
                names[c]
            );
        }
    }
    for path in Path::every() {
        let lanes = dispatch(path, KernelFeatures(positions));
        for (i, position) in positions.iter().enumerate() {
            assert_eq!(
                lanes[i],
                scalar[i],
                "{}: {path:?} vs 1 lane",
                position.to_fen()
            );
        }
    }
}

struct KernelFeatures<'a>(&'a [Position]);
impl LanesFn for KernelFeatures<'_> {
    type Output = Vec<[u64; COLUMNS]>;
    #[inline(always)]
    fn call<L: Lanes>(self) -> Self::Output {
        kernel_features::<L>(self.0)
    }
}

struct LanesAgree<'a>(&'a [[u64; 3]]);
impl LanesFn for LanesAgree<'_> {
    type Output = ();
    #[inline(always)]
    fn call<L: Lanes>(self) {
        lanes_agree::<L>(self.0)
    }
}

#[test]
fn fixture_masks_match_the_expected_file() {
    let positions: Vec<Position> = read_fixture("masks/positions.epd")
        .lines()
        .map(|l| parse_fen(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    let expected_text = read_fixture("masks/expected.csv");
    let mut lines = expected_text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let names = features::column_names();
    let computed = dispatch(Path::native(), KernelFeatures(&positions));
    let mut checked = 0;
    for line in lines {
        let values: Vec<u64> = line.split(',').map(|v| v.parse().unwrap()).collect();
        let index = values[0] as usize;
        for (name, &value) in header.iter().zip(&values).skip(1) {
            let column = names
                .iter()
                .position(|n| n == name)
                .unwrap_or_else(|| panic!("{name}"));
            assert_eq!(
                computed[index][column],
                value,
                "position {index} ({}), column {name}",
                positions[index].to_fen()
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 2000 * 16);
    check_all_widths(&positions);
}

/// Random placements with many pawns, rooks on the pawns' files and the a/h files crowded.
fn random_positions(count: usize, rng: &mut Rng) -> Vec<Position> {
    let mut positions = Vec::with_capacity(count);
    while positions.len() < count {
        let mut board = ['.'; 64];
        let mut place = |c: char, rng: &mut Rng, edge: bool| {
            for _ in 0..10 {
                let r = rng.next();
                let file = if edge && r & 1 == 0 {
                    [0, 7][(r >> 1) as usize & 1]
                } else {
                    (r >> 2) % 8
                } as usize;
                let rank = if c == 'P' || c == 'p' {
                    1 + (r >> 8) % 6
                } else {
                    (r >> 8) % 8
                } as usize;
                if board[rank * 8 + file] == '.' {
                    board[rank * 8 + file] = c;
                    return;
                }
            }
        };
        place('K', rng, false);
        place('k', rng, false);
        let r = rng.next();
        for i in 0..(r % 16) {
            place(if i % 2 == 0 { 'P' } else { 'p' }, rng, (r >> 8) & 1 == 1);
        }
        for i in 0..((r >> 16) % 4) {
            place(['R', 'r', 'N', 'q'][i as usize], rng, false);
        }
        let mut fen = board_fen(&board, '.');
        fen.push_str(" w - - 0 1");
        if let Ok(position) = parse_fen(&fen) {
            positions.push(position);
        }
    }
    positions
}

#[test]
fn random_and_real_positions_match_the_reference_on_every_width() {
    let mut rng = Rng(0x005e_ed0f_ba5e);
    let stride = test_stride();
    let random = random_positions(100_000 / stride, &mut rng);
    check_all_widths(&random);
    let real: Vec<Position> = read_fixture("texel/labeled-from-fixture-pgns.epd")
        .lines()
        .map(|l| {
            pawnstorm::position::labels::parse_line(l)
                .unwrap()
                .unwrap()
                .position
        })
        .collect();
    assert!(real.len() > 60_000);
    let real: Vec<Position> = real.into_iter().step_by(stride).collect();
    check_all_widths(&real);
}

// ---- Geometry and pawn moves, one square at a time. ----

fn reference_shift(b: u64, df: i32, dr: i32) -> u64 {
    squares(b)
        .filter(|&(f, r)| (0..8).contains(&(f + df)) && (0..8).contains(&(r + dr)))
        .map(|(f, r)| set(f + df, r + dr))
        .fold(0, |a, s| a | s)
}

#[test]
fn geometry_and_pawn_moves_match_square_by_square_rules() {
    let mut rng = Rng(42);
    let mut boards: Vec<u64> = (0..20_000).map(|_| rng.next() & rng.next()).collect();
    // The edge files alone, and the a-file to h-file "teleport" cases.
    boards.extend([
        0x0101_0101_0101_0101,
        0x8080_8080_8080_8080,
        1 << 8,
        1 << 15,
        1 << 48,
        1 << 55,
        !0,
    ]);
    for &b in &boards {
        assert_eq!(geometry::north_east(b), reference_shift(b, 1, 1));
        assert_eq!(geometry::north_west(b), reference_shift(b, -1, 1));
        assert_eq!(geometry::south_east(b), reference_shift(b, 1, -1));
        assert_eq!(geometry::south_west(b), reference_shift(b, -1, -1));
        assert_eq!(geometry::east(b), reference_shift(b, 1, 0));
        assert_eq!(geometry::west(b), reference_shift(b, -1, 0));
        assert_eq!(geometry::north(b), reference_shift(b, 0, 1));
        assert_eq!(geometry::south(b), reference_shift(b, 0, -1));
        let file_fill = squares(b)
            .map(|(f, _)| 0x0101_0101_0101_0101u64 << f)
            .fold(0, |a, s| a | s);
        assert_eq!(geometry::file_fill(b), file_fill);
        let dilate = (-1..=1)
            .flat_map(|df| (-1..=1).map(move |dr| (df, dr)))
            .map(|(df, dr)| reference_shift(b, df, dr))
            .fold(0, |a, s| a | s);
        assert_eq!(geometry::king_dilate(b), dilate);
        for color in Color::ALL {
            let d = dir(color);
            let front: u64 = (1..8)
                .map(|k| reference_shift(b, 0, d * k))
                .fold(0, |a, s| a | s);
            assert_eq!(geometry::front_span(color, b), front);
            let attacks = reference_shift(b, -1, d) | reference_shift(b, 1, d);
            assert_eq!(geometry::pawn_attacks(color, b), attacks);
            let pawns = b & 0x00ff_ffff_ffff_ff00;
            let empty = !(rng.next() | rng.next());
            let targets = rng.next() & rng.next();
            let single = reference_shift(pawns, 0, d) & empty;
            assert_eq!(pawns::single_pushes(color, pawns, empty), single);
            let start_rank = if d == 1 { 0xff00 } else { 0x00ff << 48 };
            let double =
                reference_shift(reference_shift(pawns & start_rank, 0, d) & empty, 0, d) & empty;
            assert_eq!(pawns::double_pushes(color, pawns, empty), double);
            assert_eq!(
                pawns::captures_west(color, pawns, targets),
                reference_shift(pawns, -1, d) & targets
            );
            assert_eq!(
                pawns::captures_east(color, pawns, targets),
                reference_shift(pawns, 1, d) & targets
            );
            let last_rank = if d == 1 { 0xff << 56 } else { 0xff };
            assert_eq!(
                pawns::promotion_pushes(color, pawns, empty),
                single & last_rank
            );
            assert_eq!(
                pawns::promotion_captures(color, pawns, targets),
                (reference_shift(pawns, -1, d) | reference_shift(pawns, 1, d))
                    & targets
                    & last_rank
            );
        }
    }
    // The teleport: a pawn on the a-file captures nothing on the h-file, and back.
    let a4 = 1u64 << 24;
    let h5 = 1u64 << 39;
    let h4 = 1u64 << 31;
    let a5 = 1u64 << 32;
    assert_eq!(pawns::captures_west(Color::White, a4, h5 | (1 << 31)), 0);
    assert_eq!(pawns::captures_east(Color::White, h4, a5 | (1 << 40)), 0);
    assert_eq!(pawns::captures_east(Color::Black, h5, a4 | (1 << 24)), 0);
    // En passant: only a pawn beside the target's file can take.
    let e5 = 1u64 << 36;
    let d6 = 1u64 << 43;
    assert_eq!(pawns::en_passant_targets(Color::White, e5, d6), d6);
    assert_eq!(pawns::en_passant_targets(Color::White, h5, d6), 0);
}

/// Every geometry and pawn-move kernel, on 4 and 8 lanes, equals its one-lane result.
fn all_kernels<L: Lanes>(b: L, other: L, third: L) -> Vec<L> {
    let mut out = vec![
        geometry::north(b),
        geometry::south(b),
        geometry::east(b),
        geometry::west(b),
        geometry::north_east(b),
        geometry::north_west(b),
        geometry::south_east(b),
        geometry::south_west(b),
        geometry::north_fill(b),
        geometry::south_fill(b),
        geometry::file_fill(b),
        geometry::king_dilate(b),
        geometry::king_dilate_times(b, 3),
        geometry::king_distance_sum(b, other & L::splat(1 << 27)),
    ];
    for color in Color::ALL {
        out.extend([
            geometry::front_span(color, b),
            geometry::rear_span(color, b),
            geometry::attack_span(color, b),
            geometry::pawn_attacks(color, b),
            pawns::single_pushes(color, b, !other),
            pawns::double_pushes(color, b, !other),
            pawns::captures_west(color, b, other),
            pawns::captures_east(color, b, other),
            pawns::en_passant_targets(color, b, third),
            pawns::promotion_pushes(color, b, !other),
            pawns::promotion_captures(color, b, other),
        ]);
        let s = pawns::structure(color, b, other);
        out.extend([
            s.doubled,
            s.isolated,
            s.passed,
            s.backward,
            s.supported,
            s.phalanx,
            s.connected,
            s.chain_base,
        ]);
        let d = pawns::passed_detail(color, s.passed, b | other | third, third, other);
        out.extend([
            d.blocked,
            d.free_path,
            d.own_rook_behind,
            d.enemy_rook_behind,
        ]);
    }
    out
}

fn lanes_agree<L: Lanes>(inputs: &[[u64; 3]]) {
    for group in inputs.chunks_exact(L::WIDTH) {
        let column = |i: usize| L::load(&group.iter().map(|v| v[i]).collect::<Vec<_>>());
        let wide = all_kernels(column(0), column(1), column(2));
        for (lane, v) in group.iter().enumerate() {
            let one = all_kernels(v[0], v[1], v[2]);
            for (k, (w, o)) in wide.iter().zip(&one).enumerate() {
                let mut values = vec![0u64; L::WIDTH];
                w.store(&mut values);
                assert_eq!(values[lane], *o, "kernel {k}, lane {lane}, inputs {v:x?}");
            }
        }
    }
}

#[test]
fn every_kernel_gives_the_same_on_every_lane_width() {
    let mut rng = Rng(7);
    let mut inputs: Vec<[u64; 3]> = (0..100_000 / test_stride())
        .map(|_| {
            [
                rng.next() & rng.next(),
                rng.next() & rng.next(),
                rng.next() & rng.next() & rng.next(),
            ]
        })
        .collect();
    // Edge files and corners in every lane.
    for edge in [
        0x0101_0101_0101_0101u64,
        0x8080_8080_8080_8080,
        0x8100_0000_0000_0081,
    ] {
        for _ in 0..8 {
            inputs.push([edge, rng.next() & edge, rng.next()]);
        }
    }
    inputs.truncate(inputs.len() / 8 * 8);
    for path in Path::every() {
        dispatch(path, LanesAgree(&inputs));
    }
}

/// The batch drivers over a DB of the fixture positions, in blocks of 256 rows: whole
/// blocks (through the L1 scratch), ranges that are not whole pieces (the remainder
/// path), single pieces and `par_for_each_rows`, on every path, against one position at
/// a time.
#[test]
fn batch_drivers_match_position_features_on_any_range() {
    use pawnstorm::db::{Columns, Database, DbWriter};
    use pawnstorm::position::labels::{Labels, Record};
    use std::sync::Mutex;

    let positions: Vec<Position> = read_fixture("masks/positions.epd")
        .lines()
        .map(|l| parse_fen(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("masks.psdb");
    let mut writer = DbWriter::create(&path, 256, Columns::NONE, false).unwrap();
    for position in &positions {
        let record = Record {
            position: position.clone(),
            labels: Labels::default(),
        };
        writer.push(&record).unwrap();
    }
    writer.finish().unwrap();
    let db = Database::open(&path).unwrap();
    let expected: Vec<[u64; COLUMNS]> = kernel_features::<u64>(&positions);
    for path in features::Path::every() {
        for index in 0..db.block_count() {
            let block = db.block(index).unwrap();
            for rows in [0..256, 8..72, 64..128, 0..200, 136..256, 248..256] {
                let mut out = vec![0u64; COLUMNS * rows.len()];
                features::rows_features(path, &block, rows.clone(), &mut out);
                for row in rows.clone().filter(|r| r < &block.len) {
                    for (column, &value) in expected[index * 256 + row].iter().enumerate() {
                        assert_eq!(
                            out[column * rows.len() + row - rows.start],
                            value,
                            "{path:?}, block {index}, rows {rows:?}, row {row}, column {column}"
                        );
                    }
                }
            }
        }
        let seen = Mutex::new(0u64);
        features::par_for_each_rows(&db, path, |first, out, rows| {
            let stride = out.len() / COLUMNS;
            for row in 0..rows {
                for (column, &value) in expected[first as usize + row].iter().enumerate() {
                    assert_eq!(
                        out[column * stride + row],
                        value,
                        "{path:?}, row {first}+{row}"
                    );
                }
            }
            *seen.lock().unwrap() += rows as u64;
        })
        .unwrap();
        assert_eq!(seen.into_inner().unwrap(), db.len());
    }
}
