//! Which vector instructions the CPU sorts use: detected once at run time, optionally capped by
//! the environment variable `HETKIT_SORT_ISA` (`scalar`, `avx2` or `avx512`), so that the test
//! suite can run every fallback on a CPU that has the wider paths.

use std::sync::OnceLock;

/// The widest instruction set a CPU sort path may use, in increasing order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Isa {
    /// Portable code only (the scalar networks, `sort_unstable`, the radix sorts).
    Scalar,
    /// 256-bit registers: the AVX2 networks and quicksort.
    Avx2,
    /// 512-bit registers (AVX-512F): the 256-key network in 16 registers and the compress
    /// partition.
    Avx512,
}

/// The instruction set the sorts use in this process: what the CPU has, capped by
/// `HETKIT_SORT_ISA`.
pub(crate) fn isa() -> Isa {
    static ISA: OnceLock<Isa> = OnceLock::new();
    *ISA.get_or_init(|| detected().min(env_cap("HETKIT_SORT_ISA")))
}

/// The cap the environment variable `var` names (`scalar`, `avx2`, `avx512`); no cap when it
/// is unset or names none. Shared by every module that lets tests force its narrower paths.
pub(crate) fn env_cap(var: &str) -> Isa {
    std::env::var(var).ok().and_then(|v| parse(&v)).unwrap_or(Isa::Avx512)
}

/// The cap a value of `HETKIT_SORT_ISA` names; `None` (no cap) for anything else.
fn parse(v: &str) -> Option<Isa> {
    match v.trim().to_ascii_lowercase().as_str() {
        "scalar" | "none" | "portable" => Some(Isa::Scalar),
        "avx2" => Some(Isa::Avx2),
        "avx512" | "avx512f" => Some(Isa::Avx512),
        _ => None,
    }
}

/// What the CPU supports.
fn detected() -> Isa {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx2") {
            return Isa::Avx512;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return Isa::Avx2;
        }
    }
    Isa::Scalar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_parses_and_never_widens() {
        assert_eq!(parse("AVX2"), Some(Isa::Avx2));
        assert_eq!(parse(" scalar "), Some(Isa::Scalar));
        assert_eq!(parse("avx512"), Some(Isa::Avx512));
        assert_eq!(parse("sse"), None);
        assert!(isa() <= detected());
    }
}
