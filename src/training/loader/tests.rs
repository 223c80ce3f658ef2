//! The loader's unit tests: packing, batches, the shuffle buffer.

use super::*;

#[test]
fn a_packed_position_gives_back_its_boards_and_the_side_to_moves_labels() {
    let fen = "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R b KQkq - 0 9";
    let record = Record {
        position: crate::position::fen::parse_fen(fen).unwrap(),
        labels: crate::position::labels::Labels {
            score: Some(35),
            result: Some(GameResult::WhiteWin),
            ..Default::default()
        },
    };
    let packed = Packed::of_record(&record);
    assert_eq!(std::mem::size_of::<Packed>(), 32);
    let mut boards = [0u64; 12];
    for color in [Color::White, Color::Black] {
        for kind in crate::position::board::PieceType::ALL {
            boards[6 * color.index() + kind.index()] = record.position.pieces(color, kind).0;
        }
    }
    assert_eq!(packed.boards(), boards);
    let batch = build_batch(&[packed], FeatureSet::Chess768, &Recycler::default());
    assert_eq!(
        (batch.stm[0], batch.score[0], batch.result[0]),
        (1, -35, 0.0)
    );
}

#[test]
fn a_batch_holds_each_positions_features_as_the_packed_reference_gives_them() {
    // The texel fixture's positions, both sides to move, in every feature set (the
    // batch goes through the AVX2 path where the CPU has it; the reference is the
    // one-position scalar code).
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/texel/labeled-from-fixture-pgns.epd"
    ))
    .unwrap();
    let positions: Vec<Packed> = text
        .lines()
        .take(3000)
        .map(|line| {
            let record = crate::position::labels::parse_line(line).unwrap().unwrap();
            Packed::of_record(&record)
        })
        .collect();
    assert!(positions.iter().any(|p| p.stm == 1) && positions.iter().any(|p| p.stm == 0));
    let sets = [
        FeatureSet::Chess768,
        FeatureSet::HalfKp,
        FeatureSet::HalfKaV2Hm,
        FeatureSet::parse("768x4hm").unwrap(),
        FeatureSet::parse("768x16hm").unwrap(),
    ];
    for set in sets {
        let batch = build_batch(&positions, set, &Recycler::default());
        assert_eq!(batch.len, positions.len());
        for (i, packed) in positions.iter().enumerate() {
            let (ours, theirs) = packed.features(set);
            let row = i * MAX_ACTIVE..(i + 1) * MAX_ACTIVE;
            assert_eq!(&batch.stm_features[row.clone()], &ours, "{set:?} row {i}");
            assert_eq!(&batch.nstm_features[row], &theirs, "{set:?} row {i}");
            assert_eq!(batch.stm[i], packed.stm);
        }
    }
}

#[test]
fn the_shuffle_buffer_lets_every_position_out_once() {
    let (tx, rx) = sync_channel(1000);
    let stop = AtomicBool::new(false);
    let mut batcher = Batcher {
        tx,
        pending: Vec::new(),
        batch_size: 7,
        seq: 0,
        stop: &stop,
    };
    let mut shuffler = Shuffler {
        buffer: Vec::new(),
        capacity: 50,
        rng: Rng(3),
        upcoming: [0; SLOTS_AHEAD],
        pushes: 0,
        out: &mut batcher,
    };
    let position = Record {
        position: crate::position::fen::parse_fen("4k3/8/8/8/8/8/8/4K3 w - - 0 1").unwrap(),
        labels: Default::default(),
    };
    let positions: Vec<Packed> = (0..300u16)
        .map(|i| Packed {
            score: i as i32,
            ..Packed::of_record(&position)
        })
        .collect();
    for p in positions {
        shuffler.push(p).unwrap();
    }
    shuffler.finish().unwrap();
    batcher.flush().unwrap();
    drop(batcher);
    let mut seen: Vec<u32> = rx
        .iter()
        .flat_map(|(_, records)| records.into_iter().map(|r| r.score as u32))
        .collect();
    let order = seen.clone();
    seen.sort();
    assert_eq!(seen, (0..300).collect::<Vec<_>>());
    // Shuffled: far from the input order.
    let in_place = order
        .iter()
        .enumerate()
        .filter(|(i, g)| *i as u32 == **g)
        .count();
    assert!(in_place < 30, "{in_place} positions kept their place");
}
