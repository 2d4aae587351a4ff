//! The tuning parameters of a sweep (digest §2.1) and their legal values: which configurations
//! the search tries, and how a learner's real-valued predictions snap back to legal ones (§6.4).

use serde::{Deserialize, Serialize};

use crate::config::{Config2, Config3};

/// The thesis's CPU tile sides (Table 5.1).
pub const THESIS_CPU_TILES: [usize; 5] = [1, 2, 4, 8, 10];

/// The CPU tile sides searched here: the thesis's, and larger powers of two, which fine-grained
/// kernels need to amortise a rayon task (about a microsecond) over enough cells.
pub const CPU_TILES: [usize; 10] = [1, 2, 4, 8, 10, 16, 32, 64, 128, 256];

/// The thesis's GPU tile sides (Table 5.1). Declared for the record: the GPU band of this crate
/// runs one thread per cell (tile 1), the only side that ever won in the thesis (§5.4).
pub const GPU_TILES: [usize; 7] = [1, 4, 8, 11, 16, 21, 25];

/// One point of the search space (the thesis's Table 3.1, with `gpu-count` folded into `band`
/// and `halo` as in §5.2.1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Candidate {
    /// Tiles as rayon tasks (`true`) or one after another on the calling thread: the thesis's
    /// sequential-vs-parallel decision.
    pub parallel: bool,
    /// CPU tile side.
    pub tile: usize,
    /// Diagonals (planes) on each side of the main one computed on the GPU; -1 for none.
    pub band: isize,
    /// GPU work-group tile side (1: one thread per cell; 0 when no GPU is used).
    pub gpu_tile: usize,
    /// Overlap of two GPUs' partitions; -1 for a single GPU (or none).
    pub halo: isize,
}

impl Candidate {
    /// A CPU-only configuration.
    pub fn cpu(parallel: bool, tile: usize) -> Self {
        Candidate { parallel, tile, band: -1, gpu_tile: 0, halo: -1 }
    }

    /// GPUs used: 0 without a band, 1 with a band and no halo, 2 with both.
    pub fn gpu_count(&self) -> u8 {
        match (self.band >= 0, self.halo >= 0) {
            (false, _) => 0,
            (true, false) => 1,
            (true, true) => 2,
        }
    }

    /// The 2D executor that runs this configuration.
    pub fn config2(&self) -> Config2 {
        if self.band >= 0 {
            Config2::hybrid(self.tile, self.band)
        } else if self.parallel {
            Config2::cpu(self.tile)
        } else {
            Config2::tiled(self.tile)
        }
    }

    /// The 3D executor that runs this configuration (the band counts planes).
    pub fn config3(&self) -> Config3 {
        if self.band >= 0 {
            Config3::hybrid(self.tile, self.band)
        } else if self.parallel {
            Config3::cpu(self.tile)
        } else {
            Config3::tiled(self.tile)
        }
    }
}

impl std::fmt::Display for Candidate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mode = if self.parallel { "cpu" } else { "tiled" };
        write!(f, "{mode} tile {}", self.tile)?;
        if self.band >= 0 {
            write!(f, ", band {}, gpu tile {}, halo {}", self.band, self.gpu_tile, self.halo)?;
        }
        Ok(())
    }
}

/// Which configurations the search tries for one instance.
#[derive(Debug, Clone, PartialEq)]
pub struct SpaceOptions {
    /// CPU tile sides (those above the grid side are left out: one tile covers the grid).
    pub tiles: Vec<usize>,
    /// GPUs to search over: 0 (CPU only), 1 (bands) or 2 (bands and halos).
    pub gpus: usize,
    /// Band values sampled per instance when there is a GPU.
    pub bands: usize,
    /// Halo values sampled per band when there are two GPUs.
    pub halos: usize,
}

impl Default for SpaceOptions {
    /// [`CPU_TILES`], no GPU, 12 bands and 6 halos (digest §2.4's proposal) once there is one.
    fn default() -> Self {
        SpaceOptions { tiles: CPU_TILES.to_vec(), gpus: 0, bands: 12, halos: 6 }
    }
}

/// The configurations of an instance of side `dim`: sequential and parallel over every tile
/// side, then (with GPUs) the sampled bands with the parallel CPU tiles around them, and (with
/// two GPUs) the sampled halos of each band. Sorted, without repeats.
pub fn candidates(dim: usize, opts: &SpaceOptions) -> Vec<Candidate> {
    let mut tiles: Vec<usize> = opts.tiles.iter().copied().filter(|&t| t >= 1 && t <= dim.max(1)).collect();
    if tiles.is_empty() {
        tiles.push(dim.max(1));
    }
    let mut out = Vec::new();
    for &tile in &tiles {
        out.push(Candidate::cpu(false, tile));
        out.push(Candidate::cpu(true, tile));
    }
    if opts.gpus >= 1 {
        for band in band_samples(dim, opts.bands) {
            let halos = if opts.gpus >= 2 { halo_samples(dim, band, opts.halos) } else { vec![-1] };
            for &tile in &tiles {
                for &halo in &halos {
                    out.push(Candidate { parallel: true, tile, band, gpu_tile: 1, halo });
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `k` band values in `[0, dim - 1]`, geometrically spaced from the main diagonal outwards
/// (0, then about `(dim - 1)^(i / (k - 1))` for `i` in `1..k`), so narrow bands, where the GPU's benefit changes
/// fastest, are sampled densely. Empty for `k = 0` or `dim = 0`.
pub fn band_samples(dim: usize, k: usize) -> Vec<isize> {
    if dim == 0 {
        return Vec::new();
    }
    geometric(dim - 1, k)
}

/// Halo values for `band`: -1 (one GPU), then up to `k` values geometrically spaced in
/// `[0, (dim - band) / 2]` (Table 5.1's range: half the first offloaded diagonal).
pub fn halo_samples(dim: usize, band: isize, k: usize) -> Vec<isize> {
    let max = dim.saturating_sub(band.max(0) as usize) / 2;
    let mut out = vec![-1];
    out.extend(geometric(max, k));
    out
}

/// `0` and up to `k - 1` values `round(max^(i / (k - 1)))` for `i` in `1..k`, deduplicated.
fn geometric(max: usize, k: usize) -> Vec<isize> {
    if k == 0 {
        return Vec::new();
    }
    let mut out = vec![0isize];
    if k > 1 && max > 0 {
        for i in 1..k {
            let v = (max as f64).powf(i as f64 / (k - 1) as f64).round() as isize;
            out.push(v.clamp(0, max as isize));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// A predicted tile side rounded to a whole number, then snapped to the nearest legal side,
/// ties to the smaller (digest §6.4: 5.6 -> 4, 6 -> 4, 9 -> 8, 12 -> 10 with the thesis's set).
/// `legal` must not be empty; NaN snaps to the smallest side.
pub fn snap_tile(x: f64, legal: &[usize]) -> usize {
    let r = if x.is_finite() { x.round() } else { f64::NEG_INFINITY };
    let mut best = legal[0];
    for &t in legal {
        let (d, db) = ((t as f64 - r).abs(), (best as f64 - r).abs());
        if d < db || (d == db && t < best) {
            best = t;
        }
    }
    best
}

/// A predicted `log2` tile side snapped to the nearest legal side in `log2` space (tiles are
/// powers of two apart, so 4.5 lies halfway between 16 and 32), ties to the smaller; only sides
/// up to `dim` are legal, as in [`candidates`] (none: `dim` itself, one tile over the grid).
/// NaN snaps to the smallest side.
pub fn snap_tile_log2(x: f64, legal: &[usize], dim: usize) -> usize {
    let dim = dim.max(1);
    let fits: Vec<usize> = legal.iter().copied().filter(|&t| t >= 1 && t <= dim).collect();
    let Some(&first) = fits.iter().min() else { return dim };
    let x = if x.is_finite() { x } else { f64::NEG_INFINITY };
    let mut best = first;
    for &t in &fits {
        let (d, db) = (((t as f64).log2() - x).abs(), ((best as f64).log2() - x).abs());
        if d < db || (d == db && t < best) {
            best = t;
        }
    }
    best
}

/// A predicted band rounded and clamped to `[-1, dim - 1]` (negative means no GPU).
pub fn snap_band(x: f64, dim: usize) -> isize {
    if !x.is_finite() || x.round() < 0.0 {
        return -1;
    }
    (x.round() as isize).min(dim as isize - 1)
}

/// A predicted halo rounded and clamped to `[-1, (dim - band) / 2]`; -1 without a band.
pub fn snap_halo(x: f64, dim: usize, band: isize) -> isize {
    if band < 0 || !x.is_finite() || x.round() < 0.0 {
        return -1;
    }
    let max = (dim.saturating_sub(band as usize) / 2) as isize;
    (x.round() as isize).min(max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Executor;

    #[test]
    fn tiles_snap_as_the_digest_says() {
        let t = &THESIS_CPU_TILES;
        for (x, want) in
            [(5.6, 4), (6.0, 4), (9.0, 8), (12.0, 10), (4.663, 4), (0.2, 1), (-3.0, 1), (1e9, 10)]
        {
            assert_eq!(snap_tile(x, t), want, "{x}");
        }
        assert_eq!(snap_tile(f64::NAN, t), 1);
        assert_eq!(snap_tile(24.0, &CPU_TILES), 16, "tie between 16 and 32 goes to 16");
        assert_eq!(snap_tile(25.0, &CPU_TILES), 32);
    }

    #[test]
    fn log2_tiles_snap_to_legal_sides_within_the_grid() {
        let t = &CPU_TILES;
        for (x, want) in [(4.4, 16), (4.5, 16), (4.6, 32), (3.1, 8), (3.3, 10), (-2.0, 1), (30.0, 256)] {
            assert_eq!(snap_tile_log2(x, t, 1000), want, "{x}");
        }
        assert_eq!(snap_tile_log2(8.0, t, 48), 32, "sides above the grid are not legal");
        assert_eq!(snap_tile_log2(8.0, t, 100), 64);
        assert_eq!(snap_tile_log2(f64::NAN, t, 100), 1);
        assert_eq!(snap_tile_log2(3.0, &[500], 7), 7, "no legal side: one tile over the grid");
        assert_eq!(snap_tile_log2(3.0, t, 0), 1);
        // Every snapped side is one the search times for that grid.
        for dim in [1usize, 5, 48, 300] {
            let legal: Vec<usize> =
                candidates(dim, &SpaceOptions::default()).iter().map(|c| c.tile).collect();
            for x in [-1.0, 0.7, 2.5, 5.1, 9.0] {
                assert!(legal.contains(&snap_tile_log2(x, t, dim)), "{dim} {x}");
            }
        }
    }

    #[test]
    fn bands_and_halos_snap_into_range() {
        assert_eq!(snap_band(26.9237, 1000), 27);
        assert_eq!(snap_band(-0.4, 10), 0, "rounds to 0 first");
        assert_eq!(snap_band(-0.6, 10), -1);
        assert_eq!(snap_band(2000.0, 10), 9);
        assert_eq!(snap_band(f64::NAN, 10), -1);
        assert_eq!(snap_halo(3.0, 10, -1), -1, "no band, no halo");
        assert_eq!(snap_halo(30.0, 10, 2), 4, "(10 - 2) / 2");
        assert_eq!(snap_halo(1.4, 10, 2), 1);
        assert_eq!(snap_halo(-2.0, 10, 2), -1);
    }

    #[test]
    fn gpu_count_is_encoded_by_band_and_halo() {
        let c = |band, halo| Candidate { parallel: true, tile: 4, band, gpu_tile: 1, halo };
        assert_eq!(c(-1, 5).gpu_count(), 0);
        assert_eq!(c(0, -1).gpu_count(), 1);
        assert_eq!(c(3, 0).gpu_count(), 2);
    }

    #[test]
    fn candidates_cover_the_cpu_space_and_sample_the_gpu_space() {
        let cpu = candidates(100, &SpaceOptions::default());
        // tiles <= 100: 1 2 4 8 10 16 32 64, tiled and parallel.
        assert_eq!(cpu.len(), 16);
        assert!(cpu.iter().all(|c| c.band == -1 && c.halo == -1));
        assert_eq!(
            candidates(1, &SpaceOptions::default()),
            vec![Candidate::cpu(false, 1), Candidate::cpu(true, 1)]
        );
        let no_tiles = SpaceOptions { tiles: vec![500], ..SpaceOptions::default() };
        assert_eq!(candidates(7, &no_tiles).len(), 2, "falls back to one tile over the grid");
        let one = SpaceOptions { gpus: 1, ..SpaceOptions::default() };
        let g1 = candidates(100, &one);
        assert!(g1.iter().any(|c| c.band == 99) && g1.iter().any(|c| c.band == 0));
        assert!(g1.iter().all(|c| c.halo == -1 && c.band <= 99));
        let two = SpaceOptions { gpus: 2, ..SpaceOptions::default() };
        let g2 = candidates(100, &two);
        assert!(g2.iter().any(|c| c.halo >= 0));
        for c in g2.iter().filter(|c| c.band >= 0) {
            assert!(c.halo <= (100 - c.band) / 2, "{c:?}");
        }
        assert!(band_samples(100, 12).len() <= 12 && band_samples(0, 5).is_empty());
    }

    #[test]
    fn candidates_map_to_executors() {
        assert_eq!(Candidate::cpu(false, 8).config2().executor(), Executor::Tiled { tile: 8 });
        assert_eq!(Candidate::cpu(true, 8).config3().executor(), Executor::Cpu { tile: 8 });
        let g = Candidate { parallel: true, tile: 4, band: 3, gpu_tile: 1, halo: -1 };
        assert_eq!(g.config2().executor(), Executor::Hybrid { tile: 4, band: 3 });
        assert_eq!(g.to_string(), "cpu tile 4, band 3, gpu tile 1, halo -1");
    }
}
