//! The specification language: the thesis's Table 4.1 formulas equal the built stencils,
//! parameter arrays against a plain loop, and errors that name the problem and position.

use ndarray::Array3;
use stencil::{Config, Stencil, StencilError};

const SEVEN: &str =
    "tmp = (u[i+1][j][k]+u[i-1][j][k]+u[i][j+1][k]+u[i][j-1][k]+u[i][j][k+1]+u[i][j][k-1])*beta;
                     u1[i][j][k] = tmp + alpha*u[i][j][k]";

const THIRTEEN: &str =
    "tmp = coef1*(u[i+1][j][k]+u[i-1][j][k]+u[i][j+1][k]+u[i][j-1][k]+u[i][j][k+1]+u[i][j][k-1]);
    tmp += coef2*(u[i+2][j][k]+u[i-2][j][k]+u[i][j+2][k]+u[i][j-2][k]+u[i][j][k+2]+u[i][j][k-2]);
    u1[i][j][k] = tmp + coef0*u[i][j][k]";

fn field(shape: (usize, usize, usize)) -> Array3<f64> {
    Array3::from_shape_fn(shape, |(i, j, k)| ((i * 5 + j * 3 + k * 7) % 16) as f64)
}

#[test]
fn table_4_1_formulas_match_the_built_stencils() {
    let s =
        Stencil::<f64>::parse(SEVEN).unwrap().scalar("alpha", 0.25).unwrap().scalar("beta", 0.125).unwrap();
    assert_eq!((s.num_points(), s.flops_per_point(), s.has_corners(), s.halo()), (7, 8, false, [1, 1, 1]));
    let u = field((6, 7, 9));
    let built = Stencil::<f64>::seven_point(0.25, 0.125);
    for cfg in [Config::sequential(), Config::cpu(), Config::slabs(2)] {
        assert!(s.apply(u.view(), &cfg).unwrap() == built.apply(u.view(), &Config::sequential()).unwrap());
    }
    let s = Stencil::<f64>::parse(THIRTEEN)
        .unwrap()
        .scalar("coef0", 0.5)
        .unwrap()
        .scalar("coef1", 0.0625)
        .unwrap()
        .scalar("coef2", 0.015625)
        .unwrap();
    assert_eq!((s.num_points(), s.flops_per_point(), s.halo()), (13, 15, [2, 2, 2]));
    let built = Stencil::<f64>::thirteen_point(0.5, 0.0625, 0.015625);
    assert!(
        s.apply(u.view(), &Config::cpu()).unwrap() == built.apply(u.view(), &Config::sequential()).unwrap()
    );
}

#[test]
fn parameter_arrays_against_a_plain_loop() {
    // A variable-coefficient diffusion step with a source term.
    let spec = "# variable coefficients\n\
                flux = kx[i][j][k]*(u[i+1][j][k] - 2*u[i][j][k] + u[i-1][j][k]) + ky*(u[i][j+1][k] + u[i][j-1][k]);\n\
                v[i][j][k] = u[i][j][k] + dt*flux + src[i][j][k];";
    let shape = (5, 6, 7);
    let kx = Array3::from_shape_fn(shape, |(i, j, k)| 0.25 * ((i + j + k) % 3) as f64);
    let src = Array3::from_shape_fn(shape, |(i, _, k)| (i * k) as f64 * 0.5);
    let (ky, dt) = (0.125, 0.5);
    let s = Stencil::<f64>::parse(spec)
        .unwrap()
        .array("kx", kx.clone())
        .unwrap()
        .array("src", src.clone())
        .unwrap()
        .scalar("ky", ky)
        .unwrap()
        .scalar("dt", dt)
        .unwrap();
    assert_eq!((s.num_points(), s.has_corners(), s.halo()), (5, false, [1, 1, 0]));
    let u = field(shape);
    let mut want = u.clone();
    for i in 1..4 {
        for j in 1..5 {
            for k in 0..7 {
                let flux = kx[[i, j, k]] * (u[[i + 1, j, k]] - 2.0 * u[[i, j, k]] + u[[i - 1, j, k]])
                    + ky * (u[[i, j + 1, k]] + u[[i, j - 1, k]]);
                want[[i, j, k]] = u[[i, j, k]] + dt * flux + src[[i, j, k]];
            }
        }
    }
    for cfg in [Config::sequential(), Config::cpu(), Config::slabs(2)] {
        let got = s.apply(u.view(), &cfg).unwrap();
        // Dyadic values: the expanded and the written order round alike (not at all).
        assert!(got == want, "{cfg:?}");
    }
}

fn parse_err(spec: &str) -> String {
    match Stencil::<f32>::parse(spec) {
        Err(e @ StencilError::Parse { .. }) => e.to_string(),
        other => panic!("{spec}: expected a parse error, got {other:?}"),
    }
}

#[test]
fn errors_name_the_problem_and_its_position() {
    let e = parse_err("out[i][j][k] = u[i+1][j][k] + v[i][j-1][k]");
    assert!(e.contains("only one array") && e.contains("position 30"), "{e}");
    let e = parse_err("out[i][j][k] = u[i+1][j][k] +* 2");
    assert!(e.contains("expected a number") && e.contains("position 29"), "{e}");
    let e = parse_err("out[i][j][k] = u[i+1][j][k] * u[i][j][k]");
    assert!(e.contains("linear"), "{e}");
    let e = parse_err("x = 2;\nout[i][j][k] = u[i][j][k] * x");
    assert!(e.contains("no input array") && e.contains("line 2"), "{e}");
    let e = parse_err("out[i][j][k] = u[i+1][j][k];\nout[i][j][k] = u[i][j][k]");
    assert!(e.contains("last"), "{e}");
    let e = parse_err("out[i+1][j][k] = u[i+1][j][k]");
    assert!(e.contains("[i][j][k]"), "{e}");
    let e = parse_err("out[i][j][k] = u[i+1][j][k] @");
    assert!(e.contains("unexpected character `@`") && e.contains("column 29"), "{e}");
    let e = parse_err("out[i][j][k] = t * u[i+1][j][k]; t = 2");
    assert!(e.contains("last"), "{e}");
    let e = parse_err("y = t * 2; t = 3; out[i][j][k] = y * u[i+1][j][k]");
    assert!(e.contains("before its definition"), "{e}");
}

#[test]
fn unbound_and_unknown_symbols_are_errors() {
    let s = Stencil::<f32>::parse(SEVEN).unwrap();
    assert!(s.clone().scalar("gamma", 1.0).unwrap_err().to_string().contains("`beta`, `alpha`"));
    assert!(s.clone().array("alpha", Array3::zeros((3, 3, 3))).is_err());
    let s = s.scalar("alpha", 1.0).unwrap();
    let u = Array3::<f32>::zeros((3, 3, 3));
    let e = s.apply(u.view(), &Config::cpu()).unwrap_err();
    assert!(
        matches!(&e, StencilError::Unbound { name, position, .. } if name == "beta" && Some(*position) == SEVEN.find("beta")),
        "{e}"
    );
    let p = Stencil::<f32>::parse("out[i][j][k] = w[i][j][k] * u[i+1][j][k]").unwrap();
    let e = p.clone().apply(u.view(), &Config::cpu()).unwrap_err().to_string();
    assert!(e.contains("parameter array `w`"), "{e}");
    let p = p.array("w", Array3::zeros((3, 3, 4))).unwrap();
    let e = p.apply(u.view(), &Config::cpu()).unwrap_err().to_string();
    assert!(e.contains("shape"), "{e}");
}
