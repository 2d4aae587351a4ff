//! Pictures of a 2-D density estimate (filled contour bands and iso-lines) and of a clustering
//! (clusters coloured, noise grey), written as PNG files with `plotters`' bitmap backend (no
//! text, so no font is needed).
//!
//! `cargo run --release -p sg-learn --example learn_plots -- [OUT_DIR]` (default `target/learn-plots`)

use plotters::prelude::*;
use sg_learn::{Clustering, DensityEstimator, GridSpec, adjusted_rand_index, datasets};

const SIZE: u32 = 600;
const PIXELS_PER_CELL: u32 = 4;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args().nth(1).unwrap_or_else(|| "target/learn-plots".into());
    std::fs::create_dir_all(&out)?;
    let blobs = datasets::GaussianBlobs { clusters: 6, dim: 2, sigma: 0.045, separation: 6.0, noise: 0.03 };
    let (x, truth) = blobs.generate(3_000, 11)?;
    let spec = GridSpec::regular(2, 7)?;
    let density = DensityEstimator::new(spec.clone()).lambda(1e-4).fit(x.view())?;
    let density_png = format!("{out}/density.png");
    draw_density(&density_png, &density, &x)?;
    let labels = Clustering::new(spec).lambda(1e-4).neighbors(6).threshold(0.1).fit(x.view())?;
    let clusters_png = format!("{out}/clusters.png");
    draw_clusters(&clusters_png, &x, &labels)?;
    println!(
        "wrote {density_png} and {clusters_png}; ARI against the generator {:.3}",
        adjusted_rand_index(&labels, &truth)
    );
    Ok(())
}

/// The estimate on a `cells × cells` raster (cell centres), row `r` at `y = (r + 0.5)/cells`.
fn raster(model: &sg_learn::DensityModel, cells: usize) -> Result<Vec<f64>, sg_learn::LearnError> {
    let pts = ndarray::Array2::from_shape_fn((cells * cells, 2), |(i, k)| {
        let (r, c) = (i / cells, i % cells);
        (if k == 0 { c } else { r } as f64 + 0.5) / cells as f64
    });
    Ok(model.evaluate(pts.view())?.to_vec())
}

fn draw_density(
    path: &str,
    model: &sg_learn::DensityModel,
    x: &ndarray::Array2<f64>,
) -> Result<(), Box<dyn std::error::Error>> {
    let cells = (SIZE / PIXELS_PER_CELL) as usize;
    let f = raster(model, cells)?;
    let max = f.iter().copied().fold(f64::MIN, f64::max).max(1e-300);
    let root = BitMapBackend::new(path, (SIZE, SIZE)).into_drawing_area();
    root.fill(&WHITE)?;
    let bands = 8;
    for r in 0..cells {
        for c in 0..cells {
            let band = ((f[r * cells + c] / max).clamp(0.0, 1.0) * bands as f64).floor() / bands as f64;
            let colour = ViridisRGB::get_color(band);
            let (px, py) =
                ((c as u32 * PIXELS_PER_CELL) as i32, ((cells - 1 - r) as u32 * PIXELS_PER_CELL) as i32);
            let size = PIXELS_PER_CELL as i32;
            root.draw(&Rectangle::new([(px, py), (px + size, py + size)], colour.filled()))?;
        }
    }
    for level in 1..bands {
        for seg in iso_segments(&f, cells, max * level as f64 / bands as f64) {
            root.draw(&PathElement::new(seg.map(|(u, v)| to_pixel(u, v)).to_vec(), BLACK.stroke_width(1)))?;
        }
    }
    for row in x.rows().into_iter().step_by(4) {
        root.draw(&Circle::new(to_pixel(row[0], row[1]), 1, WHITE.mix(0.6).filled()))?;
    }
    root.present()?;
    Ok(())
}

fn to_pixel(u: f64, v: f64) -> (i32, i32) {
    ((u * SIZE as f64) as i32, ((1.0 - v) * SIZE as f64) as i32)
}

/// Marching squares over the raster of cell centres: the line segments of `f = level`, in unit
/// square coordinates.
fn iso_segments(f: &[f64], cells: usize, level: f64) -> Vec<[(f64, f64); 2]> {
    let at = |r: usize, c: usize| f[r * cells + c];
    let pos = |r: f64, c: f64| ((c + 0.5) / cells as f64, (r + 0.5) / cells as f64);
    let mut out = Vec::new();
    for r in 0..cells - 1 {
        for c in 0..cells - 1 {
            // corners in order (r,c), (r,c+1), (r+1,c+1), (r+1,c); edges between consecutive ones
            let corners = [(r, c), (r, c + 1), (r + 1, c + 1), (r + 1, c)];
            let mut crossings = Vec::with_capacity(4);
            for e in 0..4 {
                let (a, b) = (corners[e], corners[(e + 1) % 4]);
                let (fa, fb) = (at(a.0, a.1), at(b.0, b.1));
                if (fa < level) != (fb < level) {
                    let t = (level - fa) / (fb - fa);
                    let rr = a.0 as f64 + t * (b.0 as f64 - a.0 as f64);
                    let cc = a.1 as f64 + t * (b.1 as f64 - a.1 as f64);
                    crossings.push(pos(rr, cc));
                }
            }
            // 2 crossings: one segment; 4 (a saddle): pair them in edge order
            for pair in crossings.chunks_exact(2) {
                out.push([pair[0], pair[1]]);
            }
        }
    }
    out
}

fn draw_clusters(
    path: &str,
    x: &ndarray::Array2<f64>,
    labels: &[Option<usize>],
) -> Result<(), Box<dyn std::error::Error>> {
    let root = BitMapBackend::new(path, (SIZE, SIZE)).into_drawing_area();
    root.fill(&WHITE)?;
    for (row, label) in x.rows().into_iter().zip(labels) {
        let style = match label {
            Some(c) => Palette99::pick(*c).filled(),
            None => RGBColor(170, 170, 170).filled(),
        };
        root.draw(&Circle::new(to_pixel(row[0], row[1]), 3, style))?;
    }
    root.present()?;
    Ok(())
}
