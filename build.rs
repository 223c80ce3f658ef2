//! Embeds the KPK bitbase (src/eval/kpk_table.rs) in the crate: its retrograde analysis
//! took some 12 ms of every process that met a KPK position.

use std::path::PathBuf;

#[path = "src/eval/kpk_table.rs"]
mod kpk_table;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/eval/kpk_table.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let bytes: Vec<u8> = kpk_table::compute()
        .iter()
        .flat_map(|word| word.to_le_bytes())
        .collect();
    std::fs::write(out.join("kpk.bin"), bytes).expect("OUT_DIR is writable");
}
