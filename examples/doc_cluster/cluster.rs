//! Document clustering of thesis 002, chapter 2: a seeded synthetic corpus with known topics,
//! tokenising and hashing as stages of a stream pipeline, TF-IDF with the term counts made by
//! hetkit's sort and segmented scans, cosine similarity, multi-species flocking (Reynolds' rules,
//! separation only between dissimilar documents), and the adjusted Rand index against the topics.

use std::sync::mpsc;

use hetkit::stream::Pipeline;
use hetkit::{scan, sort};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Bits of a key that hold the term hash; the document index sits above them.
const TERM_BITS: u32 = 40;
const TERM_MASK: u64 = (1 << TERM_BITS) - 1;

/// A corpus and the topic each document was drawn from.
pub(crate) struct Corpus {
    pub(crate) docs: Vec<String>,
    pub(crate) topics: Vec<usize>,
}

/// `topics` topics of `per_topic` documents of `words` words: each topic has 30 words of its own;
/// about 70 % of a document's words come from its topic, the rest from 300 shared noise words,
/// and "the", "of" and "and" appear in every document (so their idf is 0).
pub(crate) fn corpus(seed: u64, topics: usize, per_topic: usize, words: usize) -> Corpus {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut docs = Vec::new();
    let mut labels = Vec::new();
    for d in 0..topics * per_topic {
        let t = d % topics;
        let mut text = String::from("the of and");
        for _ in 0..words {
            let w = if rng.random_bool(0.7) {
                format!(" topic{t}word{}", rng.random_range(0..30))
            } else {
                format!(" noise{}", rng.random_range(0..300))
            };
            text.push_str(&w);
        }
        docs.push(text);
        labels.push(t);
    }
    Corpus { docs, topics: labels }
}

/// FNV-1a of a token, folded to [`TERM_BITS`] bits.
pub(crate) fn term_hash(token: &str) -> u64 {
    let h =
        token.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    (h ^ (h >> TERM_BITS)) & TERM_MASK
}

/// Streams the corpus as bytes (documents separated by `\n`) through a tokenising stage that
/// emits one key `doc << 40 | hash(term)` per token. The tokeniser pops whatever bytes are there
/// and consumes only whole documents, leaving a partial one at the head of the channel.
pub(crate) fn token_keys(docs: &[String]) -> hetkit::Result<Vec<u64>> {
    let mut p = Pipeline::new();
    let (bytes_tx, mut bytes) = p.channel::<u8>();
    let (keys_tx, mut keys) = p.channel::<u64>();
    let text: Vec<u8> = docs.iter().flat_map(|d| d.bytes().chain([b'\n'])).collect();
    p.stage("read", move || -> hetkit::Result<()> {
        for chunk in text.chunks(1000) {
            bytes_tx.push(chunk)?;
        }
        Ok(())
    });
    p.stage("tokenise", move || -> hetkit::Result<()> {
        let mut doc = 0u64;
        let mut want = 1;
        let mut out = Vec::new();
        while let Some(batch) = bytes.pop(want, usize::MAX)? {
            let ended = batch.len() < want; // the end-of-stream flush: the rest is one document
            let whole = match batch.iter().rposition(|&b| b == b'\n') {
                Some(end) => end + 1,
                None if ended => batch.len(),
                None => {
                    // No whole document yet: wait until there are more bytes than now.
                    want = batch.len() + 1;
                    batch.finalize(0)?;
                    continue;
                }
            };
            want = 1;
            out.clear();
            let body = batch[..whole].strip_suffix(b"\n").unwrap_or(&batch[..whole]);
            for line in body.split(|&b| b == b'\n') {
                let text = String::from_utf8_lossy(line);
                let tokens = text.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty());
                out.extend(tokens.map(|t| doc << TERM_BITS | term_hash(t)));
                doc += 1;
            }
            keys_tx.push(&out)?;
            batch.finalize(whole)?;
        }
        Ok(())
    });
    let (done, result) = mpsc::channel();
    p.stage("collect", move || -> hetkit::Result<()> {
        let mut all = Vec::new();
        while let Some(b) = keys.pop(1, 1 << 16)? {
            all.extend_from_slice(&b);
        }
        let _ = done.send(all);
        Ok(())
    });
    p.run()?;
    Ok(result.recv().unwrap_or_default())
}

/// Boundaries of the runs of equal values of sorted `keys`, as CSR offsets.
fn runs(keys: &[u64]) -> Vec<usize> {
    let mut offsets: Vec<usize> = (0..keys.len()).filter(|&i| i == 0 || keys[i] != keys[i - 1]).collect();
    offsets.push(keys.len());
    offsets
}

/// The length of every run, by a segmented sum of ones (the last item of each segment).
fn run_lengths(offsets: &[usize]) -> hetkit::Result<Vec<u32>> {
    let n = offsets.last().copied().unwrap_or(0);
    let mut ones = vec![1u32; n];
    scan::inclusive_segments(&mut ones, offsets, scan::Add)?;
    Ok(offsets.windows(2).map(|w| ones[w[1] - 1]).collect())
}

/// TF-IDF vectors (Eqs. 2.1 to 2.3), one per document, as `(term, weight)` sorted by term:
/// `tf = n(term, doc) / terms in doc`, `idf = ln(documents / documents with the term)`.
/// `keys` are `doc << 40 | term` per token (any order); documents without tokens get empty vectors.
pub(crate) fn tfidf(mut keys: Vec<u64>, documents: usize) -> hetkit::Result<Vec<Vec<(u64, f64)>>> {
    sort::whole(&mut keys, sort::Order::Ascending);
    let offsets = runs(&keys);
    let counts = run_lengths(&offsets)?;
    let pairs: Vec<u64> = offsets[..offsets.len() - 1].iter().map(|&o| keys[o]).collect();
    // Documents per term: sort the distinct (doc, term) pairs by term and count the runs.
    let mut terms: Vec<u64> = pairs.iter().map(|k| k & TERM_MASK).collect();
    sort::whole(&mut terms, sort::Order::Ascending);
    let term_offsets = runs(&terms);
    let df = run_lengths(&term_offsets)?;
    let df_of = |t: u64| {
        let i = term_offsets[..term_offsets.len() - 1].partition_point(|&o| terms[o] < t);
        f64::from(df[i])
    };
    let mut totals = vec![0u32; documents];
    for (k, &c) in pairs.iter().zip(&counts) {
        totals[(k >> TERM_BITS) as usize] += c;
    }
    let mut vectors = vec![Vec::new(); documents];
    for (k, &c) in pairs.iter().zip(&counts) {
        let (d, t) = ((k >> TERM_BITS) as usize, k & TERM_MASK);
        let tf = f64::from(c) / f64::from(totals[d]);
        vectors[d].push((t, tf * (documents as f64 / df_of(t)).ln()));
    }
    Ok(vectors)
}

/// Cosine similarity of two sparse vectors sorted by term (0 when either is zero).
pub(crate) fn cosine(a: &[(u64, f64)], b: &[(u64, f64)]) -> f64 {
    let (mut i, mut j, mut dot) = (0, 0, 0.0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                dot += a[i].1 * b[j].1;
                i += 1;
                j += 1;
            }
        }
    }
    let norm = |v: &[(u64, f64)]| v.iter().map(|x| x.1 * x.1).sum::<f64>().sqrt();
    let n = norm(a) * norm(b);
    if n > 0.0 { dot / n } else { 0.0 }
}

/// Parameters of the multi-species flocking.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Flocking {
    /// Side of the square, toroidal plane.
    pub(crate) side: f64,
    /// Neighbourhood radius.
    pub(crate) radius: f64,
    /// Cosine similarity from which two documents are of one species.
    pub(crate) similar: f64,
    /// Iterations.
    pub(crate) steps: usize,
    /// Speed limit per step.
    pub(crate) max_speed: f64,
    /// The side shrinks geometrically to this fraction of itself over the run, so that flocks
    /// of one species meet and merge (the thesis's dynamic shrinking of the virtual space).
    pub(crate) shrink: f64,
}

impl Default for Flocking {
    /// Settings that recover 3 to 6 synthetic topics of 20 to 50 documents each with ARI 1 for
    /// every seed tried (18 runs).
    fn default() -> Self {
        Flocking { side: 60.0, radius: 10.0, similar: 0.2, steps: 400, max_speed: 1.0, shrink: 0.2 }
    }
}

/// Flocks the documents and labels each with its flock: the whole clustering.
pub(crate) fn cluster(vectors: &[Vec<(u64, f64)>], f: Flocking, seed: u64) -> Vec<usize> {
    let pos = flock(vectors, f, seed);
    components(&pos, f.final_side(), 0.8 * f.radius, |i, j| cosine(&vectors[i], &vectors[j]) >= f.similar)
}

/// Shortest displacement from `a` to `b` on the torus.
fn wrap(d: f64, side: f64) -> f64 {
    d - side * (d / side).round()
}

/// Multi-species flocking (digest §2.2): each document is a boid; neighbours within the radius
/// push it away (separation), and similar neighbours also pull it along (alignment, cohesion).
/// Returns the final positions, on a plane of side [`Flocking::final_side`].
pub(crate) fn flock(vectors: &[Vec<(u64, f64)>], f: Flocking, seed: u64) -> Vec<[f64; 2]> {
    let n = vectors.len();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut pos: Vec<[f64; 2]> =
        (0..n).map(|_| [rng.random_range(0.0..f.side), rng.random_range(0.0..f.side)]).collect();
    let mut vel: Vec<[f64; 2]> =
        (0..n).map(|_| [rng.random_range(-0.5..0.5), rng.random_range(-0.5..0.5)]).collect();
    let sim: Vec<Vec<bool>> =
        (0..n).map(|i| (0..n).map(|j| cosine(&vectors[i], &vectors[j]) >= f.similar).collect()).collect();
    let scale = f.shrink.powf(1.0 / f.steps.max(1) as f64);
    let mut side = f.side;
    for _ in 0..f.steps {
        let f = Flocking { side, ..f };
        let mut next = vel.clone();
        for i in 0..n {
            let (mut sep, mut ali, mut coh, mut k) = ([0.0; 2], [0.0; 2], [0.0; 2], 0.0);
            for j in (0..n).filter(|&j| j != i) {
                let d = [wrap(pos[j][0] - pos[i][0], f.side), wrap(pos[j][1] - pos[i][1], f.side)];
                let r2 = d[0] * d[0] + d[1] * d[1];
                if r2 >= f.radius * f.radius {
                    continue;
                }
                // Dissimilar neighbours repel much more strongly: that is what sorts the species.
                let w = if sim[i][j] { 1.0 } else { 8.0 };
                for a in 0..2 {
                    sep[a] -= w * d[a] / r2.max(0.25);
                }
                if sim[i][j] {
                    for a in 0..2 {
                        ali[a] += vel[j][a];
                        coh[a] += d[a];
                    }
                    k += 1.0;
                }
            }
            for a in 0..2 {
                let (ali_a, coh_a) = if k > 0.0 { (ali[a] / k - vel[i][a], coh[a] / k) } else { (0.0, 0.0) };
                next[i][a] = vel[i][a] + 0.3 * sep[a] + 0.1 * ali_a + 0.05 * coh_a;
            }
            let speed = (next[i][0] * next[i][0] + next[i][1] * next[i][1]).sqrt();
            if speed > f.max_speed {
                next[i] = [next[i][0] * f.max_speed / speed, next[i][1] * f.max_speed / speed];
            }
        }
        vel = next;
        side *= scale;
        for (p, v) in pos.iter_mut().zip(&vel) {
            for a in 0..2 {
                p[a] = ((p[a] + v[a]) * scale).rem_euclid(side);
            }
        }
    }
    pos
}

impl Flocking {
    /// The side of the plane at the end of the run.
    pub(crate) fn final_side(&self) -> f64 {
        if self.steps == 0 { self.side } else { self.side * self.shrink }
    }
}

/// Clusters: connected components of boids closer than `link` on the torus that `same` calls
/// one species (a flock is a group of similar documents that flew together).
pub(crate) fn components(
    pos: &[[f64; 2]],
    side: f64,
    link: f64,
    same: impl Fn(usize, usize) -> bool,
) -> Vec<usize> {
    let n = pos.len();
    let mut label = vec![usize::MAX; n];
    let mut next = 0;
    for s in 0..n {
        if label[s] != usize::MAX {
            continue;
        }
        label[s] = next;
        let mut stack = vec![s];
        while let Some(i) = stack.pop() {
            for j in 0..n {
                let d = [wrap(pos[j][0] - pos[i][0], side), wrap(pos[j][1] - pos[i][1], side)];
                if label[j] == usize::MAX && d[0] * d[0] + d[1] * d[1] < link * link && same(i, j) {
                    label[j] = next;
                    stack.push(j);
                }
            }
        }
        next += 1;
    }
    label
}

/// Adjusted Rand index of two labellings (1 for identical partitions, about 0 for chance).
pub(crate) fn adjusted_rand_index(a: &[usize], b: &[usize]) -> f64 {
    let (ka, kb) = (a.iter().max().map_or(0, |m| m + 1), b.iter().max().map_or(0, |m| m + 1));
    let mut table = vec![vec![0u64; kb]; ka];
    for (&x, &y) in a.iter().zip(b) {
        table[x][y] += 1;
    }
    let c2 = |n: u64| (n * n.saturating_sub(1) / 2) as f64;
    let index: f64 = table.iter().flatten().map(|&n| c2(n)).sum();
    let rows: f64 = table.iter().map(|r| c2(r.iter().sum())).sum();
    let cols: f64 = (0..kb).map(|j| c2(table.iter().map(|r| r[j]).sum())).sum();
    let total = c2(a.len() as u64);
    let expected = rows * cols / total.max(1.0);
    let max = (rows + cols) / 2.0;
    if max == expected { 1.0 } else { (index - expected) / (max - expected) }
}
