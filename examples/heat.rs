//! The heat equation on a 3D grid with the 7-point stencil: a hot ball in a cold box whose walls
//! are held at zero, written as a picture of the middle slice.
//!
//! `cargo run --release --example heat -- [N] [SWEEPS] [FILE.png]` (defaults 96, 400,
//! `target/heat.png`). Runs on the GPU when there is one, else on all cores.

use std::fs::File;
use std::io::BufWriter;
use std::time::Instant;

use hetkit::ndarray::{Array3, s};
use hetkit::stencil::{Config, Stencil};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().map_or(Ok(96), |a| a.parse())?;
    let sweeps: usize = args.get(1).map_or(Ok(400), |a| a.parse())?;
    let path = args.get(2).cloned().unwrap_or_else(|| "target/heat.png".into());
    if n < 3 {
        return Err("N must be at least 3".into());
    }
    // Explicit Euler with nu = dt / h^2 = 1/8: stable (nu <= 1/6) and dyadic.
    let heat = Stencil::<f32>::parse(
        "lap = u[i+1][j][k] + u[i-1][j][k] + u[i][j+1][k] + u[i][j-1][k] + u[i][j][k+1] + u[i][j][k-1] - 6 * u[i][j][k];
         next[i][j][k] = u[i][j][k] + nu * lap",
    )?
    .scalar("nu", 0.125)?;
    let c = n as f32 / 2.0;
    let mut u = Array3::from_shape_fn((n, n, n), |(i, j, k)| {
        let r2 = (i as f32 - c).powi(2) + (j as f32 - c * 0.7).powi(2) + (k as f32 - c * 1.2).powi(2);
        if r2 < (n as f32 / 6.0).powi(2) { 1.0 } else { 0.0 }
    });
    u.slice_mut(s![.., .., 0]).fill(0.0);
    let before: f32 = u.sum();
    let t = Instant::now();
    heat.iterate(&mut u, sweeps, &Config::auto())?;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{n}^3 grid, {sweeps} sweeps in {:.2} s ({:.0} Mpoints/s); heat {before:.0} -> {:.0} (lost through the walls)",
        secs,
        ((n - 2).pow(3) * sweeps) as f64 / secs / 1e6,
        u.sum()
    );
    write_png(&u.slice(s![n / 2, .., ..]).to_owned(), &path)?;
    println!("wrote the middle slice to {path}");
    Ok(())
}

/// The slice as an 8-bit colour image: black, through red and yellow, to white.
fn write_png(slice: &hetkit::ndarray::Array2<f32>, path: &str) -> Result<(), Box<dyn std::error::Error>> {
    let (h, w) = slice.dim();
    let max = slice.iter().copied().fold(f32::MIN_POSITIVE, f32::max);
    let mut rgb = Vec::with_capacity(h * w * 3);
    for &v in slice {
        let x = (v / max).clamp(0.0, 1.0);
        let ramp = |lo: f32| ((x - lo) * 3.0).clamp(0.0, 1.0) * 255.0;
        rgb.extend_from_slice(&[ramp(0.0) as u8, ramp(1.0 / 3.0) as u8, ramp(2.0 / 3.0) as u8]);
    }
    if let Some(dir) = std::path::Path::new(path).parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut enc = png::Encoder::new(BufWriter::new(File::create(path)?), w as u32, h as u32);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header()?.write_image_data(&rgb)?;
    Ok(())
}
