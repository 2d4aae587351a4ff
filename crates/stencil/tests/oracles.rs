//! The digest's exact oracles (§10.1): polynomial fields with known stencil output, dyadic
//! multi-sweep inputs compared with `==` across every CPU configuration and partition count,
//! and a plain loop written here as the independent reference.

use ndarray::Array3;
use stencil::{Config, CpuBlocks, Element, Order, Stencil};

/// Every CPU configuration: the reference, all cores with several block shapes, 1..=4 slabs.
fn cpu_configs() -> Vec<(String, Config)> {
    let mut v = vec![("sequential".to_string(), Config::sequential()), ("cpu".into(), Config::cpu())];
    for (ib, jb, depth, cpt) in [(1, 1, 1, 1), (3, 5, 2, 3), (16, 256, 3, 2), (4, 32, 5, 1), (2, 7, 8, 4)] {
        let blocks = CpuBlocks { i_block: ib, j_block: jb, depth, chunks_per_thread: cpt };
        v.push((format!("cpu {blocks:?}"), Config::cpu().with_cpu_blocks(blocks)));
    }
    for parts in 1..=4 {
        v.push((format!("slabs({parts})"), Config::slabs(parts)));
    }
    v
}

/// A plain loop: the formula at interior points, copies elsewhere; summed in f64.
fn naive<T: Element>(points: &[([i32; 3], f64)], u: &Array3<T>) -> Array3<T> {
    let (n0, n1, n2) = u.dim();
    let h = |a: usize| points.iter().map(|(d, _)| d[a].unsigned_abs() as usize).max().unwrap_or(0);
    let (h0, h1, h2) = (h(0), h(1), h(2));
    let mut out = u.clone();
    for i in h0..n0 - h0 {
        for j in h1..n1 - h1 {
            for k in h2..n2 - h2 {
                let mut acc = 0.0;
                for (d, w) in points {
                    let at =
                        [(i as i32 + d[0]) as usize, (j as i32 + d[1]) as usize, (k as i32 + d[2]) as usize];
                    acc += w * u[at].to_f64();
                }
                out[[i, j, k]] = T::from_f64(acc);
            }
        }
    }
    out
}

fn interior(shape: (usize, usize, usize), h: [usize; 3]) -> impl Iterator<Item = [usize; 3]> {
    let (n0, n1, n2) = shape;
    (h[0]..n0 - h[0])
        .flat_map(move |i| (h[1]..n1 - h[1]).flat_map(move |j| (h[2]..n2 - h[2]).map(move |k| [i, j, k])))
}

/// Centred coordinates keep the values small (|x| <= 20 in f32 for x^4).
fn c(i: usize, n: usize) -> f64 {
    i as f64 - (n / 2) as f64
}

/// A stencil, its input and the exact output at an interior point.
type Case<'a, T> = (Stencil<T>, &'a Array3<T>, Box<dyn Fn([usize; 3]) -> f64>);

fn check_polynomials<T: Element>() {
    for shape in [(5, 7, 11), (13, 6, 5), (9, 9, 9)] {
        let quad = Array3::from_shape_fn(shape, |(i, j, k)| {
            let (x, y, z) = (c(i, shape.0), c(j, shape.1), c(k, shape.2));
            T::from_f64(x * x + y * y + z * z)
        });
        let linear = Array3::from_shape_fn(shape, |(i, j, k)| {
            T::from_f64(3.0 * c(i, shape.0) - 2.0 * c(j, shape.1) + c(k, shape.2) + 5.0)
        });
        let quartic = Array3::from_shape_fn(shape, |(i, _, _)| T::from_f64(c(i, shape.0).powi(4)));
        let f = T::from_f64;
        let cases: Vec<Case<'_, T>> = vec![
            (Stencil::seven_point(f(-6.0), f(1.0)), &quad, Box::new(|_| 6.0)),
            (Stencil::seven_point(f(-6.0), f(1.0)), &linear, Box::new(|_| 0.0)),
            (Stencil::thirteen_point(f(-90.0), f(16.0), f(-1.0)), &quad, Box::new(|_| 72.0)),
            (
                Stencil::thirteen_point(f(-90.0), f(16.0), f(-1.0)),
                &quartic,
                Box::new(move |p| 144.0 * c(p[0], shape.0).powi(2)),
            ),
            (Stencil::twenty_seven_point(f(-26.0), f(1.0), f(1.0), f(1.0)), &quad, Box::new(|_| 54.0)),
            // p0 = -(6 p1 + 12 p2 + 8 p3) gives 6 p1 + 24 p2 + 24 p3.
            (
                Stencil::twenty_seven_point(f(-(12.0 + 12.0 * 3.0 + 8.0 * 5.0)), f(2.0), f(3.0), f(5.0)),
                &quad,
                Box::new(|_| 12.0 + 72.0 + 120.0),
            ),
        ];
        for (n, (s, u, want)) in cases.iter().enumerate() {
            if shape.0 < 2 * s.halo()[0] + 1 || shape.1 < 2 * s.halo()[1] + 1 || shape.2 < 2 * s.halo()[2] + 1
            {
                continue;
            }
            for (name, cfg) in cpu_configs() {
                let out = match s.apply(u.view(), &cfg) {
                    Ok(out) => out,
                    Err(e) if name.starts_with("slabs") && e.to_string().contains("parts") => continue,
                    Err(e) => panic!("{name}: {e}"),
                };
                for p in interior(shape, s.halo()) {
                    assert_eq!(out[p].to_f64(), want(p), "{} case {n} {name} {shape:?} at {p:?}", T::NAME);
                }
                // The boundary layer is the input's.
                let h = s.halo();
                for p in [[0, 0, 0], [shape.0 - 1, h[1], h[2]], [h[0], shape.1 - 1, shape.2 - 1]] {
                    assert_eq!(out[p], u[p]);
                }
            }
        }
    }
}

#[test]
fn polynomial_fields_give_exact_values_f32() {
    check_polynomials::<f32>();
}

#[test]
fn polynomial_fields_give_exact_values_f64() {
    check_polynomials::<f64>();
}

/// Integers in [0, 15] from a hash: dyadic weights keep every intermediate exact.
fn dyadic_field<T: Element>(shape: (usize, usize, usize), seed: usize) -> Array3<T> {
    Array3::from_shape_fn(shape, |(i, j, k)| {
        T::from_f64(((i * 73 + j * 151 + k * 37 + seed * 11) * 2_654_435_761 % 16) as f64)
    })
}

fn seven_dyadic() -> Vec<([i32; 3], f64)> {
    let mut p = vec![([0, 0, 0], 0.25)];
    for d in [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]] {
        p.push((d, 0.125));
    }
    p
}

fn twenty_seven_dyadic() -> Vec<([i32; 3], f64)> {
    let mut p = Vec::new();
    for di in -1..=1 {
        for dj in -1..=1 {
            for dk in -1..=1 {
                let w = match [di, dj, dk].iter().filter(|x| **x != 0).count() {
                    0 => 0.5,
                    1 => 1.0 / 32.0,
                    _ => 1.0 / 64.0,
                };
                p.push(([di, dj, dk], w));
            }
        }
    }
    p
}

fn check_dyadic<T: Element>(points: &[([i32; 3], f64)], s: &Stencil<T>, sweeps: usize) {
    for (seed, shape) in [(5, 9, 17), (7, 3, 4), (11, 13, 6), (4, 7, 37), (1, 1, 1)].into_iter().enumerate() {
        let _ = seed;
        if shape.0 < 3 || shape.1 < 3 || shape.2 < 3 {
            // Too small: an error, never a panic.
            let mut u = dyadic_field::<T>(shape, seed);
            assert!(s.iterate(&mut u, 1, &Config::sequential()).is_err());
            continue;
        }
        let u0 = dyadic_field::<T>(shape, seed);
        let mut want = u0.clone();
        for _ in 0..sweeps {
            want = naive(points, &want);
        }
        for (name, cfg) in cpu_configs() {
            let mut u = u0.clone();
            match s.iterate(&mut u, sweeps, &cfg) {
                Ok(()) => assert!(u == want, "{} {name} {shape:?}: differs from the plain loop", T::NAME),
                // Only slabs may refuse: more parts than planes.
                Err(e) => {
                    assert!(name.starts_with("slabs") && e.to_string().contains("parts"), "{name}: {e}")
                }
            }
        }
    }
}

#[test]
fn dyadic_sweeps_agree_bitwise_across_configurations() {
    let p7 = seven_dyadic();
    let pts7: Vec<([i32; 3], f64)> = p7.clone();
    check_dyadic::<f64>(
        &pts7,
        &Stencil::from_points(&pts7.iter().map(|(d, w)| (*d, *w)).collect::<Vec<_>>()).unwrap(),
        15,
    );
    check_dyadic::<f32>(&pts7, &Stencil::seven_point(0.25, 0.125), 5);
    let p27 = twenty_seven_dyadic();
    check_dyadic::<f64>(&p27, &Stencil::twenty_seven_point(0.5, 1.0 / 32.0, 1.0 / 64.0, 1.0 / 64.0), 7);
    check_dyadic::<f32>(&p27, &Stencil::twenty_seven_point(0.5, 1.0 / 32.0, 1.0 / 64.0, 1.0 / 64.0), 2);
}

#[test]
fn asymmetric_and_high_order_points_match_the_plain_loop() {
    // One-sided, order 3 along axis 2, a corner; dyadic weights, one sweep.
    let pts = vec![([0, 0, 0], 0.5), ([0, 0, 3], 0.25), ([2, -1, 0], 0.125), ([-1, 1, -2], -0.0625)];
    let s = Stencil::<f64>::from_points(&pts).unwrap();
    assert_eq!((s.halo(), s.num_points(), s.has_corners()), ([2, 1, 3], 4, true));
    let u = dyadic_field::<f64>((7, 5, 11), 3);
    let want = naive(&pts, &u);
    for (name, cfg) in cpu_configs() {
        let got = s.apply(u.view(), &cfg);
        match got {
            Ok(got) => assert!(got == want, "{name}"),
            Err(e) => assert!(name.starts_with("slabs"), "{name}: {e}"),
        }
    }
}

#[test]
fn non_dyadic_inputs_agree_bitwise_on_the_cpu_in_either_order() {
    // In either order, the CPU kernels evaluate every point in one fixed order without fused
    // multiply-adds: bitwise the sequential reference in that order.
    // The 13-point stencil (the general fast program) and the isotropic 27-point stencil (its
    // column kernel).
    let stencils = [
        Stencil::<f32>::thirteen_point(0.3, 0.1, -0.07),
        Stencil::<f32>::twenty_seven_point(0.3, 0.1, -0.07, 0.013),
    ];
    let u = Array3::from_shape_fn((11, 12, 37), |(i, j, k)| ((i * j + k) as f32 * 0.731).sin());
    for s in &stencils {
        for order in [Order::Exact, Order::Fast] {
            let mut want = u.clone();
            s.iterate(&mut want, 3, &Config::sequential().with_order(order)).unwrap();
            for (name, cfg) in cpu_configs() {
                let mut got = u.clone();
                s.iterate(&mut got, 3, &cfg.with_order(order)).unwrap();
                assert!(got == want, "{} points, {name} {order:?}", s.num_points());
            }
        }
        // The orders differ on such data (else the fast order would not be reassociating).
        let (mut a, mut b) = (u.clone(), u.clone());
        s.iterate(&mut a, 3, &Config::cpu().with_order(Order::Exact)).unwrap();
        s.iterate(&mut b, 3, &Config::cpu().with_order(Order::Fast)).unwrap();
        assert!(a != b, "{} points", s.num_points());
    }
}

#[test]
fn without_tuning_the_fast_order_runs_where_it_cuts_loads() {
    // The built-in rule of `Config::order` (grids this small never read the tuning cache):
    // the stars in the exact order, stencils whose rows share partial sums in the fast one.
    let u = Array3::from_shape_fn((9, 10, 41), |(i, j, k)| ((i * j + 3 * k) as f64 * 0.613).cos());
    let cases = [
        (Stencil::<f64>::seven_point(0.3, 0.1), Order::Exact),
        (Stencil::<f64>::thirteen_point(0.3, 0.1, -0.07), Order::Exact),
        (Stencil::<f64>::twenty_seven_point(0.3, 0.1, -0.07, 0.013), Order::Fast),
        // Not isotropic (one edge weight differs): the general program, with scratch rows.
        (Stencil::<f64>::from_points(&anisotropic_cube()).unwrap(), Order::Fast),
    ];
    for (s, order) in &cases {
        let reference = |o: Order| s.apply(u.view(), &Config::sequential().with_order(o)).unwrap();
        let (want, other) =
            (reference(*order), reference(if *order == Order::Fast { Order::Exact } else { Order::Fast }));
        assert!(want != other, "{} points: the orders must differ on this data", s.num_points());
        for cfg in [Config::cpu(), Config::slabs(2)] {
            let mut got = u.clone();
            s.iterate(&mut got, 1, &cfg).unwrap();
            assert!(got == want, "{} points, {cfg:?}: not the {order:?} order", s.num_points());
        }
        assert_eq!(Config::cpu().order(), None);
        assert!(s.apply(u.view(), &Config::sequential()).unwrap() == reference(Order::Exact));
    }
}

/// The 27 points of `[-1, 1]^3`, weights by class except one edge.
fn anisotropic_cube() -> Vec<([i32; 3], f64)> {
    let mut pts = Vec::new();
    for a in -1..=1 {
        for b in -1..=1 {
            for c in -1..=1 {
                let class = [a, b, c].iter().filter(|x| **x != 0).count();
                let w = if [a, b, c] == [1, 1, 0] { 0.021 } else { [0.3, 0.1, -0.07, 0.013][class] };
                pts.push(([a, b, c], w));
            }
        }
    }
    pts
}

#[test]
fn features_of_the_thesis_stencils() {
    let s7 = Stencil::<f32>::seven_point(1.0, 2.0);
    let s13 = Stencil::<f32>::thirteen_point(1.0, 2.0, 3.0);
    let s27 = Stencil::<f64>::twenty_seven_point(1.0, 2.0, 3.0, 4.0);
    assert_eq!(
        (s7.halo(), s7.num_points(), s7.has_corners(), s7.flops_per_point()),
        ([1, 1, 1], 7, false, 8)
    );
    assert_eq!(
        (s13.halo(), s13.num_points(), s13.has_corners(), s13.flops_per_point()),
        ([2, 2, 2], 13, false, 15)
    );
    assert_eq!(
        (s27.halo(), s27.num_points(), s27.has_corners(), s27.flops_per_point()),
        ([1, 1, 1], 27, true, 30)
    );
}

#[test]
fn bad_points_and_grids_are_errors() {
    assert!(Stencil::<f64>::from_points(&[]).is_err());
    let e = Stencil::<f64>::from_points(&[([1, 0, 0], 1.0), ([0, 0, 0], 2.0), ([1, 0, 0], 3.0)]).unwrap_err();
    assert!(e.to_string().contains("repeats point 0"), "{e}");
    assert!(Stencil::<f64>::from_points(&[([1000, 0, 0], 1.0)]).is_err());
    let s = Stencil::<f64>::thirteen_point(1.0, 1.0, 1.0);
    let small = Array3::<f64>::zeros((5, 4, 5));
    let e = s.apply(small.view(), &Config::cpu()).unwrap_err().to_string();
    assert!(e.contains("axis 1") && e.contains("2 * halo + 1 = 5"), "{e}");
    let mut u = Array3::<f64>::zeros((5, 5, 5));
    assert!(s.iterate(&mut u, 1, &Config::slabs(0)).is_err());
    // Five planes, halo two: at most two slabs of at least two planes.
    assert!(s.iterate(&mut u, 1, &Config::slabs(3)).is_err());
    s.iterate(&mut u, 1, &Config::slabs(2)).unwrap();
    // Zero sweeps change nothing.
    let mut v = dyadic_field::<f64>((5, 5, 5), 1);
    let before = v.clone();
    s.iterate(&mut v, 0, &Config::cpu()).unwrap();
    assert_eq!(v, before);
}

#[test]
fn non_standard_layouts_are_accepted() {
    let s = Stencil::<f64>::seven_point(0.25, 0.125);
    let u = dyadic_field::<f64>((6, 7, 8), 2);
    let t = u.clone().reversed_axes(); // a (8, 7, 6) view in Fortran order
    let want = naive(&seven_dyadic(), &t.as_standard_layout().into_owned());
    assert!(s.apply(t.view(), &Config::cpu()).unwrap() == want);
    let mut f = t.to_owned();
    s.iterate(&mut f, 1, &Config::slabs(2)).unwrap();
    assert!(f == want);
}
