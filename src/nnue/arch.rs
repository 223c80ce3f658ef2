//! What a raw network file does not record and `--arch` / `EvalArch` give: its inputs
//! (king buckets) and its output buckets.

use super::MAX_BUCKETS;
use super::inputs::InputLayout;

/// What a raw file does not record: its inputs and output buckets (`--arch`, the UCI
/// option `EvalArch`), written `king-buckets=MAP,output-buckets=B` (either part may be left
/// out: `Chess768`, one output). MAP is a count naming a standard map (1, 2, 4, 8, 16) or
/// 32 hexadecimal digits ([`InputLayout::parse_king_buckets`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arch {
    pub inputs: InputLayout,
    pub output_buckets: usize,
}

impl Default for Arch {
    fn default() -> Arch {
        Arch {
            inputs: InputLayout::CHESS768,
            output_buckets: 1,
        }
    }
}

impl std::str::FromStr for Arch {
    type Err = String;

    fn from_str(text: &str) -> Result<Arch, String> {
        let mut arch = Arch::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').ok_or_else(|| {
                format!("`{part}`: the architecture is `king-buckets=MAP,output-buckets=B`")
            })?;
            match key.trim() {
                "king-buckets" => arch.inputs = InputLayout::parse_king_buckets(value.trim())?,
                "output-buckets" => {
                    arch.output_buckets = value
                        .trim()
                        .parse()
                        .ok()
                        .filter(|b| (1..=MAX_BUCKETS).contains(b))
                        .ok_or_else(|| format!("output-buckets={value}: from 1 to {MAX_BUCKETS}"))?
                }
                other => {
                    return Err(format!(
                        "`{other}`: the architecture's parts are king-buckets and output-buckets"
                    ));
                }
            }
        }
        Ok(arch)
    }
}

impl std::fmt::Display for Arch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.inputs.is_mirrored() {
            write!(
                f,
                "king-buckets={},",
                self.inputs.map_text().replace('/', "")
            )?;
        }
        write!(f, "output-buckets={}", self.output_buckets)
    }
}
