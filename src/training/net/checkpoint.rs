//! The trainer's checkpoint: everything a run needs to go on as if it had not stopped.
//!
//! ```text
//! 0   16  magic "pawnstorm-ckpt\r\n"
//! 16   4  version (1)
//! 20   4  hidden width N
//! 24   8  steps taken (Adam's bias correction)
//! 32   8  epochs done
//! 40   8  loader passes begun (the pass in progress is number passes - 1; 0: none)
//! 48   8  batches taken from that pass
//! 56   8  the last epoch's training loss (f64)
//! 64   8  its held-out loss (f64, NaN: none)
//! 72   4  length of the options text
//! 76   4  CRC-32 of everything after the header
//! 80      the options text (`key=value` lines), then parameters, Adam's m, Adam's v,
//!         each `769·N + 2·N·B + 16` little-endian f32 (B output buckets: the options
//!         text's `output-buckets`, 1 where it has none)
//! ```
//!
//! Written whole or not at all (a temporary file renamed into place, which an interrupt
//! removes), so the checkpoint on disk is always the last complete one.

use std::path::{Path, PathBuf};

use super::aligned::AlignedFloats;
use super::model::Layout;
use super::optimiser::State;

pub const MAGIC: [u8; 16] = *b"pawnstorm-ckpt\r\n";
pub const VERSION: u32 = 1;
const HEADER: usize = 80;

/// A run's place and state.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    pub state: State,
    pub epochs_done: u64,
    pub passes: u64,
    pub batches_in_pass: u64,
    pub train_loss: f64,
    pub held_loss: Option<f64>,
    /// The options that decide the run's arithmetic, `key=value` lines.
    pub options: String,
}

/// The checkpoint file next to a network output: `NET.ckpt`.
pub fn path_for(output: &Path) -> PathBuf {
    let mut name = output.as_os_str().to_owned();
    name.push(".ckpt");
    PathBuf::from(name)
}

impl Checkpoint {
    pub fn to_bytes(&self) -> Vec<u8> {
        let floats = self.state.params.len();
        let mut body = Vec::with_capacity(self.options.len() + 12 * floats);
        body.extend_from_slice(self.options.as_bytes());
        for array in [&self.state.params, &self.state.m, &self.state.v] {
            for value in array.iter() {
                body.extend_from_slice(&value.to_le_bytes());
            }
        }
        let mut out = Vec::with_capacity(HEADER + body.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(self.state.layout.hidden as u32).to_le_bytes());
        for value in [
            self.state.steps,
            self.epochs_done,
            self.passes,
            self.batches_in_pass,
        ] {
            out.extend_from_slice(&value.to_le_bytes());
        }
        out.extend_from_slice(&self.train_loss.to_le_bytes());
        out.extend_from_slice(&self.held_loss.unwrap_or(f64::NAN).to_le_bytes());
        out.extend_from_slice(&(self.options.len() as u32).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
        out.extend_from_slice(&body);
        out
    }

    /// Reads a checkpoint's bytes; `name` names the file in errors.
    pub fn from_bytes(bytes: &[u8], name: &str) -> Result<Checkpoint, String> {
        let refuse = |why: &str| Err(format!("{name}: {why}"));
        if bytes.len() < HEADER || bytes[..16] != MAGIC {
            return refuse("not a pawnstorm train-net checkpoint");
        }
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or([0; 4]));
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
        if u32_at(16) != VERSION {
            return refuse(&format!(
                "checkpoint version {}; this pawnstorm reads version {VERSION}",
                u32_at(16)
            ));
        }
        let hidden = u32_at(20) as usize;
        if !(crate::nnue::MIN_HIDDEN..=crate::nnue::MAX_HIDDEN).contains(&hidden)
            || !hidden.is_multiple_of(crate::nnue::HIDDEN_STEP)
        {
            return refuse(&format!("a hidden width of {hidden}"));
        }
        let text_len = u32_at(72) as usize;
        let body = &bytes[HEADER..];
        let buckets = body
            .get(..text_len)
            .and_then(|text| std::str::from_utf8(text).ok())
            .and_then(|text| {
                text.lines()
                    .find_map(|line| line.strip_prefix("output-buckets="))
            })
            .map_or(Ok(1), |b| b.parse::<usize>())
            .ok()
            .filter(|b| (1..=crate::nnue::MAX_BUCKETS).contains(b));
        let Some(buckets) = buckets else {
            return refuse("its output-buckets option is no number from 1 to 8");
        };
        let option = |key: &str| {
            body.get(..text_len)
                .and_then(|text| std::str::from_utf8(text).ok())
                .and_then(|text| {
                    text.lines()
                        .find_map(|line| line.strip_prefix(key).map(str::to_string))
                })
        };
        // King buckets only in the options of runs that have them (older checkpoints
        // resume as `Chess768`).
        let inputs = match option("king-buckets=") {
            None => crate::nnue::InputLayout::CHESS768,
            Some(map) => match crate::nnue::InputLayout::parse_king_buckets(&map) {
                Ok(layout) => layout,
                Err(e) => return refuse(&format!("its king-buckets option: {e}")),
            },
        };
        let factoriser = inputs.is_mirrored() && option("factoriser=").as_deref() != Some("0");
        let layout = Layout {
            hidden,
            buckets,
            inputs,
            factoriser,
        };
        if body.len() != text_len + 12 * layout.len() {
            return refuse("cut short or with bytes added (its size does not match its width)");
        }
        let (stored, computed) = (u32_at(76), crc32fast::hash(body));
        if stored != computed {
            return refuse(&format!(
                "checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): damaged"
            ));
        }
        let options = String::from_utf8(body[..text_len].to_vec())
            .map_err(|_| format!("{name}: its options text is not UTF-8"))?;
        let floats: Vec<f32> = body[text_len..]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let n = layout.len();
        let held = f64::from_le_bytes(bytes[64..72].try_into().unwrap_or([0; 8]));
        Ok(Checkpoint {
            state: State {
                layout,
                params: AlignedFloats::from_slice(&floats[..n]),
                m: AlignedFloats::from_slice(&floats[n..2 * n]),
                v: AlignedFloats::from_slice(&floats[2 * n..]),
                steps: u64_at(24),
            },
            epochs_done: u64_at(32),
            passes: u64_at(40),
            batches_in_pass: u64_at(48),
            train_loss: f64::from_le_bytes(bytes[56..64].try_into().unwrap_or([0; 8])),
            held_loss: (!held.is_nan()).then_some(held),
            options,
        })
    }

    pub fn load(path: &Path) -> Result<Checkpoint, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Checkpoint::from_bytes(&bytes, &path.display().to_string())
    }

    /// Writes the checkpoint whole or not at all.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        use std::io::Write;
        let (mut temp, pending) = crate::io::durable::temp_file_for(path, ".ckpt-", ".tmp")?;
        temp.write_all(&self.to_bytes())?;
        temp.as_file().sync_all()?;
        stop_here_for_tests();
        pending.commit(|| temp.persist(path).map_err(|e| e.error))?;
        crate::io::durable::sync_parent_dir(path)
    }
}

/// For the test of an interrupt during a save only (tests/train_net.rs): with
/// `PAWNSTORM_TEST_STOP_IN_CHECKPOINT` set, the process stops itself (SIGSTOP) with the
/// temporary file written and not yet renamed, so that the test signals it at exactly that
/// point instead of polling for it.
fn stop_here_for_tests() {
    #[cfg(target_os = "linux")]
    if std::env::var_os("PAWNSTORM_TEST_STOP_IN_CHECKPOINT").is_some() {
        // SAFETY: raise has no preconditions; SIGSTOP stops this process until SIGCONT.
        unsafe { libc::raise(libc::SIGSTOP) };
    }
}

/// The options of `ours` that differ from `theirs` (both `key=value` lines), as `--key A
/// (checkpoint) / B (now)`, keys in `ignore` left out.
pub fn differences(checkpoint: &str, now: &str, ignore: &[&str]) -> Vec<String> {
    let parse = |text: &str| -> std::collections::BTreeMap<String, String> {
        text.lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let (a, b) = (parse(checkpoint), parse(now));
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| !ignore.contains(&k.as_str()))
        .filter_map(|k| {
            let (x, y) = (a.get(k), b.get(k));
            (x != y).then(|| {
                format!(
                    "{k}: {} in the checkpoint, {} now",
                    x.map_or("(none)", |s| s),
                    y.map_or("(none)", |s| s)
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_reads_back_and_refuses_damage() {
        let mut state = State::new(Layout::single(16), 3);
        state.m[5] = 0.25;
        state.v[7] = 0.5;
        state.steps = 11;
        let checkpoint = Checkpoint {
            state,
            epochs_done: 2,
            passes: 3,
            batches_in_pass: 4,
            train_loss: 0.031,
            held_loss: None,
            options: "hidden=16\nwdl=0.5\n".to_string(),
        };
        let bytes = checkpoint.to_bytes();
        assert_eq!(Checkpoint::from_bytes(&bytes, "c").unwrap(), checkpoint);
        let mut damaged = bytes.clone();
        let last = damaged.len() - 1;
        damaged[last] ^= 1;
        assert!(
            Checkpoint::from_bytes(&damaged, "c")
                .unwrap_err()
                .contains("checksum")
        );
        assert!(
            Checkpoint::from_bytes(&bytes[..bytes.len() - 4], "c")
                .unwrap_err()
                .contains("cut short")
        );
        assert!(
            Checkpoint::from_bytes(b"hello", "c")
                .unwrap_err()
                .contains("not a")
        );
    }

    #[test]
    fn a_checkpoint_with_output_buckets_reads_back_at_its_size() {
        let layout = Layout::new(32, 8);
        let checkpoint = Checkpoint {
            state: State::new(layout, 4),
            epochs_done: 1,
            passes: 1,
            batches_in_pass: 0,
            train_loss: 0.02,
            held_loss: Some(0.03),
            options: "hidden=32\noutput-buckets=8\n".to_string(),
        };
        let bytes = checkpoint.to_bytes();
        assert_eq!(Checkpoint::from_bytes(&bytes, "c").unwrap(), checkpoint);
        // The same parameters claimed for one bucket no longer fit the file.
        let mut relabelled = checkpoint.clone();
        relabelled.options = "hidden=32\noutput-buckets=1\n".to_string();
        let bytes = relabelled.to_bytes();
        assert!(
            Checkpoint::from_bytes(&bytes, "c")
                .unwrap_err()
                .contains("does not match")
        );
    }

    #[test]
    fn differences_name_the_options() {
        let d = differences(
            "hidden=128\nwdl=0.5\nthreads=2\n",
            "hidden=256\nwdl=0.5\nthreads=1\n",
            &["threads"],
        );
        assert_eq!(d, ["hidden: 128 in the checkpoint, 256 now"]);
    }
}
