//! The specialised constant-coefficient kernel and its temporal blocking against a plain loop
//! written here (each point summed in the plan's order, in the element type, so the
//! comparison is `==` on any input in the exact order): awkward shapes (the smallest legal
//! grid, primes, non-cubes, rows shorter and longer than a vector group), f32 and f64, 1..=5
//! sweeps, every depth, chunk count and band height, on a pool of three threads so the chunks
//! really run side by side. The fast order: bitwise its own one-point-at-a-time reference
//! under every blocking, slab count and instruction set, and within its documented bound of
//! the plain loop.

use ndarray::Array3;
use stencil::{Config, CpuBlocks, Element, Order, Stencil};

/// `sweeps` Jacobi sweeps by the definition: the boundary layer copied, interior points summed
/// term by term in the order given.
fn plain_loop<T: Element>(points: &[([i32; 3], T)], u: &Array3<T>, sweeps: usize) -> Array3<T> {
    let h = |a: usize| points.iter().map(|(d, _)| d[a].unsigned_abs() as usize).max().unwrap_or(0);
    let (h0, h1, h2) = (h(0), h(1), h(2));
    let (n0, n1, n2) = u.dim();
    let mut cur = u.clone();
    for _ in 0..sweeps {
        let mut next = cur.clone();
        for i in h0..n0 - h0 {
            for j in h1..n1 - h1 {
                for k in h2..n2 - h2 {
                    let mut acc = T::ZERO;
                    for (m, (d, w)) in points.iter().enumerate() {
                        let at = [
                            (i as i32 + d[0]) as usize,
                            (j as i32 + d[1]) as usize,
                            (k as i32 + d[2]) as usize,
                        ];
                        let v = *w * cur[at];
                        acc = if m == 0 { v } else { acc + v };
                    }
                    next[[i, j, k]] = acc;
                }
            }
        }
        cur = next;
    }
    cur
}

/// A non-dyadic field: rounding differs with the order of the sums.
fn field<T: Element>(shape: (usize, usize, usize)) -> Array3<T> {
    Array3::from_shape_fn(shape, |(i, j, k)| T::from_f64(((i * 31 + j * 17 + k * 7) as f64 * 0.377).sin()))
}

/// Weighted offsets, in evaluation order.
type Points<T> = Vec<([i32; 3], T)>;

fn axis(r: i32) -> Vec<[i32; 3]> {
    vec![[r, 0, 0], [-r, 0, 0], [0, r, 0], [0, -r, 0], [0, 0, r], [0, 0, -r]]
}

/// Point lists covering every kernel arm: 7, 13, 19 and 27 terms (compile-time term counts),
/// the isotropic 27-point stencil (the fast order's column kernel), 5 terms (the run-time
/// count), an axis-0 halo of 2 with one-sided offsets, and no offset along axis 0 at all.
fn cases<T: Element>() -> Vec<(&'static str, Points<T>)> {
    let f = T::from_f64;
    let mut seven = vec![([0, 0, 0], f(0.31))];
    seven.extend(axis(1).into_iter().map(|d| (d, f(0.113))));
    let mut thirteen = seven.clone();
    thirteen.extend(axis(2).into_iter().map(|d| (d, f(-0.027))));
    let mut twenty_seven = Vec::new();
    let mut isotropic = Vec::new();
    let mut nineteen = Vec::new();
    for di in -1..=1 {
        for dj in -1..=1 {
            for dk in -1..=1 {
                let d = [di, dj, dk];
                let nz = d.iter().filter(|x| **x != 0).count();
                let w = f([0.41, 0.093, -0.031, 0.0071][nz] + 0.001 * (di + 2 * dj + 3 * dk) as f64);
                twenty_seven.push((d, w));
                isotropic.push((d, f([0.41, 0.093, -0.031, 0.0071][nz])));
                if nz < 3 {
                    nineteen.push((d, w));
                }
            }
        }
    }
    let five = vec![
        ([0, 0, 0], f(0.6)),
        ([2, 0, 1], f(0.13)),
        ([-1, 1, 0], f(-0.21)),
        ([0, -1, -2], f(0.17)),
        ([1, 0, 0], f(0.05)),
    ];
    let flat = vec![([0, 0, 0], f(0.5)), ([0, 1, 0], f(0.2)), ([0, -1, 0], f(0.2)), ([0, 0, 1], f(0.1))];
    vec![
        ("7", seven),
        ("13", thirteen),
        ("19", nineteen),
        ("27", twenty_seven),
        ("27 isotropic", isotropic),
        ("5 one-sided", five),
        ("no axis-0 offset", flat),
    ]
}

fn blocks() -> Vec<CpuBlocks> {
    let mut v = Vec::new();
    for depth in 1..=6 {
        // Bands of one row (raised to the margin), of three, and one band for the plane.
        for (chunks_per_thread, j_block) in [(1, 1), (3, 3), (1, 32)] {
            v.push(CpuBlocks { depth, chunks_per_thread, j_block, ..CpuBlocks::default() });
        }
    }
    v
}

fn check<T: Element>() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    for (name, points) in cases::<T>() {
        let s = Stencil::from_points(&points).unwrap();
        let h = s.halo();
        let smallest = (2 * h[0] + 1, 2 * h[1] + 1, 2 * h[2] + 1);
        // Rows of 1 point, of 65 or 63 (vector groups and a partial one), prime lengths, rows
        // of 203 points whose starts fall at every alignment (the aligned groups), and 41
        // rows (a column walked through several bands).
        for shape in [
            smallest,
            (2 * h[0] + 2, 7, 2 * h[2] + 1),
            (9, 3 + 2 * h[1], 67),
            (17, 5, 11),
            (7, 19, 13),
            (2 * h[0] + 2, 2 * h[1] + 4, 203),
            (2 * h[0] + 3, 41, 2 * h[2] + 35),
        ] {
            let u = field::<T>(shape);
            for sweeps in 1..=5 {
                let want = plain_loop(&points, &u, sweeps);
                let mut seq = u.clone();
                s.iterate(&mut seq, sweeps, &Config::sequential()).unwrap();
                assert!(seq == want, "{} {name} {shape:?} {sweeps}: the reference differs", T::NAME);
                let mut fast_want = u.clone();
                s.iterate(&mut fast_want, sweeps, &Config::sequential().with_order(Order::Fast)).unwrap();
                for b in blocks() {
                    for order in [Order::Exact, Order::Fast] {
                        let mut got = u.clone();
                        let cfg = Config::cpu().with_cpu_blocks(b).with_order(order);
                        pool.install(|| s.iterate(&mut got, sweeps, &cfg)).unwrap();
                        let want = if order == Order::Exact { &want } else { &fast_want };
                        assert!(got == *want, "{} {name} {shape:?} {sweeps} sweeps {b:?} {order:?}", T::NAME);
                    }
                }
            }
            let once = pool.install(|| s.apply(u.view(), &Config::cpu().with_order(Order::Exact))).unwrap();
            assert!(once == plain_loop(&points, &u, 1), "{} {name} {shape:?}: apply", T::NAME);
            let fast = pool.install(|| s.apply(u.view(), &Config::cpu().with_order(Order::Fast))).unwrap();
            within_bound(&points, &u, &fast, &format!("{} {name} {shape:?}", T::NAME));
            let fast_ref = s.apply(u.view(), &Config::sequential().with_order(Order::Fast)).unwrap();
            assert!(fast == fast_ref, "{} {name} {shape:?}: fast apply", T::NAME);
        }
    }
}

/// One sweep in the fast order against the sum computed in f64: every interior point within
/// `2 g_n sum |w x|`, `g_n = n u / (1 - n u)`, the documented bound (the fast order is within
/// `g_n sum |w x|` of the true sum, and so is the f64 sum, in f64's smaller `u`).
fn within_bound<T: Element>(points: &[([i32; 3], T)], u: &Array3<T>, got: &Array3<T>, what: &str) {
    let h = |a: usize| points.iter().map(|(d, _)| d[a].unsigned_abs() as usize).max().unwrap_or(0);
    let (h0, h1, h2) = (h(0), h(1), h(2));
    let (n0, n1, n2) = u.dim();
    let unit = if std::mem::size_of::<T>() == 4 { f64::from(f32::EPSILON) / 2.0 } else { f64::EPSILON / 2.0 };
    let n = points.len() as f64;
    let mut worst = 0.0f64;
    for i in h0..n0 - h0 {
        for j in h1..n1 - h1 {
            for k in h2..n2 - h2 {
                let (mut exact, mut mag) = (0.0, 0.0);
                for (d, w) in points {
                    let at =
                        [(i as i32 + d[0]) as usize, (j as i32 + d[1]) as usize, (k as i32 + d[2]) as usize];
                    let p = w.to_f64() * u[at].to_f64();
                    exact += p;
                    mag += p.abs();
                }
                let err = (got[[i, j, k]].to_f64() - exact).abs();
                let bound = 2.0 * n * unit / (1.0 - n * unit) * mag;
                assert!(err <= bound, "{what} at {:?}: error {err:e} above the bound {bound:e}", [i, j, k]);
                worst = worst.max(err / mag.max(f64::MIN_POSITIVE));
            }
        }
    }
    assert!(worst.is_finite(), "{what}");
}

#[test]
fn fast_order_is_within_its_bound_on_random_data() {
    // Random values of both signs, a wide range of magnitudes, and cancellation: weights that
    // sum to zero (a Laplacian), in f32 and f64.
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(24);
    fn run<T: Element>(rng: &mut rand_chacha::ChaCha8Rng) {
        for (name, mut points) in cases::<T>() {
            if name == "27" {
                // Isotropic: the four-weight grouping of the fast order.
                points = points
                    .iter()
                    .map(|(d, _)| {
                        let nz = d.iter().filter(|x| **x != 0).count();
                        (*d, T::from_f64([-88.0 / 26.0, 6.0 / 26.0, 3.0 / 26.0, 1.0 / 26.0][nz]))
                    })
                    .collect();
            }
            let s = Stencil::from_points(&points).unwrap();
            for shape in [(7, 9, 67), (5, 13, 31)] {
                let u = Array3::from_shape_fn(shape, |_| {
                    T::from_f64(rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-3..4)))
                });
                let got = s.apply(u.view(), &Config::cpu()).unwrap();
                within_bound(&points, &u, &got, &format!("{} {name} {shape:?}", T::NAME));
            }
        }
    }
    run::<f32>(&mut rng);
    run::<f64>(&mut rng);
}

#[test]
fn temporal_blocking_matches_the_plain_loop_f32() {
    check::<f32>();
}

#[test]
fn temporal_blocking_matches_the_plain_loop_f64() {
    check::<f64>();
}

#[test]
fn zero_sweeps_and_too_small_grids() {
    let s = Stencil::<f64>::thirteen_point(0.5, 0.1, 0.01);
    let u = field::<f64>((5, 5, 5));
    let mut got = u.clone();
    s.iterate(&mut got, 0, &Config::cpu()).unwrap();
    assert!(got == u);
    let mut small = field::<f64>((4, 5, 5));
    assert!(s.iterate(&mut small, 3, &Config::cpu()).is_err());
    assert!(s.apply(small.view(), &Config::cpu()).is_err());
}
