//! A scanner for the one shape of lichess's evaluation lines, several times faster than
//! serde_json on them: it walks the whole JSON structure (so that a malformed line is not
//! taken), skips string contents with `memchr`, and reads only the numbers it needs.
//!
//! It handles a subset of JSON and answers `None` for anything outside it, and for every
//! error: the caller then parses the line with serde_json, whose reading is the reference
//! and whose messages are the ones reported. The subset: printable ASCII without
//! backslashes (so no escapes, control characters or UTF-8 to check, and only the space
//! as whitespace), the objects as objects (serde also takes a struct as an array), no
//! key twice, and the integers it reads written as serde_json reads them into an integer
//! (no fraction, exponent or `-0`, which it reads as floats, which integer fields refuse).
//! Whatever the scanner takes, serde_json takes and reads the same way; the differential
//! tests in `differential.rs` check that on generated and mangled lines.

use super::Pv;

/// How deeply values the scanner skips may nest; deeper ones are left to serde_json,
/// which skips values of any depth.
const MAX_NESTING: u32 = 64;

/// The FEN and the first PV of the deepest evaluation (`None` in it if no evaluation has
/// a PV), or `None` if serde_json must read the line.
pub(super) fn scan(line: &[u8]) -> Option<(&str, Option<Pv>)> {
    if !is_plain(line) {
        return None;
    }
    let mut scanner = Scanner { text: line, at: 0 };
    let (fen, evals) = scanner.line()?;
    if scanner.peek().is_some() {
        return None;
    }
    Some((std::str::from_utf8(fen).ok()?, evals))
}

/// Printable ASCII (DEL included, as JSON allows it in strings) without backslashes.
fn is_plain(line: &[u8]) -> bool {
    // No early exit, so that the loop is vectorized: lines are short, and nearly all pass.
    let bad = line.iter().fold(false, |bad, &b| {
        bad | (b.wrapping_sub(0x20) >= 0x60) | (b == b'\\')
    });
    !bad
}

struct Scanner<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    /// The next byte that is not a space (the only whitespace in the subset).
    #[inline]
    fn peek(&mut self) -> Option<u8> {
        while let Some(&b) = self.text.get(self.at) {
            if b != b' ' {
                return Some(b);
            }
            self.at += 1;
        }
        None
    }

    #[inline]
    fn eat(&mut self, byte: u8) -> Option<()> {
        if self.peek()? == byte {
            self.at += 1;
            Some(())
        } else {
            None
        }
    }

    /// A string's contents, the scanner past its closing quote.
    #[inline]
    fn string(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let rest = &self.text[self.at..];
        let len = memchr::memchr(b'"', rest)?;
        self.at += len + 1;
        Some(&rest[..len])
    }

    /// A key: short, so found faster byte by byte than by `memchr`'s vector loop.
    #[inline]
    fn key(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let rest = &self.text[self.at..];
        let len = rest.iter().position(|&b| b == b'"')?;
        self.at += len + 1;
        Some(&rest[..len])
    }

    /// An object, `field` called for each key with the scanner before the value.
    #[inline]
    fn object(&mut self, mut field: impl FnMut(&mut Self, &'a [u8]) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            let key = self.key()?;
            self.eat(b':')?;
            field(self, key)?;
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// An array, `element` called for each element with its index.
    #[inline]
    fn array(&mut self, mut element: impl FnMut(&mut Self, usize) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        if self.peek()? == b']' {
            self.at += 1;
            return Some(());
        }
        let mut index = 0;
        loop {
            element(self, index)?;
            index += 1;
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Any value, checked but not built.
    fn skip(&mut self, nesting: u32) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' if nesting > 0 => self.object(|s, _| s.skip(nesting - 1)),
            b'[' if nesting > 0 => self.array(|s, _| s.skip(nesting - 1)),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.skip_number(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        if self.text[self.at..].starts_with(word) {
            self.at += word.len();
            Some(())
        } else {
            None
        }
    }

    /// A number of any form JSON allows.
    fn skip_number(&mut self) -> Option<()> {
        let mut at = self.at;
        if self.text.get(at) == Some(&b'-') {
            at += 1;
        }
        match self.text.get(at)? {
            b'0' => at += 1,
            b'1'..=b'9' => at = self.digits_from(at),
            _ => return None,
        }
        if self.text.get(at) == Some(&b'.') {
            let start = at + 1;
            at = self.digits_from(start);
            if at == start {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.text.get(at) {
            at += 1;
            if let Some(b'+' | b'-') = self.text.get(at) {
                at += 1;
            }
            let start = at;
            at = self.digits_from(start);
            if at == start {
                return None;
            }
        }
        self.at = at;
        Some(())
    }

    /// Where the run of digits from `at` ends.
    #[inline]
    fn digits_from(&self, mut at: usize) -> usize {
        while let Some(b'0'..=b'9') = self.text.get(at) {
            at += 1;
        }
        at
    }

    /// An integer written as serde_json reads one into an integer type: an optional
    /// minus, then `0` or a digit run without a leading zero (at most 10 digits: more
    /// overflow every type read here), no fraction or exponent, and not `-0`.
    #[inline]
    fn integer(&mut self) -> Option<i64> {
        self.peek()?;
        let negative = self.text[self.at] == b'-';
        let start = self.at + usize::from(negative);
        let end = self.digits_from(start);
        let digits = &self.text[start..end];
        if digits.is_empty()
            || digits.len() > 10
            || (digits[0] == b'0' && (digits.len() > 1 || negative))
            || matches!(self.text.get(end), Some(b'.' | b'e' | b'E'))
        {
            return None;
        }
        let value = digits
            .iter()
            .fold(0i64, |value, &d| value * 10 + i64::from(d - b'0'));
        self.at = end;
        Some(if negative { -value } else { value })
    }

    /// An `Option<i32>` field: `null` or an integer in range.
    #[inline]
    fn optional_i32(&mut self) -> Option<Option<i32>> {
        if self.peek()? == b'n' {
            self.literal(b"null")?;
            return Some(None);
        }
        i32::try_from(self.integer()?).ok().map(Some)
    }

    /// `{"fen": ..., "evals": [...]}`, keys in any order, others skipped.
    fn line(&mut self) -> Option<(&'a [u8], Option<Pv>)> {
        let mut fen = None;
        let mut evals = None;
        self.object(|s, key| match key {
            b"fen" if fen.is_none() => {
                fen = Some(s.string()?);
                Some(())
            }
            b"evals" if evals.is_none() => {
                evals = Some(s.evals()?);
                Some(())
            }
            b"fen" | b"evals" => None,
            _ => s.skip(MAX_NESTING),
        })?;
        Some((fen?, evals?))
    }

    /// The first PV of the deepest evaluation with one (the first of equally deep ones).
    fn evals(&mut self) -> Option<Option<Pv>> {
        let mut best: Option<(u32, Pv)> = None;
        self.array(|s, _| {
            let (depth, first_pv) = s.eval()?;
            if let Some(pv) = first_pv
                && best.is_none_or(|(best_depth, _)| depth > best_depth)
            {
                best = Some((depth, pv));
            }
            Some(())
        })?;
        Some(best.map(|(_, pv)| pv))
    }

    /// `{"pvs": [...], "depth": 36, ...}`: the depth and the first PV.
    fn eval(&mut self) -> Option<(u32, Option<Pv>)> {
        let mut depth = None;
        let mut pvs = None;
        self.object(|s, key| match key {
            b"depth" if depth.is_none() => {
                depth = Some(u32::try_from(s.integer()?).ok()?);
                Some(())
            }
            b"pvs" if pvs.is_none() => {
                pvs = Some(s.first_pv()?);
                Some(())
            }
            b"depth" | b"pvs" => None,
            _ => s.skip(MAX_NESTING),
        })?;
        Some((depth?, pvs?))
    }

    fn first_pv(&mut self) -> Option<Option<Pv>> {
        let mut first = None;
        self.array(|s, index| {
            if index == 0 {
                first = Some(s.pv()?);
                Some(())
            } else {
                s.skip(MAX_NESTING)
            }
        })?;
        Some(first)
    }

    /// `{"cp": 31, "line": "..."}` or `{"mate": -2, ...}`.
    fn pv(&mut self) -> Option<Pv> {
        let mut cp = None;
        let mut mate = None;
        self.object(|s, key| match key {
            b"cp" if cp.is_none() => {
                cp = Some(s.optional_i32()?);
                Some(())
            }
            b"mate" if mate.is_none() => {
                mate = Some(s.optional_i32()?);
                Some(())
            }
            b"cp" | b"mate" => None,
            _ => s.skip(MAX_NESTING),
        })?;
        Some(Pv {
            cp: cp.flatten(),
            mate: mate.flatten(),
        })
    }
}
