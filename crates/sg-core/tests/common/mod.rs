//! Brute-force helpers shared by the integration tests.
#![allow(dead_code, unreachable_pub)]

use sg_core::GridSpec;

/// Every admissible 0-based level vector (l_t < c_t, |l|_1 <= n-1), any order.
pub fn level_vectors(c: &[u32], n: u32) -> Vec<Vec<u32>> {
    let d = c.len();
    let mut out = Vec::new();
    let mut l = vec![0u32; d];
    loop {
        if l.iter().sum::<u32>() < n {
            out.push(l.clone());
        }
        let mut t = 0;
        loop {
            if t == d {
                return out;
            }
            l[t] += 1;
            if l[t] < c[t].min(n) {
                break;
            }
            l[t] = 0;
            t += 1;
        }
    }
}

/// Every point (public levels, indices) of a grid, enumerated from the definition.
pub fn all_points(spec: &GridSpec) -> Vec<(Vec<u32>, Vec<u32>)> {
    let d = spec.dim();
    let c = spec.truncation();
    let n = spec.level();
    let lo = if spec.has_boundary() { 0 } else { 1 };
    let mut out = Vec::new();
    let mut lv = vec![lo; d];
    loop {
        let sum: u32 = lv.iter().filter(|&&l| l > 0).map(|&l| l - 1).sum();
        if sum < n {
            // all index vectors
            let mut iv: Vec<u32> = lv.iter().map(|&l| if l == 0 { 0 } else { 1 }).collect();
            loop {
                out.push((lv.clone(), iv.clone()));
                let mut t = 0;
                loop {
                    if t == d {
                        break;
                    }
                    let max = if lv[t] == 0 { 1 } else { (1u32 << lv[t]) - 1 };
                    let step = if lv[t] == 0 { 1 } else { 2 };
                    if iv[t] + step <= max {
                        iv[t] += step;
                        break;
                    }
                    iv[t] = if lv[t] == 0 { 0 } else { 1 };
                    t += 1;
                }
                if t == d {
                    break;
                }
            }
        }
        let mut t = 0;
        loop {
            if t == d {
                return out;
            }
            lv[t] += 1;
            if lv[t] <= c[t] {
                break;
            }
            lv[t] = lo;
            t += 1;
        }
    }
}

/// Binomial coefficient.
pub fn binom(n: u64, k: u64) -> u64 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    (0..k).fold(1u64, |acc, i| acc * (n - i) / (i + 1))
}

/// N(d, n) = Σ_g 2^g C(g+d-1, d-1), with N(0, n) = 1.
pub fn n_regular(d: u64, n: u64) -> u64 {
    if d == 0 {
        return 1;
    }
    (0..n).map(|g| (1u64 << g) * binom(g + d - 1, d - 1)).sum()
}

/// N_b(d, n) = Σ_j 2^(d-j) C(d, j) N(j, n).
pub fn n_boundary(d: u64, n: u64) -> u64 {
    (0..=d).map(|j| (1u64 << (d - j)) * binom(d, j) * n_regular(j, n)).sum()
}

/// Tensor parabola Π 4x(1-x).
pub fn parabola<T: sg_core::Real>(x: &[T]) -> T {
    let four = T::from_f64(4.0);
    x.iter().fold(T::one(), |p, &v| p * four * v * (T::one() - v))
}
