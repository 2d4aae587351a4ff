//! Himeno's residual against the digest's values (§10.2): XS and S, iterations 1 to 3, and the
//! closed form of the first iteration.

use stencil::{Config, Himeno, StencilError};

const XS: (usize, usize, usize) = (33, 33, 65);
const S: (usize, usize, usize) = (65, 65, 129);
const GOSA_XS: [f64; 3] = [6.713436944e-03, 6.438837856e-03, 6.229342509e-03];
const GOSA_S: [f64; 3] = [3.416246635e-03, 3.348145277e-03, 3.295447663e-03];

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

#[test]
fn first_iteration_has_a_closed_form() {
    let (i, j, k) = XS;
    let (imax, jmax, kmax) = ((i - 1) as f64, (j - 1) as f64, (k - 1) as f64);
    let closed = (imax - 2.0) * (jmax - 2.0) * (kmax - 2.0) / (9.0 * (imax - 1.0).powi(4));
    let r = Himeno::<f64>::new(i, j, k).unwrap().run(1, &Config::sequential()).unwrap();
    assert!(rel(r.gosa, closed) < 1e-12, "{} vs {closed}", r.gosa);
}

#[test]
fn gosa_of_size_xs_f64_and_f32() {
    let h = Himeno::<f64>::new(XS.0, XS.1, XS.2).unwrap();
    let h32 = Himeno::<f32>::new(XS.0, XS.1, XS.2).unwrap();
    for (n, want) in GOSA_XS.iter().enumerate() {
        for cfg in [Config::sequential(), Config::cpu()] {
            let r = h.run(n + 1, &cfg).unwrap();
            // The digest prints 10 significant digits.
            assert!(rel(r.gosa, *want) < 1e-9, "{cfg:?} iteration {}: {} vs {want}", n + 1, r.gosa);
            assert!(r.seconds > 0.0 && r.mflops > 0.0);
            let r = h32.run(n + 1, &cfg).unwrap();
            assert!(rel(r.gosa, *want) < 1e-4, "f32 {cfg:?} iteration {}: {} vs {want}", n + 1, r.gosa);
        }
    }
}

#[test]
fn gosa_of_size_s() {
    let h = Himeno::<f64>::new(S.0, S.1, S.2).unwrap();
    for (n, want) in GOSA_S.iter().enumerate() {
        let r = h.run(n + 1, &Config::cpu()).unwrap();
        assert!(rel(r.gosa, *want) < 1e-9, "iteration {}: {} vs {want}", n + 1, r.gosa);
    }
}

#[test]
fn parallel_field_equals_the_official_loop() {
    let h = Himeno::<f32>::new(17, 9, 33).unwrap();
    let (a, pa) = h.run_with_field(3, &Config::sequential()).unwrap();
    let (b, pb) = h.run_with_field(3, &Config::cpu()).unwrap();
    // The same operations per point; only the order of the gosa sum differs.
    assert!(pa == pb);
    assert!(rel(a.gosa, b.gosa) < 1e-12);
}

#[test]
fn bad_sizes_and_configurations_are_errors() {
    assert!(matches!(Himeno::<f64>::new(3, 33, 65), Err(StencilError::Shape(_))));
    assert!(Himeno::<f64>::new(usize::MAX / 2, 1 << 20, 1 << 20).is_err());
    let h = Himeno::<f64>::new(5, 5, 5).unwrap();
    assert!(h.run(0, &Config::cpu()).is_err());
    assert!(h.run(1, &Config::slabs(2)).is_err());
    let r = h.run(1, &Config::auto()).unwrap();
    assert!(r.gosa > 0.0);
}
