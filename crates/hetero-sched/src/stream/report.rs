//! What a run did, per stage, and its timeline picture.

use std::fmt::Write as _;
use std::time::Duration;

/// What one stage did during a run. Times are measured from the start of the run.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StageReport {
    /// The name given to `Pipeline::stage`.
    pub name: String,
    /// Items consumed from all its receivers (finalized or dropped batches).
    pub items_popped: u64,
    /// Items published to all its senders (pushes and committed slots, counted once per push
    /// even for a broadcast).
    pub items_pushed: u64,
    /// Pops that returned a batch.
    pub batches: u64,
    /// Time between start and end not spent blocked in `pop`.
    pub busy: Duration,
    /// Time spent blocked in `pop` waiting for `min` items.
    pub blocked: Duration,
    /// When the stage started.
    pub start: Duration,
    /// When the stage returned.
    pub end: Duration,
    /// Each wait in `pop` as `(from, to)`; past a few thousand, later waits are merged into the
    /// last one.
    pub blocked_intervals: Vec<(Duration, Duration)>,
    /// Host/device transfers the stage issued, as `(from, to, label)`.
    pub transfers: Vec<(Duration, Duration, &'static str)>,
}

/// The per-stage counts of a finished run, in the order the stages were added.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Report {
    /// One entry per stage.
    pub stages: Vec<StageReport>,
    /// Wall-clock time of the whole run.
    pub wall: Duration,
}

impl Report {
    /// The first stage with this name.
    pub fn stage(&self, name: &str) -> Option<&StageReport> {
        self.stages.iter().find(|s| s.name == name)
    }

    /// The run as an SVG timeline: one row per stage, busy time in colour, blocked time grey,
    /// transfers as thin bars under the row, so a reader sees what overlapped.
    pub fn timeline_svg(&self) -> String {
        let (w, row, left) = (1000.0, 28.0, 140.0);
        let total = self.wall.as_secs_f64().max(1e-9);
        let x = |d: Duration| left + (w - left - 10.0) * d.as_secs_f64() / total;
        let h = 40.0 + row * self.stages.len() as f64;
        let mut s = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"monospace\" font-size=\"12\">\n"
        );
        let palette = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1"];
        for (i, st) in self.stages.iter().enumerate() {
            let y = 10.0 + row * i as f64;
            let colour = palette[i % palette.len()];
            let _ = writeln!(s, "<text x=\"4\" y=\"{}\">{}</text>", y + 14.0, escape(&st.name));
            let _ = writeln!(
                s,
                "<rect x=\"{:.2}\" y=\"{y}\" width=\"{:.2}\" height=\"16\" fill=\"{colour}\"/>",
                x(st.start),
                (x(st.end) - x(st.start)).max(0.5)
            );
            for &(a, b) in &st.blocked_intervals {
                let _ = writeln!(
                    s,
                    "<rect x=\"{:.2}\" y=\"{y}\" width=\"{:.2}\" height=\"16\" fill=\"#d0d0d0\"/>",
                    x(a),
                    (x(b) - x(a)).max(0.2)
                );
            }
            for &(a, b, label) in &st.transfers {
                let _ = writeln!(
                    s,
                    "<rect x=\"{:.2}\" y=\"{}\" width=\"{:.2}\" height=\"5\" fill=\"#000\"><title>{}</title></rect>",
                    x(a),
                    y + 18.0,
                    (x(b) - x(a)).max(0.5),
                    escape(label)
                );
            }
        }
        let _ = writeln!(
            s,
            "<text x=\"{left}\" y=\"{}\">0 .. {:.3} ms; colour busy, grey blocked in pop, black transfers</text>\n</svg>",
            h - 8.0,
            total * 1e3
        );
        s
    }
}

fn escape(t: &str) -> String {
    t.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{:<16} {:>12} {:>12} {:>9} {:>10} {:>10}",
            "stage", "popped", "pushed", "batches", "busy ms", "blocked ms"
        )?;
        for s in &self.stages {
            writeln!(
                f,
                "{:<16} {:>12} {:>12} {:>9} {:>10.3} {:>10.3}",
                s.name,
                s.items_popped,
                s.items_pushed,
                s.batches,
                s.busy.as_secs_f64() * 1e3,
                s.blocked.as_secs_f64() * 1e3
            )?;
        }
        write!(f, "wall {:.3} ms", self.wall.as_secs_f64() * 1e3)
    }
}
