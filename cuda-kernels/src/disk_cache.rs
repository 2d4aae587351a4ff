//! The persistent cache of compiled modules: one file per module image, keyed by everything that
//! decides the image, so a process finds what an earlier one compiled and loads it at once.
//!
//! An entry holds a magic line, the full key text, the payload's length and SHA-256, and the
//! payload (a cubin). Reads check all of them and treat any mismatch as a miss, so a truncated,
//! corrupt or foreign file costs a recompile, never a wrong module or a panic. Writes go to a
//! temporary file in the same folder that is then renamed over the entry, so concurrent processes
//! see either the old entry, the new one or none, never a partial file.

use std::fmt;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

const MAGIC: &[u8] = b"hetkit-module-cache 1\n";
/// Folder below the cache root that holds the module entries.
const SUBDIR: &str = "cuda-modules";

/// Everything that decides a compiled module image. Two keys with equal text name the same image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheKey {
    text: String,
    file_stem: String,
    route: String,
}

impl CacheKey {
    /// The key of module `module` compiled from `input` (the source, or nvcc's PTX) by `route`
    /// (e.g. `"nvrtc-cubin"`) with `options`, by compiler `compiler` (e.g. `"nvrtc 12.8"`), for a
    /// device of compute capability `cc` under driver version `driver` (as `cuDriverGetVersion`
    /// reports it).
    pub fn new(
        module: &str,
        route: &str,
        input: &[u8],
        options: &[String],
        compiler: &str,
        cc: (i32, i32),
        driver: i32,
    ) -> CacheKey {
        let text = format!(
            "module: {module}\nroute: {route}\ninput-sha256: {}\noptions: {}\ncompiler: {compiler}\n\
             device: sm_{}{}\ndriver: {driver}\n",
            hex(&Sha256::digest(input)),
            options.join(" "),
            cc.0,
            cc.1,
        );
        let safe: String =
            module.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
        let file_stem = format!("{safe}.{}", &hex(&Sha256::digest(text.as_bytes()))[..32]);
        CacheKey { text, file_stem, route: route.to_string() }
    }

    /// How the image is made, e.g. `"nvrtc-cubin"`.
    pub fn route(&self) -> &str {
        &self.route
    }

    /// The key's text, as stored in the entry (one `field: value` per line).
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// A folder of compiled module images. Every failure to read or write it is logged and otherwise
/// ignored: the cache only ever saves time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleCache {
    dir: PathBuf,
}

impl ModuleCache {
    /// The cache the runtime uses: `$HETKIT_CACHE_DIR/cuda-modules`, else `cuda-modules` in the
    /// user's cache directory for hetkit (`~/.cache/hetkit` on Linux); `None` when
    /// `HETKIT_NO_MODULE_CACHE=1` or no cache directory is known.
    pub fn from_env() -> Option<ModuleCache> {
        if std::env::var("HETKIT_NO_MODULE_CACHE").is_ok_and(|v| v == "1") {
            return None;
        }
        let root = match std::env::var_os("HETKIT_CACHE_DIR") {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            _ => directories::ProjectDirs::from("", "", "hetkit")?.cache_dir().to_path_buf(),
        };
        Some(ModuleCache::at(root.join(SUBDIR)))
    }

    /// A cache in `dir` (created on the first write).
    pub fn at(dir: impl Into<PathBuf>) -> ModuleCache {
        ModuleCache { dir: dir.into() }
    }

    /// The folder holding the entries.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the entry for `key` lives.
    pub fn path(&self, key: &CacheKey) -> PathBuf {
        self.dir.join(format!("{}.bin", key.file_stem))
    }

    /// The image stored under `key`, or `None` when there is none or it does not check out.
    pub fn get(&self, key: &CacheKey) -> Option<Vec<u8>> {
        let path = self.path(key);
        let bytes = fs::read(&path).ok()?;
        match decode(&bytes, key) {
            Ok(payload) => Some(payload.to_vec()),
            Err(why) => {
                tracing::warn!(path = %path.display(), %why, "ignoring a module cache entry");
                None
            }
        }
    }

    /// Stores `image` under `key`, replacing any entry atomically. Returns whether it was stored.
    pub fn put(&self, key: &CacheKey, image: &[u8]) -> bool {
        match self.try_put(key, image) {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(dir = %self.dir.display(), error = %e, "could not write the module cache");
                false
            }
        }
    }

    /// Deletes the entry for `key` (one that no longer loads). Best effort.
    pub fn remove(&self, key: &CacheKey) {
        let _ = fs::remove_file(self.path(key));
    }

    fn try_put(&self, key: &CacheKey, image: &[u8]) -> std::io::Result<()> {
        fs::create_dir_all(&self.dir)?;
        let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(&self.dir)?;
        tmp.write_all(&encode(key, image))?;
        tmp.as_file().sync_all()?;
        tmp.persist(self.path(key)).map_err(|e| e.error)?;
        Ok(())
    }
}

fn encode(key: &CacheKey, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAGIC.len() + key.text.len() + payload.len() + 48);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(key.text.len() as u64).to_le_bytes());
    out.extend_from_slice(key.text.as_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&Sha256::digest(payload));
    out.extend_from_slice(payload);
    out
}

/// Why an entry was not used.
#[derive(Debug)]
enum Reject {
    Magic,
    Truncated,
    ForeignKey,
    Checksum,
}

impl fmt::Display for Reject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reject::Magic => "not a hetkit module cache entry",
            Reject::Truncated => "truncated",
            Reject::ForeignKey => "written for another key",
            Reject::Checksum => "payload checksum mismatch",
        })
    }
}

fn decode<'a>(bytes: &'a [u8], key: &CacheKey) -> Result<&'a [u8], Reject> {
    let rest = bytes.strip_prefix(MAGIC).ok_or(Reject::Magic)?;
    let (key_text, rest) = take_prefixed(rest)?;
    if key_text != key.text.as_bytes() {
        return Err(Reject::ForeignKey);
    }
    let (len, rest) = take_u64(rest)?;
    let (sum, payload) = rest.split_at_checked(32).ok_or(Reject::Truncated)?;
    if payload.len() as u64 != len {
        return Err(Reject::Truncated);
    }
    if Sha256::digest(payload).as_slice() != sum {
        return Err(Reject::Checksum);
    }
    Ok(payload)
}

fn take_u64(bytes: &[u8]) -> Result<(u64, &[u8]), Reject> {
    let (n, rest) = bytes.split_at_checked(8).ok_or(Reject::Truncated)?;
    Ok((u64::from_le_bytes(n.try_into().map_err(|_| Reject::Truncated)?), rest))
}

fn take_prefixed(bytes: &[u8]) -> Result<(&[u8], &[u8]), Reject> {
    let (len, rest) = take_u64(bytes)?;
    let len = usize::try_from(len).map_err(|_| Reject::Truncated)?;
    rest.split_at_checked(len).ok_or(Reject::Truncated)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(input: &str) -> CacheKey {
        CacheKey::new(
            "prefix/sort",
            "nvrtc-cubin",
            input.as_bytes(),
            &["-arch=sm_90".into()],
            "nvrtc 12.8",
            (9, 0),
            12080,
        )
    }

    #[test]
    fn every_field_changes_the_key() {
        let base = key("src");
        let opts = vec!["-arch=sm_90".to_string()];
        let variants = [
            CacheKey::new("prefix/sortx", "nvrtc-cubin", b"src", &opts, "nvrtc 12.8", (9, 0), 12080),
            CacheKey::new("prefix/sort", "nvrtc-ptx", b"src", &opts, "nvrtc 12.8", (9, 0), 12080),
            CacheKey::new("prefix/sort", "nvrtc-cubin", b"src2", &opts, "nvrtc 12.8", (9, 0), 12080),
            CacheKey::new(
                "prefix/sort",
                "nvrtc-cubin",
                b"src",
                &["-arch=sm_80".into()],
                "nvrtc 12.8",
                (9, 0),
                12080,
            ),
            CacheKey::new("prefix/sort", "nvrtc-cubin", b"src", &opts, "nvrtc 12.9", (9, 0), 12080),
            CacheKey::new("prefix/sort", "nvrtc-cubin", b"src", &opts, "nvrtc 12.8", (8, 0), 12080),
            CacheKey::new("prefix/sort", "nvrtc-cubin", b"src", &opts, "nvrtc 12.8", (9, 0), 12090),
        ];
        for v in &variants {
            assert_ne!(v.text, base.text);
            assert_ne!(v.file_stem, base.file_stem);
        }
        assert_eq!(key("src"), base);
    }

    #[test]
    fn decode_rejects_every_damaged_form() {
        let k = key("src");
        let good = encode(&k, b"payload bytes");
        assert_eq!(decode(&good, &k).unwrap(), b"payload bytes");
        for cut in 0..good.len() {
            assert!(decode(&good[..cut], &k).is_err(), "prefix of {cut} bytes accepted");
        }
        let mut flipped = good.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(matches!(decode(&flipped, &k), Err(Reject::Checksum)));
        assert!(matches!(decode(&good, &key("other")), Err(Reject::ForeignKey)));
        let mut longer = good.clone();
        longer.push(0);
        assert!(matches!(decode(&longer, &k), Err(Reject::Truncated)));
        assert!(matches!(decode(b"\x7fELF....", &k), Err(Reject::Magic)));
        // A length field near u64::MAX must not allocate or overflow.
        let mut huge = MAGIC.to_vec();
        huge.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode(&huge, &k).is_err());
    }
}
