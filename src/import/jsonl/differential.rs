//! The scanner against serde_json, the reference: on generated lines (keys in any order,
//! unknown keys, whitespace, escapes, mates, ties in depth, numbers of every form) and on
//! mangled ones (truncated, bytes replaced, brackets removed), `parse_eval_line` must give
//! exactly what serde_json alone gives, errors included, and whatever the scanner takes,
//! serde_json must take and read the same way.

use super::scan::scan;
use super::*;

/// A xorshift generator; `wild` lines also get what the scanner leaves to serde_json
/// (escapes, tabs and newlines, non-ASCII text).
struct Rng {
    state: u64,
    wild: bool,
}

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng {
            state: seed,
            wild: false,
        }
    }

    fn next(&mut self) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn percent(&mut self, p: usize) -> bool {
        self.below(100) < p
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

const FENS: [&str; 6] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -",
    "2bq1rk1/pr3ppn/1p2p3/7P/2pP1B1P/2P5/PPQ2PB1/R3R1K1 w - -",
    "6k1/5ppp/8/8/8/8/5PPP/3R2K1 b - -",
    "r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6",
    // Not a position: the line is good JSON, and both must give the same FEN error.
    "8/8/8/8/8/8/8/8 w - -",
    "4k3/8/8/8/8/8/8/4K3 b - - 0 1",
];

/// Whitespace as JSON allows it between tokens, usually none.
fn ws(rng: &mut Rng) -> &'static str {
    if rng.wild {
        rng.pick(&["", "", "", " ", "\t", "\r\n ", "\n"])
    } else {
        rng.pick(&["", "", "", "", " ", "  "])
    }
}

/// A JSON string literal of `text`, now and then with escapes serde_json must undo.
fn string(rng: &mut Rng, text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            _ if rng.wild && rng.percent(3) => out.push_str(&format!("\\u{:04x}", c as u32)),
            '/' if rng.wild && rng.percent(5) => out.push_str("\\/"),
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

fn number(rng: &mut Rng) -> String {
    rng.pick(&[
        "0",
        "-0",
        "7",
        "-12",
        "36",
        "123456789012345678901234",
        "1.5",
        "-0.25",
        "1e3",
        "2E+10",
        "-3.5e-2",
        "0.0",
        "1E0",
        "18446744073709551615",
    ])
    .to_string()
}

/// Any JSON value, nested up to `depth`.
fn value(rng: &mut Rng, depth: u32) -> String {
    match rng.below(if depth == 0 { 5 } else { 7 }) {
        0 => number(rng),
        1 => rng.pick(&["true", "false", "null"]).to_string(),
        2 | 3 => {
            let text = if rng.wild {
                rng.pick(&[
                    "a \"quoted\" word",
                    "back\\slash",
                    "caf\u{e9}",
                    "tab\there",
                    "\u{1f600}",
                ])
            } else {
                rng.pick(&["", "e2e4 e7e5 g1f3", "{[,:]}", "a b"])
            };
            if text.contains('\t') {
                // A raw tab in a string is an error; written escaped it is not.
                format!("\"{}\"", text.replace('\t', "\\t"))
            } else {
                string(rng, text)
            }
        }
        4 => number(rng),
        5 => {
            let items: Vec<String> = (0..rng.below(4)).map(|_| value(rng, depth - 1)).collect();
            format!("[{}{}]", items.join(","), ws(rng))
        }
        _ => {
            let fields: Vec<(String, String)> = (0..rng.below(4))
                .map(|_| (key(rng), value(rng, depth - 1)))
                .collect();
            object(rng, fields)
        }
    }
}

/// A key the importer does not know.
fn key(rng: &mut Rng) -> String {
    let name = rng.pick(&[
        "knodes", "line", "x", "", "Fen", "evals2", "depths", "c p", "é",
    ]);
    let name = if name.is_ascii() || rng.wild {
        name
    } else {
        "e"
    };
    string(rng, name)
}

/// An object of `fields` (keys already literals) in a random order, with whitespace.
fn object(rng: &mut Rng, mut fields: Vec<(String, String)>) -> String {
    for i in (1..fields.len()).rev() {
        fields.swap(i, rng.below(i + 1));
    }
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{}{k}{}:{}{v}{}", ws(rng), ws(rng), ws(rng), ws(rng)))
        .collect();
    format!("{{{}{}}}", body.join(","), ws(rng))
}

/// An integer field's value: mostly in range, sometimes not, now and then written in a
/// form serde_json reads as a float (which integer fields refuse) or refuses.
fn integer(rng: &mut Rng) -> String {
    match rng.below(16) {
        0 => rng
            .pick(&[
                "2147483647",
                "-2147483648",
                "2147483648",
                "-2147483649",
                "4294967295",
            ])
            .to_string(),
        1 => rng
            .pick(&["-0", "0", "1.0", "2e1", "01", "-", "12345678901", "-1e0"])
            .to_string(),
        2 | 3 => (rng.below(40) as i64 - 20).to_string(),
        _ => (rng.below(1200) as i64 - 600).to_string(),
    }
}

fn pv(rng: &mut Rng) -> String {
    let mut fields = Vec::new();
    match rng.below(20) {
        0 => {}
        1 => fields.push((string(rng, "cp"), "null".to_string())),
        2 => {
            fields.push((string(rng, "cp"), integer(rng)));
            fields.push((string(rng, "mate"), integer(rng)));
        }
        3..=5 => fields.push((string(rng, "mate"), (rng.below(41) as i64 - 20).to_string())),
        _ => fields.push((string(rng, "cp"), integer(rng))),
    }
    if rng.percent(5) {
        fields.push((string(rng, "mate"), "null".to_string()));
    }
    if rng.percent(90) {
        fields.push((string(rng, "line"), string(rng, "e2e4 e7e5 g1f3 b8c6")));
    }
    if rng.percent(10) {
        fields.push((key(rng), value(rng, 2)));
    }
    object(rng, fields)
}

fn eval(rng: &mut Rng) -> String {
    let pvs: Vec<String> = (0..rng.below(4) + usize::from(rng.percent(80)))
        .map(|_| pv(rng))
        .collect();
    let mut fields = vec![
        (string(rng, "pvs"), format!("[{}]", pvs.join(","))),
        // Few depths, so that ties are common.
        (
            string(rng, "depth"),
            if rng.percent(3) {
                integer(rng)
            } else {
                (20 + rng.below(4)).to_string()
            },
        ),
    ];
    if rng.percent(80) {
        fields.push((string(rng, "knodes"), number(rng)));
    }
    if rng.percent(10) {
        fields.push((key(rng), value(rng, 3)));
    }
    object(rng, fields)
}

/// A line as lichess writes them, or nearly: every variation JSON and the format allow.
fn line(rng: &mut Rng) -> String {
    rng.wild = rng.percent(25);
    let evals: Vec<String> = (0..rng.below(4) + usize::from(rng.percent(90)))
        .map(|_| eval(rng))
        .collect();
    let fen = rng.pick(&FENS);
    let mut fields = vec![
        (string(rng, "fen"), string(rng, fen)),
        (
            string(rng, "evals"),
            format!("[{}{}]", evals.join(&format!(",{}", ws(rng))), ws(rng)),
        ),
    ];
    if rng.percent(15) {
        fields.push((key(rng), value(rng, 3)));
    }
    format!("{}{}{}", ws(rng), object(rng, fields), ws(rng))
}

#[test]
fn generated_lines_read_as_serde_json_reads_them() {
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    let (mut scanned, mut good) = (0, 0);
    let n = 20_000;
    for _ in 0..n {
        let line = line(&mut rng);
        scanned += usize::from(agrees_with_serde(line.as_bytes()));
        good += usize::from(matches!(parse_eval_line(line.as_bytes()), Ok(Some(_))));
    }
    // Not a vacuous agreement: most lines take the scanner's path, and many are good.
    assert!(scanned > n / 2, "{scanned} of {n} scanned");
    assert!(good > n / 4, "{good} of {n} good");
}

#[test]
fn mangled_lines_are_refused_as_serde_json_refuses_them() {
    let mut rng = Rng::new(0x2545_f491_4f6c_dd1d);
    let mut lines = Vec::new();
    while lines.len() < 24 {
        let line = line(&mut rng);
        // Lines the scanner reads, so that each mangling tests it.
        if line.len() < 700 && scan(line.as_bytes()).is_some() {
            lines.push(line.into_bytes());
        }
    }
    let (mut refused, mut total) = (0, 0);
    let mut try_line = |mangled: &[u8]| {
        agrees_with_serde(mangled);
        total += 1;
        refused += usize::from(parse_eval_line(mangled).is_err());
    };
    for line in &lines {
        for end in 0..line.len() {
            try_line(&line[..end]);
        }
        for at in 0..line.len() {
            for &byte in b"\"{}[],:0-.eEnx \\\t\x01\xc3" {
                let mut mangled = line.clone();
                mangled[at] = byte;
                try_line(&mangled);
            }
            if b"{}[]\",:".contains(&line[at]) {
                let mut mangled = line.clone();
                mangled.remove(at);
                try_line(&mangled);
                let mut doubled = line.clone();
                doubled.insert(at, line[at]);
                try_line(&doubled);
            }
        }
    }
    assert!(refused > total / 2, "{refused} of {total} refused");
}

#[test]
fn scanner_reads_the_lines_lichess_writes() {
    // The shape of database.lichess.org's file, compact as it is written.
    let line = br#"{"fen":"r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq -","evals":[{"pvs":[{"cp":31,"line":"f1b5 g8f6 e1g1"},{"cp":22,"line":"d2d4 e5d4"}],"knodes":206765,"depth":36},{"pvs":[{"mate":-3,"line":"b1c3"}],"knodes":1,"depth":36}]}"#;
    assert_eq!(
        scan(line),
        Some((
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq -",
            Some(Pv {
                cp: Some(31),
                mate: None
            })
        ))
    );
    assert!(agrees_with_serde(line));
}
