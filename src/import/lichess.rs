//! The pieces of lichess's data that become labels: `[%eval]` comments, mate scores,
//! rating and time-control tags.
//!
//! Scores are stored as the engine keeps them (`search::score`): centipawns from White's
//! point of view, and a mate in `p` plies as `±(MATE - p)`.

use pawnstorm_kernels::Color;

use crate::position::score::{MATE, MATE_BOUND};

/// The largest centipawn score that is not a mate: pawn scores beyond it are clamped, so
/// that a huge evaluation never reads as a mate.
pub const MAX_CENTIPAWNS: i32 = MATE_BOUND - 1;

/// The score of a mate announced as lichess writes it: `moves > 0` is White mating in that
/// many moves, `moves < 0` Black mating. `side_to_move` is who moves in the position the
/// score belongs to: White mating in N moves is `2N - 1` plies away when White is to move
/// and `2N` when Black is. `moves == 0` (the side to move is mated) is `∓MATE`.
pub fn mate_score(moves: i32, side_to_move: Color) -> i32 {
    let mater = if moves > 0 {
        Color::White
    } else if moves < 0 {
        Color::Black
    } else {
        !side_to_move
    };
    let moves = moves.unsigned_abs().min(MATE as u32);
    let plies = if moves == 0 {
        0
    } else if side_to_move == mater {
        2 * moves - 1
    } else {
        2 * moves
    };
    let score = MATE - plies.min(MATE as u32) as i32;
    match mater {
        Color::White => score,
        Color::Black => -score,
    }
}

/// Where `command` (`[%eval`, `[%clk`) first is in a comment: comments are short, so a
/// scan for `[` beats setting up a substring search each time.
fn find_command(comment: &[u8], command: &[u8]) -> Option<usize> {
    (0..comment.len()).find(|&at| comment[at] == b'[' && comment[at..].starts_with(command))
}

/// The first `byte` in `text`, a comment or less: a plain loop. `memchr`'s vector search
/// pays a call through a function pointer and its set-up on every use; on the few bytes
/// of a lichess comment it held a sixth of a one-thread import's samples, and the loop
/// took the import to 0.973 of its time.
pub(crate) fn find_byte(text: &[u8], byte: u8) -> Option<usize> {
    text.iter().position(|&b| b == byte)
}

/// Why a `[%eval]` could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadEval(pub String);

/// The score in the first `[%eval ...]` command of a comment's text, if it has one:
/// `[%eval 0.17]` (pawns, White's view), `[%eval #-3]` (mate in moves), with or without a
/// `,depth` suffix (`[%eval -1.00,23]`, as python-chess writes it).
pub fn eval_in_comment(comment: &[u8], side_to_move: Color) -> Result<Option<i32>, BadEval> {
    const COMMAND: &[u8] = b"[%eval";
    let Some(at) = find_command(comment, COMMAND) else {
        return Ok(None);
    };
    let rest = &comment[at + COMMAND.len()..];
    let end = find_byte(rest, b']').ok_or_else(|| BadEval("unterminated [%eval".to_string()))?;
    let operand = rest[..end].trim_ascii();
    let value = match find_byte(operand, b',') {
        Some(comma) => &operand[..comma],
        None => operand,
    }
    .trim_ascii();
    let bad = || {
        BadEval(format!(
            "[%eval {}] is not pawns (0.17) or a mate (#-3)",
            String::from_utf8_lossy(operand)
        ))
    };
    if let Some(moves) = value.strip_prefix(b"#") {
        let moves = parse_int(moves).ok_or_else(bad)?;
        return Ok(Some(mate_score(moves, side_to_move)));
    }
    pawns_to_centipawns(value).map(Some).ok_or_else(bad)
}

/// `-?digits(.digits)?` with at most 9 digits before the point, rounded to the nearest
/// centipawn (halves away from zero), clamped below the mate range.
pub fn pawns_to_centipawns(text: &[u8]) -> Option<i32> {
    let (negative, digits) = match text.first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (whole, fraction) = match find_byte(digits, b'.') {
        Some(dot) => (&digits[..dot], &digits[dot + 1..]),
        None => (digits, &[][..]),
    };
    if (whole.is_empty() && fraction.is_empty())
        || whole.len() > 9
        || !whole.iter().chain(fraction).all(u8::is_ascii_digit)
    {
        return None;
    }
    let digit = |i: usize| fraction.get(i).map_or(0, |d| i64::from(d - b'0'));
    let mut centipawns = whole.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')) * 100
        + digit(0) * 10
        + digit(1);
    if digit(2) >= 5 {
        centipawns += 1;
    }
    let centipawns = centipawns.min(i64::from(MAX_CENTIPAWNS)) as i32;
    Some(if negative { -centipawns } else { centipawns })
}

fn parse_int(text: &[u8]) -> Option<i32> {
    let (negative, digits) = match text.first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || digits.len() > 9 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = digits
        .iter()
        .fold(0i32, |n, d| n * 10 + i32::from(d - b'0'));
    Some(if negative { -n } else { n })
}

/// A rating tag's value (`WhiteElo`, `BlackElo`): `None` for `?`, `-`, or anything that is
/// not a number below 65535.
pub fn parse_elo(text: &str) -> Option<u16> {
    text.trim().parse::<u16>().ok().filter(|&e| e != u16::MAX)
}

/// A PGN `TimeControl` of one period, `base+increment` or `base` (seconds; no increment
/// is 0): `(base, increment)`. `-`, `?`, moves-per-period (`40/7200`), sandclock (`*60`)
/// and several periods give `None`.
pub fn parse_time_control(text: &str) -> Option<(u32, u32)> {
    let text = text.trim();
    let (base, increment) = match text.split_once('+') {
        Some((base, increment)) => (base, Some(increment)),
        None => (text, None),
    };
    let number = |s: &str| {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    Some((number(base)?, increment.map_or(Some(0), number)?))
}

/// A time (seconds) as a `u16` label: capped at 65534 (65535 means unknown).
pub fn seconds_label(seconds: u32) -> u16 {
    seconds.min(u32::from(u16::MAX - 1)) as u16
}

/// Why a `[%clk]` could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadClock(pub String);

impl std::fmt::Display for BadClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The time in the first `[%clk H:MM:SS]` command of a comment's text, in whole seconds
/// (a fraction, `0:00:09.8`, cut off), as lichess writes it after each move: the clock of
/// the side that made the move.
pub fn clock_in_comment(comment: &[u8]) -> Result<Option<u32>, BadClock> {
    const COMMAND: &[u8] = b"[%clk";
    let Some(at) = find_command(comment, COMMAND) else {
        return Ok(None);
    };
    let rest = &comment[at + COMMAND.len()..];
    let end = find_byte(rest, b']').ok_or_else(|| BadClock("unterminated [%clk".to_string()))?;
    let operand = rest[..end].trim_ascii();
    let bad = || {
        BadClock(format!(
            "[%clk {}] is not a time H:MM:SS",
            String::from_utf8_lossy(operand)
        ))
    };
    let (whole, fraction) = match find_byte(operand, b'.') {
        Some(dot) => (&operand[..dot], &operand[dot + 1..]),
        None => (operand, &[][..]),
    };
    if !fraction.iter().all(u8::is_ascii_digit) {
        return Err(bad());
    }
    // One pass over H:MM:SS, each field 1 to 9 digits (a `:` after the last closes it).
    let (mut seconds, mut fields, mut value, mut digits) = (0u64, 0, 0u64, 0);
    for &byte in whole.iter().chain(b":") {
        if byte == b':' {
            if digits == 0 || fields == 3 {
                return Err(bad());
            }
            seconds = seconds * 60 + value;
            (fields, value, digits) = (fields + 1, 0, 0);
        } else if byte.is_ascii_digit() && digits < 9 {
            value = value * 10 + u64::from(byte - b'0');
            digits += 1;
        } else {
            return Err(bad());
        }
    }
    if fields != 3 {
        return Err(bad());
    }
    Ok(Some(seconds.min(u64::from(u32::MAX)) as u32))
}

/// What a comment in lichess's own form gave: the `[%eval]` score (centipawns or a mate,
/// as [`eval_in_comment`] reads it) and the `[%clk]` seconds, each if present, and the
/// bytes read up to and including the closing `}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LichessComment {
    pub eval: Option<i32>,
    pub clock: Option<u32>,
    pub len: usize,
}

/// Reads the text after a `{` in one pass when it is a comment as lichess writes it,
/// ` [%eval 0.17] [%clk 0:02:59] }` (either command may be missing, the eval `#-3` too, the
/// clock with a fraction); `None` for anything else, which then goes to the general
/// readers ([`eval_in_comment`], [`clock_in_comment`]). Where it reads a comment it gives
/// what they give: the form has one command of each kind, in the general readers' own
/// grammar (`fast_path_agrees_with_the_general_readers`). On a one-thread import the
/// three scans of the general readers were a fifth of the time.
pub(crate) fn lichess_comment(text: &[u8], side_to_move: Color) -> Option<LichessComment> {
    let mut at = usize::from(text.first() == Some(&b' '));
    let mut eval = None;
    let mut clock = None;
    if text[at..].starts_with(b"[%eval ") {
        at += b"[%eval ".len();
        let (score, end) = lichess_eval(text, at, side_to_move)?;
        eval = Some(score);
        at = end;
        if text.get(at) == Some(&b' ') && text.get(at + 1) == Some(&b'[') {
            at += 1;
        }
    }
    if text[at..].starts_with(b"[%clk ") {
        at += b"[%clk ".len();
        let (seconds, end) = lichess_clock(text, at)?;
        clock = Some(seconds);
        at = end;
    }
    if eval.is_none() && clock.is_none() {
        return None;
    }
    if text.get(at) == Some(&b' ') {
        at += 1;
    }
    (text.get(at) == Some(&b'}')).then_some(LichessComment {
        eval,
        clock,
        len: at + 1,
    })
}

/// Up to 9 digits from `at` as a number, and where they end; `None` without one (or with
/// more than 9).
#[inline(always)]
fn lichess_digits(text: &[u8], at: usize) -> Option<(u64, usize)> {
    let mut end = at;
    let mut value = 0u64;
    while let Some(&byte) = text.get(end)
        && byte.is_ascii_digit()
    {
        if end - at == 9 {
            return None;
        }
        value = value * 10 + u64::from(byte - b'0');
        end += 1;
    }
    (end > at).then_some((value, end))
}

/// `-?D.DD]` (pawns, exactly two decimals) or `#-?D]` (a mate in moves), from `at`; the
/// score and the index after the `]`.
fn lichess_eval(text: &[u8], mut at: usize, side_to_move: Color) -> Option<(i32, usize)> {
    let mate = text.get(at) == Some(&b'#');
    at += usize::from(mate);
    let negative = text.get(at) == Some(&b'-');
    at += usize::from(negative);
    let (whole, end) = lichess_digits(text, at)?;
    let score = if mate {
        at = end;
        // Nine digits fit an i32, as `parse_int` reads them.
        let moves = whole as i32;
        mate_score(if negative { -moves } else { moves }, side_to_move)
    } else {
        let fraction = text.get(end + 1..end + 3)?;
        if text[end] != b'.' || !fraction.iter().all(u8::is_ascii_digit) {
            return None;
        }
        at = end + 3;
        let centipawns =
            whole * 100 + u64::from(fraction[0] - b'0') * 10 + u64::from(fraction[1] - b'0');
        let centipawns = centipawns.min(MAX_CENTIPAWNS as u64) as i32;
        if negative { -centipawns } else { centipawns }
    };
    (text.get(at) == Some(&b']')).then_some((score, at + 1))
}

/// `H:MM:SS]` or `H:MM:SS.f]` from `at` (each field 1 to 9 digits, as [`clock_in_comment`]
/// takes them); the whole seconds and the index after the `]`.
fn lichess_clock(text: &[u8], at: usize) -> Option<(u32, usize)> {
    // lichess writes `H:MM:SS]` under ten hours: those eight bytes are read at once.
    if let Some(&[h, b':', m1, m2, b':', s1, s2, b']']) = text.get(at..at + 8)
        && [h, m1, m2, s1, s2].iter().all(u8::is_ascii_digit)
    {
        let d = |byte: u8| u32::from(byte - b'0');
        let seconds = (d(h) * 60 + d(m1) * 10 + d(m2)) * 60 + d(s1) * 10 + d(s2);
        return Some((seconds, at + 8));
    }
    let (hours, at) = lichess_digits(text, at)?;
    (text.get(at) == Some(&b':')).then_some(())?;
    let (minutes, at) = lichess_digits(text, at + 1)?;
    (text.get(at) == Some(&b':')).then_some(())?;
    let (seconds, mut at) = lichess_digits(text, at + 1)?;
    if text.get(at) == Some(&b'.') {
        at += 1;
        while text.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
    }
    let total = (hours * 60 + minutes) * 60 + seconds;
    (text.get(at) == Some(&b']')).then_some((total.min(u64::from(u32::MAX)) as u32, at + 1))
}

/// lichess's speed classes, by the estimated duration of a game: base + 40 × increment
/// seconds (lila's `Speed` and `Clock.Config.estimateTotalSeconds`); a game without a
/// clock (`TimeControl "-"`) is correspondence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Speed {
    UltraBullet,
    Bullet,
    Blitz,
    Rapid,
    Classical,
    Correspondence,
}

impl Speed {
    pub const ALL: [Speed; 6] = [
        Speed::UltraBullet,
        Speed::Bullet,
        Speed::Blitz,
        Speed::Rapid,
        Speed::Classical,
        Speed::Correspondence,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Speed::UltraBullet => "ultrabullet",
            Speed::Bullet => "bullet",
            Speed::Blitz => "blitz",
            Speed::Rapid => "rapid",
            Speed::Classical => "classical",
            Speed::Correspondence => "correspondence",
        }
    }

    /// Reads a class's name, case-insensitively (`ultraBullet` as lichess writes it).
    pub fn parse(name: &str) -> Option<Speed> {
        let name = name.trim().to_ascii_lowercase();
        Speed::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The bit of this class in a set of classes.
    pub fn bit(self) -> u8 {
        1 << self as u8
    }

    /// The class of a `TimeControl` tag's value; `None` when it cannot be told.
    pub fn of_time_control(text: &str) -> Option<Speed> {
        if text.trim() == "-" {
            return Some(Speed::Correspondence);
        }
        let (base, increment) = parse_time_control(text)?;
        let estimate = u64::from(base) + 40 * u64::from(increment);
        Some(match estimate {
            0..30 => Speed::UltraBullet,
            30..180 => Speed::Bullet,
            180..480 => Speed::Blitz,
            480..1500 => Speed::Rapid,
            1500..21600 => Speed::Classical,
            _ => Speed::Correspondence,
        })
    }
}

/// A PGN date (`UTCDate`/`Date`, `2024.01.31`; `-` also read) as the number 20240131;
/// `None` when any part is unknown (`2024.??.??`) or it is not a date.
pub fn parse_date(text: &[u8]) -> Option<u32> {
    let text = text.trim_ascii();
    let mut parts = text.split(|&b| b == b'.' || b == b'-');
    let mut field = |len: usize, max: u32| {
        let part = parts.next()?;
        (part.len() == len && part.iter().all(u8::is_ascii_digit))
            .then(|| part.iter().fold(0u32, |n, d| n * 10 + u32::from(d - b'0')))
            .filter(|&v| v <= max && (len == 4 || v >= 1))
    };
    let (year, month, day) = (field(4, 9999)?, field(2, 12)?, field(2, 31)?);
    parts
        .next()
        .is_none()
        .then_some(year * 10000 + month * 100 + day)
}

/// `A..B`, `A..` or `..B`, dates as PGN writes them (`2024.01.31`, or `2024-01-31`).
pub fn parse_date_range(text: &str) -> Result<(u32, u32), String> {
    let (first, last) = text
        .split_once("..")
        .ok_or_else(|| format!("{text:?} is not a range of dates A..B"))?;
    let date = |part: &str, open: u32| {
        if part.trim().is_empty() {
            return Ok(open);
        }
        parse_date(part.as_bytes()).ok_or_else(|| format!("{part:?} is not a date YYYY.MM.DD"))
    };
    let range = (date(first, 0)?, date(last, u32::MAX)?);
    if range.0 > range.1 {
        return Err(format!("{text:?}: the first date is after the last"));
    }
    Ok(range)
}

#[cfg(test)]
mod clock_tests {
    use super::*;

    #[test]
    fn clocks_speeds_and_dates() {
        assert_eq!(
            clock_in_comment(b" [%eval 0.17] [%clk 0:03:00] "),
            Ok(Some(180))
        );
        assert_eq!(clock_in_comment(b"[%clk 1:02:03.9]"), Ok(Some(3723)));
        assert_eq!(clock_in_comment(b"no clock"), Ok(None));
        assert!(clock_in_comment(b"[%clk 3:00]").is_err());
        assert!(clock_in_comment(b"[%clk abc]").is_err());
        assert!(clock_in_comment(b"[%clk 0:03:00").is_err());
        assert_eq!(clock_in_comment(b"[%clk 0:00:09.]"), Ok(Some(9)));
        assert_eq!(clock_in_comment(b"[%clk  10:00:00 ]"), Ok(Some(36000)));
        assert_eq!(
            clock_in_comment(b"[%clk 0:0:123456789]"),
            Ok(Some(123_456_789))
        );
        for bad in [
            "[%clk 0:0:1234567890]",
            "[%clk 0::09]",
            "[%clk :00:09]",
            "[%clk 0:00:]",
            "[%clk 0:00:09.5x]",
            "[%clk 0:00:09.5.1]",
            "[%clk 1:0:00:09]",
            "[%clk .5]",
            "[%clk ]",
            "[%clk 0:0 0:09]",
        ] {
            assert!(clock_in_comment(bad.as_bytes()).is_err(), "{bad}");
        }
        assert_eq!(Speed::of_time_control("15+0"), Some(Speed::UltraBullet));
        assert_eq!(Speed::of_time_control("60+0"), Some(Speed::Bullet));
        assert_eq!(Speed::of_time_control("120+1"), Some(Speed::Bullet));
        assert_eq!(Speed::of_time_control("120+2"), Some(Speed::Blitz));
        assert_eq!(Speed::of_time_control("180+0"), Some(Speed::Blitz));
        assert_eq!(Speed::of_time_control("300+3"), Some(Speed::Blitz));
        assert_eq!(Speed::of_time_control("600+0"), Some(Speed::Rapid));
        assert_eq!(Speed::of_time_control("900+10"), Some(Speed::Rapid));
        assert_eq!(Speed::of_time_control("1800+0"), Some(Speed::Classical));
        assert_eq!(Speed::of_time_control("-"), Some(Speed::Correspondence));
        assert_eq!(Speed::of_time_control("?"), None);
        assert_eq!(Speed::parse("ultraBullet"), Some(Speed::UltraBullet));
        assert_eq!(parse_date(b"2024.01.31"), Some(20240131));
        assert_eq!(parse_date(b"2024-01-31"), Some(20240131));
        assert_eq!(parse_date(b"2024.??.??"), None);
        assert_eq!(parse_date(b"2024.13.01"), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pawns_round_to_the_nearest_centipawn() {
        for (text, cp) in [
            ("0.17", 17),
            ("-0.4", -40),
            ("1.18", 118),
            ("3", 300),
            ("-0.005", -1),
            ("0.004", 0),
            (".5", 50),
            ("+2.35", 235),
            ("999999", MAX_CENTIPAWNS),
            ("-999999", -MAX_CENTIPAWNS),
        ] {
            assert_eq!(pawns_to_centipawns(text.as_bytes()), Some(cp), "{text}");
        }
        for bad in ["", "-", ".", "1.2.3", "abc", "1e3", "1234567890"] {
            assert_eq!(pawns_to_centipawns(bad.as_bytes()), None, "{bad}");
        }
    }

    #[test]
    fn mates_count_plies_from_the_side_to_move() {
        // White mates in 1 with White to move: one ply.
        assert_eq!(mate_score(1, Color::White), MATE - 1);
        // ... with Black to move (Black moves, then White mates): two plies.
        assert_eq!(mate_score(1, Color::Black), MATE - 2);
        assert_eq!(mate_score(-3, Color::Black), -(MATE - 5));
        assert_eq!(mate_score(-3, Color::White), -(MATE - 6));
        assert_eq!(mate_score(0, Color::White), -MATE);
        assert_eq!(mate_score(0, Color::Black), MATE);
    }

    #[test]
    fn eval_commands_are_found_among_other_commands() {
        let eval = |c: &str, side| eval_in_comment(c.as_bytes(), side);
        assert_eq!(
            eval(" [%eval 0.17] [%clk 0:03:00] ", Color::Black),
            Ok(Some(17))
        );
        assert_eq!(
            eval("[%clk 0:03:00] [%eval #-2]", Color::White),
            Ok(Some(-(MATE - 4)))
        );
        assert_eq!(eval("[%eval -1.00,23]", Color::White), Ok(Some(-100)));
        assert_eq!(eval("a good move [%clk 0:01:00]", Color::White), Ok(None));
        assert!(eval("[%eval x]", Color::White).is_err());
        assert!(eval("[%eval 0.3", Color::White).is_err());
    }

    /// The general readers on the comment the fast path read (the text before its `}`).
    fn general(text: &[u8], side: Color) -> (Option<i32>, Option<u32>) {
        let comment = &text[..find_byte(text, b'}').expect("a closing brace")];
        (
            eval_in_comment(comment, side).expect("the fast path read a good eval"),
            clock_in_comment(comment).expect("the fast path read a good clock"),
        )
    }

    #[test]
    fn fast_path_reads_lichess_comments() {
        let read = |text: &str, side| lichess_comment(text.as_bytes(), side);
        let comment = |eval, clock, len| Some(LichessComment { eval, clock, len });
        assert_eq!(
            read(" [%eval 0.92] [%clk 0:02:59] } 2. e4", Color::White),
            comment(Some(92), Some(179), 30)
        );
        assert_eq!(
            read(" [%eval -12.05] }", Color::White),
            comment(Some(-1205), None, 17)
        );
        assert_eq!(
            read(" [%eval #-2] [%clk 1:00:00.5] }", Color::White),
            comment(Some(-(MATE - 4)), Some(3600), 31)
        );
        assert_eq!(
            read("[%clk 0:00:09]}", Color::Black),
            comment(None, Some(9), 15)
        );
        // Anything else is left to the general readers, good or bad.
        for other in [
            " }",
            " a good move }",
            " [%eval 0.9] }",
            " [%eval 0.917] }",
            " [%eval +0.92] }",
            " [%eval 0.92,23] }",
            " [%eval 0.92]  }",
            "  [%eval 0.92] }",
            " [%clk 0:02:59] [%eval 0.92] }",
            " [%eval 0.92] [%clk 0:02] }",
            " [%eval 0.92] [%clk 0:02:59] [%eval 0.50] }",
            " [%eval 0.92] [%clk 0:02:59] text }",
            " [%eval x] }",
            " [%clk 1234567890:00:00] }",
            " [%eval 0.92] [%clk 0:02:59]",
            " [%eval 0.92",
        ] {
            assert_eq!(read(other, Color::White), None, "{other:?}");
        }
    }

    /// Generated comments near lichess's form, most of them in it: wherever the fast path
    /// reads one, the general readers read the same from it.
    #[test]
    fn fast_path_agrees_with_the_general_readers() {
        let mut state = 0x5eed_u64;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let pieces: [&[u8]; 14] = [
            b"0",
            b"9",
            b"12",
            b"999999999",
            b"1234567890",
            b".",
            b"-",
            b"#",
            b":",
            b" ",
            b"]",
            b"[%clk ",
            b"[%eval ",
            b"+",
        ];
        let mut read = 0;
        for case in 0..200_000 {
            let mut text = Vec::new();
            if next(2) == 0 {
                text.push(b' ');
            }
            if next(4) != 0 {
                text.extend_from_slice(b"[%eval ");
                if next(3) == 0 {
                    text.extend_from_slice(if next(2) == 0 { b"#" } else { b"#-" });
                    text.extend_from_slice(next(1_000_000_000).to_string().as_bytes());
                } else {
                    if next(2) == 0 {
                        text.push(b'-');
                    }
                    let whole = [next(10), next(100), next(1_000_000_000)][next(3) as usize];
                    text.extend_from_slice(format!("{whole}.{:02}", next(100)).as_bytes());
                }
                text.extend_from_slice(b"] ");
            }
            if next(4) != 0 {
                let fraction = if next(3) == 0 { ".7" } else { "" };
                text.extend_from_slice(
                    format!(
                        "[%clk {}:{:02}:{:02}{fraction}] ",
                        next(12),
                        next(60),
                        next(60)
                    )
                    .as_bytes(),
                );
            }
            // Some comments damaged: a byte changed, or a piece put in.
            match next(4) {
                0 if !text.is_empty() => {
                    let at = next(text.len() as u64) as usize;
                    text[at] = b"0-.:#] [%x"[next(10) as usize];
                }
                1 => {
                    let at = next(text.len() as u64 + 1) as usize;
                    let piece = pieces[next(pieces.len() as u64) as usize];
                    text.splice(at..at, piece.iter().copied());
                }
                _ => {}
            }
            text.extend_from_slice(b"} 12. Nf3");
            let side = if case % 2 == 0 {
                Color::White
            } else {
                Color::Black
            };
            if let Some(fast) = lichess_comment(&text, side) {
                read += 1;
                assert_eq!(
                    text[fast.len - 1],
                    b'}',
                    "{}",
                    String::from_utf8_lossy(&text)
                );
                assert_eq!(
                    (fast.eval, fast.clock),
                    general(&text, side),
                    "{}",
                    String::from_utf8_lossy(&text)
                );
            }
        }
        // Most of the comments are in lichess's form, so the fast path read most.
        assert!(read > 100_000, "the fast path read only {read} of 200,000");
    }

    #[test]
    fn tags_give_ratings_and_time_controls() {
        assert_eq!(parse_elo("2100"), Some(2100));
        assert_eq!(parse_elo("?"), None);
        assert_eq!(parse_time_control("300+3"), Some((300, 3)));
        assert_eq!(parse_time_control("60"), Some((60, 0)));
        for unknown in ["-", "?", "", "40/7200:3600", "*60", "300+", "+3"] {
            assert_eq!(parse_time_control(unknown), None, "{unknown}");
        }
        assert_eq!(seconds_label(1_209_600), 65534);
    }
}
