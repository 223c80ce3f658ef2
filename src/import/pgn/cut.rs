//! Cutting PGN text into games, line by line, where python-chess's `read_game` cuts it
//! (python-chess 1.11), so that both readers see the same games:
//!
//! - lines are ended by `\n`, `\r\n` or a lone `\r` (Python's universal newlines);
//! - before a game, blank lines and lines starting with `%` or `;` are skipped, and a
//!   UTF-8 byte-order mark at the start of a game's first line is dropped;
//! - a game's first other line starts its tag section: lines starting with `[`, with at
//!   most one blank line between two of them, and `%`/`;` lines skipped;
//! - the first other line starts the movetext, which runs to a blank line that is not
//!   inside a `{...}` comment (the blank line ends the game), or to the end of the input.
//!   A line starting with `%` or `;` outside a comment is skipped.
//!
//! Two deliberate differences, where python-chess would merge games: a whole tag-pair line
//! at the start of a movetext line outside a comment starts the next game (archives that
//! leave out the blank line between games), and a `{` left open across a blank line
//! followed by a tag pair ends its game there, flagged, instead of swallowing the games
//! after it.

/// One game's place in the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct GameSpan {
    /// The game's first byte (after any byte-order mark).
    pub start: usize,
    /// Where its movetext starts (`end` when it has none).
    pub movetext: usize,
    /// After its last line, line ending included.
    pub end: usize,
    /// The number of its first line (1-based, in the whole input).
    pub first_line: u64,
    /// The number of the line `movetext` is on.
    pub movetext_line: u64,
}

const BOM: &[u8] = b"\xef\xbb\xbf";

/// Python's `str.isspace()` on a line (line ending excluded, an empty line counting as
/// blank, as `"\n".isspace()` does), for ASCII.
pub(super) fn is_blank(line: &[u8]) -> bool {
    line.iter()
        .all(|&b| matches!(b, b' ' | b'\t' | 0x0b | 0x0c | 0x1c..=0x1f))
}

/// `[Name "value"]` as python-chess's `TAG_REGEX` matches it:
/// `^\[([A-Za-z0-9][A-Za-z0-9_+#=:-]*)\s+"([^\r]*)"\]\s*$`: the value runs to the last
/// `"]`, so unescaped quotes inside it are kept.
pub(super) fn tag_pair(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let inner = line.strip_prefix(b"[")?;
    let end = inner.len() - inner.iter().rev().take_while(|b| is_blank(&[**b])).count();
    let inner = inner[..end].strip_suffix(b"\"]")?;
    let first = *inner.first()?;
    if !first.is_ascii_alphanumeric() {
        return None;
    }
    let name_len = inner
        .iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || b"_+#=:-".contains(&b))
        .count();
    let rest = &inner[name_len..];
    let spaces = rest.iter().take_while(|b| is_blank(&[**b])).count();
    if spaces == 0 {
        return None;
    }
    let value = rest[spaces..].strip_prefix(b"\"")?;
    Some((&inner[..name_len], value))
}

/// The next line of `text` from `at`: `(line, next)` with the line ending left out, or
/// `None` when no whole line is left. A line is whole when its ending is seen (a `\r` at
/// the very end is not, unless `eof`: a `\n` may follow) or when `eof` says the text ends.
pub(super) fn next_line(text: &[u8], at: usize, eof: bool) -> Option<(&[u8], usize)> {
    let rest = text.get(at..)?;
    match memchr::memchr2(b'\n', b'\r', rest) {
        Some(i) if rest[i] == b'\n' => Some((&rest[..i], at + i + 1)),
        Some(i) => match rest.get(i + 1) {
            Some(b'\n') => Some((&rest[..i], at + i + 2)),
            Some(_) => Some((&rest[..i], at + i + 1)),
            None if eof => Some((&rest[..i], at + i + 1)),
            None => None,
        },
        None if eof && !rest.is_empty() => Some((rest, text.len())),
        None => None,
    }
}

/// Where the cutter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Between,
    Tags { blank_lines: u8 },
    Movetext { in_comment: bool, last_blank: bool },
}

/// The games of `text`: every game that ends within it (with `eof`, the last one too),
/// and where the unread rest starts with its line number (the start of a game not yet
/// ended, or the end). `first_line` is the number of the text's first line.
pub(super) fn cut_games(
    text: &[u8],
    first_line: u64,
    eof: bool,
    games: &mut Vec<GameSpan>,
) -> (usize, u64) {
    let mut phase = Phase::Between;
    let mut game = GameSpan {
        start: 0,
        movetext: 0,
        end: 0,
        first_line,
        movetext_line: first_line,
    };
    // The rest to hand back: after the last game ended, or before the one being cut.
    let mut rest = (0, first_line);
    let mut at = 0;
    let mut line_number = first_line;
    while let Some((line, next)) = next_line(text, at, eof) {
        let mut reread = true;
        while reread {
            reread = false;
            match phase {
                Phase::Between => {
                    let bom = if line.starts_with(BOM) { BOM.len() } else { 0 };
                    let content = &line[bom..];
                    if !(is_blank(content)
                        || content.starts_with(b"%")
                        || content.starts_with(b";"))
                    {
                        game = GameSpan {
                            start: at + bom,
                            movetext: next,
                            end: next,
                            first_line: line_number,
                            movetext_line: line_number,
                        };
                        rest = (at, line_number);
                        phase = Phase::Tags { blank_lines: 0 };
                        if !content.starts_with(b"[") {
                            phase = movetext_at(&mut game, at + bom, line_number);
                            reread = true;
                        }
                    } else {
                        rest = (next, line_number + 1);
                    }
                }
                Phase::Tags { blank_lines } => {
                    if line.starts_with(b"%") || line.starts_with(b";") {
                    } else if is_blank(line) && blank_lines < 1 {
                        phase = Phase::Tags { blank_lines: 1 };
                    } else if line.starts_with(b"[") {
                        phase = Phase::Tags { blank_lines: 0 };
                    } else {
                        phase = movetext_at(&mut game, at, line_number);
                        reread = true;
                    }
                    if !reread {
                        // No movetext yet: it would start after this line.
                        game.movetext = next;
                        game.movetext_line = line_number + 1;
                    }
                }
                Phase::Movetext {
                    in_comment,
                    last_blank,
                } => {
                    let blank = is_blank(line);
                    if !in_comment {
                        if line.starts_with(b"%") || line.starts_with(b";") {
                            // skipped
                        } else if blank || tag_pair(line).is_some() {
                            game.end = at;
                            games.push(game.clone());
                            rest = (at, line_number);
                            phase = Phase::Between;
                            // The blank line is the game's end; a tag pair starts the next.
                            reread = !blank;
                        } else {
                            phase = Phase::Movetext {
                                in_comment: ends_in_comment(line, false),
                                last_blank: false,
                            };
                        }
                    } else if last_blank && tag_pair(line).is_some() {
                        // The game's parse finds its comment still open.
                        game.end = at;
                        games.push(game.clone());
                        rest = (at, line_number);
                        phase = Phase::Between;
                        reread = true;
                    } else {
                        phase = Phase::Movetext {
                            in_comment: ends_in_comment(line, true),
                            last_blank: blank,
                        };
                    }
                }
            }
        }
        if phase != Phase::Between {
            game.end = next;
        }
        at = next;
        line_number += 1;
    }
    if eof && phase != Phase::Between {
        game.end = text.len();
        games.push(game);
        rest = (text.len(), line_number);
    } else if phase == Phase::Between {
        rest = (at, line_number);
    }
    rest
}

fn movetext_at(game: &mut GameSpan, at: usize, line_number: u64) -> Phase {
    game.movetext = at;
    game.movetext_line = line_number;
    Phase::Movetext {
        in_comment: false,
        last_blank: false,
    }
}

/// Whether a movetext line leaves a `{` comment open, given whether it starts in one: a
/// `{` opens a comment outside one, the first `}` closes it, and `;` outside a comment
/// ends the line.
pub(super) fn ends_in_comment(line: &[u8], in_comment: bool) -> bool {
    // Whatever came before, a line whose last brace is `}` ends outside a comment: that
    // brace closes one or stands outside one, and no `{` follows it. A lichess line of a
    // hundred comments is decided from its end, not by two searches a comment.
    match memchr::memrchr2(b'{', b'}', line) {
        Some(last) if line[last] == b'}' => false,
        None => in_comment,
        Some(_) => ends_in_comment_scanned(line, in_comment),
    }
}

/// [`ends_in_comment`] by a scan from the start of the line.
fn ends_in_comment_scanned(line: &[u8], mut in_comment: bool) -> bool {
    let mut at = 0;
    loop {
        if in_comment {
            match memchr::memchr(b'}', &line[at..]) {
                Some(i) => {
                    in_comment = false;
                    at += i + 1;
                }
                None => return true,
            }
        } else {
            match memchr::memchr2(b'{', b';', &line[at..]) {
                Some(i) if line[at + i] == b'{' => {
                    in_comment = true;
                    at += i + 1;
                }
                _ => return false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_decided_from_its_end_is_decided_as_by_a_scan() {
        let mut state = 56u64;
        let alphabet = b"{};a ";
        for _ in 0..100_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (state >> 60) as usize;
            let line: Vec<u8> = (0..len)
                .map(|i| alphabet[((state >> (3 * i + 2)) % 5) as usize])
                .collect();
            for start in [false, true] {
                assert_eq!(
                    ends_in_comment(&line, start),
                    ends_in_comment_scanned(&line, start),
                    "{:?} starting in a comment: {start}",
                    String::from_utf8_lossy(&line)
                );
            }
        }
    }

    fn cut(text: &str) -> Vec<(u64, String)> {
        let mut games = Vec::new();
        let (rest, _) = cut_games(text.as_bytes(), 1, true, &mut games);
        assert_eq!(rest, text.len());
        games
            .iter()
            .map(|g| (g.first_line, text[g.start..g.end].to_string()))
            .collect()
    }

    #[test]
    fn games_end_at_blank_lines_outside_comments() {
        let text = "[Event \"a\"]\n\n1. e4 { a\n\nb } e5 1-0\n\n1. d4 *\n";
        assert_eq!(
            cut(text),
            vec![
                (1, "[Event \"a\"]\n\n1. e4 { a\n\nb } e5 1-0\n".to_string()),
                (7, "1. d4 *\n".to_string())
            ]
        );
    }

    #[test]
    fn carriage_returns_end_lines_and_a_bom_is_dropped() {
        let text = "\u{feff}[Event \"a\"]\r\r1. e4 *\r\r[Event \"b\"]\r\n\r\n1. d4 *";
        let games = cut(text);
        assert_eq!(games.len(), 2);
        assert_eq!(games[0].0, 1);
        assert!(games[0].1.starts_with("[Event \"a\"]"));
        assert_eq!(games[1].0, 5);
    }

    #[test]
    fn a_tag_pair_after_movetext_starts_the_next_game() {
        let games = cut("[Event \"a\"]\n1. e4 *\n[Event \"b\"]\n1. d4 *\n");
        assert_eq!(games.len(), 2);
        assert_eq!(games[1].0, 3);
    }

    #[test]
    fn an_open_comment_stops_at_a_blank_line_and_a_tag_pair() {
        let mut games = Vec::new();
        let text = b"1. e4 { open\n\n[Event \"b\"]\n\n1. d4 *\n";
        cut_games(text, 1, true, &mut games);
        assert_eq!(games.len(), 2);
        assert_eq!(&text[games[0].start..games[0].end], b"1. e4 { open\n\n");
        assert_eq!(games[1].first_line, 3);
    }

    #[test]
    fn a_game_not_yet_ended_is_left_for_the_next_read() {
        let text = b"[Event \"a\"]\n\n1. e4 *\n\n[Event \"b\"]\n\n1. d4";
        let mut games = Vec::new();
        let (rest, line) = cut_games(text, 10, false, &mut games);
        assert_eq!(games.len(), 1);
        assert_eq!(&text[rest..], b"[Event \"b\"]\n\n1. d4");
        assert_eq!(line, 14);
        // A lone \r at the end may be half of \r\n: not a whole line yet.
        let mut games = Vec::new();
        let (rest, _) = cut_games(b"1. e4 *\r\n\r", 1, false, &mut games);
        assert!(games.is_empty());
        assert_eq!(rest, 0);
    }

    #[test]
    fn tag_pairs_as_python_chess_reads_them() {
        assert_eq!(
            tag_pair(b"[Annotator \"Lopez \"Battle Royale\"\"]"),
            Some((&b"Annotator"[..], &b"Lopez \"Battle Royale\""[..]))
        );
        assert_eq!(tag_pair(b"[Event \"\"]  "), Some((&b"Event"[..], &b""[..])));
        assert_eq!(tag_pair(b"[Event\"x\"]"), None);
        assert_eq!(tag_pair(b"[Event \"x]"), None);
        assert_eq!(tag_pair(b"[_x \"y\"]"), None);
    }
}
