//! `.npz` files as numpy writes them (`np.savez`): a zip archive of `.npy` arrays, stored
//! without compression, so `np.load` reads them as they are (and memory-maps none, but
//! reads each array in one copy). Arrays are streamed: a writer starts an array with its
//! shape, then appends its bytes in row order; the archive is written to a temporary file
//! beside the target and renamed over it when complete and synced.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

/// An `.npz` being written.
pub struct NpzWriter {
    zip: ZipWriter<File>,
    temp: tempfile::TempPath,
    pending: crate::io::durable::Pending,
    target: PathBuf,
    /// Bytes the current array still expects.
    expected: u64,
    current: String,
}

fn zip_error(error: zip::result::ZipError) -> io::Error {
    match error {
        zip::result::ZipError::Io(error) => error,
        other => io::Error::other(other.to_string()),
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
            zip: ZipWriter::new(file),
            pending,
            temp,
            target: path.to_path_buf(),
            expected: 0,
            current: String::new(),
        })
    }

    fn check_complete(&self) -> io::Result<()> {
        if self.expected != 0 {
            return Err(io::Error::other(format!(
                "array {} is {} bytes short",
                self.current, self.expected
            )));
        }
        Ok(())
    }

    /// Starts array `name` (`name.npy` in the archive): `descr` as numpy spells it, `shape`
    /// with the row count first. Its bytes follow through [`NpzWriter::write`].
    pub fn start_array(&mut self, name: &str, descr: &str, shape: &[u64]) -> io::Result<()> {
        self.check_complete()?;
        let options = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Stored)
            .large_file(true);
        self.zip
            .start_file(format!("{name}.npy"), options)
            .map_err(zip_error)?;
        self.zip.write_all(&npy_header(descr, shape))?;
        self.expected = shape.iter().product::<u64>() * item_size(descr);
        self.current = name.to_string();
        Ok(())
    }

    /// The next bytes of the current array (little-endian elements, C order).
    pub fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        let len = bytes.len() as u64;
        if len > self.expected {
            return Err(io::Error::other(format!(
                "array {} got {} bytes more than its shape holds",
                self.current,
                len - self.expected
            )));
        }
        self.expected -= len;
        self.zip.write_all(bytes)
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

    /// Ends the archive, syncs it and renames it over the target.
    pub fn finish(self) -> io::Result<PathBuf> {
        self.check_complete()?;
        let file = self.zip.finish().map_err(zip_error)?;
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
}
