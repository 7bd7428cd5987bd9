//! `instrument report --html`: one self-contained HTML file (no network, no external files)
//! with sortable tables of routines, loops, call statements, callpaths and threads, the program
//! graph as a collapsible hierarchy, a flame graph, the compensation figures, and for
//! experiment results the Table 1 layout with its chart.

mod profile_page;

pub use profile_page::profile_page;

use crate::experiment::output;
use crate::experiment::results::ProgramSummary;
use serde_json::{json, Value};

const PAGE: &str = include_str!("page.html");

/// A sortable table: rows are objects keyed by the columns' keys.
pub struct Table {
    pub id: &'static str,
    pub sort: &'static str,
    pub columns: Vec<(&'static str, &'static str, bool)>,
    pub rows: Vec<Value>,
}

impl Table {
    fn to_json(&self) -> Value {
        let columns: Vec<Value> = self
            .columns
            .iter()
            .map(|(key, title, text)| json!({ "key": key, "title": title, "kind": if *text { "text" } else { "number" } }))
            .collect();
        json!({ "id": self.id, "sort": self.sort, "columns": columns, "rows": self.rows })
    }
}

/// The page with `body` (already escaped HTML) and the tables' data.
pub fn page(title: &str, body: &str, tables: &[Table]) -> String {
    let data = json!({ "tables": tables.iter().map(Table::to_json).collect::<Vec<_>>() });
    // Inside <script>, "</" could end the element: JSON allows "<\/" for it.
    let data = data.to_string().replace("</", "<\\/").replace("<!--", "<\\!--");
    PAGE.replacen("{{TITLE}}", &escape(title), 1).replacen("{{BODY}}", body, 1).replacen("{{DATA}}", &data, 1)
}

/// Escapes text for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A section holding a table (filled in by the page's script), with a filter box if asked.
pub fn table_section(title: &str, id: &str, filter: bool) -> String {
    let filter = if filter {
        format!("<input type=\"search\" id=\"{id}-filter\" placeholder=\"filter by name\" aria-label=\"filter {id}\">")
    } else {
        String::new()
    };
    format!(
        "<section id=\"section-{id}\"><h2>{}</h2>{filter}<div id=\"{id}\"></div></section>\n",
        escape(title)
    )
}

/// The experiment's results: Table 1 (per program min, mean and % error against MO at each
/// level; rank 0 of an MPI program), Table 2 for MPI programs, and the error chart.
/// Table 2 for the MPI programs (none without): the highest and lowest per-rank minima and
/// `% error (mean : high)`, each rank's main less MPI_Init and MPI_Finalize.
fn table_2(summaries: &[ProgramSummary]) -> String {
    use crate::experiment::results::RankCell;
    let parallel: Vec<(&ProgramSummary, &Vec<_>)> =
        summaries.iter().filter_map(|s| Some((s, s.ranks.as_ref()?))).collect();
    let Some((_, first)) = parallel.first() else { return String::new() };
    let mut body = String::from(
        "<section id=\"section-table2\"><h2>Table 2 (MPI programs)</h2><p class=\"meta\">Per rank the minimum \
         over the trials of main less MPI_Init and MPI_Finalize; the highest and lowest of them, the mean of the \
         rank-by-rank % errors against MO and the % error of the highest.</p><table><thead><tr>\
         <th class=\"text\">Program</th><th class=\"text\"></th>",
    );
    for (level, _) in first.iter() {
        body.push_str(&format!("<th>{} µs</th>", level.name()));
    }
    body.push_str("</tr></thead><tbody>\n");
    for (s, cells) in parallel {
        let ranks = cells.iter().find_map(|(_, c)| c.map(|c| c.ranks)).unwrap_or(0);
        let name = format!("{} ({ranks} ranks)", s.program);
        let row = |label: &str, value: &dyn Fn(&RankCell) -> String| {
            let tds: String = cells
                .iter()
                .map(|(_, c)| format!("<td>{}</td>", c.as_ref().map_or("-".into(), value)))
                .collect();
            format!(
                "<tr><td class=\"text\">{}</td><td class=\"text\">{label}</td>{tds}</tr>\n",
                escape(&name)
            )
        };
        body.push_str(&row("min (high)", &|c| format!("{:.0}", c.high_ns / 1e3)));
        body.push_str(&row("min (low)", &|c| format!("{:.0}", c.low_ns / 1e3)));
        body.push_str(&row("% error (mean : high)", &|c| match (c.error_mean_pct, c.error_high_pct) {
            (Some(a), Some(b)) => format!("{a:.1} : {b:.1}"),
            _ => String::new(),
        }));
    }
    body.push_str("</tbody></table></section>\n");
    body
}

pub fn experiment_page(summaries: &[ProgramSummary], source: &str) -> String {
    let levels: Vec<_> =
        summaries.first().map(|s| s.cells.iter().map(|(l, _)| *l).collect()).unwrap_or_default();
    let mut body = format!(
        "<h1>Experiment results</h1><p class=\"meta\">{}: main's inclusive time at each instrumentation level, \
         and its % error against main-only timing (MO).</p>\n<section id=\"section-table1\"><h2>Table 1</h2><table><thead><tr><th class=\"text\">Program</th><th class=\"text\"></th>",
        escape(source)
    );
    for l in &levels {
        body.push_str(&format!("<th>{} µs</th>", l.name()));
    }
    body.push_str("</tr></thead><tbody>\n");
    for s in summaries {
        body.push_str(&table_1_rows(s));
    }
    body.push_str("</tbody></table>\n");
    for note in output::notes(summaries, &[]) {
        body.push_str(&format!("<p class=\"meta\">{}</p>\n", escape(&note)));
    }
    for s in summaries.iter().filter(|s| s.control.is_some_and(|c| c.spread_pct.is_some())) {
        let c = s.control.expect("filtered");
        body.push_str(&format!(
            "<p class=\"meta\">{}: noise floor ±{:.2} % (the control workload, robust s.d. over {} runs)</p>\n",
            escape(&s.program),
            c.spread_pct.expect("filtered"),
            c.runs
        ));
    }
    body.push_str("</section>\n");
    body.push_str(&table_2(summaries));
    body.push_str("<section id=\"section-chart\"><h2>Error against MO</h2>\n");
    body.push_str(&output::svg(summaries));
    body.push_str("</section>\n");
    page("Experiment results", &body, &[])
}

/// A program's rows of Table 1: min, mean, % error, noise, and the paired medians.
fn table_1_rows(s: &ProgramSummary) -> String {
    let mut rows = String::new();
    let row = |label: &str, value: &dyn Fn(&crate::experiment::results::Cell) -> String| {
        let cells: String = s
            .cells
            .iter()
            .map(|(_, c)| format!("<td>{}</td>", c.as_ref().map_or("-".into(), value)))
            .collect();
        format!(
            "<tr><td class=\"text\">{}</td><td class=\"text\">{label}</td>{cells}</tr>\n",
            escape(&s.program)
        )
    };
    rows.push_str(&row("min", &|c| format!("{:.0}", c.min_ns / 1e3)));
    rows.push_str(&row("mean", &|c| format!("{:.0}", c.mean_ns / 1e3)));
    rows.push_str(&row("% error (min : mean)", &|c| match (c.error_min_pct, c.error_mean_pct) {
        (Some(a), Some(b)) => format!("{a:.1} : {b:.1}"),
        _ => String::new(),
    }));
    rows.push_str(&row(output::NOISE_LABEL, &|c| c.noise_pct.map_or(String::new(), |n| format!("±{n:.1}"))));
    for paired in output::paired_rows(s) {
        let cells: String = paired[2..].iter().map(|v| format!("<td>{}</td>", escape(v))).collect();
        rows.push_str(&format!(
            "<tr><td class=\"text\">{}</td><td class=\"text\">{}</td>{cells}</tr>\n",
            escape(&s.program),
            escape(&paired[1])
        ));
    }
    rows
}
