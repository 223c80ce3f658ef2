//! `uci --tune`: the search's tunables (`engine::search::tunables`) as UCI spin options.

use super::{complain, say};
use crate::engine::search::tunables;

/// One `option` line a tunable, after the others.
pub(super) fn say_options() {
    for t in tunables::ALL {
        say(&format!(
            "option name {} type spin default {} min {} max {}",
            t.name, t.default, t.min, t.max
        ));
    }
}

/// `setoption name NAME value VALUE` for a tunable: a value out of its range, or no
/// integer, is refused with an `info string` and the tunable keeps its value.
pub(super) fn set(name: &str, value: &str) {
    let set = value
        .trim()
        .parse::<i32>()
        .map_err(|_| format!("{name}: `{value}` is no integer"))
        .and_then(|v| tunables::set(name, v));
    if let Err(e) = set {
        say(&format!("info string {e}"));
        complain(&e);
    }
}
