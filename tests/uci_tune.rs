//! `pawnstorm uci --tune`: the search's tunables are UCI spin options (for SPSA), a value
//! set changes the search, one out of range is refused, and without `--tune` none is
//! listed or taken.

use crate::common;

use common::uci_session::Engine;

/// Nodes of the last `info depth 7` line of a fixed-depth search from the start position.
fn nodes_at_depth_7(engine: &mut Engine) -> u64 {
    engine.send("ucinewgame");
    engine.send("position startpos moves e2e4 e7e5 g1f3");
    engine.send("go depth 7");
    let lines = engine.until("bestmove");
    lines
        .iter()
        .rev()
        .find(|l| l.starts_with("info depth 7 "))
        .and_then(|l| l.split(" nodes ").nth(1))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{lines:?}"))
}

#[test]
fn tunables_are_options_under_tune_and_change_the_search() {
    let mut engine = Engine::start(&["uci", "--tune"]);
    engine.send("uci");
    let lines = engine.until("uciok");
    for option in [
        "option name RFP_MARGIN type spin default 75 min 30 max 150",
        "option name LMR_DIVISOR type spin default 225 min 120 max 400",
        "option name TIME_HARD_PER_SOFT type spin default 400 min 150 max 800",
    ] {
        assert!(lines.iter().any(|l| l == option), "{option}: {lines:?}");
    }
    let default = nodes_at_depth_7(&mut engine);
    // Other reductions: another tree at the same depth. (Not necessarily a bigger one:
    // with the fifth net, 3b285b98, fewer reductions searched 3,604 nodes to depth 7
    // against 5,499, the move ordering and aspiration windows going otherwise.)
    engine.send("setoption name LMR_DIVISOR value 400");
    engine.send("setoption name lmr_base value 0");
    let fewer = nodes_at_depth_7(&mut engine);
    assert_ne!(fewer, default);
    engine.send("setoption name LMR_DIVISOR value 225");
    engine.send("setoption name LMR_BASE value 75");
    assert_eq!(nodes_at_depth_7(&mut engine), default);
    engine.send("setoption name RFP_MARGIN value 1000");
    let refused = engine.until("info string");
    assert!(refused.last().unwrap().contains("range is 30 to 150"));
    assert_eq!(nodes_at_depth_7(&mut engine), default);
    engine.ready();
    engine.quit();

    let mut plain = Engine::start(&[]);
    plain.send("uci");
    let lines = plain.until("uciok");
    assert!(!lines.iter().any(|l| l.contains("RFP_MARGIN")));
    plain.send("setoption name LMR_DIVISOR value 400");
    assert_eq!(nodes_at_depth_7(&mut plain), default);
    plain.ready();
    plain.quit();
}
