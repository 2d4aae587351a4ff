//! The document-clustering example against oracles: tokenising through the stream pipeline equals
//! a direct split, TF-IDF equals Eqs. 2.1 to 2.3 computed with a hash map (a term in every document
//! has idf 0, digest §10.8), the adjusted Rand index on known cases, and flocking recovers
//! well-separated synthetic topics with ARI at least 0.9.

#[path = "../examples/doc_cluster/cluster.rs"]
#[allow(dead_code)]
mod cluster;

use std::collections::HashMap;

use cluster::{adjusted_rand_index, corpus, cosine, term_hash, tfidf, token_keys};

fn tokens(doc: &str) -> impl Iterator<Item = &str> {
    doc.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty())
}

#[test]
fn pipeline_tokenising_equals_a_direct_split() -> hetkit::Result<()> {
    let mut docs = corpus(3, 3, 7, 50).docs;
    docs.push(String::new()); // an empty document still counts
    docs.push("x".repeat(3000)); // one token longer than the reader's chunks
    docs.push("last".into());
    let mut got = token_keys(&docs)?;
    let mut want: Vec<u64> = docs
        .iter()
        .enumerate()
        .flat_map(|(d, doc)| tokens(doc).map(move |t| (d as u64) << 40 | term_hash(t)))
        .collect();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want);
    Ok(())
}

#[test]
fn tfidf_of_a_toy_corpus() -> hetkit::Result<()> {
    let docs: Vec<String> = ["the cat sat", "the dog the dog"].map(String::from).to_vec();
    let v = tfidf(token_keys(&docs)?, 2)?;
    let weight = |d: usize, term: &str| v[d].iter().find(|(t, _)| *t == term_hash(term)).map(|x| x.1);
    assert_eq!(weight(0, "the"), Some(0.0), "a term in every document has idf log(1) = 0");
    assert_eq!(weight(1, "the"), Some(0.0));
    assert!((weight(0, "cat").unwrap() - (1.0 / 3.0) * 2f64.ln()).abs() < 1e-15);
    assert!((weight(1, "dog").unwrap() - 0.5 * 2f64.ln()).abs() < 1e-15);
    assert_eq!(weight(0, "dog"), None);
    Ok(())
}

#[test]
fn tfidf_equals_the_equations_with_a_hash_map() -> hetkit::Result<()> {
    let docs = corpus(9, 4, 11, 40).docs;
    let got = tfidf(token_keys(&docs)?, docs.len())?;
    let mut df: HashMap<&str, f64> = HashMap::new();
    for doc in &docs {
        let mut seen: Vec<&str> = tokens(doc).collect();
        seen.sort_unstable();
        seen.dedup();
        for t in seen {
            *df.entry(t).or_default() += 1.0;
        }
    }
    for (d, doc) in docs.iter().enumerate() {
        let mut counts: HashMap<&str, f64> = HashMap::new();
        let all: Vec<&str> = tokens(doc).collect();
        for t in &all {
            *counts.entry(t).or_default() += 1.0;
        }
        let mut want: Vec<(u64, f64)> = counts
            .iter()
            .map(|(t, n)| (term_hash(t), n / all.len() as f64 * (docs.len() as f64 / df[t]).ln()))
            .collect();
        want.sort_by_key(|x| x.0);
        assert_eq!(got[d].len(), want.len());
        for (g, w) in got[d].iter().zip(&want) {
            assert_eq!(g.0, w.0);
            assert!((g.1 - w.1).abs() <= 1e-12 * w.1.abs().max(1.0));
        }
    }
    let same = cosine(&got[0], &got[0]);
    assert!((same - 1.0).abs() < 1e-12);
    assert_eq!(cosine(&got[0], &[]), 0.0);
    Ok(())
}

#[test]
fn adjusted_rand_index_on_known_partitions() {
    assert_eq!(adjusted_rand_index(&[0, 0, 1, 1, 2, 2], &[5, 5, 3, 3, 0, 0]), 1.0);
    // By hand from the contingency tables: (1 - 1/3) / (3/2 - 1/3) = 4/7.
    assert!((adjusted_rand_index(&[0, 0, 1, 1], &[0, 0, 1, 2]) - 4.0 / 7.0).abs() < 1e-12);
    // (0 - 6 * 3 / 15) / (9/2 - 6 * 3 / 15) = -4/11: worse than chance.
    assert!((adjusted_rand_index(&[0, 0, 0, 1, 1, 1], &[0, 1, 2, 0, 1, 2]) + 4.0 / 11.0).abs() < 1e-12);
}

#[test]
fn flocking_recovers_well_separated_topics() -> hetkit::Result<()> {
    let c = corpus(1, 4, 30, 80);
    let vectors = tfidf(token_keys(&c.docs)?, c.docs.len())?;
    let f = cluster::Flocking::default();
    for seed in [2, 3] {
        let ari = adjusted_rand_index(&cluster::cluster(&vectors, f, seed), &c.topics);
        assert!(ari >= 0.9, "ARI {ari}, seed {seed}");
    }
    // Without flying, the documents stay scattered and the same topic falls into many clusters:
    // the flocking, not the similarity threshold alone, is what gathers each topic.
    let still =
        adjusted_rand_index(&cluster::cluster(&vectors, cluster::Flocking { steps: 0, ..f }, 2), &c.topics);
    assert!(still < 0.5, "ARI without flocking {still}");
    Ok(())
}
