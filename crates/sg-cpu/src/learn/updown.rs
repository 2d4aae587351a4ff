//! The L2 mass matrix and the Laplacian (stiffness) matrix of a consistent grid of linear hats,
//! applied matrix-free by the up-down (unidirectional) scheme in `O(2^d · N)` per product
//! instead of the `O(N²·d)` of the pairwise product ([`MassMatrix`](super::MassMatrix)).
//!
//! In one dimension two hierarchical hats overlap only when one is an ancestor of the other, so
//! the 1-D mass matrix splits into `U` (a point gathers from its strict descendants) and `L`
//! (from its ancestors and itself), both linear-time recursions over the 1-D trees ("poles").
//! The `d`-dimensional matrix `⊗_k (U_k + L_k)` expands into `2^d` terms; applying each term's
//! `U` factors before its `L` factors keeps every intermediate value on a grid point (the
//! grid holds every ancestor of its points), and the recursion over dimensions shares the
//! work between terms. The 1-D stiffness matrix of hierarchical hats is diagonal
//! (`(φ'_a, φ'_b) = 0` for `a ≠ b`: `φ'_a` is constant on a descendant's support, over which
//! `φ'_b` integrates to 0), so the Laplacian `Σ_k D_k ⊗ M_{−k}` costs `d` mass products of one
//! dimension fewer.

use rayon::prelude::*;
use sg_core::{AdaptiveGrid, Real};

use super::check_len;
use crate::error::{Error, Result};

/// "No child" in the pole tables.
const NONE: u32 = u32::MAX;

/// Poles of one dimension laid out contiguously, each tree in pre-order.
#[derive(Debug, Clone)]
struct Poles<T> {
    /// Position in pole order → grid point.
    perm: Vec<u32>,
    /// Grid point → position in pole order.
    inverse: Vec<u32>,
    /// Position of the left / right child in this dimension, or [`NONE`].
    left: Vec<u32>,
    right: Vec<u32>,
    /// `h = 2^−l` of the point at each position.
    width: Vec<T>,
    /// Positions of the pole roots (level 1 in this dimension), ascending.
    roots: Vec<u32>,
    /// Runs of whole poles (ranges into `roots`) balanced for the threads.
    chunks: Vec<std::ops::Range<usize>>,
}

/// Which part of the 1-D mass matrix to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// `U`: from strict descendants.
    Up,
    /// `L`: from ancestors and the point itself.
    Down,
    /// `U + L`.
    Both,
}

/// `R v` (L2 mass matrix) and `S v` (Laplacian, `S_ij = (∇φ_i, ∇φ_j)_{L2}`) of a consistent
/// grid of linear hats without boundary points, by the up-down scheme, in `f32` or `f64`.
///
/// ```
/// use sg_core::{AdaptiveGrid, GridSpec};
/// use sg_cpu::learn::{MassMatrix, UpDown};
/// let grid = AdaptiveGrid::from_spec(&GridSpec::regular(3, 4)?)?;
/// let v: Vec<f64> = (0..grid.len()).map(|j| (j as f64).cos()).collect();
/// let (mut a, mut b) = (vec![0.0; grid.len()], vec![0.0; grid.len()]);
/// UpDown::<f64>::new(&grid)?.mass(&v, &mut a)?;
/// MassMatrix::new(&grid)?.mult(&v, &mut b)?;
/// assert!(a.iter().zip(&b).all(|(p, q)| (p - q).abs() < 1e-14));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct UpDown<T> {
    n: usize,
    poles: Vec<Poles<T>>,
}

impl<T: Real> UpDown<T> {
    /// The operators of `grid`.
    ///
    /// # Errors
    /// An empty grid, or one that is not consistent (a point whose parent in some dimension
    /// is missing: the scheme needs every ancestor).
    pub fn new(grid: &AdaptiveGrid) -> Result<Self> {
        if grid.is_empty() {
            return Err(Error::Shape("the grid has no point".into()));
        }
        if grid.len() >= NONE as usize {
            return Err(Error::Shape(format!("{} grid points do not fit 32-bit positions", grid.len())));
        }
        let poles = (0..grid.dim()).map(|k| Poles::new(grid, k)).collect::<Result<Vec<_>>>()?;
        Ok(UpDown { n: grid.len(), poles })
    }

    /// `N`.
    pub fn grid_len(&self) -> usize {
        self.n
    }

    /// `out = R v`, `R_ij = (φ_i, φ_j)_{L2[0,1]^d}`.
    ///
    /// # Errors
    /// `v.len() != N` or `out.len() != N`.
    pub fn mass(&self, v: &[T], out: &mut [T]) -> Result<()> {
        check_len("v", self.n, v.len())?;
        check_len("output (R v)", self.n, out.len())?;
        self.updown(&self.dims(None), v, out);
        Ok(())
    }

    /// `out = S v`, `S_ij = (∇φ_i, ∇φ_j)_{L2[0,1]^d}` (the Laplacian regulariser of density
    /// estimation with `C = S`).
    ///
    /// # Errors
    /// `v.len() != N` or `out.len() != N`.
    pub fn laplacian(&self, v: &[T], out: &mut [T]) -> Result<()> {
        check_len("v", self.n, v.len())?;
        check_len("output (S v)", self.n, out.len())?;
        out.iter_mut().for_each(|o| *o = T::zero());
        let mut scaled = vec![T::zero(); self.n];
        let mut term = vec![T::zero(); self.n];
        let two = T::from_f64(2.0);
        for (k, poles) in self.poles.iter().enumerate() {
            // (φ'_{l,i}, φ'_{l,i}) = 2 / h in dimension k
            for (p, &j) in poles.perm.iter().enumerate() {
                scaled[j as usize] = two / poles.width[p] * v[j as usize];
            }
            self.updown(&self.dims(Some(k)), &scaled, &mut term);
            out.iter_mut().zip(&term).for_each(|(o, t)| *o += *t);
        }
        Ok(())
    }

    /// The dimensions whose mass matrices a product applies (all but `skip`).
    fn dims(&self, skip: Option<usize>) -> Vec<usize> {
        (0..self.poles.len()).filter(|&k| Some(k) != skip).collect()
    }

    /// `out = ⊗_{k ∈ dims} M_k v`: the last dimension's `U` before the rest (term with `U`
    /// there), and the rest before its `L`, so every term applies all `U` before any `L`.
    fn updown(&self, dims: &[usize], v: &[T], out: &mut [T]) {
        let Some((&k, rest)) = dims.split_last() else {
            out.copy_from_slice(v); // d = 1 Laplacian: the other factors are empty
            return;
        };
        if rest.is_empty() {
            self.apply(k, Part::Both, v, out);
            return;
        }
        let mut t = vec![T::zero(); self.n];
        self.apply(k, Part::Up, v, &mut t);
        self.updown(rest, &t, out);
        self.updown(rest, v, &mut t);
        let mut s = vec![T::zero(); self.n];
        self.apply(k, Part::Down, &t, &mut s);
        out.iter_mut().zip(&s).for_each(|(o, s)| *o += *s);
    }

    /// `out = part(M_k) v` along every pole of dimension `k`.
    fn apply(&self, k: usize, part: Part, v: &[T], out: &mut [T]) {
        let poles = &self.poles[k];
        let input: Vec<T> = poles.perm.iter().map(|&j| v[j as usize]).collect();
        let mut result = vec![T::zero(); self.n];
        let mut slices = Vec::with_capacity(poles.chunks.len());
        let mut rest = result.as_mut_slice();
        for c in &poles.chunks {
            let end = poles.chunk_end(c);
            let (head, tail) = rest.split_at_mut(end - poles.roots[c.start] as usize);
            slices.push(head);
            rest = tail;
        }
        slices.into_par_iter().zip(poles.chunks.par_iter()).for_each(|(o, c)| {
            let base = poles.roots[c.start] as usize;
            let walk = Walk { poles, input: &input, out: o, base };
            walk.run(c.clone(), part);
        });
        out.iter_mut().zip(&poles.inverse).for_each(|(o, &p)| *o = result[p as usize]);
    }
}

impl<T: Real> Poles<T> {
    /// Lays out the poles of dimension `k`: children found through each point's parent.
    fn new(grid: &AdaptiveGrid, k: usize) -> Result<Self> {
        let n = grid.len();
        let (mut left_of, mut right_of) = (vec![NONE; n], vec![NONE; n]);
        let mut root_points = Vec::new();
        let (mut lv, mut iv) = (vec![0; grid.dim()], vec![0; grid.dim()]);
        for j in 0..n {
            lv.copy_from_slice(grid.levels_of(j));
            iv.copy_from_slice(grid.indices_of(j));
            let (l, i) = (lv[k], iv[k]);
            if l == 1 {
                root_points.push(j);
                continue;
            }
            lv[k] = l - 1;
            let is_right = i.div_ceil(2) % 2 == 0; // parent (i − 1) / 2, so i = 2·parent + 1
            iv[k] = if is_right { (i - 1) / 2 } else { i.div_ceil(2) };
            let parent = grid.find(&lv, &iv).ok_or_else(|| {
                Error::Shape(format!(
                    "the grid is not consistent: point {j} has no parent in dimension {k} \
                     (the up-down scheme needs every ancestor)"
                ))
            })?;
            if is_right { right_of[parent] = j as u32 } else { left_of[parent] = j as u32 }
        }
        let mut layout = Self::lay_out(n, &root_points, &left_of, &right_of);
        layout.width = layout
            .perm
            .iter()
            .map(|&j| T::one() / sg_core::basis::pow2(grid.levels_of(j as usize)[k]))
            .collect();
        layout.chunks = balanced_chunks(&layout.roots, n);
        Ok(layout)
    }

    /// Pre-order positions of every tree rooted at `root_points`.
    fn lay_out(n: usize, root_points: &[usize], left_of: &[u32], right_of: &[u32]) -> Self {
        let mut perm = Vec::with_capacity(n);
        let (mut left, mut right) = (vec![NONE; n], vec![NONE; n]);
        let mut roots = Vec::with_capacity(root_points.len());
        // (grid point, position of the parent, is the right child)
        let mut stack: Vec<(u32, u32, bool)> = Vec::new();
        for &r in root_points {
            roots.push(perm.len() as u32);
            stack.push((r as u32, NONE, false));
            while let Some((j, parent, is_right)) = stack.pop() {
                let pos = perm.len() as u32;
                perm.push(j);
                if parent != NONE {
                    if is_right { right[parent as usize] = pos } else { left[parent as usize] = pos }
                }
                // right pushed first so the left subtree comes first
                for (child, side) in [(right_of[j as usize], true), (left_of[j as usize], false)] {
                    if child != NONE {
                        stack.push((child, pos, side));
                    }
                }
            }
        }
        let mut inverse = vec![0; n];
        perm.iter().enumerate().for_each(|(p, &j)| inverse[j as usize] = p as u32);
        Poles { perm, inverse, left, right, width: Vec::new(), roots, chunks: Vec::new() }
    }

    /// The position one past the last pole of `chunk`.
    fn chunk_end(&self, chunk: &std::ops::Range<usize>) -> usize {
        self.roots.get(chunk.end).map_or(self.perm.len(), |&p| p as usize)
    }
}

/// Runs of consecutive poles of about `n / (4 · threads)` positions each (at least 2 048), so
/// that rayon gets a few tasks per thread without one per pole.
fn balanced_chunks(roots: &[u32], n: usize) -> Vec<std::ops::Range<usize>> {
    let target = (n / (4 * rayon::current_num_threads())).max(2048);
    let mut chunks = Vec::new();
    let mut start = 0;
    for r in 1..roots.len() {
        if (roots[r] - roots[start]) as usize >= target {
            chunks.push(start..r);
            start = r;
        }
    }
    if !roots.is_empty() {
        chunks.push(start..roots.len());
    }
    chunks
}

/// The 1-D recursions over the poles of one chunk; `out` starts at position `base`.
struct Walk<'a, T> {
    poles: &'a Poles<T>,
    input: &'a [T],
    out: &'a mut [T],
    base: usize,
}

impl<T: Real> Walk<'_, T> {
    fn run(mut self, roots: std::ops::Range<usize>, part: Part) {
        for r in roots {
            let root = self.poles.roots[r];
            if part != Part::Down {
                self.up(root);
            }
            if part != Part::Up {
                self.down(root, T::zero(), T::zero());
            }
        }
    }

    /// `U`: writes `Σ_{c below p} (φ_p, φ_c) v_c` at every position of `p`'s subtree and
    /// returns `(Σ h_c v_c (x_r − x_c)/(x_r − x_l), Σ h_c v_c (x_c − x_l)/(x_r − x_l))` over the
    /// subtree including `p`, whose support is `[x_l, x_r]`: an ancestor's hat is linear
    /// there, so these two sums are all it needs (`(φ_a, φ_c) = h_c φ_a(x_c)`).
    fn up(&mut self, p: u32) -> (T, T) {
        let half = T::from_f64(0.5);
        let pos = p as usize;
        let (ll, lr) = self.child_up(self.poles.left[pos]);
        let (rl, rr) = self.child_up(self.poles.right[pos]);
        self.out[pos - self.base] = lr + rl;
        let hv = self.poles.width[pos] * self.input[pos];
        let middle = half * (lr + rl + hv);
        (ll + middle, middle + rr)
    }

    fn child_up(&mut self, c: u32) -> (T, T) {
        if c == NONE { (T::zero(), T::zero()) } else { self.up(c) }
    }

    /// `L`, added: `h_p (2/3 v_p + Σ_{a above p} v_a φ_a(x_p))`, where the ancestors' sum at
    /// the support's ends is `(fl, fr)` and linear in between.
    fn down(&mut self, p: u32, fl: T, fr: T) {
        let pos = p as usize;
        let fm = T::from_f64(0.5) * (fl + fr);
        let v = self.input[pos];
        self.out[pos - self.base] += self.poles.width[pos] * (T::from_f64(2.0 / 3.0) * v + fm);
        let at_p = fm + v;
        let (left, right) = (self.poles.left[pos], self.poles.right[pos]);
        if left != NONE {
            self.down(left, fl, at_p);
        }
        if right != NONE {
            self.down(right, at_p, fr);
        }
    }
}
