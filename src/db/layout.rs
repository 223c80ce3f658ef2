//! The `.psdb` header and the column layout of a block (see `docs/FORMAT.md`).

use std::path::Path;

use super::DbError;
pub use crate::position::labels::U16_LABEL_COUNT;

/// `PSDB`, then bytes that a text-mode transfer or a truncation to 7 bits would change.
pub const MAGIC: [u8; 8] = *b"PSDB\r\n\x1a\n";
/// The version pawnstorm writes.
pub const FORMAT_VERSION: u32 = 5;
/// The oldest version pawnstorm reads.
pub const OLDEST_VERSION: u32 = 1;
pub const HEADER_SIZE: usize = 128;
pub const DEFAULT_BLOCK_SIZE: u32 = 4096;
/// Smallest block: 64 rows keep every column a multiple of 64 bytes.
pub const MIN_BLOCK_SIZE: u32 = 64;
pub const MAX_BLOCK_SIZE: u32 = 1 << 20;
const ALIGN: usize = 64;
/// From version 2 each block ends with a trailer of this size: zero bytes, then the block's
/// CRC-32 in its last 4. 64 bytes keep the next block's columns aligned.
pub const TRAILER_SIZE: usize = 64;

pub const NO_SQUARE: u8 = 0xff;
pub const NO_RESULT: i8 = i8::MIN;
pub const NO_SCORE: i32 = i32::MIN;
pub const NO_GAME: u32 = u32::MAX;
pub const NO_PLY: u16 = u16::MAX;
/// "Unknown" in each of the [`U16_LABELS`] columns (Elo, time control, move, clock).
pub const NO_U16: u16 = u16::MAX;

/// The `u16` label columns, in file order after `ply`: the players' Elo ratings, the time
/// control's base time and increment in seconds, and the move played from the position in
/// its game (see [`crate::position::labels::encode_move`]), which version 3 added; the
/// mover's clock after that move, in seconds, which version 5 added.
pub const U16_LABELS: [(Columns, &str); U16_LABEL_COUNT] = [
    (Columns::WHITE_ELO, "white_elo"),
    (Columns::BLACK_ELO, "black_elo"),
    (Columns::BASE_SECONDS, "base_seconds"),
    (Columns::INCREMENT, "increment"),
    (Columns::MOVE, "move"),
    (Columns::CLOCK, "clock"),
];

/// Which optional label columns a DB holds (bit set in the header's `columns` field).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Columns(u32);

impl Columns {
    pub const NONE: Columns = Columns(0);
    pub const RESULT: Columns = Columns(1);
    pub const SCORE: Columns = Columns(2);
    pub const GAME_ID: Columns = Columns(4);
    pub const PLY: Columns = Columns(8);
    pub const WHITE_ELO: Columns = Columns(16);
    pub const BLACK_ELO: Columns = Columns(32);
    pub const BASE_SECONDS: Columns = Columns(64);
    pub const INCREMENT: Columns = Columns(128);
    pub const MOVE: Columns = Columns(256);
    pub const CLOCK: Columns = Columns(512);
    /// The columns of versions 1 and 2.
    pub const V2: Columns = Columns(15);
    /// The columns of versions 3 and 4.
    pub const V4: Columns = Columns(511);
    pub const ALL: Columns = Columns(1023);

    /// The columns a file of format `version` may have.
    pub fn of_format(version: u32) -> Columns {
        match version {
            ..=2 => Columns::V2,
            3..=4 => Columns::V4,
            _ => Columns::ALL,
        }
    }

    /// The columns that these labels fill.
    pub fn of(labels: &crate::position::labels::Labels) -> Columns {
        Columns(
            labels.result.is_some() as u32
                | (labels.score.is_some() as u32) << 1
                | (labels.game_id.is_some() as u32) << 2
                | (labels.ply.is_some() as u32) << 3
                | labels
                    .u16_labels()
                    .iter()
                    .zip(U16_LABELS)
                    .map(|(value, (column, _))| if value.is_some() { column.0 } else { 0 })
                    .fold(0, |a, b| a | b),
        )
    }

    pub fn contains(self, other: Columns) -> bool {
        self.0 & other.0 == other.0
    }
    pub fn union(self, other: Columns) -> Columns {
        Columns(self.0 | other.0)
    }
    pub fn intersection(self, other: Columns) -> Columns {
        Columns(self.0 & other.0)
    }
    /// These columns but not `other`'s.
    pub fn without(self, other: Columns) -> Columns {
        Columns(self.0 & !other.0)
    }
    pub fn bits(self) -> u32 {
        self.0
    }
    /// The names of the columns present, in file order.
    pub fn names(self) -> Vec<&'static str> {
        [
            (Columns::RESULT, "result"),
            (Columns::SCORE, "score"),
            (Columns::GAME_ID, "game_id"),
            (Columns::PLY, "ply"),
        ]
        .into_iter()
        .chain(U16_LABELS)
        .filter(|&(c, _)| self.contains(c))
        .map(|(_, name)| name)
        .collect()
    }
}

/// Byte offsets of each column inside a block, and the block's size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub bitboards: [usize; 8],
    pub side_to_move: usize,
    pub castling: usize,
    pub en_passant: usize,
    pub halfmove_clock: usize,
    pub fullmove_number: usize,
    pub result: Option<usize>,
    pub score: Option<usize>,
    pub game_id: Option<usize>,
    pub ply: Option<usize>,
    /// The [`U16_LABELS`] columns, in that order.
    pub u16_labels: [Option<usize>; U16_LABEL_COUNT],
    /// Where the block's CRC-32 is (its last 4 bytes), in versions that have one.
    pub crc: Option<usize>,
    pub block_bytes: u64,
}

impl Layout {
    /// The layout pawnstorm writes ([`FORMAT_VERSION`]).
    pub fn new(block_size: u32, columns: Columns) -> Layout {
        Layout::of_version(FORMAT_VERSION, block_size, columns)
    }

    /// The layout of a block in format `version` (version 1 has no trailer; the columns
    /// that later versions added come after the older ones, so that a file without them
    /// has the layout of the version before).
    pub fn of_version(version: u32, block_size: u32, columns: Columns) -> Layout {
        let n = block_size as usize;
        let mut offset = 0usize;
        let mut next = |width: usize| {
            let at = offset;
            offset = (offset + n * width).next_multiple_of(ALIGN);
            at
        };
        let bitboards = [(); 8].map(|_| next(8));
        let side_to_move = next(1);
        let castling = next(2);
        let en_passant = next(1);
        let halfmove_clock = next(2);
        let fullmove_number = next(2);
        let mut optional = |column, width| columns.contains(column).then(|| next(width));
        let result = optional(Columns::RESULT, 1);
        let score = optional(Columns::SCORE, 4);
        let game_id = optional(Columns::GAME_ID, 4);
        let ply = optional(Columns::PLY, 2);
        let u16_labels = U16_LABELS.map(|(column, _)| optional(column, 2));
        let crc = (version >= 2).then(|| {
            offset += TRAILER_SIZE;
            offset - 4
        });
        Layout {
            bitboards,
            side_to_move,
            castling,
            en_passant,
            halfmove_clock,
            fullmove_number,
            result,
            score,
            game_id,
            ply,
            u16_labels,
            crc,
            block_bytes: offset as u64,
        }
    }
}

/// The decoded header. All integers are little-endian on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub version: u32,
    pub count: u64,
    pub block_size: u32,
    pub columns: Columns,
    pub block_bytes: u64,
    /// Version 1: the CRC-32 of the whole payload. Version 2: the CRC-32 of the blocks'
    /// CRCs, 4 little-endian bytes each, in block order (see `docs/FORMAT.md`).
    pub payload_crc: u32,
    /// Version 4: a random number drawn when the file is written, which every block's CRC
    /// covers, so that a block copied from another DB, even at the same index, fails its
    /// own check. 0 in older versions.
    pub file_id: u64,
}

/// A header problem before the file's path is known.
pub(crate) struct HeaderProblem(DbErrorKind);

enum DbErrorKind {
    Version(u32),
    Corrupt(String),
    Checksum,
}

impl HeaderProblem {
    pub(crate) fn at(self, path: &Path) -> DbError {
        let path = path.to_path_buf();
        match self.0 {
            DbErrorKind::Version(found) => DbError::UnsupportedVersion { path, found },
            DbErrorKind::Corrupt(what) => DbError::CorruptHeader { path, what },
            DbErrorKind::Checksum => DbError::Checksum {
                path,
                what: "header",
            },
        }
    }
}

impl Header {
    /// A header of the version pawnstorm writes.
    pub fn new(
        count: u64,
        block_size: u32,
        columns: Columns,
        payload_crc: u32,
        file_id: u64,
    ) -> Header {
        Header {
            file_id,
            ..Header::of_version(FORMAT_VERSION, count, block_size, columns, payload_crc)
        }
    }

    fn of_version(
        version: u32,
        count: u64,
        block_size: u32,
        columns: Columns,
        payload_crc: u32,
    ) -> Header {
        Header {
            version,
            count,
            block_size,
            columns,
            block_bytes: Layout::of_version(version, block_size, columns).block_bytes,
            payload_crc,
            file_id: 0,
        }
    }

    pub fn layout(&self) -> Layout {
        Layout::of_version(self.version, self.block_size, self.columns)
    }

    /// Whether each block carries its own CRC-32 (version 2 on).
    pub fn has_block_crcs(&self) -> bool {
        self.version >= 2
    }

    /// The CRC-32 of block `index`, whose bytes up to its CRC field are `bytes`, as this
    /// file's version computes it.
    pub(crate) fn block_crc(&self, index: u64, bytes: &[u8]) -> u32 {
        block_crc((self.version >= 4).then_some(self.file_id), index, bytes)
    }

    pub fn block_count(&self) -> u64 {
        self.count.div_ceil(self.block_size as u64)
    }

    pub fn file_size(&self) -> u64 {
        HEADER_SIZE as u64 + self.block_count() * self.block_bytes
    }

    pub fn encode(&self) -> [u8; HEADER_SIZE] {
        let mut bytes = [0u8; HEADER_SIZE];
        bytes[0..8].copy_from_slice(&MAGIC);
        bytes[8..12].copy_from_slice(&self.version.to_le_bytes());
        bytes[12..16].copy_from_slice(&(HEADER_SIZE as u32).to_le_bytes());
        bytes[16..24].copy_from_slice(&self.count.to_le_bytes());
        bytes[24..28].copy_from_slice(&self.block_size.to_le_bytes());
        bytes[28..32].copy_from_slice(&self.columns.bits().to_le_bytes());
        bytes[32..40].copy_from_slice(&self.block_bytes.to_le_bytes());
        bytes[40..44].copy_from_slice(&self.payload_crc.to_le_bytes());
        if self.version >= 4 {
            bytes[48..56].copy_from_slice(&self.file_id.to_le_bytes());
        }
        let crc = header_crc(&bytes);
        bytes[44..48].copy_from_slice(&crc.to_le_bytes());
        bytes
    }

    /// Decodes and checks a header whose magic has been checked already. The version is
    /// checked before the checksum so that a newer file says so, rather than "corrupt".
    pub(crate) fn decode(bytes: &[u8; HEADER_SIZE]) -> Result<Header, HeaderProblem> {
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        let corrupt = |what: String| Err(HeaderProblem(DbErrorKind::Corrupt(what)));
        let version = u32_at(8);
        if !(OLDEST_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(HeaderProblem(DbErrorKind::Version(version)));
        }
        if header_crc(bytes) != u32_at(44) {
            return Err(HeaderProblem(DbErrorKind::Checksum));
        }
        let header_size = u32_at(12);
        if header_size as usize != HEADER_SIZE {
            return corrupt(format!("header size {header_size}, expected {HEADER_SIZE}"));
        }
        let block_size = u32_at(24);
        if !block_size.is_power_of_two() || !(MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE).contains(&block_size)
        {
            return corrupt(format!(
                "block size {block_size} is not a power of two from {MIN_BLOCK_SIZE} to {MAX_BLOCK_SIZE}"
            ));
        }
        let column_bits = u32_at(28);
        if column_bits & !Columns::of_format(version).bits() != 0 {
            return corrupt(format!("unknown optional columns {column_bits:#x}"));
        }
        let columns = Columns(column_bits);
        let mut header = Header::of_version(version, u64_at(16), block_size, columns, u32_at(40));
        let reserved_from = if version >= 4 {
            header.file_id = u64_at(48);
            56
        } else {
            48
        };
        if header.block_bytes != u64_at(32) {
            return corrupt(format!(
                "block bytes {} disagree with the layout ({})",
                u64_at(32),
                header.block_bytes
            ));
        }
        if bytes[reserved_from..].iter().any(|&b| b != 0) {
            return corrupt("reserved bytes are not zero".to_string());
        }
        if header
            .block_count()
            .checked_mul(header.block_bytes)
            .and_then(|n| n.checked_add(HEADER_SIZE as u64))
            .is_none()
        {
            return corrupt(format!("position count {} is impossible", header.count));
        }
        Ok(header)
    }
}

/// Writes the right header checksum into the first [`HEADER_SIZE`] bytes of `file` (for a
/// fuzzer, so that its mutations reach past the header's check).
pub fn set_header_crc(file: &mut [u8]) {
    let Some(header) = file.first_chunk_mut::<HEADER_SIZE>() else {
        return;
    };
    let crc = header_crc(header);
    header[44..48].copy_from_slice(&crc.to_le_bytes());
}

fn header_crc(bytes: &[u8; HEADER_SIZE]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&bytes[..44]);
    hasher.update(&bytes[48..]);
    hasher.finalize()
}

/// The CRC-32 of block `index` whose bytes up to its CRC field are `bytes`: the file id
/// (version 4) and the index go first (8 bytes each, little-endian), so that a block moved
/// to another place in the file, or copied from another file, fails its check.
pub(crate) fn block_crc(file_id: Option<u64>, index: u64, bytes: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    if let Some(id) = file_id {
        hasher.update(&id.to_le_bytes());
    }
    hasher.update(&index.to_le_bytes());
    hasher.update(bytes);
    hasher.finalize()
}

/// A file id for a new file: random (std's hasher keys come from the operating system's
/// random source), mixed with the time and process, never 0.
pub fn new_file_id() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    hasher.write_u128(now);
    hasher.write_u32(std::process::id());
    hasher.finish().max(1)
}
