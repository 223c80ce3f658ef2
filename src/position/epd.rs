//! EPD: the four position fields (or a six-field FEN), then operations such as
//! `bm Qg6; id "WAC.001"; c9 "1-0";`, kept in order as a list.

use std::fmt::{self, Write};

use thiserror::Error;

use crate::position::board::Position;
use crate::position::fen::{self, ClockMode, FenError, Tokens};

/// One EPD operation: an opcode and its operands (quoted strings without their quotes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation {
    pub opcode: String,
    pub operands: Vec<String>,
}

/// An EPD record: a position and its operations, in the order written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Epd {
    pub position: Position,
    pub operations: Vec<Operation>,
}

impl Epd {
    /// The operands of the first operation with this opcode.
    pub fn operation(&self, opcode: &str) -> Option<&[String]> {
        self.operations
            .iter()
            .find(|op| op.opcode == opcode)
            .map(|op| op.operands.as_slice())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum EpdError {
    #[error(transparent)]
    Fen(#[from] FenError),
    #[error("operations, character {column}: {reason}")]
    Operation { column: usize, reason: &'static str },
}

/// An operation as it stands in the text: no allocation, operands split on demand.
#[derive(Clone, Copy, Debug)]
pub struct RawOperation<'a> {
    pub opcode: &'a str,
    operands: &'a str,
}

impl<'a> RawOperation<'a> {
    /// The operands, a quoted string as one operand without its quotes.
    pub fn operands(&self) -> impl Iterator<Item = &'a str> + 'a {
        let mut rest = self.operands.trim_start();
        std::iter::from_fn(move || {
            if rest.is_empty() {
                return None;
            }
            let (operand, tail) = if let Some(quoted) = rest.strip_prefix('"') {
                let end = quoted.find('"').unwrap_or(quoted.len());
                (&quoted[..end], quoted.get(end + 1..).unwrap_or(""))
            } else {
                let end = rest
                    .find(|c: char| c.is_ascii_whitespace())
                    .unwrap_or(rest.len());
                (&rest[..end], &rest[end..])
            };
            rest = tail.trim_start();
            Some(operand)
        })
    }

    /// The first operand, if there is one.
    pub fn first_operand(&self) -> Option<&'a str> {
        self.operands().next()
    }
}

/// Parses an EPD line into a position and the text where its operations start.
pub fn parse_position(text: &str) -> Result<(Position, usize), FenError> {
    let mut tokens = Tokens::new(text);
    let position = fen::parse_fields(text, &mut tokens, ClockMode::IfNumeric)?;
    let (_, offset) = tokens.rest();
    Ok((position, offset))
}

/// Splits the operations of `text` (starting at byte `offset`), checking their syntax.
pub fn raw_operations(
    text: &str,
    offset: usize,
) -> impl Iterator<Item = Result<RawOperation<'_>, EpdError>> {
    let bytes = text.as_bytes();
    let mut pos = offset;
    std::iter::from_fn(move || {
        while pos < bytes.len() && bytes[pos].is_ascii_whitespace() {
            pos += 1;
        }
        if pos >= bytes.len() {
            return None;
        }
        let fail = |at: usize, reason| {
            Some(Err(EpdError::Operation {
                column: fen::column(text, at),
                reason,
            }))
        };
        if !bytes[pos].is_ascii_alphabetic() {
            let at = pos;
            pos = bytes.len();
            return fail(at, "an opcode must start with a letter");
        }
        let start = pos;
        while pos < bytes.len() && !bytes[pos].is_ascii_whitespace() && bytes[pos] != b';' {
            pos += 1;
        }
        let opcode = &text[start..pos];
        let operands_start = pos;
        let mut in_string = false;
        while pos < bytes.len() && (in_string || bytes[pos] != b';') {
            if bytes[pos] == b'"' {
                in_string = !in_string;
            }
            pos += 1;
        }
        if in_string {
            pos = bytes.len();
            return fail(operands_start, "unterminated string");
        }
        let operands = &text[operands_start..pos];
        // A missing ';' after the last operation is tolerated: many files omit it.
        if pos < bytes.len() {
            pos += 1;
        }
        Some(Ok(RawOperation { opcode, operands }))
    })
}

/// Parses a whole EPD line.
pub fn parse_epd(text: &str) -> Result<Epd, EpdError> {
    let (position, offset) = parse_position(text)?;
    let operations = raw_operations(text, offset)
        .map(|op| {
            op.map(|op| Operation {
                opcode: op.opcode.to_string(),
                operands: op.operands().map(str::to_string).collect(),
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(Epd {
        position,
        operations,
    })
}

/// Appends one operation, quoting operands that need it, e.g. ` c9 "1-0";`.
pub fn write_operation(out: &mut String, opcode: &str, operands: &[&str]) {
    out.push(' ');
    out.push_str(opcode);
    for operand in operands {
        let needs_quotes = operand.is_empty()
            || operand.contains(|c: char| c.is_ascii_whitespace() || c == ';' || c == '"')
            || operand.contains('/')
            || (operand.contains('-') && operand.parse::<i64>().is_err());
        if needs_quotes {
            let _ = write!(out, " \"{}\"", operand.replace('"', "'"));
        } else {
            let _ = write!(out, " {operand}");
        }
    }
    out.push(';');
}

impl fmt::Display for Epd {
    /// The four position fields (and the two clocks when they are not 0 and 1: a FEN's
    /// six fields, which the reader takes), then the operations.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut line = String::new();
        fen::write_position_fields(&self.position, &mut line);
        let clocks = (
            self.position.halfmove_clock(),
            self.position.fullmove_number(),
        );
        if clocks != (0, 1) {
            let _ = write!(line, " {} {}", clocks.0, clocks.1);
        }
        for op in &self.operations {
            let operands: Vec<&str> = op.operands.iter().map(String::as_str).collect();
            write_operation(&mut line, &op.opcode, &operands);
        }
        f.write_str(&line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_keep_order_and_quoted_text() {
        let epd = parse_epd(
            "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - bm Qg6 Rf7; id \"WAC; 001\"; c0 \"a b\"",
        )
        .unwrap();
        let opcodes: Vec<&str> = epd.operations.iter().map(|o| o.opcode.as_str()).collect();
        assert_eq!(opcodes, ["bm", "id", "c0"]);
        assert_eq!(epd.operation("bm").unwrap(), ["Qg6", "Rf7"]);
        assert_eq!(epd.operation("id").unwrap(), ["WAC; 001"]);
        assert_eq!(epd.operation("c0").unwrap(), ["a b"]);
        assert_eq!(
            epd.to_string(),
            "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - bm Qg6 Rf7; id \"WAC; 001\"; c0 \"a b\";"
        );
    }

    #[test]
    fn six_field_fen_then_operations() {
        let epd = parse_epd("4k3/8/8/8/8/8/8/4K3 b - - 5 60 ce -12; D1 5;").unwrap();
        assert_eq!(epd.position.halfmove_clock(), 5);
        assert_eq!(epd.position.fullmove_number(), 60);
        assert_eq!(epd.operation("ce").unwrap(), ["-12"]);
        assert_eq!(epd.operation("D1").unwrap(), ["5"]);
    }
}
