//! `.npz` files as numpy writes them (`np.savez`): a zip archive of `.npy` arrays, stored
//! without compression, so `np.load` reads them as they are (and memory-maps none, but
//! reads each array in one copy). Arrays are streamed: a writer starts an array with its
//! shape, then appends its bytes in row order; the archive is written to a temporary file
//! beside the target and renamed over it when complete and synced.

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

/// An `.npz` being written.
///
/// The archive is written here rather than by the `zip` crate, which computes each entry's
/// CRC-32 itself as the bytes pass: on the one thread that writes, that was a third of its
/// time in `features --kind nnue`. Here a caller may hand over bytes with their CRC
/// already computed (on the threads that made them, [`NpzWriter::write_with_crc`]), and
/// the entry's CRC is combined from theirs. The format is the ZIP64 subset `np.savez`
/// archives need: stored entries, sizes in ZIP64 extra fields, a ZIP64 end record.
pub struct NpzWriter {
    out: BufWriter<File>,
    temp: tempfile::TempPath,
    pending: crate::io::durable::Pending,
    target: PathBuf,
    /// The entries finished so far.
    entries: Vec<Entry>,
    /// The entry being written, if any.
    current: Option<Entry>,
    crc: crc32fast::Hasher,
    /// Bytes the current array still expects.
    expected: u64,
    /// Bytes written to the archive so far.
    offset: u64,
}

/// One archive member.
struct Entry {
    name: String,
    /// Where its local header starts.
    offset: u64,
    size: u64,
    crc: u32,
}

const LOCAL_HEADER: u32 = 0x0403_4b50;
const CENTRAL_HEADER: u32 = 0x0201_4b50;
const ZIP64_END: u32 = 0x0606_4b50;
const ZIP64_LOCATOR: u32 = 0x0706_4b50;
const END: u32 = 0x0605_4b50;
/// "Version needed to extract": 4.5, for ZIP64.
const VERSION: u16 = 45;
/// 1980-01-01, the earliest date a ZIP entry can carry (as the `zip` crate wrote it).
const DOS_DATE: u16 = (1 << 5) | 1;
/// A 32-bit field whose value is in the ZIP64 extra field instead.
const IN_ZIP64: u32 = u32::MAX;
/// Where a local header's CRC-32 is.
const LOCAL_CRC_AT: u64 = 14;

fn u16le(out: &mut Vec<u8>, value: u16) {
    out.extend_from_slice(&value.to_le_bytes());
}
fn u32le(out: &mut Vec<u8>, value: u32) {
    out.extend_from_slice(&value.to_le_bytes());
}
fn u64le(out: &mut Vec<u8>, value: u64) {
    out.extend_from_slice(&value.to_le_bytes());
}

impl Entry {
    fn local_header(&self) -> Vec<u8> {
        let mut h = Vec::with_capacity(30 + self.name.len() + 20);
        u32le(&mut h, LOCAL_HEADER);
        u16le(&mut h, VERSION);
        u16le(&mut h, 0); // flags
        u16le(&mut h, 0); // stored
        u16le(&mut h, 0); // time
        u16le(&mut h, DOS_DATE);
        u32le(&mut h, self.crc);
        u32le(&mut h, IN_ZIP64); // compressed size
        u32le(&mut h, IN_ZIP64); // size
        u16le(&mut h, self.name.len() as u16);
        u16le(&mut h, 20);
        h.extend_from_slice(self.name.as_bytes());
        u16le(&mut h, 1); // the ZIP64 extra field: size, compressed size
        u16le(&mut h, 16);
        u64le(&mut h, self.size);
        u64le(&mut h, self.size);
        h
    }

    fn central_header(&self) -> Vec<u8> {
        let mut h = Vec::with_capacity(46 + self.name.len() + 28);
        u32le(&mut h, CENTRAL_HEADER);
        u16le(&mut h, VERSION); // made by
        u16le(&mut h, VERSION); // needed
        u16le(&mut h, 0); // flags
        u16le(&mut h, 0); // stored
        u16le(&mut h, 0); // time
        u16le(&mut h, DOS_DATE);
        u32le(&mut h, self.crc);
        u32le(&mut h, IN_ZIP64);
        u32le(&mut h, IN_ZIP64);
        u16le(&mut h, self.name.len() as u16);
        u16le(&mut h, 28);
        u16le(&mut h, 0); // comment
        u16le(&mut h, 0); // disk
        u16le(&mut h, 0); // internal attributes
        u32le(&mut h, 0); // external attributes
        u32le(&mut h, IN_ZIP64); // local header offset
        h.extend_from_slice(self.name.as_bytes());
        u16le(&mut h, 1); // the ZIP64 extra field: size, compressed size, offset
        u16le(&mut h, 24);
        u64le(&mut h, self.size);
        u64le(&mut h, self.size);
        u64le(&mut h, self.offset);
        h
    }
}

/// The `.npy` header (format 1.0) of an array of `descr` (`<i2`, `<u8`, `<U32`, ...) and
/// `shape`, C order.
pub fn npy_header(descr: &str, shape: &[u64]) -> Vec<u8> {
    let shape = match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    npy_header_dict(&format!("'{descr}'"), &shape)
}

/// The header around `descr` and `shape` as Python literals (`'<i2'` or a structured
/// `[('a', '<u8'), ...]`; `(3, 5)`): the dictionary, padded to 64 bytes with its preamble.
pub fn npy_header_dict(descr: &str, shape: &str) -> Vec<u8> {
    let mut dict = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}");
    // Magic (6) + version (2) + length (2) + dict + newline: a multiple of 64 bytes.
    let unpadded = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    dict.push('\n');
    let mut header = b"\x93NUMPY\x01\x00".to_vec();
    header.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    header.extend_from_slice(dict.as_bytes());
    header
}

/// The size in bytes of one element of `descr` (`<i2` 2, `|u1` 1, `<U32` 128).
fn item_size(descr: &str) -> u64 {
    let kind = descr.as_bytes().get(1).copied().unwrap_or(b'?');
    let count: u64 = descr.get(2..).and_then(|n| n.parse().ok()).unwrap_or(1);
    if kind == b'U' { 4 * count } else { count }
}

impl NpzWriter {
    /// Starts `path` (its directory must exist).
    pub fn create(path: &Path) -> io::Result<NpzWriter> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prefix = format!(".{name}.");
        let (temp, pending) = crate::io::durable::temp_file_for(path, &prefix, ".partial")?;
        let (file, temp) = NamedTempFile::into_parts(temp);
        Ok(NpzWriter {
            // Small: the headers gather in it, and a block's bytes (larger) go past it
            // straight to the file, not copied first.
            out: BufWriter::with_capacity(64 << 10, file),
            pending,
            temp,
            target: path.to_path_buf(),
            entries: Vec::new(),
            current: None,
            crc: crc32fast::Hasher::new(),
            expected: 0,
            offset: 0,
        })
    }

    fn check_complete(&self) -> io::Result<()> {
        if self.expected != 0 {
            return Err(io::Error::other(format!(
                "array {} is {} bytes short",
                self.current.as_ref().map_or("?", |e| &e.name),
                self.expected
            )));
        }
        Ok(())
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    /// Ends the current entry: its CRC-32 put into its local header.
    fn end_entry(&mut self) -> io::Result<()> {
        self.check_complete()?;
        if let Some(mut entry) = self.current.take() {
            entry.crc = std::mem::take(&mut self.crc).finalize();
            self.out
                .seek(SeekFrom::Start(entry.offset + LOCAL_CRC_AT))?;
            self.out.write_all(&entry.crc.to_le_bytes())?;
            self.out.seek(SeekFrom::Start(self.offset))?;
            self.entries.push(entry);
        }
        Ok(())
    }

    /// Starts array `name` (`name.npy` in the archive): `descr` as numpy spells it, `shape`
    /// with the row count first. Its bytes follow through [`NpzWriter::write`].
    pub fn start_array(&mut self, name: &str, descr: &str, shape: &[u64]) -> io::Result<()> {
        self.end_entry()?;
        let header = npy_header(descr, shape);
        let expected = shape.iter().product::<u64>() * item_size(descr);
        let entry = Entry {
            name: format!("{name}.npy"),
            offset: self.offset,
            size: header.len() as u64 + expected,
            crc: 0,
        };
        if entry.name.len() > usize::from(u16::MAX) {
            return Err(io::Error::other(format!("array name {name} is too long")));
        }
        self.put(&entry.local_header())?;
        self.current = Some(entry);
        self.crc = crc32fast::Hasher::new();
        self.crc.update(&header);
        self.put(&header)?;
        self.expected = expected;
        Ok(())
    }

    fn take_expected(&mut self, len: u64) -> io::Result<()> {
        if len > self.expected {
            return Err(io::Error::other(format!(
                "array {} got {} bytes more than its shape holds",
                self.current.as_ref().map_or("?", |e| &e.name),
                len - self.expected
            )));
        }
        self.expected -= len;
        Ok(())
    }

    /// The next bytes of the current array (little-endian elements, C order).
    pub fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.take_expected(bytes.len() as u64)?;
        self.crc.update(bytes);
        self.put(bytes)
    }

    /// [`NpzWriter::write`] of bytes whose CRC-32 (`crc32fast::hash(bytes)`) is known.
    pub fn write_with_crc(&mut self, bytes: &[u8], crc: u32) -> io::Result<()> {
        self.take_expected(bytes.len() as u64)?;
        self.crc.combine(&crc32fast::Hasher::new_with_initial_len(
            crc,
            bytes.len() as u64,
        ));
        self.put(bytes)
    }

    /// A whole array at once.
    pub fn array<T: bytemuck::Pod>(
        &mut self,
        name: &str,
        descr: &str,
        shape: &[u64],
        values: &[T],
    ) -> io::Result<()> {
        self.start_array(name, descr, shape)?;
        self.write(bytemuck::cast_slice(values))
    }

    /// A 1-D array of strings (numpy's fixed-width `<U`, no pickle needed to load it).
    pub fn strings(&mut self, name: &str, values: &[String]) -> io::Result<()> {
        let width = values
            .iter()
            .map(|s| s.chars().count())
            .max()
            .unwrap_or(1)
            .max(1);
        let mut bytes = Vec::with_capacity(values.len() * width * 4);
        for value in values {
            let mut chars = 0;
            for c in value.chars() {
                bytes.extend_from_slice(&(c as u32).to_le_bytes());
                chars += 1;
            }
            bytes.resize(bytes.len() + (width - chars) * 4, 0);
        }
        self.start_array(name, &format!("<U{width}"), &[values.len() as u64])?;
        self.write(&bytes)
    }

    /// Ends the archive (its central directory and end records), syncs it and renames it
    /// over the target.
    pub fn finish(mut self) -> io::Result<PathBuf> {
        self.end_entry()?;
        let directory_at = self.offset;
        let mut directory = Vec::new();
        for entry in &self.entries {
            directory.extend_from_slice(&entry.central_header());
        }
        let end_at = directory_at + directory.len() as u64;
        let count = self.entries.len() as u64;
        let mut end = Vec::with_capacity(56 + 20 + 22);
        u32le(&mut end, ZIP64_END);
        u64le(&mut end, 44); // the size of the rest of this record
        u16le(&mut end, VERSION);
        u16le(&mut end, VERSION);
        u32le(&mut end, 0); // this disk
        u32le(&mut end, 0); // the directory's disk
        u64le(&mut end, count);
        u64le(&mut end, count);
        u64le(&mut end, directory.len() as u64);
        u64le(&mut end, directory_at);
        u32le(&mut end, ZIP64_LOCATOR);
        u32le(&mut end, 0);
        u64le(&mut end, end_at);
        u32le(&mut end, 1); // disks
        u32le(&mut end, END);
        u16le(&mut end, 0);
        u16le(&mut end, 0);
        let short_count = count.min(u64::from(u16::MAX)) as u16;
        u16le(&mut end, short_count);
        u16le(&mut end, short_count);
        u32le(&mut end, IN_ZIP64);
        u32le(&mut end, IN_ZIP64);
        u16le(&mut end, 0); // comment
        self.put(&directory)?;
        self.put(&end)?;
        let file = self.out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        let (temp, target) = (self.temp, &self.target);
        self.pending
            .commit(|| temp.persist(target))
            .map_err(|e| io::Error::other(format!("renaming into place: {e}")))?;
        crate::io::durable::sync_parent_dir(&self.target)?;
        Ok(self.target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_padded_and_shaped() {
        let h = npy_header("<i2", &[3, 5]);
        assert_eq!(h.len() % 64, 0);
        let text = String::from_utf8_lossy(&h[10..]);
        assert!(text.contains("'shape': (3, 5)"), "{text}");
        let h = npy_header("<u8", &[7]);
        assert!(String::from_utf8_lossy(&h[10..]).contains("'shape': (7,)"));
        assert_eq!(item_size("<U12"), 48);
        assert_eq!(item_size("|u1"), 1);
        assert_eq!(item_size("<f4"), 4);
    }

    #[test]
    fn short_or_long_arrays_are_errors_and_leave_no_file() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("x.npz");
        let mut npz = NpzWriter::create(&path).expect("create");
        npz.start_array("a", "<i4", &[2]).expect("start");
        assert!(npz.write(&[0u8; 12]).is_err());
        npz.write(&[0u8; 4]).expect("part");
        assert!(npz.finish().is_err());
        assert!(!path.exists());
        assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0);
    }

    #[test]
    fn an_archive_lists_its_arrays() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("x.npz");
        let mut npz = NpzWriter::create(&path).expect("create");
        npz.array("a", "<i2", &[2, 2], &[1i16, 2, 3, 4]).expect("a");
        npz.strings("names", &["ab".into(), "c".into()])
            .expect("names");
        npz.finish().expect("finish");
        let file = File::open(&path).expect("open");
        let mut archive = zip::ZipArchive::new(file).expect("zip");
        let mut names: Vec<String> = (0..archive.len())
            .map(|i| {
                archive
                    .by_index(i)
                    .expect("entry")
                    .name()
                    .expect("name")
                    .to_string()
            })
            .collect();
        names.sort();
        assert_eq!(names, ["a.npy", "names.npy"]);
        let mut a = archive.by_name("a.npy").expect("a");
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut a, &mut bytes).expect("read");
        assert_eq!(
            &bytes[bytes.len() - 8..],
            bytemuck::cast_slice::<i16, u8>(&[1i16, 2, 3, 4])
        );
    }

    /// Reads `name` whole from the archive at `path`: the `zip` crate checks its CRC-32 at
    /// the end of the entry.
    fn read_entry(path: &Path, name: &str) -> io::Result<Vec<u8>> {
        let mut archive = zip::ZipArchive::new(File::open(path)?).map_err(io::Error::other)?;
        let mut entry = archive.by_name(name).map_err(io::Error::other)?;
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut entry, &mut bytes)?;
        Ok(bytes)
    }

    #[test]
    fn bytes_handed_over_with_their_crc_make_the_same_entry() {
        let dir = tempfile::tempdir().expect("dir");
        let values: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 253) as u8).collect();
        let whole = dir.path().join("whole.npz");
        let mut npz = NpzWriter::create(&whole).expect("create");
        npz.array("v", "|u1", &[10_000], &values).expect("v");
        npz.finish().expect("finish");
        let pieces = dir.path().join("pieces.npz");
        let mut npz = NpzWriter::create(&pieces).expect("create");
        npz.start_array("v", "|u1", &[10_000]).expect("start");
        for chunk in [
            &values[..1],
            &values[1..4000],
            &values[4000..4000],
            &values[4000..],
        ] {
            npz.write_with_crc(chunk, crc32fast::hash(chunk))
                .expect("chunk");
        }
        npz.finish().expect("finish");
        assert_eq!(
            std::fs::read(&whole).unwrap(),
            std::fs::read(&pieces).unwrap()
        );
        let bytes = read_entry(&pieces, "v.npy").expect("a readable entry");
        assert_eq!(&bytes[bytes.len() - values.len()..], &values[..]);
        // A wrong CRC is caught by the reader: the check above is a real one.
        let bad = dir.path().join("bad.npz");
        let mut npz = NpzWriter::create(&bad).expect("create");
        npz.start_array("v", "|u1", &[10_000]).expect("start");
        npz.write_with_crc(&values, crc32fast::hash(&values) ^ 1)
            .expect("written");
        npz.finish().expect("finish");
        assert!(read_entry(&bad, "v.npy").is_err());
    }
}
