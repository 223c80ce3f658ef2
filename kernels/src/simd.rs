//! Which vector code runs: chosen once per process from what the CPU has, lowered by
//! `PAWNSTORM_SIMD`, and applied by [`dispatch`].
//!
//! A build with the default flags targets plain x86-64 (or aarch64), so the kernels cannot
//! use the CPU's vector instructions through compile-time `cfg`s. Instead each lane type of
//! [`crate::lanes`] is written with one instruction set's intrinsics, and [`dispatch`] runs
//! a generic kernel ([`LanesFn`]) inside a function compiled for that instruction set
//! (`#[target_feature]`). Everything the kernel calls is `#[inline(always)]`, so the whole
//! kernel is compiled for that set; the lane types cannot be named outside this crate, so
//! no code can run them except through [`dispatch`], which checks the CPU first.
//!
//! ```
//! use pawnstorm_kernels::simd::{self, LanesFn, Path};
//! use pawnstorm_kernels::Lanes;
//!
//! struct Popcounts<'a>(&'a [u64]);
//! impl LanesFn for Popcounts<'_> {
//!     type Output = u64;
//!     #[inline(always)]
//!     fn call<L: Lanes>(self) -> u64 {
//!         self.0.chunks_exact(L::WIDTH).map(|c| L::load(c).popcount().to_array()[..L::WIDTH].iter().sum::<u64>()).sum()
//!     }
//! }
//! let boards = [u64::MAX, 1, 3, 0, 7, 0, 0, 1];
//! for path in Path::every() {
//!     assert_eq!(simd::dispatch(path, Popcounts(&boards)), 64 + 1 + 2 + 3 + 1);
//! }
//! ```

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::Lanes;

/// An instruction set the kernels have code for, lowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// No vector instructions beyond the architecture's baseline: x86-64's SSE2, or
    /// aarch64's NEON (the compiler's own vectorisation of the portable lanes).
    Scalar,
    /// x86-64-v2: SSE4.2 and POPCNT.
    Sse4,
    /// x86-64-v3: AVX2, BMI1/2, FMA, LZCNT, POPCNT.
    Avx2,
    /// AVX2 plus AVX-512 F, BW, VL, VPOPCNTDQ and VNNI (Ice Lake, Zen 4 and later: every
    /// CPU with the first four has VNNI too).
    Avx512,
}

impl Level {
    /// Every level, lowest first.
    pub const ALL: [Level; 4] = [Level::Scalar, Level::Sse4, Level::Avx2, Level::Avx512];

    /// The name `PAWNSTORM_SIMD` takes.
    pub fn name(self) -> &'static str {
        match self {
            Level::Scalar => "scalar",
            Level::Sse4 => "sse4",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }

    /// The level named `name` (as [`Level::name`] prints it).
    pub fn parse(name: &str) -> Option<Level> {
        Level::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(name.trim()))
    }

    /// Whether this CPU can run the level's code.
    pub fn supported(self) -> bool {
        self <= cpu().detected
    }

    /// Every level this CPU can run, lowest first.
    pub fn available() -> Vec<Level> {
        Level::ALL.into_iter().filter(|l| l.supported()).collect()
    }

    /// The lanes the batch kernels run at this level: eight with AVX-512 (one register),
    /// four with AVX2 (an 8-lane value would take two registers, and code with many live
    /// values, like the evaluation, spills), one below on x86-64 (no 64-bit vector
    /// popcount: the portable four lanes were scalar code four times over) and the
    /// portable four elsewhere (aarch64's NEON). The batch kernels are compiled for this
    /// width at each level, and for one lane once (the reference), and for nothing else:
    /// each further pair was another copy of every kernel (the evaluation among them) in
    /// every build, run by the tests alone (issue 54).
    pub fn native_width(self) -> Width {
        match self {
            Level::Avx512 => Width::Eight,
            Level::Avx2 => Width::Four,
            _ if cfg!(all(target_arch = "x86_64", not(pawnstorm_fuzz))) => Width::One,
            _ => Width::Four,
        }
    }
}

/// How many positions a kernel handles at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Width {
    /// One (`u64`): the scalar reference.
    One,
    /// Four 64-bit lanes (one AVX2 register).
    Four,
    /// Eight 64-bit lanes (one AVX-512 register, two AVX2 ones).
    Eight,
}

impl Width {
    /// Every width.
    pub const ALL: [Width; 3] = [Width::One, Width::Four, Width::Eight];

    /// Positions per value.
    pub fn lanes(self) -> usize {
        match self {
            Width::One => 1,
            Width::Four => 4,
            Width::Eight => 8,
        }
    }
}

/// A level and a width: which code a batch kernel runs. Build one with [`Path::native`],
/// [`Path::scalar`] or [`Path::new`] (which refuses levels the CPU lacks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Path {
    level: Level,
    width: Width,
}

impl Path {
    /// `width` at `level`, if this CPU has `level` and the kernels are compiled for that
    /// pair: one lane, or the level's native width ([`Level::native_width`]).
    pub fn new(level: Level, width: Width) -> Option<Path> {
        (level.supported() && (width == Width::One || width == level.native_width()))
            .then_some(Path { level, width })
    }

    /// One position at a time: the reference of the batch code. Its level is the
    /// process's, which [`dispatch_level`] uses; [`dispatch`] runs one lane with the
    /// architecture's baseline instructions whatever the level.
    pub fn scalar() -> Path {
        Path {
            level: level(),
            width: Width::One,
        }
    }

    /// The widest lanes that fit one register at the process's level
    /// ([`Level::native_width`]).
    pub fn native() -> Path {
        let level = level();
        Path {
            level,
            width: level.native_width(),
        }
    }

    /// Every distinct path this CPU can run: one lane (the reference), then each level it
    /// has at its native width where that is other code. What the tests hold to each other.
    pub fn every() -> Vec<Path> {
        let native = Level::available()
            .into_iter()
            .map(|level| Path {
                level,
                width: level.native_width(),
            })
            .filter(|path| {
                (path.width != Width::One || path.level == Level::Sse4) && *path != Path::scalar()
            });
        std::iter::once(Path::scalar()).chain(native).collect()
    }

    /// The path's level.
    pub fn level(self) -> Level {
        self.level
    }

    /// The path's width.
    pub fn width(self) -> Width {
        self.width
    }

    /// Positions per kernel call.
    pub fn lanes(self) -> usize {
        self.width.lanes()
    }

    /// A name for summaries, e.g. `SIMD 8 x u64, avx512 (VPOPCNTDQ popcount)`.
    pub fn describe(self) -> String {
        match (self.level, self.width) {
            (Level::Sse4, Width::One) => return "scalar (1 x u64), sse4 (POPCNT)".to_string(),
            (_, Width::One) => return "scalar (1 x u64)".to_string(),
            _ => {}
        }
        let how = match (self.level, self.width) {
            (Level::Avx512, _) => "VPOPCNTDQ popcount",
            (Level::Avx2, _) => "nibble-table popcount",
            (Level::Sse4, _) => "portable lanes, POPCNT",
            (Level::Scalar, _) if cfg!(target_arch = "aarch64") => "portable lanes, NEON",
            (Level::Scalar, _) => "portable lanes",
        };
        format!("SIMD {} x u64, {} ({how})", self.lanes(), self.level.name())
    }
}

/// A kernel generic over its lanes, for [`dispatch`]: `call` and everything it calls must be
/// `#[inline(always)]` (or generic code that inlines), so that it is compiled into the
/// instruction set's function.
pub trait LanesFn {
    /// What the kernel returns.
    type Output;
    /// Runs the kernel on lanes `L`.
    fn call<L: Lanes>(self) -> Self::Output;
}

/// Code that needs an instruction set but no lanes (one position at a time: the search's
/// evaluations, the network's accumulators, the trainer's pass), for [`dispatch_level`]:
/// compiled once per level, where a [`LanesFn`] is compiled once per level and width.
/// `call` and everything it calls must be `#[inline(always)]`, as for [`LanesFn`].
pub trait LevelFn {
    /// What the code returns.
    type Output;
    /// Runs the code.
    fn call(self) -> Self::Output;
}

/// Hands back the closure it is given. For closures in kernels, as
/// `let f = inlined(#[inline(always)] |x| ...)`: an attribute on a closure is only
/// accepted where the closure is an argument, and a kernel's closures must be inlined like
/// the rest of it (a closure compiled on its own is compiled without the level's
/// instruction sets, and its every lane operation becomes a call).
#[inline(always)]
pub fn inlined<F>(closure: F) -> F {
    closure
}

/// Runs `kernel` on `path`'s lanes, compiled for `path`'s instruction set.
#[inline]
pub fn dispatch<F: LanesFn>(path: Path, kernel: F) -> F::Output {
    // Every constructor of Path checks the level against the CPU (its fields are private),
    // so release builds do not repeat the check on each call.
    debug_assert!(path.level.supported(), "{path:?} is above this CPU's level");
    // The fuzz build (scripts/fuzz: sanitizer coverage, ASan, overflow checks) compiles the
    // portable lanes only: every kernel compiled four times over under that
    // instrumentation took rustc more than half an hour. The fuzz targets are after the
    // input handling; the property tests hold each level to the scalar code.
    #[cfg(all(target_arch = "x86_64", not(pawnstorm_fuzz)))]
    {
        use crate::lanes::x86::{Avx2x4, Avx512x8};
        // SAFETY: the CPU has the level's instruction sets (checked when `path` was made).
        unsafe {
            match (path.level, path.width) {
                (Level::Avx512, Width::Eight) => x86::avx512(on_lanes::<Avx512x8, F>(kernel)),
                (Level::Avx2, Width::Four) => x86::avx2(on_lanes::<Avx2x4, F>(kernel)),
                (Level::Sse4, _) => x86::sse4(on_lanes::<u64, F>(kernel)),
                // One lane (the reference at the higher levels: compiled once, for the
                // baseline, rather than once per level), and the Scalar level's own.
                _ => kernel.call::<u64>(),
            }
        }
    }
    #[cfg(any(not(target_arch = "x86_64"), pawnstorm_fuzz))]
    {
        match path.width {
            Width::One => kernel.call::<u64>(),
            _ => kernel.call::<crate::lanes::portable::P4>(),
        }
    }
}

/// Runs `code` compiled for `path`'s instruction set (its width is not used).
#[inline]
pub fn dispatch_level<F: LevelFn>(path: Path, code: F) -> F::Output {
    debug_assert!(path.level.supported(), "{path:?} is above this CPU's level");
    #[cfg(all(target_arch = "x86_64", not(pawnstorm_fuzz)))]
    {
        // SAFETY: the CPU has the level's instruction sets (checked when `path` was made).
        unsafe {
            match path.level {
                Level::Avx512 => x86::avx512(code),
                Level::Avx2 => x86::avx2(code),
                Level::Sse4 => x86::sse4(code),
                Level::Scalar => code.call(),
            }
        }
    }
    #[cfg(any(not(target_arch = "x86_64"), pawnstorm_fuzz))]
    {
        code.call()
    }
}

/// A [`LanesFn`] on lanes `L`, as a [`LevelFn`] (for the level's function to compile).
#[cfg(all(target_arch = "x86_64", not(pawnstorm_fuzz)))]
struct OnLanes<L, F>(F, std::marker::PhantomData<L>);
#[cfg(all(target_arch = "x86_64", not(pawnstorm_fuzz)))]
#[inline(always)]
fn on_lanes<L: Lanes, F: LanesFn>(kernel: F) -> OnLanes<L, F> {
    OnLanes(kernel, std::marker::PhantomData)
}
#[cfg(all(target_arch = "x86_64", not(pawnstorm_fuzz)))]
impl<L: Lanes, F: LanesFn> LevelFn for OnLanes<L, F> {
    type Output = F::Output;
    #[inline(always)]
    fn call(self) -> F::Output {
        self.0.call::<L>()
    }
}

#[cfg(all(target_arch = "x86_64", not(pawnstorm_fuzz)))]
mod x86 {
    use super::LevelFn;

    /// # Safety
    /// The CPU has AVX-512 F, BW, VL, VPOPCNTDQ, VNNI and the AVX2 level's sets.
    #[target_feature(
        enable = "avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx512vnni,avx2,fma,bmi1,bmi2,lzcnt,popcnt,sse4.2"
    )]
    pub unsafe fn avx512<F: LevelFn>(code: F) -> F::Output {
        code.call()
    }

    /// # Safety
    /// The CPU has x86-64-v3's sets.
    #[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt,sse4.2")]
    pub unsafe fn avx2<F: LevelFn>(code: F) -> F::Output {
        code.call()
    }

    /// # Safety
    /// The CPU has SSE4.2 and POPCNT.
    #[target_feature(enable = "sse4.2,popcnt")]
    pub unsafe fn sse4<F: LevelFn>(code: F) -> F::Output {
        code.call()
    }
}

/// What the CPU has and what this process runs.
#[derive(Clone, Debug)]
pub struct Cpu {
    /// The highest level this CPU can run.
    pub detected: Level,
    /// The level the kernels run: `detected`, or lower if `PAWNSTORM_SIMD` asks.
    pub level: Level,
    /// Why `level` was chosen, in words.
    pub reason: String,
    /// The CPU's name (CPUID brand string), where it says.
    pub model: String,
    /// Whether BMI2's PEXT is used for the sliding-attack index: the level has BMI2 and the
    /// CPU runs PEXT in hardware (not AMD before Zen 3, where it is microcoded and slow).
    pub fast_pext: bool,
    /// A warning about `PAWNSTORM_SIMD` (an unknown value, or a level the CPU lacks).
    pub warning: Option<String>,
}

/// The environment variable that forces a lower level.
pub const ENV: &str = "PAWNSTORM_SIMD";

/// What this CPU has and what this process runs (detected on first use). Inlined: the
/// NNUE kernels check their level through it at every row, and as a call (through the
/// GOT, from another crate) it was a fifth of the bulk pass's kernel samples on a Zen 2.
#[inline]
pub fn cpu() -> &'static Cpu {
    static CPU: OnceLock<Cpu> = OnceLock::new();
    CPU.get_or_init(|| {
        let cpu = detect(std::env::var(ENV).ok().as_deref());
        if let Some(warning) = &cpu.warning {
            eprintln!("warning: {warning}");
        }
        POPCNT.store(cpu.level >= Level::Sse4, Ordering::Relaxed);
        cpu
    })
}

/// The level the kernels run in this process.
#[inline]
pub fn level() -> Level {
    cpu().level
}

/// Whether [`popcount`] may use the POPCNT instruction: set when [`cpu`] finds a level
/// that has it. Until then (and under `PAWNSTORM_SIMD=scalar`) the count is computed
/// without it, which gives the same number.
static POPCNT: AtomicBool = AtomicBool::new(false);

/// The number of set bits, for the scalar code (the search, the move generator): one
/// POPCNT instruction on CPUs that have it, chosen at run time. Plain x86-64 has no
/// POPCNT, and `u64::count_ones` compiled for it is a dozen instructions; the intrinsic
/// would only inline into functions compiled for POPCNT, which the recursive search cannot
/// be, so this is one instruction of inline assembly behind a flag that never changes.
#[inline(always)]
pub fn popcount(value: u64) -> u32 {
    #[cfg(all(target_arch = "x86_64", not(target_feature = "popcnt")))]
    if POPCNT.load(Ordering::Relaxed) {
        let count: u64;
        // SAFETY: the flag is only set on CPUs with POPCNT (see `cpu`).
        unsafe {
            std::arch::asm!(
                "popcnt {count}, {value}",
                value = in(reg) value,
                count = lateout(reg) count,
                options(pure, nomem, nostack)
            );
        }
        return count as u32;
    }
    value.count_ones()
}

/// Detection, with `forced` as `PAWNSTORM_SIMD`'s value.
fn detect(forced: Option<&str>) -> Cpu {
    let (detected, missing) = detect_level();
    let model = model_name();
    let (level, warning, why) = match forced.filter(|f| !f.trim().is_empty()) {
        None => (detected, None, None),
        Some(text) => match Level::parse(text) {
            None => (
                detected,
                Some(format!(
                    "{ENV}={text:?} is not a level (scalar, sse4, avx2, avx512); using {}",
                    detected.name()
                )),
                None,
            ),
            Some(asked) if asked > detected => (
                detected,
                Some(format!(
                    "{ENV}={} asks for more than this CPU has; using {}",
                    asked.name(),
                    detected.name()
                )),
                None,
            ),
            Some(asked) => (
                asked,
                None,
                Some(format!("forced by {ENV}={}", asked.name())),
            ),
        },
    };
    let reason = why.unwrap_or_else(|| match missing {
        Some(missing) => format!("the widest this CPU has (the next level needs {missing})"),
        None => "the widest there is; this CPU has it".to_string(),
    });
    Cpu {
        detected,
        level,
        reason,
        model,
        fast_pext: level >= Level::Avx2 && pext_in_hardware(),
        warning,
    }
}

/// The highest level this CPU has, and what the next one up lacks.
#[cfg(target_arch = "x86_64")]
fn detect_level() -> (Level, Option<String>) {
    use std::arch::is_x86_feature_detected as has;
    let lacking = |features: &[(&'static str, bool)]| {
        let missing: Vec<&str> = features
            .iter()
            .filter(|(_, present)| !present)
            .map(|(name, _)| *name)
            .collect();
        (!missing.is_empty()).then(|| missing.join(", "))
    };
    let sse4 = [
        ("sse4.2", has!("sse4.2")),
        ("popcnt", has!("popcnt")),
        ("ssse3", has!("ssse3")),
    ];
    let avx2 = [
        ("avx2", has!("avx2")),
        ("fma", has!("fma")),
        ("bmi1", has!("bmi1")),
        ("bmi2", has!("bmi2")),
        ("lzcnt", has!("lzcnt")),
    ];
    let avx512 = [
        ("avx512f", has!("avx512f")),
        ("avx512bw", has!("avx512bw")),
        ("avx512vl", has!("avx512vl")),
        ("avx512vpopcntdq", has!("avx512vpopcntdq")),
        // The network's output layer sums with VPDPWSSD: the bulk pass over games 1.03× as
        // fast (median of 25 alternated pairs, faster in 19), the same scores.
        ("avx512vnni", has!("avx512vnni")),
    ];
    if let Some(missing) = lacking(&sse4) {
        return (Level::Scalar, Some(missing));
    }
    if let Some(missing) = lacking(&avx2) {
        return (Level::Sse4, Some(missing));
    }
    if let Some(missing) = lacking(&avx512) {
        return (Level::Avx2, Some(missing));
    }
    (Level::Avx512, None)
}

#[cfg(not(target_arch = "x86_64"))]
fn detect_level() -> (Level, Option<String>) {
    (Level::Scalar, None)
}

/// Whether PEXT runs in hardware: every Intel CPU with BMI2, AMD from Zen 3 (family 0x19)
/// on; AMD's (and Hygon's) earlier cores microcode it at up to ~300 cycles.
#[cfg(target_arch = "x86_64")]
fn pext_in_hardware() -> bool {
    use std::arch::x86_64::__cpuid;
    if !std::arch::is_x86_feature_detected!("bmi2") {
        return false;
    }
    let (vendor, signature) = (__cpuid(0), __cpuid(1).eax);
    let name: Vec<u8> = [vendor.ebx, vendor.edx, vendor.ecx]
        .iter()
        .flat_map(|r| r.to_le_bytes())
        .collect();
    let base_family = (signature >> 8) & 0xf;
    let family = if base_family == 0xf {
        base_family + ((signature >> 20) & 0xff)
    } else {
        base_family
    };
    !matches!(&name[..], b"AuthenticAMD" | b"HygonGenuine") || family >= 0x19
}

#[cfg(not(target_arch = "x86_64"))]
fn pext_in_hardware() -> bool {
    false
}

#[cfg(target_arch = "x86_64")]
fn model_name() -> String {
    use std::arch::x86_64::__cpuid;
    // Leaves above the maximum are not read.
    if __cpuid(0x8000_0000).eax < 0x8000_0004 {
        return "unknown x86-64".to_string();
    }
    let brand = [0x8000_0002u32, 0x8000_0003, 0x8000_0004].map(__cpuid);
    let bytes: Vec<u8> = brand
        .iter()
        .flat_map(|r| [r.eax, r.ebx, r.ecx, r.edx])
        .flat_map(|r| r.to_le_bytes())
        .collect();
    String::from_utf8_lossy(&bytes)
        .trim_matches(|c: char| c == '\0' || c.is_whitespace())
        .to_string()
}

#[cfg(not(target_arch = "x86_64"))]
fn model_name() -> String {
    std::env::consts::ARCH.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forcing_lowers_and_never_raises() {
        let detected = detect(None).detected;
        assert_eq!(detect(None).level, detected);
        assert!(detect(None).warning.is_none());
        let scalar = detect(Some("scalar"));
        assert_eq!(scalar.level, Level::Scalar);
        assert!(scalar.reason.contains("PAWNSTORM_SIMD=scalar"));
        assert!(!scalar.fast_pext, "PEXT belongs to the AVX2 level");
        let bogus = detect(Some("avx9"));
        assert_eq!(bogus.level, detected);
        assert!(bogus.warning.as_deref().unwrap_or("").contains("\"avx9\""));
        if detected < Level::Avx512 {
            let too_high = detect(Some("AVX512"));
            assert_eq!(too_high.level, detected);
            assert!(too_high.warning.is_some());
        } else {
            assert_eq!(detect(Some("AVX512")).level, Level::Avx512);
        }
    }

    #[test]
    fn paths_are_only_made_for_levels_the_cpu_has() {
        let detected = cpu().detected;
        for level in Level::ALL {
            assert_eq!(Path::new(level, Width::One).is_some(), level <= detected);
        }
        for level in Level::available() {
            let widths: Vec<Width> = Width::ALL
                .into_iter()
                .filter(|&w| Path::new(level, w).is_some())
                .collect();
            let mut expected = vec![Width::One, level.native_width()];
            expected.dedup();
            assert_eq!(widths, expected);
        }
        // The reference first, then no path twice (one lane below AVX2 on x86-64 is the
        // reference's code but at SSE4.2, which has POPCNT).
        let every = Path::every();
        assert_eq!(every[0], Path::scalar());
        let distinct: std::collections::HashSet<(Level, Width)> = every
            .iter()
            .map(|p| match p.width() {
                Width::One if p.level() != Level::Sse4 => (Level::Scalar, Width::One),
                w => (p.level(), w),
            })
            .collect();
        assert_eq!(distinct.len(), every.len());
        assert!(Path::native().level() <= detected);
    }
}
