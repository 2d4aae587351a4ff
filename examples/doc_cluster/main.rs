//! Document clustering (thesis 002, chapter 2): a seeded synthetic corpus with known topics is
//! tokenised and hashed in a stream pipeline, turned into TF-IDF vectors (term counts by hetkit's
//! sort and segmented scans), and clustered by multi-species flocking; the adjusted Rand index
//! scores the clusters against the topics.
//!
//! `cargo run --release --example doc_cluster [TOPICS] [DOCS_PER_TOPIC]`

mod cluster;

use std::time::Instant;

fn main() -> hetkit::Result<()> {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let (topics, per_topic) = (args.first().copied().unwrap_or(5), args.get(1).copied().unwrap_or(40));
    let corpus = cluster::corpus(1, topics, per_topic, 80);
    let t = Instant::now();
    let keys = cluster::token_keys(&corpus.docs)?;
    let vectors = cluster::tfidf(keys, corpus.docs.len())?;
    let t_tfidf = t.elapsed();
    let f = cluster::Flocking::default();
    let t = Instant::now();
    let labels = cluster::cluster(&vectors, f, 2);
    let clusters = labels.iter().max().map_or(0, |m| m + 1);
    println!(
        "{} documents, {topics} topics: TF-IDF in {:.1} ms, flocking ({} steps) in {:.1} ms",
        corpus.docs.len(),
        t_tfidf.as_secs_f64() * 1e3,
        f.steps,
        t.elapsed().as_secs_f64() * 1e3
    );
    println!(
        "{clusters} clusters, adjusted Rand index against the topics: {:.3}",
        cluster::adjusted_rand_index(&labels, &corpus.topics)
    );
    Ok(())
}
