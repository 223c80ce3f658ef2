//! The network file and the plain integer reference.
//!
//! Two layouts load (`docs/NNUE.md`):
//! - **raw**, as bullet's CPU examples save a `(768 → N) × 2 → 1` SCReLU net: little-endian
//!   `i16`, first-layer weights `[768][N]` and biases `[N]` at QA = 255, output weights
//!   `[2N]` (the side to move's half first) at QB = 64, output bias at QA × QB; 1542 N + 2
//!   bytes, bullet pads it with zeros to a multiple of 64. N is read off the size.
//! - **pawnstorm's**, the raw payload behind a 64-byte header (magic, version, the
//!   architecture, a CRC-32 of what follows) and a provenance text (how it was trained).
//!   Its header may declare output buckets (bullet's `MaterialCount<B>`): the output layer
//!   is then `B` sets of weights and biases, `[B][2N]` and `[B]`, each position read by the
//!   set of its piece count (see [`bucket_of`]). A raw file has one output.
//!
//! Inside, every row is padded with zeros to a multiple of 32 values ([`Chunk`]s, one
//! AVX-512 register each), so the kernels never handle a remainder: a padded hidden
//! neuron's sum stays 0 and its output weight is 0.

use std::path::Path;

pub use super::arch::Arch;
use super::inputs::{InputLayout, Orientation};
use super::{HIDDEN_STEP, INPUTS, MAX_BUCKETS, MAX_HIDDEN, MIN_HIDDEN, QA, QB, SCALE};

/// 32 values of a row, aligned for one 512-bit load.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct Chunk(pub [i16; 32]);

pub const MAGIC: [u8; 16] = *b"pawnstorm-nnue\r\n";
/// Plain `Chess768` nets are written as version 1 (what every pawnstorm reads); king-bucketed
/// ones as version 2, whose header is followed by the 32-byte king bucket map.
pub const VERSION: u32 = 1;
pub const VERSION_KING_BUCKETS: u32 = 2;
pub const HEADER_BYTES: usize = 64;
/// The king bucket map after a version 2 header: one byte a square of files a–d, rank 1
/// first.
pub const MAP_BYTES: usize = 32;
const ACTIVATION_SCRELU: u32 = 1;

/// Why a network file was refused.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    // The reason in the message, not as a `source` too: printed with its causes (`{:#}`,
    // as the CLI prints errors) it would appear twice.
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error(
        "{name}: {size} bytes is no (768 → N) × 2 → 1 network: a raw bullet file of width N \
         (a multiple of 16 from 16 to 1536) has 1542·N + 2 bytes, padded with zeros to a \
         multiple of 64 (N = 128: 197,378 or 197,440), and a pawnstorm file starts with \
         `pawnstorm-nnue` (a raw file of another architecture loads with its --arch)"
    )]
    Size { name: String, size: usize },
    #[error(
        "{name}: {size} bytes is no {arch} network: a raw bullet file of width N (a multiple \
         of 16 from 16 to 1536) has {per_n}·N + {fixed} bytes, padded with zeros to a \
         multiple of 64"
    )]
    ArchSize {
        name: String,
        size: usize,
        arch: String,
        per_n: usize,
        fixed: usize,
    },
    #[error("{name}: {detail}")]
    Architecture { name: String, detail: String },
    #[error(
        "{name}: checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): the \
         file is damaged or was cut short"
    )]
    Checksum {
        name: String,
        stored: u32,
        computed: u32,
    },
}

/// A quantised network, ready for inference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Network {
    inputs: InputLayout,
    hidden: usize,
    chunks: usize,
    /// `[768 × K][chunks]`.
    ft_weights: Vec<Chunk>,
    ft_bias: Vec<Chunk>,
    /// Output buckets (1: a single output layer).
    buckets: usize,
    /// `[buckets][2][chunks]`: each bucket's side to move's half first.
    out_weights: Vec<Chunk>,
    /// `[buckets]`.
    out_bias: Vec<i16>,
    /// Every output weight within ±128, so that `v · w` fits `i16` for `v ≤ 255` and the
    /// kernels may multiply before widening (bullet's clipping keeps them there).
    small_output_weights: bool,
    provenance: String,
}

/// The bytes of a raw `Chess768` file of width `hidden`, unpadded.
pub fn raw_size(hidden: usize) -> usize {
    payload_size(hidden, 1)
}

/// The bytes of a `Chess768` payload of width `hidden` with `buckets` output buckets.
pub fn payload_size(hidden: usize, buckets: usize) -> usize {
    layout_payload_size(INPUTS, hidden, buckets)
}

/// The bytes of a payload of `inputs` inputs (768 × K), width `hidden` and `buckets`
/// output buckets.
pub fn layout_payload_size(inputs: usize, hidden: usize, buckets: usize) -> usize {
    2 * (inputs * hidden + hidden + buckets * (2 * hidden + 1))
}

/// The output bucket of a position of `pieces` pieces (kings and pawns included) among
/// `buckets`: bullet's `MaterialCount<B>`, `(pieces − 2) / ⌈32 / B⌉` (with 8: 2–5 pieces
/// bucket 0, …, 30–32 bucket 7).
#[inline(always)]
pub fn bucket_of(pieces: usize, buckets: usize) -> usize {
    (pieces.saturating_sub(2) / 32usize.div_ceil(buckets)).min(buckets - 1)
}

/// The pieces on `boards` (colour × 6 + type).
#[inline(always)]
pub fn piece_count(boards: &[u64; 12]) -> usize {
    boards.iter().map(|b| b.count_ones() as usize).sum()
}

fn padded_to_64(n: usize) -> usize {
    n.div_ceil(64) * 64
}

fn valid_width(hidden: usize) -> bool {
    (MIN_HIDDEN..=MAX_HIDDEN).contains(&hidden) && hidden.is_multiple_of(HIDDEN_STEP)
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

impl Network {
    /// A network from its quantised parameters in the raw layout's order (`ft_weights`
    /// `[768][hidden]`, `out_weights` `[2 × hidden]`).
    pub fn from_parts(
        hidden: usize,
        ft_weights: &[i16],
        ft_bias: &[i16],
        out_weights: &[i16],
        out_bias: i16,
        provenance: &str,
    ) -> Result<Network, String> {
        Network::from_bucketed_parts(
            hidden,
            1,
            ft_weights,
            ft_bias,
            out_weights,
            &[out_bias],
            provenance,
        )
    }

    /// [`Network::from_parts`] with `buckets` output buckets: `out_weights`
    /// `[buckets][2 × hidden]`, `out_bias` `[buckets]`.
    pub fn from_bucketed_parts(
        hidden: usize,
        buckets: usize,
        ft_weights: &[i16],
        ft_bias: &[i16],
        out_weights: &[i16],
        out_bias: &[i16],
        provenance: &str,
    ) -> Result<Network, String> {
        Network::from_layout_parts(
            InputLayout::CHESS768,
            hidden,
            buckets,
            ft_weights,
            ft_bias,
            out_weights,
            out_bias,
            provenance,
        )
    }

    /// [`Network::from_bucketed_parts`] with the inputs `inputs`: `ft_weights`
    /// `[768 × K][hidden]`, bucket by bucket.
    #[allow(clippy::too_many_arguments)]
    pub fn from_layout_parts(
        inputs: InputLayout,
        hidden: usize,
        buckets: usize,
        ft_weights: &[i16],
        ft_bias: &[i16],
        out_weights: &[i16],
        out_bias: &[i16],
        provenance: &str,
    ) -> Result<Network, String> {
        if !(1..=MAX_BUCKETS).contains(&buckets) {
            return Err(format!(
                "{buckets} output buckets: from 1 to {MAX_BUCKETS} are played"
            ));
        }
        if !valid_width(hidden) {
            return Err(format!(
                "a hidden width of {hidden}: it must be a multiple of {HIDDEN_STEP} from \
                 {MIN_HIDDEN} to {MAX_HIDDEN}"
            ));
        }
        if ft_weights.len() != inputs.inputs() * hidden
            || ft_bias.len() != hidden
            || out_weights.len() != buckets * 2 * hidden
            || out_bias.len() != buckets
        {
            return Err(format!(
                "parameters of the wrong sizes for width {hidden} and {buckets} output \
                 buckets: {} first-layer weights, {} biases, {} output weights, {} output \
                 biases",
                ft_weights.len(),
                ft_bias.len(),
                out_weights.len(),
                out_bias.len()
            ));
        }
        let chunks = hidden.div_ceil(32);
        let pad = |rows: usize, values: &[i16]| {
            let mut out = vec![Chunk::default(); rows * chunks];
            for (row, source) in values.chunks_exact(hidden).enumerate() {
                for (i, &v) in source.iter().enumerate() {
                    out[row * chunks + i / 32].0[i % 32] = v;
                }
            }
            out
        };
        Ok(Network {
            inputs,
            hidden,
            chunks,
            ft_weights: pad(inputs.inputs(), ft_weights),
            ft_bias: pad(1, ft_bias),
            buckets,
            out_weights: pad(2 * buckets, out_weights),
            out_bias: out_bias.to_vec(),
            small_output_weights: out_weights.iter().all(|w| w.unsigned_abs() <= 128),
            provenance: provenance.to_string(),
        })
    }

    /// A network of pseudo-random weights within the ranges a clipped trainer gives (first
    /// layer ±1.98·QA around a small positive bias, output weights ±127, so every kernel
    /// path is exercised without overflow): for tests and benchmarks, where the speed and
    /// the agreement of the paths do not depend on what the weights know.
    pub fn random(hidden: usize, seed: u64) -> Result<Network, String> {
        Network::random_bucketed(hidden, 1, seed)
    }

    /// [`Network::random`] with `buckets` output buckets (with 1, the same network).
    pub fn random_bucketed(hidden: usize, buckets: usize, seed: u64) -> Result<Network, String> {
        Network::random_with(InputLayout::CHESS768, hidden, buckets, seed)
    }

    /// [`Network::random_bucketed`] with the inputs `inputs` (with `Chess768`, the same
    /// network).
    pub fn random_with(
        inputs: InputLayout,
        hidden: usize,
        buckets: usize,
        seed: u64,
    ) -> Result<Network, String> {
        let mut state = seed ^ 0x9e37_79b9_7f4a_7c15;
        let mut next = move |range: i32| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            ((z % (2 * range as u64 + 1)) as i32 - range) as i16
        };
        let ft_weights: Vec<i16> = (0..inputs.inputs() * hidden).map(|_| next(40)).collect();
        let ft_bias: Vec<i16> = (0..hidden).map(|_| next(60) + 60).collect();
        let out_weights: Vec<i16> = (0..buckets * 2 * hidden).map(|_| next(127)).collect();
        let out_bias: Vec<i16> = (0..buckets).map(|_| next(2000)).collect();
        Network::from_layout_parts(
            inputs,
            hidden,
            buckets,
            &ft_weights,
            &ft_bias,
            &out_weights,
            &out_bias,
            "random",
        )
    }

    /// Reads a network file, either layout.
    pub fn load(path: &Path) -> Result<Network, NetError> {
        Network::load_as(path, None)
    }

    /// Reads a network file; a raw file is read as `arch` (default: `Chess768`, one
    /// output), a pawnstorm file must agree with `arch` when one is given.
    pub fn load_as(path: &Path, arch: Option<&Arch>) -> Result<Network, NetError> {
        let bytes = std::fs::read(path).map_err(|error| NetError::Io {
            path: path.display().to_string(),
            error,
        })?;
        Network::from_bytes_as(&bytes, &path.display().to_string(), arch)
    }

    /// A network from a file's bytes; `name` names it in errors.
    pub fn from_bytes(bytes: &[u8], name: &str) -> Result<Network, NetError> {
        Network::from_bytes_as(bytes, name, None)
    }

    /// [`Network::from_bytes`] with the architecture of a raw file ([`Network::load_as`]).
    pub fn from_bytes_as(
        bytes: &[u8],
        name: &str,
        arch: Option<&Arch>,
    ) -> Result<Network, NetError> {
        if bytes.starts_with(&MAGIC) {
            let net = Network::from_pawnstorm_bytes(bytes, name)?;
            if let Some(arch) = arch
                && *arch != net.arch()
            {
                return Err(NetError::Architecture {
                    name: name.to_string(),
                    detail: format!(
                        "the file says {} where the architecture given says {arch} (a \
                         pawnstorm file records its own: no --arch is needed)",
                        net.arch()
                    ),
                });
            }
            return Ok(net);
        }
        let arch = arch.copied().unwrap_or_default();
        let size = bytes.len();
        let (inputs, buckets) = (arch.inputs.inputs(), arch.output_buckets);
        let hidden = (MIN_HIDDEN..=MAX_HIDDEN)
            .step_by(HIDDEN_STEP)
            .find(|&n| {
                let exact = layout_payload_size(inputs, n, buckets);
                size == exact
                    || (size == padded_to_64(exact) && bytes[exact..].iter().all(|&b| b == 0))
            })
            .ok_or_else(|| {
                if arch == Arch::default() {
                    NetError::Size {
                        name: name.to_string(),
                        size,
                    }
                } else {
                    NetError::ArchSize {
                        name: name.to_string(),
                        size,
                        arch: format!("{} → N → {buckets}", arch.inputs.shorthand()),
                        per_n: 2 * (inputs + 1 + 2 * buckets),
                        fixed: 2 * buckets,
                    }
                }
            })?;
        let exact = layout_payload_size(inputs, hidden, buckets);
        Network::from_raw(&bytes[..exact], arch.inputs, hidden, buckets, "").map_err(|detail| {
            NetError::Architecture {
                name: name.to_string(),
                detail,
            }
        })
    }

    fn from_pawnstorm_bytes(bytes: &[u8], name: &str) -> Result<Network, NetError> {
        let refuse = |detail: String| NetError::Architecture {
            name: name.to_string(),
            detail,
        };
        if bytes.len() < HEADER_BYTES {
            return Err(refuse(format!(
                "a pawnstorm network cut short: {} bytes, less than its 64-byte header",
                bytes.len()
            )));
        }
        let field = |i: usize| read_u32(bytes, 16 + 4 * i);
        let [
            version,
            inputs,
            hidden,
            buckets,
            activation,
            qa,
            qb,
            scale,
            text_len,
            crc,
        ] = std::array::from_fn(field);
        let payload_len = u64::from_le_bytes(bytes[56..64].try_into().unwrap_or([0; 8])) as usize;
        if version != VERSION && version != VERSION_KING_BUCKETS {
            return Err(refuse(format!(
                "file format version {version}; this pawnstorm reads versions {VERSION} and \
                 {VERSION_KING_BUCKETS}"
            )));
        }
        let map_len = if version == VERSION_KING_BUCKETS {
            MAP_BYTES
        } else {
            0
        };
        if bytes.len() < HEADER_BYTES + map_len {
            return Err(refuse(format!(
                "a pawnstorm network cut short: {} bytes, less than its header and king \
                 bucket map",
                bytes.len()
            )));
        }
        let layout = if version == VERSION_KING_BUCKETS {
            let map: [u8; 32] = std::array::from_fn(|i| bytes[HEADER_BYTES + i]);
            InputLayout::mirrored(map).map_err(&refuse)?
        } else {
            InputLayout::CHESS768
        };
        let (hidden, buckets) = (hidden as usize, buckets as usize);
        if inputs as usize != layout.inputs()
            || !(1..=MAX_BUCKETS).contains(&buckets)
            || activation != ACTIVATION_SCRELU
            || !valid_width(hidden)
        {
            return Err(refuse(format!(
                "another architecture: {inputs} inputs ({} by its king bucket map), {hidden} \
                 hidden, {buckets} output buckets, activation {activation}; this pawnstorm \
                 plays (768 × K → N) × 2 → 1 SCReLU nets with N a multiple of 16 from 16 to \
                 {MAX_HIDDEN} and 1 to {MAX_BUCKETS} output buckets",
                layout.inputs()
            )));
        }
        if (qa as i32, qb as i32, scale as i32) != (QA, QB, SCALE) {
            return Err(refuse(format!(
                "quantised at QA {qa}, QB {qb}, scale {scale}; pawnstorm's are {QA}, {QB}, {SCALE}"
            )));
        }
        let body = &bytes[HEADER_BYTES..];
        let payload = layout_payload_size(layout.inputs(), hidden, buckets);
        let expected = map_len + text_len as usize + payload;
        if payload_len != payload || body.len() != expected {
            return Err(refuse(format!(
                "{} bytes after the header where {} inputs, width {hidden} and {buckets} \
                 output buckets need {expected}: the file was cut short or has bytes added",
                body.len(),
                layout.inputs()
            )));
        }
        let computed = crc32fast::hash(body);
        if computed != crc {
            return Err(NetError::Checksum {
                name: name.to_string(),
                stored: crc,
                computed,
            });
        }
        let (text, raw) = body[map_len..].split_at(text_len as usize);
        let provenance = String::from_utf8_lossy(text);
        Network::from_raw(raw, layout, hidden, buckets, &provenance).map_err(refuse)
    }

    fn from_raw(
        raw: &[u8],
        inputs: InputLayout,
        hidden: usize,
        buckets: usize,
        provenance: &str,
    ) -> Result<Network, String> {
        let values: Vec<i16> = raw
            .chunks_exact(2)
            .map(|b| i16::from_le_bytes([b[0], b[1]]))
            .collect();
        let (ft_weights, rest) = values.split_at(inputs.inputs() * hidden);
        let (ft_bias, rest) = rest.split_at(hidden);
        let (out_weights, out_bias) = rest.split_at(buckets * 2 * hidden);
        Network::from_layout_parts(
            inputs,
            hidden,
            buckets,
            ft_weights,
            ft_bias,
            out_weights,
            out_bias,
            provenance,
        )
    }

    /// The raw layout, unpadded: what bullet's examples would load (with output buckets,
    /// bullet's bucketed layout: `[B][2N]` output weights, then `[B]` biases).
    pub fn raw_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(layout_payload_size(
            self.inputs.inputs(),
            self.hidden,
            self.buckets,
        ));
        let mut put = |rows: &[Chunk]| {
            for row in rows.chunks_exact(self.chunks) {
                for i in 0..self.hidden {
                    out.extend_from_slice(&row[i / 32].0[i % 32].to_le_bytes());
                }
            }
        };
        put(&self.ft_weights);
        put(&self.ft_bias);
        put(&self.out_weights);
        for bias in &self.out_bias {
            out.extend_from_slice(&bias.to_le_bytes());
        }
        out
    }

    /// pawnstorm's layout: header, (king bucket map,) provenance, raw payload.
    pub fn to_bytes(&self) -> Vec<u8> {
        let raw = self.raw_bytes();
        let text = self.provenance.as_bytes();
        let mut body = Vec::with_capacity(MAP_BYTES + text.len() + raw.len());
        let version = if self.inputs.is_mirrored() {
            body.extend_from_slice(&self.inputs.map());
            VERSION_KING_BUCKETS
        } else {
            VERSION
        };
        body.extend_from_slice(text);
        body.extend_from_slice(&raw);
        let mut out = Vec::with_capacity(HEADER_BYTES + body.len());
        out.extend_from_slice(&MAGIC);
        for field in [
            version,
            self.inputs.inputs() as u32,
            self.hidden as u32,
            self.buckets as u32,
            ACTIVATION_SCRELU,
            QA as u32,
            QB as u32,
            SCALE as u32,
            text.len() as u32,
            crc32fast::hash(&body),
        ] {
            out.extend_from_slice(&field.to_le_bytes());
        }
        out.extend_from_slice(&(raw.len() as u64).to_le_bytes());
        out.extend_from_slice(&body);
        out
    }

    /// Writes pawnstorm's layout whole or not at all (a temporary file renamed into place).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        use std::io::Write;
        let (mut temp, pending) = crate::io::durable::temp_file_for(path, ".net-", ".tmp")?;
        temp.write_all(&self.to_bytes())?;
        temp.as_file().sync_all()?;
        pending.commit(|| temp.persist(path).map_err(|e| e.error))?;
        crate::io::durable::sync_parent_dir(path)
    }

    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// Output buckets (1: none).
    pub fn buckets(&self) -> usize {
        self.buckets
    }

    /// The inputs it reads.
    pub fn inputs(&self) -> InputLayout {
        self.inputs
    }

    /// Its inputs and output buckets, as `--arch` gives them for a raw file.
    pub fn arch(&self) -> Arch {
        Arch {
            inputs: self.inputs,
            output_buckets: self.buckets,
        }
    }

    /// `"N hidden"`, with `", B output buckets"` when there are, and the king buckets in
    /// front when there are (`"768x4hm inputs, …"`).
    pub fn shape(&self) -> String {
        let inputs = if self.inputs.is_mirrored() {
            format!(
                "{} inputs (king buckets {}), ",
                self.inputs.shorthand(),
                self.inputs.map_text()
            )
        } else {
            String::new()
        };
        match self.buckets {
            1 => format!("{inputs}{} hidden", self.hidden),
            b => format!("{inputs}{} hidden, {b} output buckets", self.hidden),
        }
    }

    /// Both perspectives' orientations of `boards` ([`InputLayout::orientations`]).
    #[inline(always)]
    pub fn orientations(&self, boards: &[u64; 12]) -> [Orientation; 2] {
        self.inputs.orientations(boards)
    }

    /// The output bucket of a position with piece boards `boards`.
    #[inline(always)]
    pub fn bucket(&self, boards: &[u64; 12]) -> usize {
        if self.buckets == 1 {
            0
        } else {
            bucket_of(piece_count(boards), self.buckets)
        }
    }

    /// [`Chunk`]s per row.
    pub fn chunks(&self) -> usize {
        self.chunks
    }

    pub fn provenance(&self) -> &str {
        &self.provenance
    }

    pub fn set_provenance(&mut self, text: &str) {
        self.provenance = text.to_string();
    }

    /// CRC-32 of the raw payload: names a network in logs whatever its file layout.
    pub fn checksum(&self) -> u32 {
        crc32fast::hash(&self.raw_bytes())
    }

    /// The first-layer row of input `feature`.
    #[inline(always)]
    pub fn row(&self, feature: usize) -> &[Chunk] {
        &self.ft_weights[feature * self.chunks..(feature + 1) * self.chunks]
    }

    /// Every first-layer row, `[768 × K][chunks]`.
    pub fn weights(&self) -> &[Chunk] {
        &self.ft_weights
    }

    pub fn bias(&self) -> &[Chunk] {
        &self.ft_bias
    }

    /// Output bucket `bucket`'s weights: the side to move's half, then the other.
    #[inline(always)]
    pub fn output_weights(&self, bucket: usize) -> (&[Chunk], &[Chunk]) {
        self.out_weights[bucket * 2 * self.chunks..(bucket + 1) * 2 * self.chunks]
            .split_at(self.chunks)
    }

    pub fn small_output_weights(&self) -> bool {
        self.small_output_weights
    }

    /// The final scaling of the output layer's sum `Σ screlu(acc) × w` (wrapping `i32`):
    /// `(sum / QA + b) × 400 / (QA × QB)`, divisions truncating; in `i64` past the sum so
    /// that the scaling itself cannot overflow.
    #[inline(always)]
    pub fn finish(&self, sum: i32, bucket: usize) -> i32 {
        let value = (sum as i64 / QA as i64 + self.out_bias[bucket] as i64) * SCALE as i64;
        (value / (QA as i64 * QB as i64)) as i32
    }

    /// The first-layer rows of `boards`' pieces from `perspective`'s side (0 White, 1 Black),
    /// for the plain references.
    fn piece_rows<'a>(
        &'a self,
        boards: &'a [u64; 12],
        perspective: usize,
    ) -> impl Iterator<Item = &'a [Chunk]> + 'a {
        // The king's bucket and the mirroring worked out here in plain code, not by
        // `InputLayout::orientation`.
        let king = boards[6 * perspective + 5].trailing_zeros() as usize & 63;
        let view = if perspective == 1 { king ^ 56 } else { king };
        let mirror = self.inputs.is_mirrored() && king % 8 >= 4;
        let map = self.inputs.map();
        let bucket = map[(view / 8) * 4
            + if view % 8 >= 4 {
                7 - view % 8
            } else {
                view % 8
            }];
        boards.iter().enumerate().flat_map(move |(piece, &board)| {
            let squares = std::iter::successors(Some(board), |&b| Some(b & b.wrapping_sub(1)))
                .take_while(|&b| b != 0)
                .map(|b| b.trailing_zeros() as usize);
            squares.map(move |square| {
                let square = if mirror { square ^ 7 } else { square };
                let plain = super::feature(perspective, piece / 6, piece % 6, square);
                self.row(bucket as usize * INPUTS + plain)
            })
        })
    }

    /// The integer reference: the accumulators summed from scratch in plain code, White's
    /// perspective and Black's, `hidden` values each (wrapping `i16`, as the kernels add).
    pub fn reference_accumulators(&self, boards: &[u64; 12]) -> [Vec<i16>; 2] {
        std::array::from_fn(|perspective| {
            let mut acc: Vec<i16> = (0..self.hidden)
                .map(|i| self.ft_bias[i / 32].0[i % 32])
                .collect();
            for row in self.piece_rows(boards, perspective) {
                for (i, a) in acc.iter_mut().enumerate() {
                    *a = a.wrapping_add(row[i / 32].0[i % 32]);
                }
            }
            acc
        })
    }

    /// The integer reference's output through bucket `bucket`: `Σ clamp(acc, 0, QA)² × w`
    /// over both halves (wrapping `i32`), finished by [`Network::finish`].
    pub fn reference_output(&self, stm: &[i16], nstm: &[i16], bucket: usize) -> i32 {
        let (ours, theirs) = self.output_weights(bucket);
        let mut sum = 0i32;
        for (acc, weights) in [(stm, ours), (nstm, theirs)] {
            for (i, &a) in acc.iter().enumerate() {
                let v = (a as i32).clamp(0, QA);
                sum = sum.wrapping_add((v * v).wrapping_mul(weights[i / 32].0[i % 32] as i32));
            }
        }
        self.finish(sum, bucket)
    }

    /// The integer reference's evaluation of the position whose piece boards are `boards`
    /// (colour × 6 + type, White first), in centipawns from the side to move's view.
    pub fn evaluate_reference(&self, boards: &[u64; 12], black_to_move: bool) -> i32 {
        let [white, black] = self.reference_accumulators(boards);
        // The bucket counted here in plain code, not by `Self::bucket`.
        let pieces: usize = boards.iter().map(|b| b.count_ones() as usize).sum();
        let bucket =
            (pieces.saturating_sub(2) / 32usize.div_ceil(self.buckets)).min(self.buckets - 1);
        if black_to_move {
            self.reference_output(&black, &white, bucket)
        } else {
            self.reference_output(&white, &black, bucket)
        }
    }

    /// The same network in floating point (dequantised weights, no rounding on the way):
    /// what the quantised evaluation approximates.
    pub fn evaluate_float(&self, boards: &[u64; 12], black_to_move: bool) -> f64 {
        let qa = QA as f64;
        let qb = QB as f64;
        let accumulate = |perspective: usize| -> Vec<f64> {
            let mut acc: Vec<f64> = (0..self.hidden)
                .map(|i| self.ft_bias[i / 32].0[i % 32] as f64 / qa)
                .collect();
            for row in self.piece_rows(boards, perspective) {
                for (i, a) in acc.iter_mut().enumerate() {
                    *a += row[i / 32].0[i % 32] as f64 / qa;
                }
            }
            acc
        };
        let (us, them) = if black_to_move { (1, 0) } else { (0, 1) };
        let bucket = self.bucket(boards);
        let (ours, theirs) = self.output_weights(bucket);
        let mut out = self.out_bias[bucket] as f64 / (qa * qb);
        for (acc, weights) in [(accumulate(us), ours), (accumulate(them), theirs)] {
            for (i, a) in acc.iter().enumerate() {
                let v = a.clamp(0.0, 1.0);
                out += v * v * weights[i / 32].0[i % 32] as f64 / qb;
            }
        }
        out * SCALE as f64
    }
}
